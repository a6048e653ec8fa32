#include "env/cost/cost_model.h"

namespace graphworld {

CostModel::~CostModel() = default;

double CostModel::op_cost_ms(const Graph& graph, OpId id, uint64_t constant_inputs, uint64_t blocked_inputs) {
  if (!prices_layouts()) blocked_inputs = 0;
  const Op& op = graph.op(id);
  uint64_t hash = op_cost_hash(graph, op, constant_inputs, blocked_inputs);
  auto found = memo_.find(hash);
  if (found != memo_.end())
    for (const Entry& entry : found->second)
      if (key_matches(entry.key, graph, op, constant_inputs, blocked_inputs)) return entry.ms;
  OpCostKey key = make_op_cost_key(graph, id, constant_inputs, blocked_inputs);
  double ms = compute_ms(key);
  memo_[hash].push_back({std::move(key), ms});
  ++memo_size_;
  return ms;
}

double CostModel::key_cost_ms(const OpCostKey& key) {
  auto found = memo_.find(key.hash);
  if (found != memo_.end())
    for (const Entry& entry : found->second)
      if (entry.key == key) return entry.ms;
  double ms = compute_ms(key);
  memo_[key.hash].push_back({key, ms});
  ++memo_size_;
  return ms;
}

}  // namespace graphworld
