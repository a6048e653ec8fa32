#include "env/ops/executor.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "env/ops/graph_builder.h"

namespace graphworld {
namespace {

// y = relu(x @ transpose(w)) + b, where transpose(w) is a weight-only subgraph.
Graph mlp_graph() {
  GraphBuilder b;
  TensorRef x = b.input("x", {2, 3});
  TensorRef w = b.weight(TensorData::from_floats({2, 3}, {1, 0, 1, 0, 1, -1}), "w");
  TensorRef wt = b.add1(OpType::Transpose, {w}, {{AttrKey::Perm, std::vector<int64_t>{1, 0}}}, "w_t");
  TensorRef m = b.add1(OpType::MatMul, {x, wt}, {{AttrKey::Activation, int64_t(Activation::Relu)}}, "mm");
  TensorRef bias = b.weight(TensorData::from_floats({2}, {10, 20}), "b");
  b.output(b.add1(OpType::Add, {m, bias}, {}, "add"), "y");
  b.output(m, "pre_bias");
  return b.finish();
}

TEST(Executor, RunsGraphWithFoldedWeightSubgraph) {
  Graph g = mlp_graph();
  Executor exec(g, {.threads = 1});
  EXPECT_EQ(exec.threads(), 1);
  auto out = exec.run({TensorData::from_floats({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 2u);
  // row0: [1+3, 2-3] = [4, -1] -> relu [4, 0]; row1: [10, -1] -> [10, 0]
  std::vector<float> y(out[0]->floats(), out[0]->floats() + 4);
  EXPECT_EQ(y, (std::vector<float>{14, 20, 20, 20}));
  std::vector<float> pre(out[1]->floats(), out[1]->floats() + 4);
  EXPECT_EQ(pre, (std::vector<float>{4, 0, 10, 0}));
}

TEST(Executor, RepeatedRunsAgreeAndRandomInputsAreSeeded) {
  Graph g = mlp_graph();
  Executor exec(g, {.threads = 2});
  auto inputs = random_inputs(g, 5);
  auto a = exec.run(inputs);
  auto b = exec.run(inputs);
  EXPECT_EQ(std::vector<float>(a[0]->floats(), a[0]->floats() + 4), std::vector<float>(b[0]->floats(), b[0]->floats() + 4));
  auto again = random_inputs(g, 5);
  auto other = random_inputs(g, 6);
  EXPECT_EQ(std::vector<float>(inputs[0]->floats(), inputs[0]->floats() + 6),
            std::vector<float>(again[0]->floats(), again[0]->floats() + 6));
  EXPECT_NE(std::vector<float>(inputs[0]->floats(), inputs[0]->floats() + 6),
            std::vector<float>(other[0]->floats(), other[0]->floats() + 6));
}

TEST(Executor, RejectsWrongInputsWithTheirNameAndShape) {
  Executor exec(mlp_graph(), {.threads = 1});
  try {
    exec.run({TensorData::from_floats({3, 2}, {1, 2, 3, 4, 5, 6})});
    FAIL() << "wrong shape accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x' must be float32 [2,3]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(exec.run({}), UsageError);
}

TEST(Executor, SeededRandomWeightsAreMaterialisedDeterministically) {
  auto build = [](uint64_t seed) {
    GraphBuilder b(seed);
    TensorRef x = b.input("x", {1, 4});
    b.output(b.add1(OpType::MatMul, {x, b.random_weight({4, 4}, -1, 1)}), "y");
    return b.finish();
  };
  auto inputs = random_inputs(build(1), 1);
  auto a = Executor(build(1), {.threads = 1}).run(inputs);
  auto b = Executor(build(1), {.threads = 1}).run(inputs);
  auto c = Executor(build(2), {.threads = 1}).run(inputs);
  EXPECT_EQ(std::vector<float>(a[0]->floats(), a[0]->floats() + 4), std::vector<float>(b[0]->floats(), b[0]->floats() + 4));
  EXPECT_NE(std::vector<float>(a[0]->floats(), a[0]->floats() + 4), std::vector<float>(c[0]->floats(), c[0]->floats() + 4));
}

}  // namespace
}  // namespace graphworld
