// How fast the policy network is on this machine: the numbers that decide
// its size. Inference for one observation (what an actor pays per step with
// one environment), batched inference, and full PPO minibatch steps
// (forward, clipped loss, backward, gradient clipping, Adam) in samples/s.
#pragma once

#include <cstdint>
#include <vector>

#include "env/gym/observation.h"
#include "learner/policy_network.h"

namespace graphworld {

struct PolicyBenchmarkOptions {
  PolicyNetworkConfig network;
  int32_t minibatch = 64;
  int32_t repeats = 20;
  int32_t inference_threads = 1;
  int32_t train_threads = 0;  // 0 = every core
  uint64_t seed = 0;
};

struct PolicyBenchmarkResult {
  int64_t parameters = 0;
  double inference_median_ms = 0;  // act() on one observation
  double inference_p90_ms = 0;
  double batched_ms_per_observation = 0;  // act() on `minibatch` observations at once
  double train_samples_per_s = 0;         // PPO minibatch steps
  double train_step_ms = 0;
};

// `observations` are the samples (at least one); minibatches cycle through them.
PolicyBenchmarkResult benchmark_policy(const std::vector<Observation>& observations,
                                       const PolicyBenchmarkOptions& options);

}  // namespace graphworld
