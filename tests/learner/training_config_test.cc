// The training keys: configs/train.yaml lists every key of the schema at
// its default and nothing else, and every key reaches its typed field.
#include "learner/training_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "tests/support/test_env.h"

namespace graphworld::testing {
namespace {

// The dotted keys a two-level YAML file spells out ("section:" lines, then
// "  key:" lines under them), comments and blank lines aside.
std::set<std::string> keys_written_in(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> keys;
  std::string line, section;
  while (std::getline(in, line)) {
    const std::string code = line.substr(0, line.find('#'));
    const size_t colon = code.find(':');
    if (colon == std::string::npos || code.find_first_not_of(' ') == std::string::npos) continue;
    const size_t indent = code.find_first_not_of(' ');
    const std::string name = code.substr(indent, colon - indent);
    if (indent == 0) section = name;
    else keys.insert(section + "." + name);
  }
  return keys;
}

TEST(TrainingConfig, TrainYamlListsEveryKeyAtItsDefault) {
  const std::string path = source_dir() + "/configs/train.yaml";
  const Config defaults(training_config_schema());
  const Config file = load_config(training_config_schema(), path, {});
  std::set<std::string> schema_keys;
  for (const std::string& key : defaults.keys()) {
    schema_keys.insert(key);
    EXPECT_EQ(file.value_text(key), defaults.value_text(key)) << key << " in " << path;
  }
  const std::set<std::string> written = keys_written_in(path);
  for (const std::string& key : schema_keys) EXPECT_TRUE(written.count(key)) << path << " does not list " << key;
  for (const std::string& key : written) EXPECT_TRUE(schema_keys.count(key)) << path << " lists " << key << ", not a key";
}

// Each key, set away from its default, changes the options: no row of the
// key table is dropped or points at the wrong field.
TEST(TrainingConfig, EveryKeyReachesItsField) {
  const ConfigSchema& schema = training_config_schema();
  const Config defaults(schema);
  auto options_text = [](const TrainingOptions& o) {
    std::ostringstream s;
    for (const std::string& g : o.graphs) s << g << ",";
    s << o.total_env_steps << o.seed << o.checkpoint_every << o.keep_checkpoints << o.threads << o.device << o.overlap
      << o.cost_model << o.rates << o.rules << o.cost_table << o.gpu << o.gpu_table << o.network.hidden
      << o.network.message_rounds << o.network.location_rewards << o.collector.env.location_rewards
      << o.ppo.learning_rate << o.ppo.epochs << o.ppo.minibatch_size << o.ppo.gamma
      << o.ppo.gae_lambda << o.ppo.clip << o.ppo.value_coef << o.ppo.entropy_coef << o.ppo.max_grad_norm
      << o.ppo.normalize_advantages << o.ppo.workers << o.ppo.cuda_graphs << o.collector.num_envs << o.collector.steps_per_env << o.collector.env.max_steps
      << o.collector.env.max_locations << static_cast<int>(o.collector.env.reward);
    const DistributedOptions& d = o.distributed;
    s << "|" << d.actors << "," << d.max_policy_lag << "," << d.heartbeat_timeout_s << "," << d.store_flush_s;
    const ModelBasedSettings& m = o.model_based;
    s << "|" << m.enabled << m.dream_actors << "," << m.rounds << "," << m.random_episodes << "," << m.random_steps
      << "," << m.episodes_per_round << "," << m.explore << m.verify_plans << m.best_locations << m.look_ahead_locations << m.random_locations << m.calibration_episodes << ","
      << m.calibration_keeps_controller_memory << m.dream_updates << "," << m.dream_rows << "," << m.dream_horizon
      << "," << m.tau << "," << m.step_cost << "," << static_cast<int>(m.dream_reward) << "," << m.latent_dim << "," << m.hidden << "," << m.components
      << m.separate_controller_memory << m.encoder_epochs << "," << m.epochs << "," << m.later_epochs << ","
      << m.holdout;
    return s.str();
  };
  const std::string at_defaults = options_text(training_options_from(defaults));
  for (const auto& [key, entry] : schema.entries()) {
    std::string other;
    if (std::holds_alternative<bool>(entry.fallback)) {
      other = std::get<bool>(entry.fallback) ? "false" : "true";
    } else if (std::holds_alternative<int64_t>(entry.fallback)) {
      const int64_t v = std::get<int64_t>(entry.fallback);
      other = std::to_string(v == static_cast<int64_t>(entry.min) ? v + 1 : static_cast<int64_t>(entry.min));
    } else if (std::holds_alternative<double>(entry.fallback)) {
      const double v = std::get<double>(entry.fallback);
      std::ostringstream text;
      text << std::setprecision(17) << (v == entry.min ? (v + entry.max) / 2 : entry.min);
      other = text.str();
    } else if (std::holds_alternative<std::string>(entry.fallback)) {
      other = entry.choices.empty() ? "changed" : entry.choices.front() == std::get<std::string>(entry.fallback)
                                                      ? entry.choices.back()
                                                      : entry.choices.front();
    } else {
      other = "[resnet18]";
    }
    const Config changed = load_config(schema, "", {key + "=" + other});
    EXPECT_NE(options_text(training_options_from(changed)), at_defaults) << key << "=" << other << " changed nothing";
  }
}

}  // namespace
}  // namespace graphworld::testing
