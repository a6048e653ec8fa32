#include "env/rules/graph_index.h"

#include <algorithm>

namespace graphworld {

GraphIndex::GraphIndex(const Graph& graph)
    : by_type_(static_cast<size_t>(kNumOpTypes)), live_count_(static_cast<size_t>(kNumOpTypes), 0) {
  const size_t n = graph.num_ops();
  live_.assign(n, 0);
  constant_.assign(n, 0);
  graph_output_.assign(n, 0);
  depth_.assign(n, 0);
  consumers_.assign(n, {});
  std::vector<bool> live = graph.live_ops();
  for (const GraphOutput& out : graph.outputs()) graph_output_[static_cast<size_t>(out.ref.op)] = 1;
  for (OpId id : graph.topological_order()) {
    const auto i = static_cast<size_t>(id);
    live_[i] = live[i] || graph.op(id).type == OpType::Input;
    link(graph, id, live_[i] != 0);
  }
  for (OpId id = 0; id < static_cast<OpId>(n); ++id) {
    if (!live_[static_cast<size_t>(id)]) continue;
    by_type_[static_cast<size_t>(graph.op(id).type)].push_back(id);
    ++live_count_[static_cast<size_t>(graph.op(id).type)];
  }
}

void GraphIndex::link(const Graph& graph, OpId id, bool record_uses) {
  const Op& op = graph.op(id);
  bool all_constant = op.type != OpType::Input;
  int32_t depth = 0;
  for (size_t s = 0; s < op.inputs.size(); ++s) {
    const TensorRef& r = op.inputs[s];
    all_constant = all_constant && constant_[static_cast<size_t>(r.op)];
    depth = std::max(depth, depth_[static_cast<size_t>(r.op)] + 1);
    if (record_uses) consumers_[static_cast<size_t>(r.op)].push_back({id, static_cast<int32_t>(s), r.index});
  }
  constant_[static_cast<size_t>(id)] = all_constant;
  depth_[static_cast<size_t>(id)] = depth;
}

void GraphIndex::append(const Graph& graph, OpId id) {
  live_.push_back(1);
  constant_.push_back(0);
  graph_output_.push_back(0);
  depth_.push_back(0);
  consumers_.emplace_back();
  link(graph, id, true);
  by_type_[static_cast<size_t>(graph.op(id).type)].push_back(id);
  ++live_count_[static_cast<size_t>(graph.op(id).type)];
}

void GraphIndex::add_ops(const Graph& graph, OpId first_new) {
  for (OpId id = first_new; id < static_cast<OpId>(graph.num_ops()); ++id) append(graph, id);
}

void GraphIndex::move_uses(TensorRef from, TensorRef to, bool was_graph_output) {
  auto& from_uses = consumers_[static_cast<size_t>(from.op)];
  auto& to_uses = consumers_[static_cast<size_t>(to.op)];
  for (auto it = from_uses.begin(); it != from_uses.end();) {
    if (it->output == from.index) {
      to_uses.push_back({it->op, it->slot, to.index});
      it = from_uses.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(to_uses.begin(), to_uses.end(),
            [](const TensorConsumer& a, const TensorConsumer& b) { return std::tie(a.op, a.slot) < std::tie(b.op, b.slot); });
  if (was_graph_output) graph_output_[static_cast<size_t>(to.op)] = 1;
}

void GraphIndex::kill(const Graph& graph, OpId id) {
  const auto i = static_cast<size_t>(id);
  if (!live_[i]) return;
  live_[i] = 0;
  const Op& op = graph.op(id);
  --live_count_[static_cast<size_t>(op.type)];
  auto& same_type = by_type_[static_cast<size_t>(op.type)];
  same_type.erase(std::remove(same_type.begin(), same_type.end(), id), same_type.end());
  for (const TensorRef& r : op.inputs) {
    auto& uses = consumers_[static_cast<size_t>(r.op)];
    uses.erase(std::remove_if(uses.begin(), uses.end(), [&](const TensorConsumer& u) { return u.op == id; }),
               uses.end());
  }
}

void GraphIndex::repair_depths(const Graph& graph, const std::vector<OpId>& ops) {
  std::vector<OpId> work = ops;
  while (!work.empty()) {
    OpId id = work.back();
    work.pop_back();
    int32_t depth = 0;
    for (const TensorRef& r : graph.op(id).inputs) depth = std::max(depth, depth_[static_cast<size_t>(r.op)] + 1);
    if (depth <= depth_[static_cast<size_t>(id)]) continue;
    depth_[static_cast<size_t>(id)] = depth;
    for (const TensorConsumer& c : consumers_[static_cast<size_t>(id)]) work.push_back(c.op);
  }
}

}  // namespace graphworld
