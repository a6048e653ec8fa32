// The layout prediction the cost models use (env/ops/blocked_layout.h,
// through classify_ops) against what the executor really does.
#include "env/ops/blocked_layout.h"

#include <gtest/gtest.h>

#include "env/cost/analytic_cost_model.h"
#include "env/cost/aten_op_timer.h"
#include "env/cost/graph_cost.h"
#include "env/cost/measured_cost_model.h"
#include "env/ops/executor.h"
#include "env/ops/graph_builder.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

// Every op the executor ran: predicted blocked exactly when it left its
// output blocked.
void expect_prediction_matches_executor(const Graph& g, const std::string& what) {
  OpClasses classes = classify_ops(g);
  Executor executor(g, ExecutorOptions{1});
  executor.run_for_timing();
  const std::vector<uint8_t>& actual = executor.blocked_outputs();
  int blocked = 0;
  for (size_t i = 0; i < g.num_ops(); ++i) {
    const Op& op = g.op(static_cast<OpId>(i));
    if (op.is_leaf() || classes.constant[i] || !classes.live[i]) continue;
    EXPECT_EQ(classes.blocked[i], actual[i]) << what << ": " << op_type_name(op.type) << " '" << op.name << "'";
    blocked += actual[i];
  }
  if (onednn_available()) {
    EXPECT_GT(blocked, 0) << what;
  }
}

TEST(BlockedLayout, PredictionMatchesTheExecutorOnZooNetworks) {
  for (const char* name : {"squeezenet1.1", "resnet18", "inceptionv3", "resnext50"})
    expect_prediction_matches_executor(build_zoo_model(name), name);
}

// The cases that decide a layout: a Concat of two conv outputs is plain, so
// the MaxPool and the Relu after it are too, while the conv reading the same
// Concat converts it for itself (and the Relu still sees the plain value,
// whichever reader runs first); an Add of a blocked and a plain value of the
// same shape is blocked, one that broadcasts is not.
TEST(BlockedLayout, PredictionMatchesTheExecutorAroundConcatAndAdd) {
  GraphBuilder b(3);
  TensorRef x = b.input("x", {1, 8, 12, 12});
  Attributes same{{AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}};
  TensorRef c1 = b.add1(OpType::Conv, {x, b.random_weight({8, 8, 3, 3}, -1, 1)}, same, "c1");
  TensorRef c2 = b.add1(OpType::Conv, {x, b.random_weight({8, 8, 3, 3}, -1, 1)}, same, "c2");
  TensorRef cat = b.add1(OpType::Concat, {c1, c2}, {{AttrKey::Axis, int64_t{1}}}, "cat");
  TensorRef conv_of_cat = b.add1(OpType::Conv, {cat, b.random_weight({16, 16, 3, 3}, -1, 1)}, same, "conv_of_cat");
  TensorRef relu = b.add1(OpType::Relu, {cat}, {}, "relu_of_cat");
  TensorRef pool = b.add1(OpType::MaxPool, {relu},
                          {{AttrKey::KernelShape, std::vector<int64_t>{2, 2}}, {AttrKey::Strides, std::vector<int64_t>{2, 2}}},
                          "pool");
  TensorRef mixed = b.add1(OpType::Add, {conv_of_cat, cat}, {}, "blocked_plus_plain");
  TensorRef bias = b.random_weight({1, 16, 1, 1}, -1, 1, "bias");
  TensorRef broadcast = b.add1(OpType::Add, {mixed, bias}, {}, "broadcast_add");
  b.output(pool, "pooled");
  b.output(broadcast, "summed");
  Graph g = b.finish();
  expect_prediction_matches_executor(g, "concat and add");
  if (!onednn_available()) return;
  OpClasses classes = classify_ops(g);
  auto blocked = [&](const std::string& name) {
    for (size_t i = 0; i < g.num_ops(); ++i)
      if (g.op(static_cast<OpId>(i)).name == name) return classes.blocked[i] != 0;
    ADD_FAILURE() << "no op " << name;
    return false;
  };
  EXPECT_TRUE(blocked("c1"));
  EXPECT_FALSE(blocked("cat"));
  EXPECT_TRUE(blocked("conv_of_cat"));
  EXPECT_FALSE(blocked("relu_of_cat"));
  EXPECT_FALSE(blocked("pool"));
  EXPECT_TRUE(blocked("blocked_plus_plain"));
  EXPECT_FALSE(blocked("broadcast_add"));
}

// A Split that only reinterprets memory is free on a plain value, but on a
// conv's blocked output the executor converts the whole value first (the
// Split after two merged convs), so the CPU-measured model prices it. Models
// that do not price layouts keep every view free.
TEST(BlockedLayout, AViewOfABlockedValueIsPricedAsTheConversionItIs) {
  GraphBuilder b(5);
  TensorRef x = b.input("x", {1, 16, 12, 12});
  Attributes halves{{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, std::vector<int64_t>{8, 8}}};
  std::vector<TensorRef> plain = b.add(OpType::Split, {x}, halves, "split_of_input");
  TensorRef conv = b.add1(OpType::Conv, {x, b.random_weight({16, 16, 1, 1}, -1, 1)}, {}, "conv");
  std::vector<TensorRef> blocked = b.add(OpType::Split, {conv}, halves, "split_of_conv");
  b.output(b.add1(OpType::Add, {plain[0], blocked[1]}, {}, "sum"), "y");
  Graph g = b.finish();
  TimingPolicy quick;
  quick.min_repeats = quick.ratio_min_repeats = 3;
  quick.min_total_ms = quick.ratio_min_total_ms = 0;
  MeasuredCostModel measured("measured", std::make_unique<AtenOpTimer>(1, quick), testing::scratch_dir() + "/views");
  AnalyticCostModel analytic;
  GraphCost with_layouts = graph_cost(g, measured);
  GraphCost without = graph_cost(g, analytic);
  for (size_t i = 0; i < g.num_ops(); ++i) {
    const std::string& name = g.op(static_cast<OpId>(i)).name;
    if (name == "split_of_input") {
      EXPECT_EQ(with_layouts.op_ms[i], 0.0);
      EXPECT_EQ(without.op_ms[i], 0.0);
    }
    if (name == "split_of_conv") {
      EXPECT_EQ(with_layouts.op_ms[i] > 0.0, onednn_available());
      EXPECT_EQ(without.op_ms[i], 0.0);
    }
  }
}

}  // namespace
}  // namespace graphworld
