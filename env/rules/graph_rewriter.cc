#include "env/rules/graph_rewriter.h"

#include <algorithm>
#include <iterator>

#include "common/error.h"

namespace graphworld {

GraphRewriter::GraphRewriter(const RuleMatcher& matcher, Graph graph)
    : matcher_(&matcher), graph_(std::move(graph)), index_(graph_) {
  matches_ = matcher_->find_all(graph_, index_);
}

RewriteResult GraphRewriter::apply(size_t i) {
  if (i >= matches_.size())
    throw UsageError("match " + std::to_string(i) + " does not exist; the graph has " +
                     std::to_string(matches_.size()) + " matches");
  const RuleMatch match = matches_[i];
  std::vector<OpId> dirty;
  RewriteResult result = rewrite(match, dirty);
  rematch(result, dirty);
  return result;
}

GraphRewriter GraphRewriter::rewritten_copy(size_t i, RewriteResult& result) const {
  GraphRewriter copy(matcher_, graph_, index_);
  std::vector<OpId> dirty;
  result = copy.rewrite(matches_.at(i), dirty);
  return copy;
}

std::vector<OpId> RewriteResult::added_or_changed() const {
  std::vector<OpId> ops = added;
  ops.insert(ops.end(), changed.begin(), changed.end());
  return ops;
}

RewriteResult GraphRewriter::rewrite(const RuleMatch& match, std::vector<OpId>& gained) {
  const Rule& rule = matcher_->rules()[static_cast<size_t>(match.rule)];
  RewriteResult result;

  // 1. Build the target next to the source.
  const auto first_new = static_cast<OpId>(graph_.num_ops());
  auto target = build_pattern(rule.target, match.binding, match.vars, graph_, rule.name + ".");
  index_.add_ops(graph_, first_new);
  for (OpId id = first_new; id < static_cast<OpId>(graph_.num_ops()); ++id) result.added.push_back(id);

  // 2. Move every use of a mapped source output to its target tensor.
  // `gained`: producers whose outputs gained uses.
  for (const RuleOutput& o : rule.outputs) {
    const TensorRef from{match.ops[static_cast<size_t>(o.source.op)], o.source.index};
    const TensorRef to = resolve_ref(o.target, match.vars, target);
    bool was_output = false;
    for (const GraphOutput& go : graph_.outputs()) was_output = was_output || go.ref == from;
    std::vector<OpId> rewired = graph_.replace_uses(from, to);
    index_.move_uses(from, to, was_output);
    result.changed.insert(result.changed.end(), rewired.begin(), rewired.end());
    gained.push_back(to.op);
  }

  // 3. Retire the matched ops, then whatever only they used.
  std::vector<OpId> work(match.ops.begin(), match.ops.end());
  std::vector<OpId> lost;  // producers whose outputs lost uses
  while (!work.empty()) {
    const OpId id = work.back();
    work.pop_back();
    if (!index_.live(id)) continue;
    index_.kill(graph_, id);
    result.removed.push_back(id);
    for (const TensorRef& r : graph_.op(id).inputs) {
      lost.push_back(r.op);
      const Op& producer = graph_.op(r.op);
      if (index_.live(r.op) && producer.type != OpType::Input && index_.consumers(r.op).empty() &&
          !index_.is_graph_output(r.op))
        work.push_back(r.op);
    }
  }
  std::sort(result.changed.begin(), result.changed.end());
  result.changed.erase(std::unique(result.changed.begin(), result.changed.end()), result.changed.end());
  std::erase_if(result.changed, [&](OpId id) { return !index_.live(id) || id >= first_new; });
  index_.repair_depths(graph_, result.changed);

  gained.insert(gained.end(), lost.begin(), lost.end());
  for (OpId id : result.added)
    for (const TensorRef& r : graph_.op(id).inputs) gained.push_back(r.op);
  return result;
}

void GraphRewriter::rematch(const RewriteResult& result, const std::vector<OpId>& also_dirty) {
  std::vector<uint8_t> dirty(graph_.num_ops(), 0);
  std::vector<OpId> anchors;
  auto mark = [&](OpId id) {
    if (dirty[static_cast<size_t>(id)]) return;
    dirty[static_cast<size_t>(id)] = 1;
    anchors.push_back(id);
  };
  for (const auto* list : {&result.added, &result.removed, &result.changed, &also_dirty})
    for (OpId id : *list) mark(id);

  // Keep matches the rewrite did not touch; a merge elsewhere can still make
  // a multi-output match cyclic, so those are checked again.
  std::vector<RuleMatch> kept;
  kept.reserve(matches_.size());
  for (RuleMatch& m : matches_) {
    bool touched = false;
    for (OpId id : m.ops) touched = touched || dirty[static_cast<size_t>(id)];
    if (touched) continue;
    if (matcher_->may_create_cycle(m.rule) && !matcher_->acyclic(graph_, index_, m)) continue;
    kept.push_back(std::move(m));
  }

  std::vector<RuleMatch> fresh;
  std::sort(anchors.begin(), anchors.end());
  for (OpId id : anchors) matcher_->find_at(graph_, index_, id, fresh);
  std::sort(fresh.begin(), fresh.end());
  fresh.erase(std::unique(fresh.begin(), fresh.end(), [](const RuleMatch& a, const RuleMatch& b) { return a.same_place(b); }),
              fresh.end());

  matches_.clear();
  matches_.reserve(kept.size() + fresh.size());
  std::merge(std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()),
             std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()), std::back_inserter(matches_));
}

}  // namespace graphworld
