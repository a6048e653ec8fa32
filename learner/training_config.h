// The keys a training run reads (`graphworld train CONFIG [key=value ...]`)
// and the typed options they become. One table (training_config.cc) holds
// each key's name, type, range, default and help, and where its value goes
// in TrainingOptions; the schema and the conversion are both made from it,
// and configs/train.yaml lists every key at its default (a test holds it
// so). The learner, trainer, actors and launchers read TrainingOptions,
// never keys: adding a key is one row plus the code that uses it.
#pragma once

#include <string>
#include <vector>

#include "common/config.h"
#include "learner/ppo_learner.h"
#include "learner/rollout_collector.h"

namespace graphworld {

const ConfigSchema& training_config_schema();

// distributed.*: the learner and actor processes. Filled by
// training_options_from; the defaults live in the key table only.
struct DistributedOptions {
  int32_t actors = 0;               // actor processes the single-node launcher starts
  int64_t max_policy_lag = 0;       // samples made with older parameters are dropped
  double heartbeat_timeout_s = 0;   // an actor silent this long is counted lost
  double store_flush_s = 0;         // the rollout store is flushed at least this often
};

// model_based.*: the model-based agent, as the run config gives it
// (worldmodel/model_based_config.h turns it into the agent's options; the
// key table says what each means).
struct ModelBasedSettings {
  bool enabled = false;
  int32_t dream_actors = 0;
  int32_t rounds = 0, random_episodes = 0, random_steps = 0, episodes_per_round = 0;
  double explore = 0;
  bool verify_plans = false;
  bool best_locations = false;
  bool look_ahead_locations = false;
  bool random_locations = false;
  int32_t calibration_episodes = 0;
  bool calibration_keeps_controller_memory = false;
  int32_t dream_updates = 0;
  int64_t dream_rows = 0;
  int32_t dream_horizon = 0;
  double tau = 0, step_cost = 0;
  RewardKind dream_reward = RewardKind::Incremental;
  int64_t latent_dim = 0, hidden = 0, components = 0;
  bool separate_controller_memory = false;
  int32_t encoder_epochs = 0, epochs = 0, later_epochs = 0;
  double holdout = 0;
};

struct TrainingOptions {
  std::vector<std::string> graphs;  // zoo names or ONNX files
  int64_t total_env_steps = 0;
  uint64_t seed = 0;             // train.seed; the network, PPO and the environments draw from it
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
  DistributedOptions distributed;
  ModelBasedSettings model_based;
};

// The model_based.* keys at their defaults (the `worldmodel agent` command
// starts from them).
ModelBasedSettings default_model_based_settings();

// Every key of `config` (made with training_config_schema()) into its
// field. ConfigError for what a key's range cannot say (no graphs).
TrainingOptions training_options_from(const Config& config);

// What a learner or trainer is given: the typed options it reads, and the
// resolved config they were filled from, which it only keeps (config.yaml,
// checkpoints, the store's run info) and compares on resume: no key is read
// from `resolved`.
struct RunSettings {
  TrainingOptions options;
  Config resolved;
};
// ConfigError as training_options_from.
RunSettings run_settings(const Config& resolved);

}  // namespace graphworld
