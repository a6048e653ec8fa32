#include "env/graph/graph.h"

#include <algorithm>

#include "common/error.h"
#include "env/graph/attribute_defaults.h"

namespace graphworld {

std::string describe_op(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  return std::string(op_type_name(op.type)) + " '" + op.name + "' (#" + std::to_string(id) + ")";
}

OpId Graph::add_input(std::string name, TensorInfo info) {
  Op op;
  op.type = OpType::Input;
  op.name = std::move(name);
  op.outputs.push_back(std::move(info));
  ops_.push_back(std::move(op));
  OpId id = static_cast<OpId>(ops_.size() - 1);
  input_ops_.push_back(id);
  return id;
}

OpId Graph::add_weight(std::string name, std::shared_ptr<const TensorData> value) {
  if (!value) throw GraphError("weight '" + name + "' has no data");
  Op op;
  op.type = OpType::Weight;
  op.name = std::move(name);
  op.outputs.push_back(value->info());
  op.value = std::move(value);
  ops_.push_back(std::move(op));
  return static_cast<OpId>(ops_.size() - 1);
}

OpId Graph::add_random_weight(std::string name, TensorInfo info, RandomInit init) {
  if (info.dtype != DType::Float32) throw GraphError("random weight '" + name + "' must be float32");
  Op op;
  op.type = OpType::Weight;
  op.name = std::move(name);
  op.outputs.push_back(std::move(info));
  op.random = init;
  ops_.push_back(std::move(op));
  return static_cast<OpId>(ops_.size() - 1);
}

OpId Graph::add_op(OpType type, std::string name, Attributes attrs, std::vector<TensorRef> inputs,
                   std::vector<TensorInfo> outputs) {
  for (const TensorRef& ref : inputs) {
    if (ref.op < 0 || static_cast<size_t>(ref.op) >= ops_.size() || ref.index < 0 ||
        static_cast<size_t>(ref.index) >= ops_[ref.op].outputs.size())
      throw GraphError(std::string(op_type_name(type)) + " '" + name + "' refers to a tensor that does not exist (op #" +
                       std::to_string(ref.op) + " output " + std::to_string(ref.index) + ")");
  }
  Op op;
  op.type = type;
  op.name = std::move(name);
  op.attrs = without_defaults(type, std::move(attrs));
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  ops_.push_back(std::move(op));
  return static_cast<OpId>(ops_.size() - 1);
}

void Graph::add_output(TensorRef ref, std::string name) {
  if (ref.op < 0 || static_cast<size_t>(ref.op) >= ops_.size() ||
      static_cast<size_t>(ref.index) >= ops_[ref.op].outputs.size())
    throw GraphError("graph output '" + name + "' refers to a tensor that does not exist");
  outputs_.push_back({ref, std::move(name)});
}

std::vector<OpId> Graph::replace_uses(TensorRef from, TensorRef to) {
  info(to);  // throws if `to` does not exist
  std::vector<OpId> changed;
  for (size_t i = 0; i < ops_.size(); ++i) {
    bool touched = false;
    for (TensorRef& ref : ops_[i].inputs)
      if (ref == from) {
        ref = to;
        touched = true;
      }
    if (touched) changed.push_back(static_cast<OpId>(i));
  }
  for (GraphOutput& out : outputs_)
    if (out.ref == from) out.ref = to;
  return changed;
}

const TensorInfo& Graph::info(TensorRef ref) const {
  const Op& producer = op(ref.op);
  if (ref.index < 0 || static_cast<size_t>(ref.index) >= producer.outputs.size())
    throw GraphError(describe_op(*this, ref.op) + " has no output " + std::to_string(ref.index));
  return producer.outputs[ref.index];
}

std::vector<OpId> Graph::topological_order() const {
  const size_t n = ops_.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<OpId>> users(n);
  for (size_t i = 0; i < n; ++i) {
    for (const TensorRef& ref : ops_[i].inputs) {
      if (ref.op < 0 || static_cast<size_t>(ref.op) >= n)
        throw GraphError(describe_op(*this, static_cast<OpId>(i)) + " has a dangling input (op #" +
                         std::to_string(ref.op) + " does not exist)");
      ++pending[i];
      users[ref.op].push_back(static_cast<OpId>(i));
    }
  }
  // Kahn's algorithm, taking ready ops in id order so the result is deterministic.
  std::vector<OpId> order;
  order.reserve(n);
  std::vector<OpId> ready;
  for (size_t i = n; i-- > 0;)
    if (pending[i] == 0) ready.push_back(static_cast<OpId>(i));
  while (!ready.empty()) {
    OpId id = ready.back();
    ready.pop_back();
    order.push_back(id);
    std::vector<OpId> released;
    for (OpId user : users[id])
      if (--pending[user] == 0) released.push_back(user);
    std::sort(released.rbegin(), released.rend());
    for (OpId r : released) ready.push_back(r);
  }
  if (order.size() != n) {
    std::string members;
    int listed = 0;
    for (size_t i = 0; i < n && listed < 8; ++i)
      if (pending[i] > 0) {
        members += (listed ? ", " : "") + describe_op(*this, static_cast<OpId>(i));
        ++listed;
      }
    throw GraphError("graph has a cycle through " + members);
  }
  return order;
}

void Graph::check_structure() const {
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (const TensorRef& ref : ops_[i].inputs) {
      if (ref.op < 0 || static_cast<size_t>(ref.op) >= ops_.size())
        throw GraphError(describe_op(*this, static_cast<OpId>(i)) + " has a dangling input (op #" +
                         std::to_string(ref.op) + " does not exist)");
      if (ref.index < 0 || static_cast<size_t>(ref.index) >= ops_[ref.op].outputs.size())
        throw GraphError(describe_op(*this, static_cast<OpId>(i)) + " reads output " + std::to_string(ref.index) +
                         " of " + describe_op(*this, ref.op) + ", which has only " +
                         std::to_string(ops_[ref.op].outputs.size()));
    }
    const Op& op = ops_[i];
    if (op.type == OpType::Weight && !op.value && !op.random)
      throw GraphError(describe_op(*this, static_cast<OpId>(i)) + " has neither data nor a random initialiser");
  }
  for (const GraphOutput& out : outputs_)
    if (out.ref.op < 0 || static_cast<size_t>(out.ref.op) >= ops_.size() || out.ref.index < 0 ||
        static_cast<size_t>(out.ref.index) >= ops_[out.ref.op].outputs.size())
      throw GraphError("graph output '" + out.name + "' is dangling");
  topological_order();  // throws on a cycle
}

std::vector<std::vector<std::vector<TensorUse>>> Graph::consumers() const {
  std::vector<std::vector<std::vector<TensorUse>>> uses(ops_.size());
  for (size_t i = 0; i < ops_.size(); ++i) uses[i].resize(ops_[i].outputs.size());
  for (size_t i = 0; i < ops_.size(); ++i)
    for (size_t s = 0; s < ops_[i].inputs.size(); ++s) {
      const TensorRef& ref = ops_[i].inputs[s];
      uses[ref.op][ref.index].push_back({static_cast<OpId>(i), static_cast<int32_t>(s)});
    }
  return uses;
}

std::vector<bool> Graph::live_ops() const {
  std::vector<bool> live(ops_.size(), false);
  std::vector<OpId> stack;
  for (const GraphOutput& out : outputs_) stack.push_back(out.ref.op);
  while (!stack.empty()) {
    OpId id = stack.back();
    stack.pop_back();
    if (live[id]) continue;
    live[id] = true;
    for (const TensorRef& ref : ops_[id].inputs) stack.push_back(ref.op);
  }
  return live;
}

Graph Graph::pruned() const {
  std::vector<bool> keep = live_ops();
  for (OpId id : input_ops_) keep[id] = true;
  Graph out;
  std::vector<OpId> remap(ops_.size(), -1);
  for (OpId id : topological_order()) {
    if (!keep[id]) continue;
    Op copy = ops_[id];
    for (TensorRef& ref : copy.inputs) ref.op = remap[ref.op];
    out.ops_.push_back(std::move(copy));
    remap[id] = static_cast<OpId>(out.ops_.size() - 1);
  }
  for (OpId id : input_ops_) out.input_ops_.push_back(remap[id]);
  for (const GraphOutput& o : outputs_) out.outputs_.push_back({{remap[o.ref.op], o.ref.index}, o.name});
  return out;
}

int64_t Graph::num_params() const {
  int64_t total = 0;
  for (const Op& op : ops_)
    if (op.type == OpType::Weight && op.outputs[0].dtype == DType::Float32) total += op.outputs[0].numel();
  return total;
}

}  // namespace graphworld
