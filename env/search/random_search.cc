// Random search: walks of random matches from the input graph; the best
// graph any walk reaches is the result. A baseline for the agents.
#include <memory>
#include <random>

#include "env/search/search_state.h"

namespace graphworld {

SearchResult random_search(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, const SearchOptions& options) {
  Stopwatch clock;
  ProgressTicker ticker(options);
  SearchResult result;
  result.algorithm = "random";
  const SearchState root(matcher, graph, cost);
  result.original_cost_ms = root.cost_ms();
  SearchState best = root;
  auto report = [&](bool force) {
    ticker.maybe({result.original_cost_ms, best.cost_ms(), result.explored, result.generated, 0, clock.elapsed_s()}, force);
  };
  std::mt19937_64 rng(options.seed);
  const int32_t walk_length = std::max<int32_t>(1, options.walk_length);
  while (result.explored < options.budget && !root.rewriter.matches().empty()) {
    SearchState walk = root;
    for (int32_t s = 0; s < walk_length && result.explored < options.budget && !walk.rewriter.matches().empty(); ++s) {
      walk.apply(static_cast<size_t>(rng() % walk.rewriter.matches().size()));
      ++result.explored;
      ++result.generated;
      if (walk.cost_ms() < best.cost_ms()) best = walk;
    }
    report(false);
  }
  report(true);
  finish_result(result, best, matcher, clock);
  return result;
}

}  // namespace graphworld
