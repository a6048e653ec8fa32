#include "learner/training_config.h"

#include "common/config_table.h"

namespace graphworld {
namespace {

using TrainingKeys = ConfigTable<TrainingOptions>;

const TrainingKeys& training_keys() {
  static const TrainingKeys keys = [] {
    TrainingKeys k;
    k.texts(
        "train.graphs", {"squeezenet1.1"}, "training graphs: zoo names or ONNX files (each reset picks one uniformly)",
        [](TrainingOptions & o) -> auto& { return o.graphs; });
    k.integer(
        "train.total_env_steps", 200000, 1, int64_t{1} << 40, "stop after this many real environment steps",
        [](TrainingOptions & o) -> auto& { return o.total_env_steps; });
    k.integer(
        "train.seed", 0, 0, INT64_MAX, "seeds the network, the environments and minibatch shuffling",
        [](TrainingOptions & o) -> auto& { return o.seed; });
    k.integer(
        "train.threads", 1, 1, 256, "LibTorch intra-op threads (1 is fastest for this network's small ops)",
        [](TrainingOptions & o) -> auto& { return o.threads; });
    k.text(
        "train.device", "cpu",
        "where the learner's network trains and dream actors dream: cpu, or cuda (needs a CUDA-enabled "
        "LibTorch and a GPU; without them each says so and runs on the CPU). Real actors act on the CPU",
        {"cpu", "cuda"}, [](TrainingOptions & o) -> auto& { return o.device; });
    k.boolean(
        "train.overlap", true,
        "collect the next rollout on a second thread while the learner updates (one update of policy lag)",
        [](TrainingOptions & o) -> auto& { return o.overlap; });
    k.integer(
        "train.checkpoint_every", 20, 1, 1000000, "write a checkpoint every this many updates",
        [](TrainingOptions & o) -> auto& { return o.checkpoint_every; });
    k.integer(
        "train.keep_checkpoints", 3, 1, 1000, "how many of the newest checkpoints to keep",
        [](TrainingOptions & o) -> auto& { return o.keep_checkpoints; });
    k.integer(
        "env.num_envs", 8, 1, 4096, "environments stepped together (one batched forward pass per step)",
        [](TrainingOptions & o) -> auto& { return o.collector.num_envs; });
    k.integer(
        "env.steps_per_env", 32, 1, 100000, "steps per environment per rollout; a rollout feeds one update",
        [](TrainingOptions & o) -> auto& { return o.collector.steps_per_env; });
    k.integer(
        "env.max_steps", 200, 1, 100000, "episode length limit (an episode also ends on NO-OP or no match)",
        [](TrainingOptions & o) -> auto& { return o.collector.env.max_steps; });
    k.integer(
        "env.max_locations", 200, 1, 100000, "candidate locations per xfer the agent sees",
        [](TrainingOptions & o) -> auto& { return o.collector.env.max_locations; });
    k.text("env.reward", "incremental", "reward: incremental (cost saved each step) or final (at the end)",
           {"incremental", "final"},
           [](TrainingOptions& o, const std::string& v) { o.collector.env.reward = reward_kind_from_name(v); });
    k.text(
        "env.cost_model", "analytic",
        "cost model pricing graphs: analytic, measured (this CPU), cuda (this GPU) or gpu (a named GPU "
        "priced on any machine: its measured table, else tiles and waves over its SMs)",
        {"analytic", "measured", "cuda", "gpu"}, [](TrainingOptions & o) -> auto& { return o.cost_model; });
    k.text(
        "env.gpu", "h100-sxm",
        "gpu: the GPU priced, a profile name in configs/gpu (h100-sxm, a100-sxm, v100-sxm) or a profile "
        "YAML file; copied into the run folder",
        [](TrainingOptions & o) -> auto& { return o.gpu; });
    k.text(
        "env.gpu_table", "auto",
        "gpu: 'auto' (the measured table shipped in configs/gpu for the GPU, if any), 'none' (the model "
        "alone) or a measured cuda table file; copied into the run folder",
        [](TrainingOptions & o) -> auto& { return o.gpu_table; });
    k.text(
        "env.rates", "builtin",
        "analytic rates: 'builtin' (the built-in defaults, the same on every machine) or a rates YAML "
        "file such as configs/gpu_rates.yaml",
        [](TrainingOptions & o) -> auto& { return o.rates; });
    k.text(
        "env.cost_table", "",
        "measured/cuda: the run's cost table from 'graphworld cost export-table'; empty: the learner "
        "measures the training graphs at start. Every actor prices from it",
        [](TrainingOptions & o) -> auto& { return o.cost_table; });
    k.text(
        "env.rules", "", "rule library file; empty: the library built into graphworld",
        [](TrainingOptions & o) -> auto& { return o.rules; });
    k.integer(
        "network.hidden", 32, 4, 1024, "embedding width of the graph encoder and heads",
        [](TrainingOptions & o) -> auto& { return o.network.hidden; });
    k.integer(
        "network.message_rounds", 3, 0, 16, "message-passing rounds of the graph encoder",
        [](TrainingOptions & o) -> auto& { return o.network.message_rounds; });
    k.boolean(
        "network.location_rewards", false,
        "the policy heads also read the reward each allowed location would earn at once (the environments then "
        "price every allowed location at every step)",
        [](TrainingOptions & o) -> auto& { return o.network.location_rewards; });
    k.real(
        "ppo.learning_rate", 3e-4, 1e-8, 1.0, "Adam step size",
        [](TrainingOptions & o) -> auto& { return o.ppo.learning_rate; });
    k.integer(
        "ppo.epochs", 2, 1, 1000, "passes over each rollout",
        [](TrainingOptions & o) -> auto& { return o.ppo.epochs; });
    k.integer(
        "ppo.minibatch_size", 64, 1, 1000000, "samples per Adam step",
        [](TrainingOptions & o) -> auto& { return o.ppo.minibatch_size; });
    k.real(
        "ppo.gamma", 0.99, 0.0, 1.0, "discount", [](TrainingOptions & o) -> auto& { return o.ppo.gamma; });
    k.real(
        "ppo.gae_lambda", 0.95, 0.0, 1.0, "GAE lambda", [](TrainingOptions & o) -> auto& { return o.ppo.gae_lambda; });
    k.real(
        "ppo.clip", 0.2, 1e-6, 0.999, "PPO clipping range", [](TrainingOptions & o) -> auto& { return o.ppo.clip; });
    k.real(
        "ppo.value_coef", 0.5, 0.0, 1e6, "weight of the value loss",
        [](TrainingOptions & o) -> auto& { return o.ppo.value_coef; });
    k.real(
        "ppo.entropy_coef", 0.01, 0.0, 1e6, "weight of the entropy bonus",
        [](TrainingOptions & o) -> auto& { return o.ppo.entropy_coef; });
    k.real(
        "ppo.max_grad_norm", 0.5, 1e-6, 1e6, "gradient-norm clipping",
        [](TrainingOptions & o) -> auto& { return o.ppo.max_grad_norm; });
    k.boolean(
        "ppo.normalize_advantages", true, "normalise advantages per update",
        [](TrainingOptions & o) -> auto& { return o.ppo.normalize_advantages; });
    k.integer(
        "ppo.workers", 1, 1, 256,
        "threads that share each minibatch, each with its own copy of the network (with train.threads 1: "
        "one per core the learner has to itself)",
        [](TrainingOptions & o) -> auto& { return o.ppo.workers; });
    k.boolean(
        "ppo.cuda_graphs", false,
        "on a GPU, replay each minibatch's forward and backward pass from a CUDA graph (needs train.device cuda, "
        "ppo.workers 1 and a LibTorch with CUDA)",
        [](TrainingOptions & o) -> auto& { return o.ppo.cuda_graphs; });
    k.integer(
        "distributed.actors", 2, 1, 4096, "actor processes the single-node launcher starts",
        [](TrainingOptions & o) -> auto& { return o.distributed.actors; });
    k.integer(
        "distributed.max_policy_lag", 4, 0, 1000,
        "the learner drops samples made with parameters more than this many updates old",
        [](TrainingOptions & o) -> auto& { return o.distributed.max_policy_lag; });
    k.real(
        "distributed.heartbeat_timeout_s", 5.0, 0.5, 3600, "an actor silent this long is counted lost",
        [](TrainingOptions & o) -> auto& { return o.distributed.heartbeat_timeout_s; });
    k.real(
        "distributed.store_flush_s", 5.0, 0.1, 3600,
        "the rollout store is flushed at least this often (a crash loses at most this much)",
        [](TrainingOptions & o) -> auto& { return o.distributed.store_flush_s; });
    // Model-based runs (worldmodel/model_based_learner.h says the schedule).
    k.boolean(
        "model_based.enabled", false,
        "train the model-based agent: a world model on real episodes, a controller by PPO in its dream",
        [](TrainingOptions & o) -> auto& { return o.model_based.enabled; });
    k.integer(
        "model_based.dream_actors", 1, 1, 4096, "dream actor processes the single-node launcher starts",
        [](TrainingOptions & o) -> auto& { return o.model_based.dream_actors; });
    k.integer(
        "model_based.rounds", 6, 1, 100000, "rounds of (world model, dream training, real episodes)",
        [](TrainingOptions & o) -> auto& { return o.model_based.rounds; });
    k.integer(
        "model_based.random_episodes", 4, 1, 100000, "random real episodes per graph before the first world model",
        [](TrainingOptions & o) -> auto& { return o.model_based.random_episodes; });
    k.integer(
        "model_based.random_steps", 100, 0, 1000000,
        "rewrites a random episode takes before it stops (0: until no rule applies or env.max_steps)",
        [](TrainingOptions & o) -> auto& { return o.model_based.random_steps; });
    k.integer(
        "model_based.episodes_per_round", 1, 0, 100000,
        "sampled controller episodes per graph and round, besides one greedy one (none in the last round)",
        [](TrainingOptions & o) -> auto& { return o.model_based.episodes_per_round; });
    k.real(
        "model_based.explore", 0.1, 0.0, 1.0, "chance of a random allowed rule in sampled real episodes",
        [](TrainingOptions & o) -> auto& { return o.model_based.explore; });
    k.boolean(
        "model_based.verify_plans", true,
        "each round but the last, also play the dream's greedy plan per graph in the real graph, so the "
        "world model learns where its dream was wrong",
        [](TrainingOptions & o) -> auto& { return o.model_based.verify_plans; });
    k.boolean(
        "model_based.best_locations", false,
        "the environments price every location, and each rule the controller picks is applied at its "
        "best-paying location (greedy search's place for it) instead of its first one",
        [](TrainingOptions & o) -> auto& { return o.model_based.best_locations; });
    k.boolean(
        "model_based.look_ahead_locations", false,
        "with best_locations: each rule the controller picks goes where it pays most within two rewrites (its "
        "saving now and the best the next rewrite then saves), trying each of its locations on a copy of the "
        "graph, instead of where it pays most now",
        [](TrainingOptions & o) -> auto& { return o.model_based.look_ahead_locations; });
    k.boolean(
        "model_based.random_locations", false,
        "the random episodes put each rule at a uniformly random one of its matches instead of where the "
        "controller's rules go, so they reach states that path never does (say, two convs both folded "
        "before either is merged or fused)",
        [](TrainingOptions & o) -> auto& { return o.model_based.random_locations; });
    k.integer(
        "model_based.calibration_episodes", 4, 0, 100000,
        "in the last round, the final controller's sampled episodes per graph that the world model learns from "
        "before it predicts that controller against its greedy real episode",
        [](TrainingOptions & o) -> auto& { return o.model_based.calibration_episodes; });
    k.boolean(
        "model_based.calibration_keeps_controller_memory", true,
        "that retraining moves only the bookkeeping LSTM and the reward, done, mask and count heads; the "
        "controller keeps reading the h it was trained on (needs separate_controller_memory)",
        [](TrainingOptions & o) -> auto& { return o.model_based.calibration_keeps_controller_memory; });
    k.integer(
        "model_based.dream_updates", 60, 1, 10000000,
        "controller updates in the dream per round, one per dream actor message (the dream-to-real mix)",
        [](TrainingOptions & o) -> auto& { return o.model_based.dream_updates; });
    k.integer(
        "model_based.dream_rows", 256, 1, 65536, "dream environments a dream actor steps together",
        [](TrainingOptions & o) -> auto& { return o.model_based.dream_rows; });
    k.integer(
        "model_based.dream_horizon", 16, 1, 10000, "dream steps of each row per message",
        [](TrainingOptions & o) -> auto& { return o.model_based.dream_horizon; });
    k.real(
        "model_based.tau", 1.0, 0.01, 10.0, "the world model's sampling temperature in the dream",
        [](TrainingOptions & o) -> auto& { return o.model_based.tau; });
    k.real(
        "model_based.step_cost", 0.01, 0.0, 100.0,
        "what a rewrite that earns nothing costs the controller in the dream, in percentage points "
        "(NO-OP is free; a rewrite pays what its reward falls short of this), so that it learns to stop "
        "when nothing more is gained",
        [](TrainingOptions & o) -> auto& { return o.model_based.step_cost; });
    k.text("model_based.dream_reward", "incremental",
           "what the controller is paid in the dream: incremental (each step's predicted reward) or final "
           "(an episode's predicted reduction, when it ends)",
           {"incremental", "final"},
           [](TrainingOptions& o, const std::string& v) { o.model_based.dream_reward = reward_kind_from_name(v); });
    k.integer(
        "model_based.latent_dim", 32, 1, 4096, "size of the latent z",
        [](TrainingOptions & o) -> auto& { return o.model_based.latent_dim; });
    k.integer(
        "model_based.hidden", 256, 1, 65536, "the MDN-RNN's LSTM width",
        [](TrainingOptions & o) -> auto& { return o.model_based.hidden; });
    k.integer(
        "model_based.components", 8, 1, 256, "Gaussians in the next-z mixture",
        [](TrainingOptions & o) -> auto& { return o.model_based.components; });
    k.boolean(
        "model_based.separate_controller_memory", true,
        "the controller's h from an LSTM over (z, a) of its own, beside the one that reads and predicts the "
        "mask and match counts (false: one LSTM for both)",
        [](TrainingOptions & o) -> auto& { return o.model_based.separate_controller_memory; });
    k.integer(
        "model_based.encoder_epochs", 40, 0, 100000, "epochs of the latent encoder (first round only)",
        [](TrainingOptions & o) -> auto& { return o.model_based.encoder_epochs; });
    k.integer(
        "model_based.epochs", 100, 1, 100000, "MDN-RNN epochs in the first round",
        [](TrainingOptions & o) -> auto& { return o.model_based.epochs; });
    k.integer(
        "model_based.later_epochs", 40, 1, 100000, "MDN-RNN epochs in later rounds",
        [](TrainingOptions & o) -> auto& { return o.model_based.later_epochs; });
    k.real(
        "model_based.holdout", 0.2, 0.01, 0.99, "share of real episodes held out to pick the world model's best epoch",
        [](TrainingOptions & o) -> auto& { return o.model_based.holdout; });
    return k;
  }();
  return keys;
}

}  // namespace

const ConfigSchema& training_config_schema() { return training_keys().schema; }

RunSettings run_settings(const Config& resolved) { return {training_options_from(resolved), resolved}; }

TrainingOptions training_options_from(const Config& config) {
  TrainingOptions o = training_keys().options_from(config);
  if (o.graphs.empty()) throw ConfigError("'train.graphs' is empty: name at least one zoo model or ONNX file");
  // One seed, distinct streams.
  o.network.seed = o.seed;
  o.ppo.seed = o.seed + 1;
  o.collector.seed = o.seed + 2;
  // A policy that reads location rewards needs environments that make them;
  // in a model-based run the network is not used, and the controller's
  // rules go to their best-paying location exactly when the environments
  // price them (worldmodel/world_episode.h, chosen_location).
  o.collector.env.location_rewards =
      o.model_based.enabled ? o.model_based.best_locations : o.network.location_rewards;
  return o;
}

ModelBasedSettings default_model_based_settings() {
  static const ModelBasedSettings settings = training_options_from(Config(training_config_schema())).model_based;
  return settings;
}

}  // namespace graphworld
