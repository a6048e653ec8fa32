// Search baselines: never worse than the input, costs that agree with a
// fresh evaluation, results equal to the original in the executor and (for
// exported models) in onnxruntime, and clear errors for bad options.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <ostream>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/graph_cost.h"
#include "env/onnx/onnx_export.h"
#include "env/ops/executor.h"
#include "env/rules/rule_library.h"
#include "env/search/greedy_finish.h"
#include "env/search/search.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() {
  static const RuleMatcher m(default_rule_library().rules);
  return m;
}

double max_relative_error(const Graph& a, const Graph& b) {
  const auto inputs = random_inputs(a, 5);
  const auto x = Executor(a).run(inputs);
  const auto y = Executor(b).run(inputs);
  double worst = 0;
  for (size_t k = 0; k < x.size(); ++k) worst = std::max(worst, testing::relative_error(*x[k], *y[k]));
  return worst;
}

struct Case {
  const char* model;
  const char* algorithm;
  int64_t budget;
};

// ctest and failure messages show the case, not "24-byte object".
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << " " << c.algorithm << " budget " << c.budget; }

class SearchOnZoo : public ::testing::TestWithParam<Case> {};

TEST_P(SearchOnZoo, NeverWorseAndStillEquivalent) {
  const Case c = GetParam();
  AnalyticCostModel cost;
  const Graph original = build_zoo_model(c.model, {});
  SearchOptions options;
  options.budget = c.budget;
  options.seed = 3;
  int progress_calls = 0;
  options.progress = [&](const SearchProgress& p) {
    ++progress_calls;
    EXPECT_LE(p.best_cost_ms, p.original_cost_ms);
  };
  const SearchResult r = run_search(c.algorithm, original, matcher(), cost, options);
  EXPECT_GE(progress_calls, 1);
  EXPECT_LE(r.best_cost_ms, r.original_cost_ms);
  EXPECT_NEAR(r.original_cost_ms, graph_cost(original, cost).total_ms, 1e-9 * r.original_cost_ms);
  // The reported cost is the result's cost from scratch.
  EXPECT_NEAR(r.best_cost_ms, graph_cost(r.graph, cost).total_ms, 1e-9 * r.original_cost_ms);
  EXPECT_EQ(r.applied.empty(), r.best_cost_ms == r.original_cost_ms);
  EXPECT_NO_THROW(r.graph.check_structure());
  EXPECT_LE(max_relative_error(original, r.graph), 1e-4) << c.model << " " << c.algorithm;
}

INSTANTIATE_TEST_SUITE_P(Baselines, SearchOnZoo,
                         ::testing::Values(Case{"bert", "taso", 30}, Case{"resnet18", "taso", 30},
                                           Case{"squeezenet1.1", "taso", 30}, Case{"nasrnn", "taso", 30},
                                           Case{"bert", "greedy", 50}, Case{"resnet18", "greedy", 50},
                                           Case{"inceptionv3", "greedy", 20}, Case{"bert", "random", 100},
                                           Case{"squeezenet1.1", "random", 100}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.model) + "_" + info.param.algorithm;
                           for (char& ch : name)
                             if (ch == '.') ch = '_';
                           return name;
                         });

// Under the analytic model, BatchNorm folding and Relu fusion pay in
// ResNet-18, merging the parallel MatMuls of each cell pays in NasRNN.
TEST(Search, TasoImprovesResNetAndNasRnn) {
  AnalyticCostModel cost;
  SearchOptions options;
  options.budget = 20;
  for (const char* model : {"resnet18", "nasrnn"}) {
    const SearchResult r = taso_search(build_zoo_model(model, {}), matcher(), cost, options);
    EXPECT_GT(r.reduction_pct(), 0.5) << model;
    EXPECT_GT(r.explored, 1) << model;
  }
}

TEST(Search, ZeroBudgetReturnsTheInput) {
  AnalyticCostModel cost;
  SearchOptions options;
  options.budget = 0;
  const Graph g = build_zoo_model("resnet18", {});
  for (const char* algorithm : {"taso", "greedy", "random"}) {
    const SearchResult r = run_search(algorithm, g, matcher(), cost, options);
    EXPECT_EQ(r.best_cost_ms, r.original_cost_ms) << algorithm;
    EXPECT_TRUE(r.applied.empty()) << algorithm;
    EXPECT_TRUE(r.graph.structurally_equal(g.pruned())) << algorithm;
  }
}

TEST(Search, BadOptionsAreClearErrors) {
  AnalyticCostModel cost;
  const Graph g = build_zoo_model("resnet18", {});
  SearchOptions options;
  EXPECT_THROW(run_search("anneal", g, matcher(), cost, options), UsageError);
  options.alpha = 0.9;
  EXPECT_THROW(run_search("taso", g, matcher(), cost, options), UsageError);
  options.alpha = 1.05;
  options.budget = -1;
  EXPECT_THROW(run_search("taso", g, matcher(), cost, options), UsageError);
}

// Every optimised zoo model, exported, computes the original's outputs in
// onnxruntime.
TEST(Search, OptimisedModelsAreEquivalentInOnnxRuntime) {
  AnalyticCostModel cost;
  const std::string dir = testing::scratch_dir() + "/search-ort";
  std::filesystem::create_directories(dir);
  for (const ZooModel& m : zoo_models()) {
    const Graph original = build_zoo_model(m.name, {});
    SearchOptions options;
    options.budget = 8;
    const SearchResult r = taso_search(original, matcher(), cost, options);
    const std::string a = dir + "/" + m.name + "-original.onnx", b = dir + "/" + m.name + "-optimised.onnx";
    export_onnx_file(original, a);
    export_onnx_file(r.graph, b);
    const testing::OrtComparison cmp = testing::ort_compare(a, b);
    EXPECT_GE(cmp.outputs, 1) << m.name;
    EXPECT_LE(cmp.max_rel_err, 1e-4) << m.name << " after " << r.applied.size() << " substitutions";
    std::filesystem::remove(a);
    std::filesystem::remove(b);
  }
}

// A greedy finish of an agent that stopped early: greedy search is
// deterministic, so greedy stopped after 3 rewrites and then finished ends
// where greedy search run to its end does, with the agent's own figure kept.
TEST(GreedyFinish, AnAgentStoppedEarlyIsFinishedAsGreedySearchWouldFinishIt) {
  AnalyticCostModel cost;
  const Graph original = build_zoo_model("resnet18", {});
  SearchOptions options;
  const SearchResult whole = greedy_search(original, matcher(), cost, options);
  ASSERT_GT(whole.explored, 3);
  options.budget = 3;
  SearchResult agent = greedy_search(original, matcher(), cost, options);
  const double agent_cost = agent.best_cost_ms;
  const double agent_pct = agent.reduction_pct();
  EXPECT_FALSE(agent.finish.ran);
  EXPECT_DOUBLE_EQ(agent.agent_reduction_pct(), agent_pct);
  finish_greedily(agent, matcher(), cost, 1000);
  EXPECT_TRUE(agent.finish.ran);
  EXPECT_EQ(agent.finish.agent_cost_ms, agent_cost);
  EXPECT_DOUBLE_EQ(agent.agent_reduction_pct(), agent_pct);
  EXPECT_NEAR(agent.best_cost_ms, whole.best_cost_ms, 1e-9 * whole.best_cost_ms);
  EXPECT_NEAR(agent.best_cost_ms, graph_cost(agent.graph, cost).total_ms, 1e-9 * agent.original_cost_ms);
  EXPECT_EQ(agent.finish.steps, whole.explored - 3);
  EXPECT_EQ(agent.applied, whole.applied);  // the agent's 3 rewrites, then the finish's
  EXPECT_EQ(agent.explored, 3) << "the agent's own steps are left as they were";
  EXPECT_LE(max_relative_error(original, agent.graph), 1e-4);
}

// Nothing left that pays at once: the finish runs, takes nothing and leaves
// the agent's graph as it was; a finish of no steps is refused.
TEST(GreedyFinish, LeavesAFinishedGraphAloneAndNeedsAStep) {
  AnalyticCostModel cost;
  SearchResult done = greedy_search(build_zoo_model("resnet18", {}), matcher(), cost, SearchOptions{});
  ASSERT_FALSE(done.applied.empty());
  const Graph before = done.graph;
  const double cost_before = done.best_cost_ms;
  const size_t applied_before = done.applied.size();
  finish_greedily(done, matcher(), cost, 1000);
  EXPECT_TRUE(done.finish.ran);
  EXPECT_EQ(done.finish.steps, 0);
  EXPECT_EQ(done.best_cost_ms, cost_before);
  EXPECT_EQ(done.applied.size(), applied_before);
  EXPECT_TRUE(done.graph.structurally_equal(before));
  EXPECT_THROW(finish_greedily(done, matcher(), cost, 0), UsageError);
}

}  // namespace
}  // namespace graphworld
