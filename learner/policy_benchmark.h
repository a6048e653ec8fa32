// How fast the policy network is on this machine: the numbers that decide
// its size. Inference for one observation (what an actor pays per step with
// one environment), batched inference, and full PPO minibatch steps
// (forward, clipped loss, backward, gradient clipping, Adam) in samples/s,
// two ways in the same run: as the learner trains now (the minibatch shared
// by `workers` threads, each with its own copy of the network and LibTorch
// on one thread, learner/ppo_epochs.h), and as it trained before (one
// network, LibTorch's own threads, ATen's row operators,
// learner/segment_ops.h), so the speed-up is measured, not remembered.
#pragma once

#include <cstdint>
#include <string>
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
  int32_t workers = 0;        // PPO workers; 0 = train_threads on a CPU, 1 on a GPU
  std::string device = "cpu";
  bool reference = true;      // also time the previous learner
  bool cuda_graphs = false;   // replay each PPO step's forward and backward pass from a CUDA graph (GPU only)
  uint64_t seed = 0;
};

struct PolicyBenchmarkResult {
  int64_t parameters = 0;
  double inference_median_ms = 0;  // act() on one observation
  double inference_p90_ms = 0;
  double batched_ms_per_observation = 0;  // act() on `minibatch` observations at once
  int32_t workers = 0;
  double ppo_step_ms = 0;  // one minibatch step, median
  double ppo_samples_per_s = 0;
  double reference_ppo_samples_per_s = 0;  // the previous learner; 0 when not timed
  // Floating-point operations of the matrix products in one PPO step
  // (forward, and backward to inputs and weights), and their rate.
  double ppo_gflop_per_step = 0;
  double ppo_gflops = 0;
};

// `observations` are the samples (at least one); minibatches cycle through them.
PolicyBenchmarkResult benchmark_policy(const std::vector<Observation>& observations,
                                       const PolicyBenchmarkOptions& options);

}  // namespace graphworld
