// The keys a training run reads (`graphworld train CONFIG [key=value ...]`),
// with defaults, ranges and help, and their conversion into the options of
// the pieces that use them. configs/train.yaml lists them all with comments.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "learner/ppo_learner.h"
#include "learner/rollout_collector.h"

namespace graphworld {

const ConfigSchema& training_config_schema();

struct TrainingOptions {
  std::vector<std::string> graphs;  // zoo names or ONNX files
  int64_t total_env_steps = 0;
  int64_t checkpoint_every = 0;  // updates
  int64_t keep_checkpoints = 0;
  int32_t threads = 1;
  std::string device = "cpu";  // train.device as asked ("cpu" or "cuda"); resolve_compute_device says what runs
  bool overlap = true;  // collect the next rollout while updating on the last
  std::string cost_model, rates, rules;
  std::string cost_table;  // measured/cuda runs: the table every actor prices from ("" = measure at start)
  std::string gpu, gpu_table;  // gpu runs: the profile (name or file) and table ("auto", "none" or a file)
  PolicyNetworkConfig network;  // num_xfers is set from the rule library
  PpoOptions ppo;
  RolloutCollectorOptions collector;
};

TrainingOptions training_options_from(const Config& config);

}  // namespace graphworld
