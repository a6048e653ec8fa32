#include "env/search/search_state.h"

#include "common/error.h"
#include "env/search/rewrite_price.h"

namespace graphworld {

void SearchState::apply(size_t i) {
  const int32_t rule = rewriter.matches().at(i).rule;
  RewriteResult r = rewriter.apply(i);
  cost.update(rewriter.graph(), r.removed, r.added_or_changed());
  applied.push_back(rule);
}

SearchState SearchState::priced_child(size_t i) const {
  RewriteResult r;
  SearchState child(rewriter.rewritten_copy(i, r), cost, applied);
  child.cost.update(child.rewriter.graph(), r.removed, r.added_or_changed());
  child.applied.push_back(rewriter.matches()[i].rule);
  return child;
}

double SearchState::child_cost_ms(size_t i) const { return cost_after_rewrite(rewriter, i, cost); }

void finish_result(SearchResult& result, const SearchState& best, const RuleMatcher& matcher, const Stopwatch& clock) {
  result.graph = best.rewriter.graph().pruned();
  result.best_cost_ms = best.cost_ms();
  result.applied.clear();
  for (int32_t r : best.applied) result.applied.push_back(matcher.rules()[static_cast<size_t>(r)].name);
  result.search_s = clock.elapsed_s();
}

void ProgressTicker::maybe(const SearchProgress& p, bool force) {
  if (!options_.progress) return;
  if (!force && !first_ && since_.elapsed_s() < options_.progress_interval_s) return;
  first_ = false;
  since_.restart();
  options_.progress(p);
}

std::map<std::string, int> SearchResult::applied_counts() const {
  std::map<std::string, int> counts;
  for (const std::string& r : applied) ++counts[r];
  return counts;
}

SearchResult run_search(const std::string& algorithm, const Graph& graph, const RuleMatcher& matcher, CostModel& cost,
                        const SearchOptions& options) {
  if (options.budget < 0) throw UsageError("the search budget must be >= 0 (got " + std::to_string(options.budget) + ")");
  if (!(options.alpha >= 1.0)) throw UsageError("alpha must be >= 1 (got " + std::to_string(options.alpha) + ")");
  if (options.max_queue < 1) throw UsageError("the queue bound must be >= 1");
  if (algorithm == "taso") return taso_search(graph, matcher, cost, options);
  if (algorithm == "greedy") return greedy_search(graph, matcher, cost, options);
  if (algorithm == "random") return random_search(graph, matcher, cost, options);
  throw UsageError("unknown search '" + algorithm + "': use taso, greedy or random");
}

}  // namespace graphworld
