#include "worldmodel/model_based_config.h"

#include "common/error.h"
#include "learner/training_config.h"

namespace graphworld {

ModelBasedOptions model_based_options_from(const Config& config) {
  const TrainingOptions training = training_options_from(config);
  ModelBasedOptions o;
  auto int32 = [&](const char* key) { return static_cast<int32_t>(config.get_int(key)); };
  o.rounds = int32("model_based.rounds");
  o.random_episodes = int32("model_based.random_episodes");
  o.random_steps = int32("model_based.random_steps");
  o.episodes_per_round = int32("model_based.episodes_per_round");
  o.explore = config.get_double("model_based.explore");
  o.verify_dream_plans = config.get_bool("model_based.verify_plans");
  o.calibration_episodes = int32("model_based.calibration_episodes");
  o.calibration_keeps_controller_memory = config.get_bool("model_based.calibration_keeps_controller_memory");
  o.dream_updates = int32("model_based.dream_updates");
  o.dream_batch = config.get_int("model_based.dream_rows");
  o.dream_horizon = int32("model_based.dream_horizon");
  o.tau = config.get_double("model_based.tau");
  o.step_cost = config.get_double("model_based.step_cost");
  o.model.latent_dim = config.get_int("model_based.latent_dim");
  o.model.hidden = config.get_int("model_based.hidden");
  o.model.components = config.get_int("model_based.components");
  o.model.separate_controller_memory = config.get_bool("model_based.separate_controller_memory");
  o.world.encoder_epochs = int32("model_based.encoder_epochs");
  o.world.epochs = int32("model_based.epochs");
  o.later_epochs = int32("model_based.later_epochs");
  o.holdout = config.get_double("model_based.holdout");
  o.ppo = training.ppo;
  o.seed = static_cast<uint64_t>(config.get_int("train.seed"));
  o.ppo.seed = o.seed;
  return o;
}

}  // namespace graphworld

namespace graphworld {

void check_model_based_config(const Config& config) {
  const int64_t max_steps = config.get_int("env.max_steps");
  const int64_t message_steps = config.get_int("env.num_envs") * config.get_int("env.steps_per_env");
  if (max_steps > message_steps)
    throw ConfigError("env.max_steps is " + std::to_string(max_steps) + ", more than env.num_envs x env.steps_per_env (" +
                      std::to_string(message_steps) + "): a model-based run sends each real episode whole in one "
                      "message of at most that many steps; raise env.steps_per_env or lower env.max_steps");
  // A dream message must pass the learner's limits (learner/wire_message.h:
  // 2^20 steps, 512 MiB), or every one would be refused and the run stall.
  // Its size: z, h and four numbers per step, and a mask byte per rule.
  const int64_t dream_steps = config.get_int("model_based.dream_rows") * config.get_int("model_based.dream_horizon");
  const int64_t bytes_per_step =
      4 * (config.get_int("model_based.latent_dim") + config.get_int("model_based.hidden") + 4) + 1 + 1276;
  if (dream_steps > (int64_t{1} << 20) || dream_steps * bytes_per_step > (int64_t{512} << 20))
    throw ConfigError("model_based.dream_rows x model_based.dream_horizon = " + std::to_string(dream_steps) +
                      " dream steps per message is more than the learner takes in one (2^20 steps, 512 MiB); "
                      "lower one of them");
}

}  // namespace graphworld
