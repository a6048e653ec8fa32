// Search baselines over the same rules and cost models the agents use.
//
//   taso_search    TASO's cost-based backtracking: a priority queue ordered by
//                  cost; expanding a graph applies every match to it; a result
//                  enters the queue if it costs less than alpha times the best
//                  so far and has not been seen (structural equality). Stops
//                  after `budget` expansions or when the queue is empty.
//   greedy_search  applies the single best improvement until none is left
//                  (at most `budget` steps).
//   random_search  random walks of up to `walk_length` steps from the input,
//                  `budget` steps in all, keeping the best graph seen.
//
// Every search returns a graph no worse than its input (the input itself
// when nothing helps). Memory is bounded: the queue holds at most
// `max_queue` entries (the costliest are dropped) and each entry is a parent
// and a match index, re-applied when expanded; an expanded graph is kept only
// while a queued entry needs it, so memory does not grow with the budget.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "env/cost/cost_model.h"
#include "env/graph/graph.h"
#include "env/rules/rule_matcher.h"

namespace graphworld {

struct SearchProgress {
  double original_cost_ms = 0;
  double best_cost_ms = 0;
  int64_t explored = 0;   // graphs expanded (taso), steps taken (greedy, random)
  int64_t generated = 0;  // rewritten graphs built and priced
  size_t queued = 0;
  double elapsed_s = 0;
};

struct SearchOptions {
  int64_t budget = 1000;
  double alpha = 1.05;
  uint64_t seed = 0;
  size_t max_queue = 4096;
  int32_t walk_length = 50;  // random search
  // Called about every `progress_interval_s` and once at the end.
  std::function<void(const SearchProgress&)> progress;
  double progress_interval_s = 0.5;
};

struct SearchResult {
  std::string algorithm;
  Graph graph;  // the best graph found, pruned of dead ops
  double original_cost_ms = 0;
  double best_cost_ms = 0;
  std::vector<std::string> applied;  // rule names, in the order they were applied
  int64_t explored = 0;
  int64_t generated = 0;
  double search_s = 0;
  // An agent's result finished by greedy search (greedy_finish.h): the cost
  // the agent alone reached, the finish's rewrites and its time. `ran` is
  // false for searches and for an agent with --finish none.
  struct Finish {
    bool ran = false;
    double agent_cost_ms = 0;
    int64_t steps = 0;
    double seconds = 0;
  };
  Finish finish;

  double reduction_pct() const { return 100.0 * (original_cost_ms - best_cost_ms) / original_cost_ms; }
  // What the agent alone reached: reduction_pct() when there was no finish.
  double agent_reduction_pct() const {
    return finish.ran ? 100.0 * (original_cost_ms - finish.agent_cost_ms) / original_cost_ms : reduction_pct();
  }
  std::map<std::string, int> applied_counts() const;
};

SearchResult taso_search(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, const SearchOptions& options);
SearchResult greedy_search(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, const SearchOptions& options);
SearchResult random_search(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, const SearchOptions& options);

// By name: "taso", "greedy" or "random" (UsageError otherwise).
SearchResult run_search(const std::string& algorithm, const Graph& graph, const RuleMatcher& matcher, CostModel& cost,
                        const SearchOptions& options);

}  // namespace graphworld
