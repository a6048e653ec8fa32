// Shared set-up for the training tests: the built-in rules, the GPU-like
// analytic rates (configs/gpu_rates.yaml, under which rewrites pay off) and
// small training configs.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "env/cost/analytic_cost_model.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "learner/policy_network.h"
#include "learner/rollout_collector.h"
#include "learner/training_config.h"
#include "tests/support/default_rules.h"
#include "tests/support/test_env.h"

namespace graphworld::testing {

// A small policy network for the built-in rules (hidden 16, 2 rounds).
// `location_rewards`: a network that reads them (its environments must make them).
inline PolicyNetwork small_network(uint64_t seed, bool location_rewards = false) {
  PolicyNetworkConfig config;
  config.num_xfers = static_cast<int32_t>(default_matcher().num_rules());
  config.hidden = 16;
  config.message_rounds = 2;
  config.seed = seed;
  config.location_rewards = location_rewards;
  return PolicyNetwork(config);
}

inline std::string gpu_rates_path() { return source_dir() + "/configs/gpu_rates.yaml"; }

inline std::unique_ptr<AnalyticCostModel> gpu_like_cost() {
  return std::make_unique<AnalyticCostModel>(load_analytic_rates(gpu_rates_path()));
}

inline std::vector<TrainingGraph> zoo_graphs(const std::vector<std::string>& names) {
  std::vector<TrainingGraph> graphs;
  for (const std::string& name : names) graphs.push_back({name, build_zoo_model(name, {})});
  return graphs;
}

// A small deterministic config: `overrides` on top of a few envs and short
// rollouts.
inline Config small_training_config(std::vector<std::string> overrides) {
  std::vector<std::string> all = {"train.graphs=[squeezenet1.1]", "env.num_envs=4", "env.steps_per_env=16",
                                  "env.max_steps=20", "ppo.epochs=2", "ppo.minibatch_size=32",
                                  "env.rates=" + gpu_rates_path()};
  for (std::string& o : overrides) all.push_back(std::move(o));
  return load_config(training_config_schema(), "", all);
}

// `count` rollouts of SqueezeNet under the GPU-like rates, acted by a fresh
// network of `network`'s configuration.
inline std::vector<Rollout> squeezenet_rollouts(const PolicyNetworkConfig& network, int32_t num_envs,
                                                int32_t steps_per_env, int32_t max_steps, uint64_t seed, int count) {
  auto cost = gpu_like_cost();
  RolloutCollectorOptions options;
  options.num_envs = num_envs;
  options.steps_per_env = steps_per_env;
  options.env.max_steps = max_steps;
  options.seed = seed;
  RolloutCollector collector(zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, options);
  PolicyNetwork acting(network);
  std::vector<Rollout> rollouts;
  for (int i = 0; i < count; ++i) rollouts.push_back(*collector.collect(acting, 0));
  return rollouts;
}

// A fresh, empty scratch folder.
inline std::string fresh_dir(const std::string& name) {
  const std::string dir = scratch_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

// Every field a compact observation holds, compared; `where` names the step.
inline void expect_same_observation(const Observation& a, const Observation& b, const std::string& where) {
  EXPECT_EQ(a.graph.num_nodes, b.graph.num_nodes) << where;
  EXPECT_EQ(a.graph.num_edges, b.graph.num_edges) << where;
  EXPECT_EQ(a.graph.node_features, b.graph.node_features) << where;
  EXPECT_EQ(a.graph.edge_features, b.graph.edge_features) << where;
  EXPECT_EQ(a.graph.globals, b.graph.globals) << where;
  EXPECT_EQ(a.graph.senders, b.graph.senders) << where;
  EXPECT_EQ(a.graph.receivers, b.graph.receivers) << where;
  EXPECT_EQ(a.graph.node_op, b.graph.node_op) << where;
  EXPECT_EQ(a.num_xfers, b.num_xfers) << where;
  EXPECT_EQ(a.max_locations, b.max_locations) << where;
  EXPECT_EQ(a.xfer_mask, b.xfer_mask) << where;
  EXPECT_EQ(a.location_begin, b.location_begin) << where;
  EXPECT_EQ(a.node_begin, b.node_begin) << where;
  EXPECT_EQ(a.match_nodes, b.match_nodes) << where;
  EXPECT_EQ(a.location_reward, b.location_reward) << where;
  EXPECT_EQ(a.xfer_reward, b.xfer_reward) << where;
}

}  // namespace graphworld::testing
