// What an actor hands the learner: segments of consecutive steps, one per
// environment, with what PPO needs of each step.
//
// Observations are kept compact: the graph tuple and the xfer mask in full,
// but the candidate locations of the taken xfer only (the location head
// scores just those during an update). A ResNet-50 step is tens of KiB
// instead of the quarter megabyte the full location mask takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/rollout_store.h"
#include "env/gym/graph_env.h"

namespace graphworld {

// A copy of `observation` holding the locations of `taken_xfer` only (none
// for NO-OP), with their location rewards; every other xfer keeps its mask
// bit and its xfer reward but lists no locations.
Observation compact_observation(const Observation& observation, int32_t taken_xfer);

struct RolloutStep {
  Observation observation;  // compact (see above)
  Action action;
  float log_prob = 0;  // under the policy that acted
  float value = 0;
  float reward = 0;
  bool done = false;  // the episode ended with this step
  // Where the step happened, so a store can rebuild the observation by
  // replaying the episode: the training graph, the episode's seed, and the
  // steps taken in it before this one. cost_ms is the cost after the step.
  int32_t graph_index = 0;
  uint64_t episode_seed = 0;
  int32_t episode_step = 0;
  double cost_ms = 0;
};

// One environment's segment of consecutive steps; episodes may end inside.
struct RolloutSegment {
  std::vector<RolloutStep> steps;
  float bootstrap_value = 0;  // value of the state after the last step (unused if it ended an episode)
};

// A finished episode, for progress and metrics.
struct EpisodeSummary {
  std::string graph;        // the training graph's name
  double reduction_pct = 0;  // 100 * (C0 - C_T) / C0
  double best_reduction_pct = 0;  // the best graph reached during the episode
  int32_t steps = 0;
  // Played by a model-based controller's greedy policy: the episodes that
  // measure a round and decide which round's agent the run keeps.
  bool greedy = false;
};

struct Rollout {
  std::vector<RolloutSegment> segments;
  std::vector<EpisodeSummary> episodes;  // episodes that ended during the rollout
  int64_t policy_version = 0;            // the learner update the acting parameters came from
  uint64_t parameters_from = 0;          // the incarnation of the learner process that sent them (0: in-process)
  // The cost model's counts when the rollout ended, read on the collecting
  // thread (gpu: distinct configurations priced from the measured table and
  // by the model), cumulative for the process; an actor sends them with
  // each trajectory.
  int64_t cost_table_hits = 0, cost_model_fallbacks = 0;
  int64_t env_steps() const;
};

// The rollout's steps as the rollout store keeps them (segment k is the
// actor's environment slot k), in segment order.
std::vector<StoredStep> to_stored_steps(const Rollout& rollout, uint32_t actor_id);

}  // namespace graphworld
