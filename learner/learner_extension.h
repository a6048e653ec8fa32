// What a model-based run puts into the distributed learner in place of PPO
// on real samples (worldmodel/model_based_learner.h implements it): the
// learner keeps the connection, the rollout store, checkpoints and metrics
// rows; the extension learns a world model from the real steps, trains the
// controller on dream trajectories and says what parameters to publish.
//
// Torch-free, so learner/distributed_learner.h stays cheap to include.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/rollout_store.h"
#include "learner/rollout.h"
#include "learner/training_metrics.h"
#include "learner/wire_message.h"

namespace graphworld {

class LearnerExtension {
 public:
  virtual ~LearnerExtension() = default;

  // The version of the parameters to publish, and their blob (what the
  // actors' ActorWork::load_parameters reads).
  virtual int64_t version() const = 0;
  virtual std::string parameters() const = 0;

  // Real steps just stored (every valid one, in arrival order) and the
  // episodes that ended among them.
  virtual void take_real(const std::vector<StoredStep>& steps, const std::vector<EpisodeSummary>& episodes) = 0;

  // A dream trajectory acted with parameters of `version`. False when it is
  // of no use (another world model, older than the lag allows, no dream
  // wanted now): the learner counts it stale.
  virtual bool take_dream(const DreamTrajectoryMessage& dream, int64_t version) = 0;

  // Called on every turn of the learner's loop, between messages: moves the
  // schedule on (long work runs on a thread of its own, so the loop keeps
  // answering actors). True when version() changed and the new parameters
  // must be published; then `report` holds the numbers for a metrics row
  // (the learner adds its own counters).
  virtual bool advance(UpdateReport& report) = 0;

  // The schedule has run its course: the learner stops the run.
  virtual bool finished() const = 0;

  // What a checkpoint keeps of the extension (world model, controller,
  // schedule position): a LibTorch archive with a "version" tensor, as
  // PpoLearner::save_state() (checkpoint readers take the version from it).
  virtual std::string save_state() const = 0;

  // Continues from a checkpoint's save_state(): `stored` is every step of
  // the run's rollout store, in order (what the extension learned from is
  // rebuilt from it). FormatError naming `what` when the state is not one.
  virtual void restore_state(const std::string& state, const std::vector<StoredStep>& stored,
                             const std::string& what) = 0;
};

}  // namespace graphworld
