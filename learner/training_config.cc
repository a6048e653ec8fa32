#include "learner/training_config.h"

namespace graphworld {

const ConfigSchema& training_config_schema() {
  static const ConfigSchema schema = [] {
    ConfigSchema s;
    s.add_string_list("train.graphs", {"squeezenet1.1"},
                      "training graphs: zoo names or ONNX files (each reset picks one uniformly)");
    s.add_int("train.total_env_steps", 200000, 1, int64_t{1} << 40, "stop after this many real environment steps");
    s.add_int("train.seed", 0, 0, INT64_MAX, "seeds the network, the environments and minibatch shuffling");
    s.add_int("train.threads", 1, 1, 256, "LibTorch intra-op threads (1 is fastest for this network's small ops)");
    s.add_string("train.device", "cpu",
                 "where the learner's network trains and dream actors dream: cpu, or cuda (needs a CUDA-enabled "
                 "LibTorch and a GPU; without them each says so and runs on the CPU). Real actors act on the CPU",
                 {"cpu", "cuda"});
    s.add_bool("train.overlap", true,
               "collect the next rollout on a second thread while the learner updates (one update of policy lag)");
    s.add_int("train.checkpoint_every", 20, 1, 1000000, "write a checkpoint every this many updates");
    s.add_int("train.keep_checkpoints", 3, 1, 1000, "how many of the newest checkpoints to keep");
    s.add_int("env.num_envs", 8, 1, 4096, "environments stepped together (one batched forward pass per step)");
    s.add_int("env.steps_per_env", 32, 1, 100000, "steps per environment per rollout; a rollout feeds one update");
    s.add_int("env.max_steps", 200, 1, 100000, "episode length limit (an episode also ends on NO-OP or no match)");
    s.add_int("env.max_locations", 200, 1, 100000, "candidate locations per xfer the agent sees");
    s.add_string("env.reward", "incremental", "reward: incremental (cost saved each step) or final (at the end)",
                 {"incremental", "final"});
    s.add_string("env.cost_model", "analytic",
                 "cost model pricing graphs: analytic, measured (this CPU), cuda (this GPU) or gpu (a named GPU "
                 "priced on any machine: its measured table, else tiles and waves over its SMs)",
                 {"analytic", "measured", "cuda", "gpu"});
    s.add_string("env.gpu", "h100-sxm",
                 "gpu: the GPU priced, a profile name in configs/gpu (h100-sxm, a100-sxm, v100-sxm) or a profile "
                 "YAML file; copied into the run folder");
    s.add_string("env.gpu_table", "auto",
                 "gpu: 'auto' (the measured table shipped in configs/gpu for the GPU, if any), 'none' (the model "
                 "alone) or a measured cuda table file; copied into the run folder");
    s.add_string("env.rates", "builtin",
                 "analytic rates: 'builtin' (the built-in defaults, the same on every machine) or a rates YAML "
                 "file such as configs/gpu_rates.yaml");
    s.add_string("env.cost_table", "",
                 "measured/cuda: the run's cost table from 'graphworld cost export-table'; empty: the learner "
                 "measures the training graphs at start. Every actor prices from it");
    s.add_string("env.rules", "", "rule library file; empty: the library built into graphworld");
    s.add_int("network.hidden", 32, 4, 1024, "embedding width of the graph encoder and heads");
    s.add_int("network.message_rounds", 3, 0, 16, "message-passing rounds of the graph encoder");
    s.add_double("ppo.learning_rate", 3e-4, 1e-8, 1.0, "Adam step size");
    s.add_int("ppo.epochs", 2, 1, 1000, "passes over each rollout");
    s.add_int("ppo.minibatch_size", 64, 1, 1000000, "samples per Adam step");
    s.add_double("ppo.gamma", 0.99, 0.0, 1.0, "discount");
    s.add_double("ppo.gae_lambda", 0.95, 0.0, 1.0, "GAE lambda");
    s.add_double("ppo.clip", 0.2, 1e-6, 0.999, "PPO clipping range");
    s.add_double("ppo.value_coef", 0.5, 0.0, 1e6, "weight of the value loss");
    s.add_double("ppo.entropy_coef", 0.01, 0.0, 1e6, "weight of the entropy bonus");
    s.add_double("ppo.max_grad_norm", 0.5, 1e-6, 1e6, "gradient-norm clipping");
    s.add_bool("ppo.normalize_advantages", true, "normalise advantages per update");
    s.add_int("distributed.actors", 2, 1, 4096, "actor processes the single-node launcher starts");
    s.add_int("distributed.max_policy_lag", 4, 0, 1000,
              "the learner drops samples made with parameters more than this many updates old");
    s.add_double("distributed.heartbeat_timeout_s", 5.0, 0.5, 3600, "an actor silent this long is counted lost");
    s.add_double("distributed.store_flush_s", 5.0, 0.1, 3600,
                 "the rollout store is flushed at least this often (a crash loses at most this much)");
    // Model-based runs (worldmodel/model_based_learner.h says the schedule).
    s.add_bool("model_based.enabled", false,
               "train the model-based agent: a world model on real episodes, a controller by PPO in its dream");
    s.add_int("model_based.dream_actors", 1, 1, 4096, "dream actor processes the single-node launcher starts");
    s.add_int("model_based.rounds", 6, 1, 100000, "rounds of (world model, dream training, real episodes)");
    s.add_int("model_based.random_episodes", 4, 1, 100000, "random real episodes per graph before the first world model");
    s.add_int("model_based.random_steps", 100, 0, 1000000,
              "rewrites a random episode takes before it stops (0: until no rule applies or env.max_steps)");
    s.add_int("model_based.episodes_per_round", 1, 0, 100000,
              "sampled controller episodes per graph and round, besides one greedy one (none in the last round)");
    s.add_double("model_based.explore", 0.1, 0.0, 1.0, "chance of a random allowed rule in sampled real episodes");
    s.add_bool("model_based.verify_plans", true,
               "each round but the last, also play the dream's greedy plan per graph in the real graph, so the "
               "world model learns where its dream was wrong");
    s.add_int("model_based.calibration_episodes", 4, 0, 100000,
              "in the last round, the final controller's sampled episodes per graph that the world model learns from "
              "before it predicts that controller against its greedy real episode");
    s.add_bool("model_based.calibration_keeps_controller_memory", true,
               "that retraining moves only the bookkeeping LSTM and the reward, done, mask and count heads; the "
               "controller keeps reading the h it was trained on (needs separate_controller_memory)");
    s.add_int("model_based.dream_updates", 60, 1, 10000000,
              "controller updates in the dream per round, one per dream actor message (the dream-to-real mix)");
    s.add_int("model_based.dream_rows", 256, 1, 65536, "dream environments a dream actor steps together");
    s.add_int("model_based.dream_horizon", 16, 1, 10000, "dream steps of each row per message");
    s.add_double("model_based.tau", 1.0, 0.01, 10.0, "the world model's sampling temperature in the dream");
    s.add_double("model_based.step_cost", 0.01, 0.0, 100.0,
                 "what a rewrite that earns nothing costs the controller in the dream, in percentage points "
                 "(NO-OP is free; a rewrite pays what its reward falls short of this), so that it learns to stop "
                 "when nothing more is gained");
    s.add_int("model_based.latent_dim", 32, 1, 4096, "size of the latent z");
    s.add_int("model_based.hidden", 256, 1, 65536, "the MDN-RNN's LSTM width");
    s.add_int("model_based.components", 8, 1, 256, "Gaussians in the next-z mixture");
    s.add_bool("model_based.separate_controller_memory", true,
               "the controller's h from an LSTM over (z, a) of its own, beside the one that reads and predicts the "
               "mask and match counts (false: one LSTM for both)");
    s.add_int("model_based.encoder_epochs", 40, 0, 100000, "epochs of the latent encoder (first round only)");
    s.add_int("model_based.epochs", 100, 1, 100000, "MDN-RNN epochs in the first round");
    s.add_int("model_based.later_epochs", 40, 1, 100000, "MDN-RNN epochs in later rounds");
    s.add_double("model_based.holdout", 0.2, 0.01, 0.99, "share of real episodes held out to pick the world model's best epoch");
    return s;
  }();
  return schema;
}

TrainingOptions training_options_from(const Config& config) {
  TrainingOptions o;
  o.graphs = config.get_string_list("train.graphs");
  if (o.graphs.empty()) throw ConfigError("'train.graphs' is empty: name at least one zoo model or ONNX file");
  o.total_env_steps = config.get_int("train.total_env_steps");
  o.checkpoint_every = config.get_int("train.checkpoint_every");
  o.keep_checkpoints = config.get_int("train.keep_checkpoints");
  o.threads = static_cast<int32_t>(config.get_int("train.threads"));
  o.device = config.get_string("train.device");
  o.overlap = config.get_bool("train.overlap");
  o.cost_model = config.get_string("env.cost_model");
  o.rates = config.get_string("env.rates");
  o.cost_table = config.get_string("env.cost_table");
  o.gpu = config.get_string("env.gpu");
  o.gpu_table = config.get_string("env.gpu_table");
  o.rules = config.get_string("env.rules");
  const auto seed = static_cast<uint64_t>(config.get_int("train.seed"));
  o.network.hidden = static_cast<int32_t>(config.get_int("network.hidden"));
  o.network.message_rounds = static_cast<int32_t>(config.get_int("network.message_rounds"));
  o.network.seed = seed;
  o.ppo.learning_rate = config.get_double("ppo.learning_rate");
  o.ppo.epochs = static_cast<int32_t>(config.get_int("ppo.epochs"));
  o.ppo.minibatch_size = static_cast<int32_t>(config.get_int("ppo.minibatch_size"));
  o.ppo.gamma = config.get_double("ppo.gamma");
  o.ppo.gae_lambda = config.get_double("ppo.gae_lambda");
  o.ppo.clip = config.get_double("ppo.clip");
  o.ppo.value_coef = config.get_double("ppo.value_coef");
  o.ppo.entropy_coef = config.get_double("ppo.entropy_coef");
  o.ppo.max_grad_norm = config.get_double("ppo.max_grad_norm");
  o.ppo.normalize_advantages = config.get_bool("ppo.normalize_advantages");
  o.ppo.seed = seed + 1;
  o.collector.num_envs = static_cast<int32_t>(config.get_int("env.num_envs"));
  o.collector.steps_per_env = static_cast<int32_t>(config.get_int("env.steps_per_env"));
  o.collector.env.max_steps = static_cast<int32_t>(config.get_int("env.max_steps"));
  o.collector.env.max_locations = static_cast<int32_t>(config.get_int("env.max_locations"));
  o.collector.env.reward = reward_kind_from_name(config.get_string("env.reward"));
  o.collector.seed = seed + 2;
  return o;
}

}  // namespace graphworld
