#include "env/cost/op_cost_key.h"

#include "env/graph/hashing.h"

namespace graphworld {

uint64_t constant_input_mask(const Graph& graph, OpId id, const std::vector<uint8_t>& constant) {
  const Op& op = graph.op(id);
  uint64_t mask = 0;
  for (size_t k = 0; k < op.inputs.size() && k < 64; ++k)
    if (constant[static_cast<size_t>(op.inputs[k].op)]) mask |= uint64_t{1} << k;
  return mask;
}

namespace {

uint64_t hash_info(uint64_t h, const TensorInfo& info) {
  h = hash_combine(h, static_cast<uint64_t>(info.dtype) + 17 * info.shape.size());
  for (int64_t d : info.shape) h = hash_combine(h, static_cast<uint64_t>(d));
  return h;
}

uint64_t hash_head(OpType type, const Attributes& attrs, uint64_t constant_inputs, uint64_t blocked_inputs) {
  uint64_t h = hash_combine(static_cast<uint64_t>(type) + 1, attrs.hash());
  return hash_combine(hash_combine(h, constant_inputs), blocked_inputs);
}

std::string dtype_tag(DType dtype) { return dtype == DType::Float32 ? "f32" : "i64"; }

}  // namespace

uint64_t op_cost_hash(const Graph& graph, const Op& op, uint64_t constant_inputs, uint64_t blocked_inputs) {
  uint64_t h = hash_head(op.type, op.attrs, constant_inputs, blocked_inputs);
  for (const TensorRef& ref : op.inputs) h = hash_info(h, graph.info(ref));
  return h;
}

bool key_matches(const OpCostKey& key, const Graph& graph, const Op& op, uint64_t constant_inputs,
                 uint64_t blocked_inputs) {
  if (key.type != op.type || key.constant_inputs != constant_inputs || key.blocked_inputs != blocked_inputs ||
      key.inputs.size() != op.inputs.size())
    return false;
  for (size_t k = 0; k < op.inputs.size(); ++k)
    if (!(key.inputs[k] == graph.info(op.inputs[k]))) return false;
  return key.attrs == op.attrs;
}

OpCostKey make_op_cost_key(const Graph& graph, OpId id, uint64_t constant_inputs, uint64_t blocked_inputs) {
  const Op& op = graph.op(id);
  OpCostKey key;
  key.type = op.type;
  key.attrs = op.attrs;
  for (const TensorRef& ref : op.inputs) key.inputs.push_back(graph.info(ref));
  key.outputs = op.outputs;
  key.constant_inputs = constant_inputs;
  key.blocked_inputs = blocked_inputs;
  key.hash = op_cost_hash(graph, op, constant_inputs, blocked_inputs);
  return key;
}

std::string OpCostKey::canonical() const {
  std::string out(op_type_name(type));
  out += '(';
  out += attrs.to_string();
  out += ')';
  for (size_t k = 0; k < inputs.size(); ++k) {
    out += ' ';
    if (input_is_constant(k)) out += "c:";
    if (input_is_blocked(k)) out += "b:";
    out += dtype_tag(inputs[k].dtype);
    out += shape_to_string(inputs[k].shape);
  }
  return out;
}

}  // namespace graphworld
