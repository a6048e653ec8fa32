// What GraphEnv and VectorEnv are built from on the Python side, in one
// place: the cost model's and the environment's options as the Python
// constructors take them, and the wording both use for a refused action.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "env/cost/cost_model_factory.h"
#include "env/gym/graph_env.h"

namespace graphworld::python {

struct EnvSettings {
  std::string cost, rates, gpu;  // as `graphworld optimize --cost/--rates/--gpu`
  int32_t max_steps = 100, max_locations = 200;
  std::string reward = "incremental";
  bool location_rewards = false;  // Observation::location_reward, "location_reward" in the dict

  // UsageError for an unknown cost model or reward, naming it.
  std::unique_ptr<CostModel> make_cost() const {
    CostModelOptions options;
    options.kind = cost;
    options.rates_path = rates;
    options.gpu = gpu;
    return make_cost_model(options);
  }
  GraphEnvOptions env_options() const {
    GraphEnvOptions options;
    options.max_steps = max_steps;
    options.max_locations = max_locations;
    options.reward = reward_kind_from_name(reward);
    options.location_rewards = location_rewards;
    return options;
  }
};

// The reduction so far, in percent of the initial cost.
inline double reduction_pct(const GraphEnv& env) {
  const double initial = env.initial_cost_ms();
  return initial > 0 ? 100.0 * (initial - env.cost_ms()) / initial : 0.0;
}

// Checks (xfer, location) against `env`, rethrowing GraphEnv's reason as a
// UsageError that names the action, prefixed by `where` ("" or
// "environment 3: ") and followed by where to look.
inline void check_action_named(const GraphEnv& env, int32_t xfer, int32_t location, const std::string& where,
                               const std::string& masks) {
  try {
    env.check_action({xfer, location});
  } catch (const UsageError& e) {
    throw UsageError(where + "action (" + std::to_string(xfer) + ", " + std::to_string(location) +
                     ") is not allowed: " + e.what() + " (see " + masks + ")");
  }
}

}  // namespace graphworld::python
