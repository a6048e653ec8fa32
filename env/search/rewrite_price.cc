#include "env/search/rewrite_price.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "env/rules/rule_instance.h"

namespace graphworld {

namespace {

// The rule's target built alone: one leaf per matched variable's producer
// (a Weight where that value is constant, an Input otherwise, with the
// producer's output shapes), then the target ops. Every target op is a
// graph output, since the tracker counts new ops as live.
struct ScratchTarget {
  Graph graph;
  OpId first_target = 0;                           // ops before it are the leaves
  std::vector<OpId> original;                      // each leaf's producer in the rewritten graph
  std::vector<TensorRef> vars;                     // each variable's tensor in `graph`
  std::vector<std::vector<TensorRef>> op_outputs;  // each target op's outputs in `graph`
  std::vector<uint8_t> constant;                   // per op of `graph`, as CostTracker decides it
};

ScratchTarget build_scratch_target(const Graph& graph, const GraphIndex& index, const Rule& rule,
                                   const RuleMatch& match) {
  ScratchTarget s;
  std::map<OpId, OpId> leaf_of;
  s.vars.reserve(match.vars.size());
  for (const TensorRef& v : match.vars) {
    auto it = leaf_of.find(v.op);
    if (it == leaf_of.end()) {
      const OpType leaf = index.constant(v.op) ? OpType::Weight : OpType::Input;
      it = leaf_of.emplace(v.op, s.graph.add_op(leaf, "var", {}, {}, graph.op(v.op).outputs)).first;
      s.original.push_back(v.op);
    }
    s.vars.push_back({it->second, v.index});
  }
  s.first_target = static_cast<OpId>(s.graph.num_ops());
  s.op_outputs = build_pattern(rule.target, match.binding, s.vars, s.graph, rule.name + ".");
  const auto n = static_cast<OpId>(s.graph.num_ops());
  s.constant.assign(static_cast<size_t>(n), 0);
  for (OpId id = 0; id < n; ++id) {
    const Op& op = s.graph.op(id);
    bool all = op.type != OpType::Input;
    for (const TensorRef& in : op.inputs) all = all && s.constant[static_cast<size_t>(in.op)];
    s.constant[static_cast<size_t>(id)] = all;
  }
  for (OpId id = s.first_target; id < n; ++id) s.graph.add_output({id, 0}, "target");
  return s;
}

bool contains(const std::vector<OpId>& ops, OpId id) { return std::find(ops.begin(), ops.end(), id) != ops.end(); }

}  // namespace

std::optional<double> price_rewrite(const GraphRewriter& rewriter, size_t match_index, const CostTracker& cost) {
  CostModel& model = cost.model();
  if (model.prices_layouts()) return std::nullopt;
  const Graph& graph = rewriter.graph();
  const GraphIndex& index = rewriter.index();
  const RuleMatch& match = rewriter.matches().at(match_index);
  const Rule& rule = rewriter.matcher().rules()[static_cast<size_t>(match.rule)];

  // 1. The target, priced as the tracker prices new ops.
  const ScratchTarget target = build_scratch_target(graph, index, rule, match);
  CostTracker target_cost(model);
  target_cost.reset(target.graph);
  auto original = [&](OpId scratch_id) { return target.original[static_cast<size_t>(scratch_id)]; };

  // 2. How the uses of the graph's ops change (GraphRewriter::rewrite's
  // steps 1 and 2): the target reads variables, and the readers of each
  // mapped source output move to its target tensor, which may be a variable.
  std::map<OpId, int> gained_uses;
  std::vector<OpId> gained_graph_output;
  for (OpId id = target.first_target; id < static_cast<OpId>(target.graph.num_ops()); ++id)
    for (const TensorRef& in : target.graph.op(id).inputs)
      if (in.op < target.first_target) ++gained_uses[original(in.op)];
  std::vector<TensorRef> moved_from;
  std::vector<OpId> rewired;
  bool constness_changes = false;
  for (const RuleOutput& o : rule.outputs) {
    const TensorRef from{match.ops[static_cast<size_t>(o.source.op)], o.source.index};
    const TensorRef to = resolve_ref(o.target, target.vars, target.op_outputs);
    moved_from.push_back(from);
    int readers = 0;
    for (const TensorConsumer& c : index.consumers(from.op))
      if (c.output == from.index) {
        rewired.push_back(c.op);
        ++readers;
      }
    bool was_output = false;
    for (const GraphOutput& go : graph.outputs()) was_output = was_output || go.ref == from;
    if (to.op < target.first_target) {
      gained_uses[original(to.op)] += readers;
      if (was_output) gained_graph_output.push_back(original(to.op));
    }
    if (readers > 0 && index.constant(from.op) != (target.constant[static_cast<size_t>(to.op)] != 0))
      constness_changes = true;
  }

  // 3. The ops it retires, in GraphRewriter::rewrite's order: the matched
  // ops, then producers left without readers.
  std::vector<OpId> removed;
  auto alive = [&](OpId id) { return index.live(id) && !contains(removed, id); };
  auto uses_left = [&](OpId id) {
    int uses = 0;
    for (const TensorConsumer& c : index.consumers(id)) {
      const bool moved = std::find(moved_from.begin(), moved_from.end(), TensorRef{id, c.output}) != moved_from.end();
      if (!moved && !contains(removed, c.op)) ++uses;
    }
    auto gained = gained_uses.find(id);
    return uses + (gained == gained_uses.end() ? 0 : gained->second);
  };
  std::vector<OpId> work(match.ops.begin(), match.ops.end());
  while (!work.empty()) {
    const OpId id = work.back();
    work.pop_back();
    if (!alive(id)) continue;
    removed.push_back(id);
    for (const TensorRef& r : graph.op(id).inputs)
      if (alive(r.op) && graph.op(r.op).type != OpType::Input && uses_left(r.op) == 0 &&
          !index.is_graph_output(r.op) && !contains(gained_graph_output, r.op))
        work.push_back(r.op);
  }

  // 4. The readers that survive keep their price unless what they read
  // changes constness; then only the rewritten graph can tell.
  std::sort(rewired.begin(), rewired.end());
  rewired.erase(std::unique(rewired.begin(), rewired.end()), rewired.end());
  std::erase_if(rewired, [&](OpId id) { return contains(removed, id); });
  if (constness_changes && !rewired.empty()) return std::nullopt;

  // 5. CostTracker::update's sum, in its order: removed ops out, then each
  // new op and each rewired survivor re-priced.
  double total = cost.total_ms();
  for (OpId id : removed) total -= cost.op_ms(id);
  // (The tracker subtracts a new op's 0 first: no change to the sum.)
  for (OpId id = target.first_target; id < static_cast<OpId>(target.graph.num_ops()); ++id)
    total += target_cost.op_ms(id);
  for (OpId id : rewired) {
    total -= cost.op_ms(id);
    total += cost.op_ms(id);
  }
  return total;
}

double cost_after_rewrite(const GraphRewriter& rewriter, size_t match, const CostTracker& cost) {
  if (std::optional<double> local = price_rewrite(rewriter, match, cost)) return *local;
  RewriteResult changes;
  const GraphRewriter child = rewriter.rewritten_copy(match, changes);
  CostTracker child_cost = cost;
  return child_cost.update(child.graph(), changes.removed, changes.added_or_changed());
}

}  // namespace graphworld
