// A learner rank other than 0 (learner/data_parallel.h): it holds a copy of
// rank 0's PPO learner and takes part in every update. It talks to no
// actor and writes nothing: rank 0 sends it the run's id and learner state
// once, then each update's batch as trajectory messages, then a stop.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "learner/training_config.h"

namespace graphworld {

class DataParallelGroup;

struct FollowerCounters {
  int64_t updates = 0, samples = 0;
};

// Returns when rank 0 says stop. `options.network.num_xfers` must be set;
// `num_graphs` is the run's graph count (messages are checked against both).
FollowerCounters follow_data_parallel(DataParallelGroup& group, const TrainingOptions& options, int32_t num_graphs);

// What rank 0 sends, in order (internal to learner/): the learner state at
// the start, a batch per update, a stop at the end.
std::string encode_follower_batch(const std::vector<std::string>& messages);
std::string follower_stop();

}  // namespace graphworld
