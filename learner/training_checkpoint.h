// A training run's checkpoint files (RUN/checkpoints/ckpt-N.ckpt, N the
// update count): what one holds, writing it atomically with a checksum and
// pruning old ones, and reading it back. Both trainers write them: the
// in-process Trainer and the distributed learner (whose actors keep no
// state, so its collector state is empty and its acting parameters are the
// learner's). Policy export reads either.
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"
#include "learner/learner_counters.h"

namespace graphworld {

struct CheckpointContents {
  Config config;
  std::string learner_state;     // PpoLearner::save_state()
  std::string collector_state;   // serialize_collector_state(), where the next rollout starts ("" if none)
  std::string actor_parameters;  // what the next rollout is collected with
  std::string rule_library_hash;  // of the library the run chooses among
  int32_t num_xfers = 0;
  int64_t updates = 0, env_steps = 0, episodes = 0;  // updates: read from learner_state
  double wall_s = 0;
  // The distributed learner's counters (zero for the in-process Trainer,
  // and when read from a checkpoint written before they were kept).
  LearnerCounters learner_counters;
};

// Writes RUN/checkpoints/ckpt-UPDATES.ckpt and keeps the newest `keep`;
// returns its path.
std::string write_checkpoint_file(const std::string& run_dir, int64_t updates, const CheckpointContents& contents,
                                  int keep);

// The newest checkpoint in a run folder; UsageError if there is none.
std::string newest_checkpoint(const std::string& run_dir);

// Throws FormatError naming the file for a damaged or foreign one.
CheckpointContents read_checkpoint(const std::string& path);

// Whether a run may go on from `saved` with config `now`: UsageError for
// another rule library, ConfigError naming the first changed setting (only
// train.total_env_steps, train.checkpoint_every and train.keep_checkpoints
// may change).
void check_resumable(const CheckpointContents& saved, const Config& now, const std::string& rule_library_hash,
                     int32_t num_xfers, const std::string& path);

}  // namespace graphworld
