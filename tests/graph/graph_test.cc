#include "env/graph/graph.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "env/ops/graph_builder.h"

namespace graphworld {
namespace {

// x -> relu -> matmul(w) -> add(x) -> output
Graph small_graph(const std::string& suffix = "", uint64_t seed = 3) {
  GraphBuilder b(seed);
  TensorRef x = b.input("x", {4, 8});
  TensorRef w = b.random_weight({8, 8}, -1, 1, "w" + suffix);
  TensorRef r = b.add1(OpType::Relu, {x}, {}, "relu" + suffix);
  TensorRef m = b.add1(OpType::MatMul, {r, w}, {}, "mm" + suffix);
  TensorRef s = b.add1(OpType::Add, {m, x}, {}, "add" + suffix);
  b.output(s, "y");
  return b.finish();
}

TEST(Graph, TopologicalOrderPutsInputsFirst) {
  Graph g = small_graph();
  std::vector<OpId> order = g.topological_order();
  ASSERT_EQ(order.size(), g.num_ops());
  std::vector<int> position(g.num_ops());
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  for (OpId id = 0; id < static_cast<OpId>(g.num_ops()); ++id)
    for (const TensorRef& ref : g.op(id).inputs) EXPECT_LT(position[ref.op], position[id]);
}

TEST(Graph, CycleIsNamed) {
  Graph g = small_graph();
  // Make relu read the add that depends on it.
  OpId relu = 2, add = 4;
  ASSERT_EQ(g.op(relu).type, OpType::Relu);
  ASSERT_EQ(g.op(add).type, OpType::Add);
  g.mutable_op(relu).inputs[0] = {add, 0};
  try {
    g.check_structure();
    FAIL() << "cycle not detected";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'relu'"), std::string::npos) << e.what();
  }
}

TEST(Graph, DanglingInputIsNamed) {
  Graph g = small_graph();
  g.mutable_op(3).inputs[1] = {99, 0};
  try {
    g.check_structure();
    FAIL() << "dangling input not detected";
  } catch (const GraphError& e) {
    EXPECT_NE(std::string(e.what()).find("dangling"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'mm'"), std::string::npos) << e.what();
  }
  GraphBuilder b;
  TensorRef x = b.input("x", {2});
  EXPECT_THROW(b.graph().add_op(OpType::Relu, "r", {}, {{x.op + 5, 0}}, {{DType::Float32, {2}}}), GraphError);
}

TEST(Graph, StructuralIdentityIgnoresNamesButNotWeightsOrParams) {
  Graph a = small_graph("", 3);
  Graph b = small_graph("_renamed", 3);
  EXPECT_TRUE(a.structurally_equal(b));
  EXPECT_EQ(a.structural_hash(), b.structural_hash());
  Graph c = small_graph("", 4);  // different random weight
  EXPECT_FALSE(a.structurally_equal(c));
  EXPECT_NE(a.structural_hash(), c.structural_hash());
  Graph d = small_graph();
  d.mutable_op(2).type = OpType::Sigmoid;
  EXPECT_FALSE(a.structurally_equal(d));
  EXPECT_NE(a.structural_hash(), d.structural_hash());
}

// Importers write every attribute, zoo builders none, and rules copy bound
// values: one operator must have one spelling, or equal graphs would hash
// apart and the cost cache would time one op twice under two keys.
TEST(Graph, AttributesAtTheirDefaultAreDropped) {
  auto conv_graph = [](Attributes attrs) {
    GraphBuilder b(3);
    TensorRef x = b.input("x", {1, 2, 5, 5});
    TensorRef w = b.random_weight({4, 2, 3, 3}, -1, 1, "w");
    b.output(b.add1(OpType::Conv, {x, w}, std::move(attrs), "conv"), "y");
    return b.finish();
  };
  const int64_t none = static_cast<int64_t>(Activation::None), relu = static_cast<int64_t>(Activation::Relu);
  Graph bare = conv_graph({});
  Graph spelled = conv_graph({{AttrKey::Strides, std::vector<int64_t>{1, 1}},
                              {AttrKey::Pads, std::vector<int64_t>{0, 0, 0, 0}},
                              {AttrKey::Group, int64_t{1}},
                              {AttrKey::Activation, none}});
  EXPECT_TRUE(spelled.op(spelled.outputs()[0].ref.op).attrs.items().empty());
  EXPECT_TRUE(bare.structurally_equal(spelled));
  EXPECT_EQ(bare.structural_hash(), spelled.structural_hash());
  Graph fused = conv_graph({{AttrKey::Activation, relu}, {AttrKey::Group, int64_t{1}}});
  const Attributes& kept = fused.op(fused.outputs()[0].ref.op).attrs;
  EXPECT_EQ(kept.items().size(), 1u);
  EXPECT_EQ(kept.get_int(AttrKey::Activation, none), relu);
  EXPECT_FALSE(bare.structurally_equal(fused));
}

TEST(Graph, PrunedDropsDeadOpsAndKeepsInputs) {
  GraphBuilder b;
  TensorRef x = b.input("x", {3});
  TensorRef unused = b.input("unused", {5});
  b.add1(OpType::Sigmoid, {unused}, {}, "dead");
  b.output(b.add1(OpType::Relu, {x}), "y");
  Graph g = b.finish();
  Graph p = g.pruned();
  EXPECT_EQ(p.num_ops(), 3u);  // two inputs and relu
  EXPECT_EQ(p.input_ops().size(), 2u);
  EXPECT_TRUE(g.structurally_equal(p));
}

TEST(Graph, DotShowsOpsEdgesAndOutputs) {
  std::string dot = small_graph().to_dot();
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("MatMul"), std::string::npos);
  EXPECT_NE(dot.find("->"), std::string::npos);
  EXPECT_NE(dot.find("\"y\""), std::string::npos);
}

TEST(Graph, ConsumersListEveryUse) {
  Graph g = small_graph();
  auto uses = g.consumers();
  EXPECT_EQ(uses[0][0].size(), 2u);  // x feeds relu and add
}

}  // namespace
}  // namespace graphworld
