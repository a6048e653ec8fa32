#include "env/ops/graph_builder.h"

#include <cctype>
#include <cmath>

#include "env/ops/op_schema.h"
#include "env/ops/validate.h"

namespace graphworld {

std::string GraphBuilder::auto_name(OpType type) {
  std::string name(op_type_name(type));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name + "_" + std::to_string(counter_++);
}

TensorRef GraphBuilder::input(std::string name, Shape shape, DType dtype) {
  return {graph_.add_input(std::move(name), {dtype, std::move(shape)}), 0};
}

TensorRef GraphBuilder::weight(std::shared_ptr<const TensorData> value, std::string name) {
  if (name.empty()) name = auto_name(OpType::Weight);
  return {graph_.add_weight(std::move(name), std::move(value)), 0};
}

TensorRef GraphBuilder::random_weight(Shape shape, float low, float high, std::string name) {
  if (name.empty()) name = auto_name(OpType::Weight);
  RandomInit init{next_seed_++, low, high};
  return {graph_.add_random_weight(std::move(name), {DType::Float32, std::move(shape)}, init), 0};
}

TensorRef GraphBuilder::random_weight_for_fan_in(Shape shape, int64_t fan_in, std::string name) {
  // Uniform(-b, b) has variance b^2/3; b = sqrt(3/fan_in) gives unit-variance
  // outputs for unit-variance inputs, so random deep nets neither vanish nor blow up.
  float bound = static_cast<float>(std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(fan_in, 1))));
  return random_weight(std::move(shape), -bound, bound, std::move(name));
}

std::vector<TensorRef> GraphBuilder::add(OpType type, std::vector<TensorRef> inputs, Attributes attrs,
                                         std::string name) {
  if (name.empty()) name = auto_name(type);
  std::vector<TensorInfo> in_infos;
  in_infos.reserve(inputs.size());
  for (const TensorRef& ref : inputs) in_infos.push_back(graph_.info(ref));
  std::vector<TensorInfo> outs = infer_outputs(type, attrs, in_infos, name);
  size_t count = outs.size();
  OpId id = graph_.add_op(type, std::move(name), std::move(attrs), std::move(inputs), std::move(outs));
  std::vector<TensorRef> refs;
  for (size_t k = 0; k < count; ++k) refs.push_back({id, static_cast<int32_t>(k)});
  return refs;
}

TensorRef GraphBuilder::add1(OpType type, std::vector<TensorRef> inputs, Attributes attrs, std::string name) {
  return add(type, std::move(inputs), std::move(attrs), std::move(name)).at(0);
}

void GraphBuilder::output(TensorRef ref, std::string name) { graph_.add_output(ref, std::move(name)); }

Graph GraphBuilder::finish() {
  validate_graph(graph_);
  return std::move(graph_);
}

}  // namespace graphworld
