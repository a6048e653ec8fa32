// One graph in a search: the rewriter (graph, index, matches), its tracked
// cost and the rules applied to reach it from the input.
#pragma once

#include <cstdint>
#include <vector>

#include "common/stopwatch.h"
#include "env/cost/graph_cost.h"
#include "env/rules/graph_rewriter.h"
#include "env/search/search.h"

namespace graphworld {

struct SearchState {
  GraphRewriter rewriter;
  CostTracker cost;
  std::vector<int32_t> applied;  // rule ids

  SearchState(const RuleMatcher& matcher, const Graph& graph, CostModel& model)
      : rewriter(matcher, graph), cost(model) {
    cost.reset(rewriter.graph());
  }
  double cost_ms() const { return cost.total_ms(); }
  // Applies match i and re-prices what changed.
  void apply(size_t i);
  // The graph match i leads to, priced but not re-matched (its matches()
  // are empty): cheap enough to price every child of a graph.
  SearchState priced_child(size_t i) const;
  // The cost priced_child(i) would have, to the last bit, without building
  // the child where rewrite_price.h can price the rewrite locally.
  double child_cost_ms(size_t i) const;

 private:
  SearchState(GraphRewriter r, CostTracker c, std::vector<int32_t> a)
      : rewriter(std::move(r)), cost(std::move(c)), applied(std::move(a)) {}
};

// Fills the result's graph, cost and applied rules from `best`.
void finish_result(SearchResult& result, const SearchState& best, const RuleMatcher& matcher, const Stopwatch& clock);

// Calls options.progress at most every options.progress_interval_s.
class ProgressTicker {
 public:
  explicit ProgressTicker(const SearchOptions& options) : options_(options) {}
  void maybe(const SearchProgress& p, bool force = false);

 private:
  const SearchOptions& options_;
  Stopwatch since_;
  bool first_ = true;
};

}  // namespace graphworld
