#include "learner/rollout.h"

namespace graphworld {

Observation compact_observation(const Observation& observation, int32_t taken_xfer) {
  Observation c;
  c.graph = observation.graph;
  c.num_xfers = observation.num_xfers;
  c.max_locations = observation.max_locations;
  c.xfer_mask = observation.xfer_mask;
  // location_mask stays empty: only location_begin / node_begin / match_nodes
  // are read when the location head scores candidates.
  const int32_t n = observation.num_xfers;
  const int32_t count = taken_xfer >= 0 && taken_xfer < n ? observation.location_count(taken_xfer) : 0;
  c.location_begin.assign(static_cast<size_t>(n) + 1, 0);
  for (int32_t x = taken_xfer + 1; x <= n && count > 0; ++x) c.location_begin[x] = count;
  c.node_begin.reserve(static_cast<size_t>(count) + 1);
  c.node_begin.push_back(0);
  for (int32_t loc = 0; loc < count; ++loc) {
    for (int32_t node : observation.matched_nodes(taken_xfer, loc)) c.match_nodes.push_back(node);
    c.node_begin.push_back(static_cast<int32_t>(c.match_nodes.size()));
  }
  if (!observation.location_reward.empty() && count > 0) {
    const auto begin = observation.location_reward.begin() + observation.location_begin[static_cast<size_t>(taken_xfer)];
    c.location_reward.assign(begin, begin + count);
  }
  c.xfer_reward = observation.xfer_reward;
  return c;
}

int64_t Rollout::env_steps() const {
  int64_t n = 0;
  for (const RolloutSegment& s : segments) n += static_cast<int64_t>(s.steps.size());
  return n;
}

std::vector<StoredStep> to_stored_steps(const Rollout& rollout, uint32_t actor_id) {
  std::vector<StoredStep> out;
  out.reserve(static_cast<size_t>(rollout.env_steps()));
  for (size_t slot = 0; slot < rollout.segments.size(); ++slot)
    for (const RolloutStep& step : rollout.segments[slot].steps) {
      StoredStep s;
      s.actor_id = actor_id;
      s.env_slot = static_cast<int32_t>(slot);
      s.policy_version = rollout.policy_version;
      s.graph_index = step.graph_index;
      s.episode_seed = step.episode_seed;
      s.episode_step = step.episode_step;
      s.xfer = step.action.xfer;
      s.location = step.action.location;
      s.reward = step.reward;
      s.done = step.done ? 1 : 0;
      s.cost_ms = step.cost_ms;
      s.log_prob = step.log_prob;
      s.value = step.value;
      out.push_back(s);
    }
  return out;
}

}  // namespace graphworld
