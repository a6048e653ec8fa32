// VectorGraphEnv: the same environments stepped one by one and together on
// threads agree step for step; an ended environment resets on the next
// step, ignoring its action; seeds differ per environment; misuse is
// refused before anything moves.
#include "env/gym/vector_graph_env.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() {
  static const RuleMatcher m(default_rule_library().rules);
  return m;
}

VectorGraphEnv::CostFactory analytic() {
  return [] { return std::make_unique<AnalyticCostModel>(); };
}

GraphEnvOptions short_episodes() {
  GraphEnvOptions options;
  options.max_steps = 3;
  return options;
}

std::vector<Action> random_actions(const VectorGraphEnv& envs, std::mt19937_64& rng) {
  std::vector<Action> actions;
  for (size_t i = 0; i < envs.size(); ++i) actions.push_back(random_allowed_action(*envs.slot(i).observation, rng));
  return actions;
}

TEST(VectorGraphEnv, ThreadsStepTheEnvironmentsAsSingleGraphEnvsDo) {
  const std::vector<Graph> graphs = {build_zoo_model("squeezenet1.1"), build_zoo_model("resnet18")};
  VectorGraphEnv envs(graphs, 5, matcher(), analytic(), short_episodes(), 2, 7);
  AnalyticCostModel cost;
  std::vector<std::unique_ptr<GraphEnv>> singles;
  for (size_t i = 0; i < 5; ++i)
    singles.push_back(std::make_unique<GraphEnv>(graphs[i % 2], matcher(), cost, short_episodes()));
  std::vector<int> visited(5, 0);
  envs.reset(std::nullopt, [&](const VectorEnvSlot&, size_t i) { ++visited[i]; });
  EXPECT_EQ(visited, std::vector<int>(5, 1));
  std::vector<uint64_t> episodes(5, 1);
  std::vector<const Observation*> single(5);
  for (size_t i = 0; i < 5; ++i) single[i] = &singles[i]->reset(7 + i);
  std::mt19937_64 rng(1);
  bool some_reset = false;
  for (int step = 0; step < 12; ++step) {
    for (size_t i = 0; i < 5; ++i) {
      ASSERT_EQ(envs.slot(i).observation->xfer_mask, single[i]->xfer_mask) << "step " << step << " env " << i;
      ASSERT_EQ(envs.slot(i).observation->graph.node_features, single[i]->graph.node_features);
    }
    const std::vector<Action> actions = random_actions(envs, rng);
    std::vector<bool> was_ended(5);
    for (size_t i = 0; i < 5; ++i) was_ended[i] = envs.slot(i).reset_next;
    envs.step(actions, [&](const VectorEnvSlot&, size_t i) { ++visited[i]; });
    for (size_t i = 0; i < 5; ++i) {
      const VectorEnvSlot& s = envs.slot(i);
      if (was_ended[i]) {  // reset, seeded seed + i + n * episode
        single[i] = &singles[i]->reset(7 + i + 5 * episodes[i]++);
        EXPECT_EQ(s.reward, 0.0);
        EXPECT_FALSE(s.terminated || s.truncated);
        some_reset = true;
        continue;
      }
      const StepResult r = singles[i]->step(actions[i]);
      single[i] = r.observation;
      EXPECT_DOUBLE_EQ(s.reward, r.reward);
      EXPECT_EQ(s.terminated || s.truncated, r.done);
      EXPECT_EQ(s.truncated, r.done && r.info.end_reason == "max-steps");
      EXPECT_EQ(s.rule, r.info.rule);
    }
  }
  EXPECT_TRUE(some_reset);
  EXPECT_EQ(visited, std::vector<int>(5, 13)) << "one visit per environment per reset or step";
}

TEST(VectorGraphEnv, OneThreadAndTwoGiveTheSameEpisodes) {
  const std::vector<Graph> graphs = {build_zoo_model("squeezenet1.1")};
  VectorGraphEnv one(graphs, 4, matcher(), analytic(), short_episodes(), 1, 3),
      two(graphs, 4, matcher(), analytic(), short_episodes(), 2, 3);
  one.reset();
  two.reset();
  std::mt19937_64 rng(5);
  for (int step = 0; step < 8; ++step) {
    const std::vector<Action> actions = random_actions(one, rng);
    one.step(actions);
    two.step(actions);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(one.slot(i).observation->xfer_mask, two.slot(i).observation->xfer_mask);
      EXPECT_EQ(one.slot(i).env->cost_ms(), two.slot(i).env->cost_ms());
    }
  }
}

TEST(VectorGraphEnv, MisuseIsRefusedBeforeAnythingMoves) {
  const std::vector<Graph> graphs = {build_zoo_model("squeezenet1.1")};
  EXPECT_THROW(VectorGraphEnv({}, 2, matcher(), analytic(), {}, 1, 0), UsageError);
  EXPECT_THROW(VectorGraphEnv(graphs, 0, matcher(), analytic(), {}, 1, 0), UsageError);
  EXPECT_THROW(VectorGraphEnv(graphs, 2, matcher(), analytic(), {}, 0, 0), UsageError);
  VectorGraphEnv envs(graphs, 2, matcher(), analytic(), {}, 2, 0);
  const std::vector<Action> two = {{0, 0}, {0, 0}};
  EXPECT_THROW(envs.step(two), UsageError) << "before reset";
  envs.reset();
  EXPECT_THROW(envs.step(std::vector<Action>{{0, 0}}), UsageError) << "one action for two environments";
  EXPECT_EQ(envs.slot(0).env->steps(), 0);
}

}  // namespace
}  // namespace graphworld
