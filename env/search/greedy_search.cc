// Greedy search: price every match of the current graph, take the cheapest
// result while it improves, stop when nothing does.
#include "env/search/search_state.h"

namespace graphworld {

SearchResult greedy_search(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, const SearchOptions& options) {
  Stopwatch clock;
  ProgressTicker ticker(options);
  SearchResult result;
  result.algorithm = "greedy";
  SearchState current(matcher, graph, cost);
  result.original_cost_ms = current.cost_ms();
  auto report = [&](bool force) {
    ticker.maybe({result.original_cost_ms, current.cost_ms(), result.explored, result.generated, 0, clock.elapsed_s()},
                 force);
  };
  while (result.explored < options.budget) {
    double best_cost = current.cost_ms();
    int64_t best_match = -1;
    for (size_t i = 0; i < current.rewriter.matches().size(); ++i) {
      const double child_cost = current.child_cost_ms(i);
      ++result.generated;
      if (child_cost < best_cost) {
        best_cost = child_cost;
        best_match = static_cast<int64_t>(i);
      }
    }
    if (best_match < 0) break;
    current.apply(static_cast<size_t>(best_match));
    ++result.explored;
    report(false);
  }
  report(true);
  finish_result(result, current, matcher, clock);
  return result;
}

}  // namespace graphworld
