// What a rollout store holds, in a few numbers per actor and per graph: what
// `graphworld rollouts inspect` prints. Reads the store in slices, so a
// store of any size is summarised in bounded memory, and works on a store
// that a learner is still writing (it sees the flushed steps).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/rollout_store.h"

namespace graphworld {

struct RolloutStoreSummary {
  RolloutStoreInfo info;
  int64_t steps = 0;
  int64_t episodes_ended = 0;              // steps with done set
  int64_t min_policy_version = 0, max_policy_version = 0;
  double reward_sum = 0;
  std::map<uint32_t, int64_t> steps_by_actor;
  struct PerGraph {
    int64_t steps = 0, episodes_ended = 0;
    double lowest_cost_ms = 0;  // the cheapest graph any step reached (0 if no steps)
  };
  std::vector<PerGraph> graphs;  // as info.graphs
};

// `slice_steps` rows are read at a time.
RolloutStoreSummary summarize_rollout_store(const RolloutStoreReader& store, int64_t slice_steps = 1 << 20);

}  // namespace graphworld
