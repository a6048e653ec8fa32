#include "env/search/greedy_finish.h"

#include "common/error.h"
#include "common/stopwatch.h"

namespace graphworld {

void finish_greedily(SearchResult& result, const RuleMatcher& matcher, CostModel& cost, int64_t max_steps) {
  if (max_steps < 1) throw UsageError("a greedy finish needs at least one step");
  Stopwatch clock;
  SearchResult::Finish finish;
  finish.ran = true;
  finish.agent_cost_ms = result.best_cost_ms;
  SearchOptions options;
  options.budget = max_steps;
  const SearchResult greedy = greedy_search(result.graph, matcher, cost, options);
  // Priced afresh from the agent's graph, which the agent priced the same
  // way: the greedy result is taken only when it is cheaper by that price.
  if (greedy.best_cost_ms < result.best_cost_ms) {
    result.graph = greedy.graph;
    result.best_cost_ms = greedy.best_cost_ms;
    result.applied.insert(result.applied.end(), greedy.applied.begin(), greedy.applied.end());
    finish.steps = greedy.explored;
  }
  finish.seconds = clock.elapsed_s();
  result.finish = finish;
}

}  // namespace graphworld
