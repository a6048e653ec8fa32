#include "env/cost/graph_cost.h"

#include <gtest/gtest.h>

#include <random>

#include "env/cost/analytic_cost_model.h"
#include "env/ops/graph_builder.h"
#include "env/ops/op_schema.h"
#include "env/zoo/zoo.h"
#include "tests/cost/cost_test_graphs.h"

namespace graphworld {
namespace {

TEST(GraphCost, FoldedWeightOnlyOpsCostNothing) {
  AnalyticCostModel model;
  Graph plain = testing::small_conv_graph(false);
  Graph folded = testing::small_conv_graph(true);
  GraphCost a = graph_cost(plain, model);
  GraphCost b = graph_cost(folded, model);
  EXPECT_GT(a.total_ms, 0);
  // Same conv and relu; the weight transpose is folded before execution.
  EXPECT_DOUBLE_EQ(a.total_ms, b.total_ms);
  for (size_t i = 0; i < folded.num_ops(); ++i)
    if (folded.op(static_cast<OpId>(i)).type == OpType::Transpose) {
      EXPECT_EQ(b.op_ms[i], 0.0);
    }
  OpClasses classes = classify_ops(folded);
  for (size_t i = 0; i < folded.num_ops(); ++i) {
    OpType type = folded.op(static_cast<OpId>(i)).type;
    EXPECT_EQ(classes.constant[i] != 0, type == OpType::Weight || type == OpType::Transpose) << i;
  }
}

TEST(GraphCost, DeadOpsCostNothing) {
  AnalyticCostModel model;
  GraphBuilder b(1);
  TensorRef x = b.input("x", {4, 32});
  TensorRef used = b.add1(OpType::Relu, {x}, {}, "used");
  b.add1(OpType::Sigmoid, {x}, {}, "dead");
  b.output(used, "y");
  Graph g = b.finish();
  GraphCost cost = graph_cost(g, model);
  for (size_t i = 0; i < g.num_ops(); ++i) {
    const Op& op = g.op(static_cast<OpId>(i));
    if (op.name == "dead") {
      EXPECT_EQ(cost.op_ms[i], 0.0);
    }
    if (op.name == "used") {
      EXPECT_GT(cost.op_ms[i], 0.0);
    }
  }
}

TEST(GraphCost, MetadataOnlyViewsAreFreeButDataMovingTransposesAreNot) {
  AnalyticCostModel model;
  GraphBuilder b(1);
  TensorRef x = b.input("x", {2, 3, 4});
  TensorRef r = b.add1(OpType::Reshape, {x}, {{AttrKey::Shape, std::vector<int64_t>{6, 4}}}, "reshape");
  TensorRef moving = b.add1(OpType::Transpose, {r}, {{AttrKey::Perm, std::vector<int64_t>{1, 0}}}, "moving");
  TensorRef u = b.add1(OpType::Unsqueeze, {moving}, {{AttrKey::Axes, std::vector<int64_t>{0}}}, "unsqueeze");
  // Moves only the size-1 axis: the memory order is unchanged.
  TensorRef view = b.add1(OpType::Transpose, {u}, {{AttrKey::Perm, std::vector<int64_t>{1, 0, 2}}}, "view");
  TensorRef rows = b.add1(OpType::Slice, {view},
                          {{AttrKey::Starts, std::vector<int64_t>{1}}, {AttrKey::Ends, std::vector<int64_t>{3}},
                           {AttrKey::Axes, std::vector<int64_t>{0}}},
                          "rows");
  TensorRef cols = b.add1(OpType::Slice, {rows},
                          {{AttrKey::Starts, std::vector<int64_t>{0}}, {AttrKey::Ends, std::vector<int64_t>{3}},
                           {AttrKey::Axes, std::vector<int64_t>{2}}},
                          "cols");
  b.output(cols, "y");
  Graph g = b.finish();
  GraphCost cost = graph_cost(g, model);
  for (size_t i = 0; i < g.num_ops(); ++i) {
    const Op& op = g.op(static_cast<OpId>(i));
    if (op.is_leaf()) continue;
    bool should_be_free = op.name == "reshape" || op.name == "unsqueeze" || op.name == "view" || op.name == "rows";
    EXPECT_EQ(cost.op_ms[i] == 0.0, should_be_free) << op.name;
  }
}

TEST(GraphCost, TotalIsTheSumOfPerOpCosts) {
  AnalyticCostModel model;
  Graph g = build_zoo_model("squeezenet1.1");
  GraphCost cost = graph_cost(g, model);
  double sum = 0;
  for (double ms : cost.op_ms) sum += ms;
  EXPECT_NEAR(cost.total_ms, sum, 1e-9 * sum);
}

TEST(AnalyticCost, IsDeterministicAndFollowsTheFormula) {
  AnalyticRates rates;
  rates.dense_gflops = 100;
  rates.other_gflops = 5;
  rates.bandwidth_gbs = 20;
  rates.overhead_us = 3;
  Graph g = testing::small_conv_graph();
  AnalyticCostModel first(rates), second(rates);
  GraphCost a = graph_cost(g, first), b = graph_cost(g, second);
  EXPECT_EQ(a.total_ms, b.total_ms);  // bit for bit
  EXPECT_EQ(a.op_ms, b.op_ms);
  for (size_t i = 0; i < g.num_ops(); ++i) {
    const Op& op = g.op(static_cast<OpId>(i));
    if (op.type != OpType::Conv) continue;
    // 16x16 output, 16 channels, 8x3x3 inputs each: 2 FLOPs per MAC.
    double flops = 2.0 * 16 * 16 * 16 * 8 * 9;
    EXPECT_DOUBLE_EQ(op_work(g, static_cast<OpId>(i)).flops, flops);
    double bytes = op_work(g, static_cast<OpId>(i)).bytes;
    EXPECT_NEAR(a.op_ms[i], 3e-3 + flops / 100e6 + bytes / 20e6, 1e-12);
  }
  // Every zoo model: two fresh models agree exactly.
  for (const ZooModel& entry : zoo_models()) {
    if (entry.name == "vit-base" || entry.name == "bert-full") continue;  // large; same code path
    Graph z = build_zoo_model(entry.name);
    AnalyticCostModel m1, m2;
    EXPECT_EQ(graph_cost(z, m1).total_ms, graph_cost(z, m2).total_ms) << entry.name;
  }
}

TEST(CostTracker, IncrementalEqualsFullRecomputationAfterRandomRewrites) {
  AnalyticCostModel model;
  std::mt19937_64 rng(2024);
  for (const char* name : {"resnet50", "squeezenet1.1", "bert", "nasrnn", "inceptionv3", "resnext50"}) {
    ZooOptions batch2;
    batch2.batch = 2;  // so transposes of [batch, hidden] tensors move data
    Graph g = build_zoo_model(name, batch2);
    CostTracker tracker(model);
    double original = tracker.reset(g);
    int applied = 0;
    for (int attempt = 0; attempt < 600 && applied < 120; ++attempt) {
      testing::TestRewrite rewrite;
      if (!testing::random_rewrite(g, rng, rewrite)) continue;
      ++applied;
      double incremental = tracker.update(g, rewrite.removed, rewrite.changed);
      double full = CostTracker(model).reset(g);
      ASSERT_NEAR(incremental, full, 1e-9 * full) << name << " after " << applied << " rewrites";
    }
    EXPECT_GE(applied, 60) << name;
    EXPECT_NE(tracker.total_ms(), original) << name;  // the rewrites did change the cost
  }
}

TEST(CostTracker, PerOpCostsMatchAFreshEvaluation) {
  AnalyticCostModel model;
  std::mt19937_64 rng(7);
  Graph g = build_zoo_model("resnet18");
  CostTracker tracker(model);
  tracker.reset(g);
  for (int i = 0; i < 50; ++i) {
    testing::TestRewrite rewrite;
    if (testing::random_rewrite(g, rng, rewrite)) tracker.update(g, rewrite.removed, rewrite.changed);
  }
  GraphCost fresh = graph_cost(g, model);
  for (size_t i = 0; i < g.num_ops(); ++i) EXPECT_NEAR(tracker.op_ms(static_cast<OpId>(i)), fresh.op_ms[i], 1e-12) << i;
}

}  // namespace
}  // namespace graphworld
