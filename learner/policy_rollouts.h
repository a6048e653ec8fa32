// Optimising a graph with a trained policy instead of a search: K rollouts
// from the input graph. The first is greedy (the most likely action each
// step) and runs to its end; the other K-1 sample, stepped together with one
// batched forward pass per step, while the time budget lasts. The cheapest
// graph reached at any step of any rollout wins, so a rollout that
// overshoots into worse graphs still yields its best prefix.
//
// The result is a SearchResult, so `optimize --policy` hands it to the same
// equivalence check, export and end-to-end gate as TASO's search.
#pragma once

#include <cstdint>

#include "env/gym/graph_env.h"
#include "env/search/search.h"
#include "learner/policy_network.h"

namespace graphworld {

struct PolicyRolloutOptions {
  int32_t rollouts = 8;  // K: one greedy plus K-1 sampled
  GraphEnvOptions env;   // max_steps and max_locations as in training
  uint64_t seed = 0;     // for the sampled rollouts
  int32_t threads = 1;   // LibTorch threads while rolling out (the network's ops are too small to split well)
  // Seconds after which the sampled rollouts stop (the greedy one always
  // finishes); 0: no limit, and the result is a function of the seed alone.
  double time_budget_s = 0;
};

// `result.search_s` is the rollouts' wall time, `explored` the env steps
// taken. Throws UsageError when the policy was made for another rule count.
SearchResult optimize_with_policy(const Graph& graph, const RuleMatcher& matcher, CostModel& cost,
                                  PolicyNetwork& policy, const PolicyRolloutOptions& options);

}  // namespace graphworld
