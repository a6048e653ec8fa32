// Training in one process: a RolloutCollector acting with a copy of the
// policy, and a PpoLearner updating it on each rollout. The distributed
// system splits the same two halves across processes.
//
// A run lives in a folder:
//   config.yaml               the resolved config (every key)
//   checkpoints/ckpt-N.ckpt   after update N: parameters, Adam state,
//                             counters, random streams, the environments'
//                             episodes so far, the config and the rule
//                             library's hash; ckpt-0 when the run starts,
//                             then the newest few are kept
//   metrics.jsonl             one JSON object per update
//   best/GRAPH.onnx           the cheapest graph found per training graph,
//   best/summary.json         and their costs
//
// With train.overlap (the default) the collector acts on its own thread with
// a copy of the parameters one update old, collecting the next rollout while
// the learner updates on the last: the two halves use both cores, at one
// update of policy lag (PPO's ratio is taken against the log-probabilities
// the rollout was collected with, so the lag is accounted for). Without it,
// collection and update alternate on one thread. Both are deterministic.
//
// Stopping (total steps reached, or should_stop turning true) writes a final
// checkpoint of the last completed update. A checkpoint names the rollout to
// learn from next by the collector state it starts from and the parameters
// it is collected with; a rollout collected but not yet learned from, or cut
// short by a stop, is collected again on resume, identically, so nothing is
// lost and a resumed run equals an uninterrupted one bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "learner/ppo_learner.h"
#include "learner/rollout_collector.h"
#include "learner/training_checkpoint.h"
#include "learner/training_metrics.h"
#include "learner/training_config.h"

namespace graphworld {

struct TrainingOutcome {
  int64_t updates = 0;
  int64_t env_steps = 0;
  bool stopped_early = false;  // should_stop turned true
  std::string last_checkpoint;
};

class Trainer {
 public:
  // A new run in `run_dir` (absent or empty), or with `resume` a checkpoint
  // in it (`checkpoint`, or else the newest). The matcher and cost model
  // must outlive the trainer. Throws UsageError for a run folder in the
  // wrong state or a run made with another rule library, ConfigError when a
  // resume changes a setting the run depends on, FormatError for a damaged
  // checkpoint (an older one is not tried silently: the error names the
  // file, and --checkpoint picks another).
  Trainer(const RunSettings& settings, std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
          const std::string& run_dir, bool resume, const std::string& checkpoint = "");
  ~Trainer();

  // Trains until train.total_env_steps real steps or should_stop() (which
  // must be thread-safe: with overlap the collector's thread polls it too);
  // calls
  // on_update after every update.
  TrainingOutcome run(const std::function<bool()>& should_stop = {},
                      const std::function<void(const UpdateReport&)>& on_update = {});

  PpoLearner& learner() { return *learner_; }
  RolloutCollector& collector() { return *collector_; }
  const TrainingOptions& options() const { return options_; }
  int64_t env_steps() const { return env_steps_; }
  const std::string& run_dir() const { return run_dir_; }

  // Writes a checkpoint of the current state now; returns its path.
  std::string write_checkpoint();

 private:
  void load_checkpoint(const std::string& path);
  void write_best_graphs();

  Config config_;  // the resolved config, kept and compared on resume, never read
  TrainingOptions options_;
  std::string rule_library_hash_;
  std::string run_dir_;
  std::unique_ptr<PpoLearner> learner_;
  std::unique_ptr<RolloutCollector> collector_;
  // The next rollout to learn from is collected from this collector state
  // with these parameters (the learner's own without overlap).
  RolloutCollectorState pending_start_;
  std::unique_ptr<PolicyNetwork> actor_;
  int64_t env_steps_ = 0;
  int64_t episodes_ = 0;
  double wall_s_ = 0;
  std::vector<double> written_best_ms_;  // best costs already written to best/
};


}  // namespace graphworld
