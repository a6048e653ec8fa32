// Builds graphs op by op, inferring every output shape as it goes.
//
// Used by the ONNX importer and the zoo. Errors in shapes surface at the op
// that caused them, with that op's name.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

class GraphBuilder {
 public:
  // `seed` seeds the random weights this builder creates, one stream per weight.
  explicit GraphBuilder(uint64_t seed = 0) : next_seed_(seed * 1000003ull + 17) {}

  TensorRef input(std::string name, Shape shape, DType dtype = DType::Float32);
  TensorRef weight(std::shared_ptr<const TensorData> value, std::string name = "");
  // A seeded-random float weight, uniform in [low, high).
  TensorRef random_weight(Shape shape, float low, float high, std::string name = "");
  // A seeded-random weight scaled for a layer with `fan_in` inputs (keeps
  // activations of deep random networks in a sane range).
  TensorRef random_weight_for_fan_in(Shape shape, int64_t fan_in, std::string name = "");

  // Adds an op of any type; returns all its outputs.
  std::vector<TensorRef> add(OpType type, std::vector<TensorRef> inputs, Attributes attrs = {},
                             std::string name = "");
  // Same, for single-output ops.
  TensorRef add1(OpType type, std::vector<TensorRef> inputs, Attributes attrs = {}, std::string name = "");

  void output(TensorRef ref, std::string name);

  const TensorInfo& info(TensorRef ref) const { return graph_.info(ref); }
  const Shape& shape(TensorRef ref) const { return graph_.info(ref).shape; }
  Graph& graph() { return graph_; }
  // Checks the finished graph (env/ops/validate.h) and hands it over.
  Graph finish();

 private:
  std::string auto_name(OpType type);
  Graph graph_;
  uint64_t next_seed_;
  int counter_ = 0;
};

}  // namespace graphworld
