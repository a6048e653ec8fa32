// GraphEnv: masks equal the applicable (rule, match) set, NO-OP and the other
// episode ends, deterministic locations, rewards that add up, clear errors
// for bad actions, clones, and saved episodes that replay exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() {
  static const RuleMatcher m(default_rule_library().rules);
  return m;
}

CostModel& cost_model() {
  static AnalyticCostModel model;
  return model;
}

// The observation's masks and matched nodes against a search from scratch
// on the environment's current graph.
void expect_masks_match_scratch(const GraphEnv& env, const std::string& where) {
  const Observation& obs = env.observation();
  const Graph& g = env.graph();
  GraphIndex index(g);
  const std::vector<RuleMatch> all = matcher().find_all(g, index);
  const auto n = static_cast<size_t>(env.num_xfers());
  const auto L = static_cast<size_t>(env.options().max_locations);
  std::vector<std::vector<const RuleMatch*>> by_rule(n);
  for (const RuleMatch& m : all) by_rule[static_cast<size_t>(m.rule)].push_back(&m);
  ASSERT_EQ(obs.xfer_mask.size(), n + 1) << where;
  ASSERT_EQ(obs.location_mask.size(), n * L) << where;
  EXPECT_EQ(obs.xfer_mask[n], 1) << where << ": NO-OP must be allowed";
  std::vector<int32_t> node_of(g.num_ops(), -1);
  for (int32_t k = 0; k < obs.graph.num_nodes; ++k) node_of[static_cast<size_t>(obs.graph.node_op[static_cast<size_t>(k)])] = k;
  for (size_t r = 0; r < n; ++r) {
    const size_t expected = std::min(by_rule[r].size(), L);
    ASSERT_EQ(obs.xfer_mask[r], expected > 0 ? 1 : 0) << where << ": rule " << matcher().rules()[r].name;
    for (size_t l = 0; l < L; ++l)
      ASSERT_EQ(obs.location_mask[r * L + l], l < expected ? 1 : 0) << where << ": rule " << r << " location " << l;
    for (size_t l = 0; l < expected; ++l) {
      std::vector<int32_t> nodes;
      for (OpId op : by_rule[r][l]->ops) nodes.push_back(node_of[static_cast<size_t>(op)]);
      auto got = obs.matched_nodes(static_cast<int32_t>(r), static_cast<int32_t>(l));
      ASSERT_EQ(std::vector<int32_t>(got.begin(), got.end()), nodes) << where << ": rule " << r << " location " << l;
    }
  }
}

class GraphEnvOnZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(GraphEnvOnZoo, MasksAreExactlyTheApplicableMatches) {
  for (int32_t locations : {200, 2}) {
    GraphEnvOptions options;
    options.max_locations = locations;
    options.max_steps = 25;
    GraphEnv env(build_zoo_model(GetParam(), {}), matcher(), cost_model(), options);
    std::mt19937_64 rng(3);
    env.reset(1);
    expect_masks_match_scratch(env, std::string(GetParam()) + " after reset");
    while (!env.done()) {
      Action a = random_allowed_action(env.observation(), rng);
      if (a.xfer == env.noop()) break;
      env.step(a);
      if (env.done()) break;
      expect_masks_match_scratch(env, std::string(GetParam()) + " after step " + std::to_string(env.steps()));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST_P(GraphEnvOnZoo, IncrementalRewardsSumToTheTotalReduction) {
  GraphEnv env(build_zoo_model(GetParam(), {}), matcher(), cost_model(), {});
  std::mt19937_64 rng(11);
  env.reset(0);
  double sum = 0;
  while (!env.done()) {
    Action a = random_allowed_action(env.observation(), rng);
    if (a.xfer == env.noop()) break;
    StepResult r = env.step(a);
    sum += r.reward;
    EXPECT_NEAR(r.info.cost_ms, env.cost_ms(), 1e-12);
  }
  EXPECT_GE(env.steps(), 3) << GetParam();
  const double total = 100.0 * (env.initial_cost_ms() - env.cost_ms()) / env.initial_cost_ms();
  EXPECT_NEAR(sum, total, 1e-9);
  // The tracked cost is the graph's cost from scratch.
  EXPECT_NEAR(env.cost_ms(), graph_cost(env.graph(), cost_model()).total_ms, 1e-9 * env.initial_cost_ms());
}

// Location rewards: along a random episode, each allowed location's entry is
// the reward a clone earns by taking it, to float precision (the env prices
// with the same arithmetic as the step).
TEST_P(GraphEnvOnZoo, LocationRewardsAreWhatEachLocationEarns) {
  GraphEnvOptions options;
  options.location_rewards = true;
  options.max_steps = 6;
  GraphEnv env(build_zoo_model(GetParam(), {}), matcher(), cost_model(), options);
  std::mt19937_64 rng(5);
  env.reset(0);
  int checked = 0;
  while (!env.done()) {
    const Observation& obs = env.observation();
    ASSERT_EQ(obs.location_reward.size(), obs.node_begin.size() - 1);
    size_t k = 0;
    for (int32_t x = 0; x < env.num_xfers(); ++x)
      for (int32_t l = 0; l < obs.location_count(x); ++l, ++k) {
        if (k % 7 != 0) continue;  // a sample keeps the test quick on NasRNN
        auto clone = env.clone();
        const StepResult r = clone->step({x, l});
        ASSERT_EQ(obs.location_reward[k], static_cast<float>(r.reward))
            << GetParam() << " step " << env.steps() << ": " << matcher().rules()[static_cast<size_t>(x)].name
            << " location " << l;
        ++checked;
      }
    Action a = random_allowed_action(obs, rng);
    if (a.xfer == env.noop()) break;
    env.step(a);
  }
  EXPECT_GT(checked, 5);
  GraphEnv plain(build_zoo_model(GetParam(), {}), matcher(), cost_model(), {});
  EXPECT_TRUE(plain.reset(0).location_reward.empty()) << "off by default";
}

INSTANTIATE_TEST_SUITE_P(Zoo, GraphEnvOnZoo, ::testing::Values("resnet18", "bert", "squeezenet1.1", "nasrnn"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

TEST(GraphEnv, FinalRewardComesOnceAtTheEnd) {
  GraphEnvOptions options;
  options.reward = RewardKind::Final;
  options.max_steps = 8;
  GraphEnv env(build_zoo_model("resnet18", {}), matcher(), cost_model(), options);
  std::mt19937_64 rng(5);
  env.reset(0);
  StepResult last{};
  while (!env.done()) {
    last = env.step(random_allowed_action(env.observation(), rng));
    if (!last.done) {
      EXPECT_EQ(last.reward, 0.0);
    }
  }
  EXPECT_NEAR(last.reward, 100.0 * (env.initial_cost_ms() - env.cost_ms()) / env.initial_cost_ms(), 1e-9);
}

TEST(GraphEnv, MeasuredRewardTimesTheExecutorAtTheEnd) {
  GraphEnvOptions options;
  options.reward = RewardKind::Measured;
  options.latency_repeats = 2;
  GraphEnv env(build_zoo_model("squeezenet1.1", {}), matcher(), cost_model(), options);
  env.reset(0);
  std::mt19937_64 rng(0);
  StepResult first = env.step(random_allowed_action(env.observation(), rng));
  if (!first.done) {
    EXPECT_EQ(first.reward, 0.0);
    first = env.step({env.noop(), 0});
  }
  EXPECT_TRUE(first.done);
  EXPECT_GT(first.info.initial_latency_ms, 0);
  EXPECT_GT(first.info.latency_ms, 0);
  EXPECT_NEAR(first.reward, 100.0 * (first.info.initial_latency_ms - first.info.latency_ms) / first.info.initial_latency_ms,
              1e-9);
}

TEST(GraphEnv, NoOpEndsTheEpisode) {
  GraphEnv env(build_zoo_model("bert", {}), matcher(), cost_model(), {});
  env.reset(0);
  StepResult r = env.step({env.noop(), 0});
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.info.end_reason, "no-op");
  EXPECT_EQ(r.reward, 0.0);
  EXPECT_EQ(r.info.cost_ms, env.initial_cost_ms());
  EXPECT_THROW(env.step({env.noop(), 0}), UsageError);
  EXPECT_EQ(std::count(r.observation->xfer_mask.begin(), r.observation->xfer_mask.end(), 1), 0);
}

TEST(GraphEnv, EpisodesEndAtMaxSteps) {
  GraphEnvOptions options;
  options.max_steps = 3;
  GraphEnv env(build_zoo_model("resnet18", {}), matcher(), cost_model(), options);
  std::mt19937_64 rng(1);
  env.reset(0);
  StepResult r{};
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(env.done());
    r = env.step(random_allowed_action(env.observation(), rng));
  }
  EXPECT_TRUE(r.done);
  EXPECT_EQ(r.info.end_reason, "max-steps");
}

// Locations stop at max_locations; match_count keeps counting, so a rule
// with more matches than that is seen being used up.
TEST(GraphEnv, MatchCountsAreEveryMatchWhileLocationsStopAtMaxLocations) {
  GraphEnvOptions options;
  options.max_locations = 2;
  const Graph g = build_zoo_model("resnet18", {});
  GraphEnv env(g, matcher(), cost_model(), options);
  std::mt19937_64 rng(3);
  env.reset(0);
  int32_t beyond = 0;
  for (int step = 0; step < 10 && !env.done(); ++step) {
    const Observation& o = env.observation();
    ASSERT_EQ(o.match_count.size(), static_cast<size_t>(o.num_xfers));
    GraphIndex index(env.graph());
    std::vector<int32_t> scratch(static_cast<size_t>(o.num_xfers), 0);
    for (const RuleMatch& m : matcher().find_all(env.graph(), index)) ++scratch[static_cast<size_t>(m.rule)];
    ASSERT_EQ(o.match_count, scratch) << "step " << step;
    for (int32_t r = 0; r < o.num_xfers; ++r) {
      ASSERT_EQ(o.location_count(r), std::min(o.match_count[static_cast<size_t>(r)], 2)) << "rule " << r;
      beyond += o.match_count[static_cast<size_t>(r)] > 2;
    }
    env.step(random_allowed_action(o, rng));
  }
  EXPECT_GT(beyond, 0) << "some rule has more matches than locations";
  while (!env.done()) env.step({env.noop(), 0});
  for (int32_t c : env.observation().match_count) ASSERT_EQ(c, 0) << "a finished episode allows nothing";
}

TEST(GraphEnv, LocationsAndObservationsAreDeterministic) {
  const Graph g = build_zoo_model("inceptionv3", {});
  GraphEnv a(g, matcher(), cost_model(), {});
  GraphEnv b(g, matcher(), cost_model(), {});
  std::mt19937_64 rng(9);
  a.reset(4);
  b.reset(4);
  for (int step = 0; step < 15 && !a.done(); ++step) {
    const Observation& x = a.observation();
    const Observation& y = b.observation();
    ASSERT_EQ(x.location_mask, y.location_mask) << "step " << step;
    ASSERT_EQ(x.match_nodes, y.match_nodes) << "step " << step;
    ASSERT_EQ(x.graph.node_features, y.graph.node_features) << "step " << step;
    ASSERT_EQ(x.graph.senders, y.graph.senders) << "step " << step;
    ASSERT_EQ(x.graph.edge_features, y.graph.edge_features) << "step " << step;
    ASSERT_EQ(x.graph.globals, y.graph.globals) << "step " << step;
    // Locations follow the matcher's order: by rule, then matched ops.
    for (int32_t r = 0; r < x.num_xfers; ++r)
      for (int32_t l = 1; l < x.location_count(r); ++l)
        ASSERT_TRUE(a.match_at({r, l - 1}) < a.match_at({r, l})) << "rule " << r << " location " << l;
    const Action act = random_allowed_action(x, rng);
    StepResult ra = a.step(act);
    StepResult rb = b.step(act);
    ASSERT_EQ(ra.reward, rb.reward);
  }
}

TEST(GraphEnv, BadActionsAreClearErrorsAndChangeNothing) {
  GraphEnvOptions options;
  options.max_locations = 4;
  GraphEnv env(build_zoo_model("resnet18", {}), matcher(), cost_model(), options);
  env.reset(0);
  const uint64_t hash = env.graph().structural_hash();
  const std::vector<uint8_t> mask = env.observation().location_mask;
  int32_t masked = -1, allowed = -1;
  for (int32_t x = 0; x < env.num_xfers(); ++x) (env.observation().xfer_mask[static_cast<size_t>(x)] ? allowed : masked) = x;
  ASSERT_GE(masked, 0);
  ASSERT_GE(allowed, 0);
  const int32_t count = env.observation().location_count(allowed);
  auto expect_refused = [&](Action a, const std::string& words) {
    try {
      env.step(a);
      ADD_FAILURE() << "action (" << a.xfer << ", " << a.location << ") was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(env.graph().structural_hash(), hash);
    EXPECT_EQ(env.observation().location_mask, mask);
    EXPECT_EQ(env.steps(), 0);
    EXPECT_FALSE(env.done());
  };
  expect_refused({-1, 0}, "xfer must be in");
  expect_refused({env.noop() + 1, 0}, "xfer must be in");
  expect_refused({allowed, -1}, "location must be in");
  expect_refused({allowed, options.max_locations}, "location must be in");
  expect_refused({masked, 0}, "applies nowhere");
  if (count < options.max_locations) expect_refused({allowed, count}, "has only");
}

TEST(GraphEnv, ClonesAreIndependent) {
  GraphEnv env(build_zoo_model("bert", {}), matcher(), cost_model(), {});
  std::mt19937_64 rng(2);
  env.reset(0);
  env.step(random_allowed_action(env.observation(), rng));
  const uint64_t hash = env.graph().structural_hash();
  const double cost = env.cost_ms();
  std::unique_ptr<GraphEnv> copy = env.clone();
  EXPECT_EQ(copy->graph().structural_hash(), hash);
  for (int i = 0; i < 5 && !copy->done(); ++i) copy->step(random_allowed_action(copy->observation(), rng));
  EXPECT_NE(copy->graph().structural_hash(), hash);
  EXPECT_EQ(env.graph().structural_hash(), hash);
  EXPECT_EQ(env.cost_ms(), cost);
  EXPECT_EQ(env.steps(), 1);
}

TEST(GraphEnv, SavedEpisodesReplayExactly) {
  const Graph g = build_zoo_model("squeezenet1.1", {});
  GraphEnv env(g, matcher(), cost_model(), {});
  std::mt19937_64 rng(8);
  env.reset(42);
  for (int i = 0; i < 12 && !env.done(); ++i) env.step(random_allowed_action(env.observation(), rng));
  const std::string path = testing::scratch_dir() + "/episode.txt";
  save_episode(env.record(), path);

  GraphEnv fresh(g, matcher(), cost_model(), {});
  fresh.replay(load_episode(path));
  EXPECT_EQ(fresh.graph().structural_hash(), env.graph().structural_hash());
  EXPECT_EQ(fresh.cost_ms(), env.cost_ms());
  EXPECT_EQ(fresh.steps(), env.steps());
  EXPECT_EQ(fresh.observation().location_mask, env.observation().location_mask);

  GraphEnv other(build_zoo_model("resnet18", {}), matcher(), cost_model(), {});
  EXPECT_THROW(other.replay(env.record()), UsageError);
  {
    std::ofstream bad(path);
    bad << "graphworld-episode 1\ngraph zz\n";
  }
  try {
    load_episode(path);
    ADD_FAILURE() << "a bad episode file loaded";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2"), std::string::npos) << e.what();
  }
}

TEST(GraphEnv, RejectsBadOptions) {
  GraphEnvOptions options;
  options.max_locations = 0;
  EXPECT_THROW(GraphEnv(build_zoo_model("resnet18", {}), matcher(), cost_model(), options), UsageError);
  EXPECT_THROW(reward_kind_from_name("fastest"), UsageError);
}

}  // namespace
}  // namespace graphworld
