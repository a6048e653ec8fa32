#include "common/rollout_store_summary.h"

#include <algorithm>

namespace graphworld {

RolloutStoreSummary summarize_rollout_store(const RolloutStoreReader& store, int64_t slice_steps) {
  RolloutStoreSummary s;
  s.info = store.info();
  s.steps = store.steps();
  s.graphs.resize(s.info.graphs.size());
  bool first = true;
  for (int64_t begin = 0; begin < s.steps; begin += slice_steps) {
    for (const StoredStep& step : store.read(begin, std::min(slice_steps, s.steps - begin))) {
      s.min_policy_version = first ? step.policy_version : std::min(s.min_policy_version, step.policy_version);
      s.max_policy_version = first ? step.policy_version : std::max(s.max_policy_version, step.policy_version);
      first = false;
      s.reward_sum += step.reward;
      s.episodes_ended += step.done;
      ++s.steps_by_actor[step.actor_id];
      if (step.graph_index < 0 || step.graph_index >= static_cast<int32_t>(s.graphs.size())) continue;
      RolloutStoreSummary::PerGraph& g = s.graphs[static_cast<size_t>(step.graph_index)];
      g.lowest_cost_ms = g.steps == 0 ? step.cost_ms : std::min(g.lowest_cost_ms, step.cost_ms);
      ++g.steps;
      g.episodes_ended += step.done;
    }
  }
  return s;
}

}  // namespace graphworld
