// The collector: compact observations score like full ones, rollouts are a
// function of the seed, a stopped collection leaves no trace, and its state
// survives text and replay.
#include <gtest/gtest.h>

#include "common/error.h"
#include "learner/rollout_collector.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

using testing::default_matcher;
using testing::small_network;

RolloutCollectorOptions small_options(uint64_t seed = 11) {
  RolloutCollectorOptions o;
  o.num_envs = 3;
  o.steps_per_env = 12;
  o.env.max_steps = 6;  // episodes end inside a rollout
  o.seed = seed;
  return o;
}

// Every step's action, as one comparable list.
std::vector<int64_t> actions_of(const Rollout& r) {
  std::vector<int64_t> out;
  for (const RolloutSegment& s : r.segments)
    for (const RolloutStep& step : s.steps) {
      out.push_back(step.action.xfer);
      out.push_back(step.action.location);
    }
  return out;
}

TEST(CompactObservation, KeepsTheTakenXfersLocationsAndScoresTheSame) {
  auto cost = testing::gpu_like_cost();
  GraphEnv env(build_zoo_model("squeezenet1.1", {}), default_matcher(), *cost);
  const Observation& full = env.reset(3);
  PolicyNetwork net = small_network(5);
  std::mt19937_64 rng(1);
  const Action action = net.act({&full}, rng)[0].action;
  ASSERT_LT(action.xfer, full.num_xfers) << "the sampled action should be a rewrite for this test";
  const Observation compact = compact_observation(full, action.xfer);
  ASSERT_EQ(compact.location_count(action.xfer), full.location_count(action.xfer));
  for (int32_t loc = 0; loc < full.location_count(action.xfer); ++loc) {
    const auto a = full.matched_nodes(action.xfer, loc), b = compact.matched_nodes(action.xfer, loc);
    EXPECT_EQ(std::vector<int32_t>(a.begin(), a.end()), std::vector<int32_t>(b.begin(), b.end()));
  }
  for (int32_t x = 0; x < full.num_xfers; ++x)
    if (x != action.xfer) {
      EXPECT_EQ(compact.location_count(x), 0) << x;
    }
  EXPECT_TRUE(compact.location_mask.empty());
  EXPECT_FLOAT_EQ(net.log_probs({&full}, {action})[0], net.log_probs({&compact}, {action})[0]);
}

TEST(RolloutCollector, RolloutsAreAFunctionOfTheSeed) {
  auto cost = testing::gpu_like_cost();
  PolicyNetwork net = small_network(5);
  RolloutCollector a(testing::zoo_graphs({"squeezenet1.1", "nasrnn"}), default_matcher(), *cost, small_options(11));
  RolloutCollector b(testing::zoo_graphs({"squeezenet1.1", "nasrnn"}), default_matcher(), *cost, small_options(11));
  RolloutCollector c(testing::zoo_graphs({"squeezenet1.1", "nasrnn"}), default_matcher(), *cost, small_options(12));
  const Rollout ra = *a.collect(net, 0), rb = *b.collect(net, 0), rc = *c.collect(net, 0);
  EXPECT_EQ(ra.env_steps(), 3 * 12);
  EXPECT_EQ(actions_of(ra), actions_of(rb));
  EXPECT_NE(actions_of(ra), actions_of(rc));
  EXPECT_FALSE(ra.episodes.empty()) << "max_steps 6 ends episodes inside a 12-step rollout";
  for (const RolloutSegment& s : ra.segments) {
    int dones = 0;
    for (const RolloutStep& step : s.steps) dones += step.done;
    EXPECT_GE(dones, 1);
  }
}

TEST(RolloutCollector, AStoppedCollectionLeavesNoTrace) {
  auto cost = testing::gpu_like_cost();
  PolicyNetwork net = small_network(5);
  RolloutCollector plain(testing::zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, small_options());
  RolloutCollector stopped(testing::zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, small_options());
  int polls = 0;
  EXPECT_FALSE(stopped.collect(net, 0, [&] { return ++polls > 7; }).has_value());
  // (A better graph met before the stop is kept: it was found, and costs
  // nothing to keep. Everything else is as before the call.)
  RolloutCollectorState a = stopped.state(), b = plain.state();
  a.best_cost_ms.clear();
  b.best_cost_ms.clear();
  EXPECT_EQ(serialize_collector_state(a), serialize_collector_state(b));
  EXPECT_EQ(actions_of(*stopped.collect(net, 0)), actions_of(*plain.collect(net, 0)));
}

TEST(RolloutCollector, StateSurvivesTextAndReplay) {
  auto cost = testing::gpu_like_cost();
  PolicyNetwork net = small_network(5);
  RolloutCollector a(testing::zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, small_options());
  a.collect(net, 0);  // environments now stand mid-episode
  const std::string text = serialize_collector_state(a.state());
  RolloutCollector b(testing::zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, small_options(99));
  b.restore(parse_collector_state(text, "saved state"));
  EXPECT_EQ(serialize_collector_state(b.state()), text);
  EXPECT_EQ(actions_of(*a.collect(net, 1)), actions_of(*b.collect(net, 1)));
}

TEST(RolloutCollector, RefusesStateThatDoesNotFit) {
  auto cost = testing::gpu_like_cost();
  RolloutCollector a(testing::zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, small_options());
  RolloutCollectorOptions more = small_options();
  more.num_envs = 5;
  RolloutCollector b(testing::zoo_graphs({"squeezenet1.1"}), default_matcher(), *cost, more);
  EXPECT_THROW(b.restore(a.state()), FormatError);
  std::string text = serialize_collector_state(a.state());
  EXPECT_THROW(parse_collector_state(text.substr(0, text.size() / 2), "half"), FormatError);
  EXPECT_THROW(parse_collector_state("graphworld-collector 7\n", "future"), FormatError);
  // An episode recorded on another graph cannot be replayed here.
  RolloutCollector nas(testing::zoo_graphs({"nasrnn"}), default_matcher(), *cost, small_options());
  try {
    nas.restore(a.state());
    ADD_FAILURE() << "restored a squeezenet episode onto nasrnn";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("nasrnn"), std::string::npos) << e.what();
  }
}

// A graph that costs nothing (or that no rule applies to) is refused by name.
TEST(RolloutCollector, RefusesAGraphWithNothingToLearn) {
  auto cost = testing::gpu_like_cost();
  Graph tiny;
  const OpId x = tiny.add_input("x", TensorInfo{DType::Float32, {1, 4}});
  tiny.add_output({x, 0}, "y");
  try {
    RolloutCollector c({{"identity", tiny}}, default_matcher(), *cost, small_options());
    ADD_FAILURE() << "accepted a graph with nothing to learn";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("training graph 'identity'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace graphworld
