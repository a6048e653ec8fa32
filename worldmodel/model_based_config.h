// The model_based.* keys of a run config (learner/training_config.h reads
// them into ModelBasedSettings) as the model-based agent's options. The
// controller's PPO takes the run's ppo.* keys. Torch-free.
#pragma once

#include "learner/training_config.h"
#include "worldmodel/model_based_training.h"

namespace graphworld {

ModelBasedOptions model_based_options_from(const TrainingOptions& training);

// ConfigError naming the keys when a model-based run cannot work with
// them: a real episode travels whole in one trajectory message, so
// env.max_steps must fit env.num_envs x env.steps_per_env.
void check_model_based_config(const TrainingOptions& training);

}  // namespace graphworld
