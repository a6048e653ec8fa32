// What rebuilds a run's observations from its stored steps: the run's
// rules, cost model (the run folder's rates or cost table, or the
// config's), training graphs and episode settings, held together as long
// as the replay is used. Offline world-model training reads stores with it
// (store_episodes.h); a model-based run's learner rebuilds its real
// episodes with it as they arrive.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "env/rules/rule_library.h"
#include "learner/observation_replay.h"
#include "learner/training_config.h"

namespace graphworld {

class RunReplay {
 public:
  // `graph_names` in the store's order. Errors as load_training_graphs'
  // and the cost model's.
  RunReplay(const std::string& run_dir, const TrainingOptions& options, const std::vector<std::string>& graph_names);
  ObservationReplay& replay() { return *replay_; }
  const RuleMatcher& matcher() const { return *matcher_; }
  const std::string& rule_library_hash() const { return hash_; }

 private:
  RuleLibrary library_;
  std::unique_ptr<RuleMatcher> matcher_;
  std::unique_ptr<CostModel> cost_;
  std::vector<TrainingGraph> graphs_;
  std::unique_ptr<ObservationReplay> replay_;
  std::string hash_;
};

}  // namespace graphworld
