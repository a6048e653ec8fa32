// Policy files: what is saved loads back exactly; a policy for other rules
// or features is refused with the reason; a damaged file is refused.
#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "env/gym/observation.h"
#include "learner/policy_file.h"
#include "env/cost/graph_cost.h"
#include "learner/policy_rollouts.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

PolicyFileInfo info_for(const RuleLibrary& library) {
  PolicyFileInfo info;
  info.network.num_xfers = static_cast<int32_t>(library.rules.size());
  info.network.hidden = 8;
  info.network.message_rounds = 1;
  info.network.seed = 4;
  info.feature_version = kObservationFeatureVersion;
  info.rule_library_hash = rule_library_hash(library);
  info.max_steps = 17;
  info.max_locations = 33;
  info.trained_on = {"squeezenet1.1", "models/a.onnx"};
  info.cost_model = "analytic";
  info.source = "runs/x/checkpoints/ckpt-3.ckpt";
  info.updates = 3;
  info.env_steps = 96;
  return info;
}

TEST(PolicyFile, RoundTripsWeightsAndDescription) {
  const RuleLibrary& library = default_rule_library();
  const PolicyFileInfo info = info_for(library);
  PolicyNetwork net(info.network);
  const std::string path = testing::scratch_dir() + "/round.gwpolicy";
  save_policy_file(path, net, info);
  const LoadedPolicy loaded = load_policy_file(path);
  EXPECT_EQ(loaded.network.save_parameters(), net.save_parameters());
  EXPECT_EQ(loaded.info.max_steps, 17);
  EXPECT_EQ(loaded.info.max_locations, 33);
  EXPECT_EQ(loaded.info.trained_on, info.trained_on);
  EXPECT_EQ(loaded.info.rule_library_hash, info.rule_library_hash);
  EXPECT_EQ(loaded.info.updates, 3);
  EXPECT_NO_THROW(check_policy_fits(loaded.info, library, path));
  const std::string text = describe_policy(loaded.info, loaded.network.num_parameters());
  for (const std::string& words : {std::string("hidden 8"), std::to_string(library.rules.size()),
                                  std::string("squeezenet1.1"), std::string("96 real env steps")})
    EXPECT_NE(text.find(words), std::string::npos) << words << " missing in\n" << text;
}

// A policy that reads location rewards says so in its file, and its
// rollouts turn them on without being asked.
TEST(PolicyFile, KeepsLocationRewardsAndItsRolloutsMakeThem) {
  const RuleLibrary& library = default_rule_library();
  PolicyFileInfo info = info_for(library);
  info.network.location_rewards = true;
  PolicyNetwork net(info.network);
  const std::string path = testing::scratch_dir() + "/rewards.gwpolicy";
  save_policy_file(path, net, info);
  LoadedPolicy loaded = load_policy_file(path);
  EXPECT_TRUE(loaded.info.network.location_rewards);
  EXPECT_EQ(loaded.network.save_parameters(), net.save_parameters());
  EXPECT_NE(describe_policy(loaded.info, loaded.network.num_parameters()).find("reads location rewards"),
            std::string::npos);
  auto cost = testing::gpu_like_cost();
  PolicyRolloutOptions options;
  options.rollouts = 2;
  options.env.max_steps = 5;  // location_rewards left off: the policy's config turns them on
  const SearchResult r =
      optimize_with_policy(build_zoo_model("squeezenet1.1", {}), testing::default_matcher(), *cost, loaded.network, options);
  EXPECT_LE(r.best_cost_ms, r.original_cost_ms);
  EXPECT_GT(r.explored, 0);
}

TEST(PolicyFile, RefusesAnotherRuleLibraryOrFeatureVersion) {
  const RuleLibrary& library = default_rule_library();
  PolicyFileInfo info = info_for(library);
  RuleLibrary fewer = library;
  fewer.rules.pop_back();
  try {
    check_policy_fits(info, fewer, "p.gwpolicy");
    ADD_FAILURE() << "accepted a policy for another rule library";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("another rule library"), std::string::npos) << e.what();
  }
  RuleLibrary reordered = library;
  std::swap(reordered.rules[0], reordered.rules[1]);  // same count, other meaning of each xfer
  EXPECT_THROW(check_policy_fits(info, reordered, "p.gwpolicy"), UsageError);
  info.feature_version = kObservationFeatureVersion + 1;
  try {
    check_policy_fits(info, library, "p.gwpolicy");
    ADD_FAILURE() << "accepted another feature version";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("features version"), std::string::npos) << e.what();
  }
}

TEST(PolicyFile, RefusesDamage) {
  const PolicyFileInfo info = info_for(default_rule_library());
  const std::string path = testing::scratch_dir() + "/damaged.gwpolicy";
  save_policy_file(path, PolicyNetwork(info.network), info);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() - 10] = static_cast<char>(bytes[bytes.size() - 10] ^ 1);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  EXPECT_THROW(load_policy_file(path), FormatError);
  EXPECT_THROW(load_policy_file(testing::scratch_dir() + "/absent.gwpolicy"), FormatError);
}

// optimize_with_policy: the greedy rollout is deterministic, the result is
// never worse than the input, and the graph it returns has the cost it reports.
TEST(PolicyRollouts, NeverWorseThanTheInputAndDeterministic) {
  auto cost = testing::gpu_like_cost();
  PolicyNetworkConfig config;
  config.num_xfers = static_cast<int32_t>(testing::default_matcher().num_rules());
  config.hidden = 16;
  PolicyNetwork net(config);
  const Graph graph = build_zoo_model("nasrnn", {});
  PolicyRolloutOptions options;
  options.rollouts = 4;
  options.env.max_steps = 10;
  const SearchResult a = optimize_with_policy(graph, testing::default_matcher(), *cost, net, options);
  const SearchResult b = optimize_with_policy(graph, testing::default_matcher(), *cost, net, options);
  EXPECT_LE(a.best_cost_ms, a.original_cost_ms);
  EXPECT_EQ(a.best_cost_ms, b.best_cost_ms);
  EXPECT_EQ(a.applied, b.applied);
  EXPECT_LE(a.explored, 4 * 10);
  EXPECT_NEAR(CostTracker(*cost).reset(a.graph), a.best_cost_ms, 1e-6 * a.best_cost_ms) << "the graph is not the best one";
}

}  // namespace
}  // namespace graphworld
