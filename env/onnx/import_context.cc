#include "env/onnx/import_context.h"

#include "common/error.h"
#include "env/ops/constant_eval.h"
#include "env/ops/op_schema.h"

namespace graphworld {

const onnx::AttributeProto* NodeAttrs::find(const std::string& name) const {
  for (const auto& attr : node_.attribute())
    if (attr.name() == name) return &attr;
  return nullptr;
}

const onnx::AttributeProto& NodeAttrs::typed(const std::string& name, int type) const {
  const onnx::AttributeProto* attr = find(name);
  if (attr->type() != type)
    throw ImportError(where_ + ": attribute '" + name + "' has type " +
                      onnx::AttributeProto::AttributeType_Name(attr->type()) + ", expected " +
                      onnx::AttributeProto::AttributeType_Name(static_cast<onnx::AttributeProto::AttributeType>(type)));
  return *attr;
}

int64_t NodeAttrs::get_int(const std::string& name, int64_t fallback) const {
  return has(name) ? typed(name, onnx::AttributeProto::INT).i() : fallback;
}

float NodeAttrs::get_float(const std::string& name, float fallback) const {
  return has(name) ? typed(name, onnx::AttributeProto::FLOAT).f() : fallback;
}

std::vector<int64_t> NodeAttrs::get_ints(const std::string& name, std::vector<int64_t> fallback) const {
  if (!has(name)) return fallback;
  const auto& attr = typed(name, onnx::AttributeProto::INTS);
  return std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
}

std::string NodeAttrs::get_string(const std::string& name, std::string fallback) const {
  return has(name) ? typed(name, onnx::AttributeProto::STRING).s() : fallback;
}

const onnx::TensorProto* NodeAttrs::get_tensor(const std::string& name) const {
  return has(name) ? &typed(name, onnx::AttributeProto::TENSOR).t() : nullptr;
}

std::string ImportContext::where(const onnx::NodeProto& node) const {
  return source + ": node '" + node.name() + "' (" + node.op_type() + ")";
}

bool ImportContext::has_input(const onnx::NodeProto& node, int index) const {
  return index < node.input_size() && !node.input(index).empty();
}

const Value& ImportContext::input(const onnx::NodeProto& node, int index) const {
  if (!has_input(node, index))
    throw ImportError(where(node) + ": required input " + std::to_string(index) + " is missing");
  const std::string& name = node.input(index);
  auto it = values.find(name);
  if (it == values.end())
    throw ImportError(where(node) + " reads '" + name +
                      "', which no graph input, initializer or earlier node defines (a dangling input; nodes must be "
                      "in topological order)");
  if (!it->second.unsupported.empty())
    throw ImportError(where(node) + " reads '" + name + "': " + it->second.unsupported);
  return it->second;
}

TensorInfo ImportContext::info(const Value& value) const {
  return value.constant ? value.constant->info() : builder.info(*value.ref);
}

TensorInfo ImportContext::input_info(const onnx::NodeProto& node, int index) const { return info(input(node, index)); }

std::shared_ptr<const TensorData> ImportContext::constant(const onnx::NodeProto& node, int index,
                                                          const char* role) const {
  const Value& v = input(node, index);
  if (!v.constant)
    throw ImportError(where(node) + ": input " + std::to_string(index) + " (" + role + ", '" + v.name +
                      "') is computed at run time; graphworld needs it to be a constant (static shapes). Export the "
                      "model with fixed input shapes and constant folding on");
  return v.constant;
}

std::vector<int64_t> ImportContext::constant_ints(const onnx::NodeProto& node, int index, const char* role) const {
  auto data = constant(node, index, role);
  if (data->dtype() != DType::Int64)
    throw ImportError(where(node) + ": input " + std::to_string(index) + " (" + role + ") must be an integer tensor");
  return data->to_int_vector();
}

TensorRef ImportContext::tensor(const Value& value) {
  if (value.ref) return *value.ref;
  auto it = weight_refs_.find(value.name);
  if (it != weight_refs_.end()) return it->second;
  TensorRef ref = builder.weight(value.constant, value.name);
  weight_refs_.emplace(value.name, ref);
  return ref;
}

Value ImportContext::constant_value(std::shared_ptr<const TensorData> data, std::string name) const {
  Value v;
  v.name = std::move(name);
  v.constant = std::move(data);
  return v;
}

std::vector<Value> ImportContext::emit(const onnx::NodeProto& node, OpType type, const std::vector<Value>& inputs,
                                       Attributes attrs, const std::string& name_suffix) {
  std::string name = node.name().empty() ? (node.output_size() ? node.output(0) : node.op_type()) : node.name();
  name += name_suffix;
  bool all_constant = true;
  std::vector<TensorInfo> infos;
  for (const Value& v : inputs) {
    all_constant = all_constant && v.is_constant();
    infos.push_back(info(v));
  }
  std::vector<Value> outs;
  try {
    if (all_constant) {
      Op op;
      op.type = type;
      op.name = name;
      op.attrs = std::move(attrs);
      op.outputs = infer_outputs(type, op.attrs, infos, name);
      std::vector<std::shared_ptr<const TensorData>> args;
      for (const Value& v : inputs) args.push_back(v.constant);
      std::vector<std::shared_ptr<TensorData>> results = evaluate_op(op, args);
      ++folded_nodes;
      for (size_t k = 0; k < results.size(); ++k) outs.push_back(constant_value(results[k], name + ":" + std::to_string(k)));
      return outs;
    }
    std::vector<TensorRef> refs;
    for (const Value& v : inputs) refs.push_back(tensor(v));
    for (const TensorRef& ref : builder.add(type, refs, std::move(attrs), name)) {
      Value v;
      v.name = name;
      v.ref = ref;
      outs.push_back(v);
    }
  } catch (const GraphError& e) {
    throw ImportError(where(node) + ": " + e.what());
  }
  return outs;
}

void ImportContext::set_output(const onnx::NodeProto& node, int index, Value value) {
  if (index >= node.output_size() || node.output(index).empty()) return;  // output not wanted
  value.name = node.output(index);
  values[node.output(index)] = std::move(value);
}

void ImportContext::mark_extra_outputs_unsupported(const onnx::NodeProto& node, const std::string& why) {
  for (int k = 1; k < node.output_size(); ++k) {
    if (node.output(k).empty()) continue;
    Value v;
    v.name = node.output(k);
    v.unsupported = "output " + std::to_string(k) + " of " + where(node) + " " + why;
    values[node.output(k)] = v;
  }
}

}  // namespace graphworld
