// Rebuilds, from a rollout store, the observation each stored step was acted
// on: GraphEnv is deterministic, so resetting the step's training graph with
// its episode seed and replaying the episode's earlier actions gives the
// observation back exactly. This is what lets the store keep ~60 bytes a
// step instead of the tens of KiB an observation takes (world models are
// retrained offline from it).
//
// Steps are followed per actor environment (actor id, env slot), in store
// order. A step whose episode history is not in the steps given (the store
// was read from the middle of an episode) cannot be rebuilt: it is counted,
// not guessed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "common/rollout_store.h"
#include "env/gym/graph_env.h"
#include "learner/rollout_collector.h"

namespace graphworld {

struct ReplayReport {
  int64_t rebuilt = 0;
  int64_t missed = 0;            // episode history not in the steps given
  // Rebuilt steps whose replayed cost after the step differs from the stored
  // one: the store was priced by another cost model than the replay's.
  int64_t cost_mismatches = 0;
};

class ObservationReplay {
 public:
  // `graphs` in the store's order (RolloutStoreInfo::graphs); the matcher,
  // cost model and env options must be the run's. The matcher and cost
  // model must outlive this.
  ObservationReplay(const std::vector<TrainingGraph>& graphs, const RuleMatcher& matcher, CostModel& cost,
                    const GraphEnvOptions& options);

  // Calls visit(i, observation) for each steps[i] that can be rebuilt, in
  // order. Environments carry over between calls, so a store can be read in
  // consecutive slices. FormatError naming the step if an action is not
  // allowed where the store says it was taken.
  ReplayReport replay(const std::vector<StoredStep>& steps,
                 const std::function<void(size_t index, const Observation& observation)>& visit);

 private:
  struct Live {
    std::unique_ptr<GraphEnv> env;
    int32_t graph_index = -1;
    uint64_t seed = 0;
    int32_t next_step = 0;  // episode_step the next stored step must have
  };
  std::vector<GraphEnv> prototypes_;
  std::map<std::pair<uint32_t, int32_t>, Live> live_;  // by (actor id, env slot)
};

}  // namespace graphworld
