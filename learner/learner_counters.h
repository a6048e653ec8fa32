// What the distributed learner counts beyond PPO's own figures: messages it
// accepted and refused, samples too stale to learn from, the policy lag of
// those it kept, and actors joining and going silent. Every metrics row
// reports them, and a checkpoint keeps them, so that a restarted or resumed
// learner goes on counting where the run was instead of starting at 0.
#pragma once

#include <cstdint>

namespace graphworld {

struct LearnerCounters {
  int64_t messages = 0;            // trajectory messages accepted
  int64_t refused_messages = 0;    // failed decoding or validation, on any socket
  int64_t stale_samples = 0;       // dropped for exceeding max_policy_lag
  double lag_sum = 0;              // over accepted samples, for the mean lag
  int64_t lag_samples = 0;
  int64_t actor_joins = 0, actor_losses = 0;  // a restarted actor joins again
};

}  // namespace graphworld
