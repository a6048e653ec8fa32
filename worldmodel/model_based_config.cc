#include "worldmodel/model_based_config.h"

#include "common/error.h"

namespace graphworld {

ModelBasedOptions model_based_options_from(const TrainingOptions& training) {
  ModelBasedOptions o;
  o.settings = training.model_based;
  o.ppo = training.ppo;
  o.seed = training.seed;
  o.ppo.seed = o.seed;
  return o;
}

void check_model_based_config(const TrainingOptions& training) {
  const int64_t max_steps = training.collector.env.max_steps;
  const int64_t message_steps = int64_t{training.collector.num_envs} * training.collector.steps_per_env;
  if (max_steps > message_steps)
    throw ConfigError("env.max_steps is " + std::to_string(max_steps) + ", more than env.num_envs x env.steps_per_env (" +
                      std::to_string(message_steps) + "): a model-based run sends each real episode whole in one "
                      "message of at most that many steps; raise env.steps_per_env or lower env.max_steps");
  if (training.model_based.look_ahead_locations && !training.model_based.best_locations)
    throw ConfigError("model_based.look_ahead_locations is true but model_based.best_locations is false: the "
                      "look-ahead compares what each location pays, which only environments that price every "
                      "location report; set model_based.best_locations: true");
  // A dream message must pass the learner's limits (learner/wire_message.h:
  // 2^20 steps, 512 MiB), or every one would be refused and the run stall.
  // Its size: z, h and four numbers per step, and a mask byte per rule.
  const ModelBasedSettings& m = training.model_based;
  const int64_t dream_steps = m.dream_rows * m.dream_horizon;
  const int64_t bytes_per_step = 4 * (m.latent_dim + m.hidden + 4) + 1 + 1276;
  if (dream_steps > (int64_t{1} << 20) || dream_steps * bytes_per_step > (int64_t{512} << 20))
    throw ConfigError("model_based.dream_rows x model_based.dream_horizon = " + std::to_string(dream_steps) +
                      " dream steps per message is more than the learner takes in one (2^20 steps, 512 MiB); "
                      "lower one of them");
}

}  // namespace graphworld
