// Structural hash and structural equality of graphs.
//
// Both look only at what determines the computation: op types, parameters,
// wiring, shapes, weight identity, and which graph input is which. Names do
// not count, and ops no output depends on do not count.
#include <algorithm>

#include "common/error.h"
#include "env/graph/graph.h"
#include "env/graph/hashing.h"

namespace graphworld {
namespace {

uint64_t hash_info(uint64_t h, const TensorInfo& info) {
  h = hash_combine(h, static_cast<uint64_t>(info.dtype));
  for (int64_t d : info.shape) h = hash_combine(h, static_cast<uint64_t>(d));
  return hash_combine(h, info.shape.size());
}

uint64_t weight_identity(const Op& op) {
  if (op.value) return hash_combine(1, op.value->uid());
  const RandomInit& r = *op.random;
  return hash_combine(hash_combine(hash_combine(2, r.seed), hash_double(r.low)), hash_double(r.high));
}

bool same_weight(const Op& a, const Op& b) {
  if (a.value || b.value) return a.value && b.value && a.value->uid() == b.value->uid();
  return a.random && b.random && *a.random == *b.random;
}

// Position of each Input op among the graph inputs.
std::vector<int> input_positions(const Graph& g) {
  std::vector<int> pos(g.num_ops(), -1);
  for (size_t i = 0; i < g.input_ops().size(); ++i) pos[g.input_ops()[i]] = static_cast<int>(i);
  return pos;
}

}  // namespace

uint64_t Graph::structural_hash() const {
  std::vector<uint64_t> op_hash(ops_.size(), 0);
  std::vector<int> positions = input_positions(*this);
  for (OpId id : topological_order()) {
    const Op& op = ops_[id];
    uint64_t h = hash_combine(0x51ed27, static_cast<uint64_t>(op.type));
    h = hash_combine(h, op.attrs.hash());
    for (const TensorInfo& info : op.outputs) h = hash_info(h, info);
    if (op.type == OpType::Weight) h = hash_combine(h, weight_identity(op));
    if (op.type == OpType::Input) h = hash_combine(h, static_cast<uint64_t>(positions[id]));
    for (const TensorRef& ref : op.inputs) h = hash_combine(hash_combine(h, op_hash[ref.op]), ref.index);
    op_hash[id] = h;
  }
  uint64_t h = hash_combine(0x6a09e667, outputs_.size());
  for (OpId id : input_ops_) h = hash_info(h, ops_[id].outputs[0]);
  for (const GraphOutput& out : outputs_) h = hash_combine(hash_combine(h, op_hash[out.ref.op]), out.ref.index);
  return h;
}

bool Graph::structurally_equal(const Graph& other) const {
  if (outputs_.size() != other.outputs_.size() || input_ops_.size() != other.input_ops_.size()) return false;
  // The signature counts even for inputs no output reads.
  for (size_t k = 0; k < input_ops_.size(); ++k)
    if (ops_[input_ops_[k]].outputs != other.ops_[other.input_ops_[k]].outputs) return false;
  std::vector<int> pos_a = input_positions(*this);
  std::vector<int> pos_b = input_positions(other);
  // mapping[a] = b once a pair has been proven equal (or is being checked).
  std::vector<OpId> mapping(ops_.size(), -1);
  std::vector<OpId> reverse(other.ops_.size(), -1);
  std::vector<std::pair<OpId, OpId>> stack;
  auto push = [&](OpId a, OpId b) {
    if (mapping[a] != -1 || reverse[b] != -1) return mapping[a] == b && reverse[b] == a;
    mapping[a] = b;
    reverse[b] = a;
    stack.emplace_back(a, b);
    return true;
  };
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (outputs_[i].ref.index != other.outputs_[i].ref.index) return false;
    if (!push(outputs_[i].ref.op, other.outputs_[i].ref.op)) return false;
  }
  while (!stack.empty()) {
    auto [a, b] = stack.back();
    stack.pop_back();
    const Op& x = ops_[a];
    const Op& y = other.ops_[b];
    if (x.type != y.type || x.outputs != y.outputs || !(x.attrs == y.attrs) || x.inputs.size() != y.inputs.size())
      return false;
    if (x.type == OpType::Weight && !same_weight(x, y)) return false;
    if (x.type == OpType::Input && pos_a[a] != pos_b[b]) return false;
    for (size_t k = 0; k < x.inputs.size(); ++k) {
      if (x.inputs[k].index != y.inputs[k].index) return false;
      if (!push(x.inputs[k].op, y.inputs[k].op)) return false;
    }
  }
  return true;
}

}  // namespace graphworld
