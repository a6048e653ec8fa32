// Node counts of an ONNX model by op type, and the text of two counts'
// difference (what optimize reports when onnxruntime runs another graph).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "common/error.h"
#include "env/onnx/node_counts.h"
#include "env/onnx/onnx_export.h"
#include "env/ops/graph_builder.h"

namespace graphworld {
namespace {

TEST(NodeCounts, CountsAnExportedModelByOpType) {
  GraphBuilder b(3);
  TensorRef x = b.input("x", {2, 8});
  TensorRef left = b.add1(OpType::MatMul, {x, b.random_weight({8, 4}, -1, 1)});
  TensorRef right = b.add1(OpType::MatMul, {x, b.random_weight({8, 4}, -1, 1)});
  b.output(b.add1(OpType::Relu, {b.add1(OpType::Add, {left, right})}), "y");
  const auto counts = onnx_node_counts(export_onnx_bytes(b.finish()), "two-matmuls");
  // The exporter spells a 2-D MatMul an activation does not follow as a Gemm.
  EXPECT_EQ(counts.at("Add"), 1);
  EXPECT_EQ(counts.at("Relu"), 1);
  EXPECT_EQ(counts.count("MatMul") ? counts.at("MatMul") : 0, 2 - (counts.count("Gemm") ? counts.at("Gemm") : 0));
  int64_t total = 0;
  for (const auto& [type, n] : counts) total += n;
  EXPECT_EQ(total, 4);
  EXPECT_THROW(onnx_node_counts("not a model", "junk.onnx"), ImportError);
  // A Flatten counts as a Reshape: graphworld writes one as the other.
  onnx::ModelProto flatten;
  flatten.mutable_graph()->add_node()->set_op_type("Flatten");
  flatten.mutable_graph()->add_node()->set_op_type("Reshape");
  EXPECT_EQ(onnx_node_counts(flatten.SerializeAsString(), "flatten"), (std::map<std::string, int64_t>{{"Reshape", 2}}));
}

// Domains qualify op types outside the default domain, a grouped node is
// keyed with its group count, and subgraphs count.
TEST(NodeCounts, DomainsGroupsAndSubgraphsAreCounted) {
  onnx::ModelProto model;
  onnx::GraphProto* g = model.mutable_graph();
  g->add_node()->set_op_type("Conv");
  onnx::NodeProto* grouped = g->add_node();
  grouped->set_op_type("Conv");
  onnx::AttributeProto* group = grouped->add_attribute();
  group->set_name("group");
  group->set_i(8);
  onnx::NodeProto* fused = g->add_node();
  fused->set_op_type("FusedConv");
  fused->set_domain("com.microsoft");
  onnx::NodeProto* plain = g->add_node();
  plain->set_op_type("Relu");
  plain->set_domain("ai.onnx");
  onnx::NodeProto* branch = g->add_node();
  branch->set_op_type("If");
  onnx::AttributeProto* then_branch = branch->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->mutable_g()->add_node()->set_op_type("Relu");
  const std::map<std::string, int64_t> expected = {
      {"Conv", 1}, {"Conv[group=8]", 1}, {"com.microsoft:FusedConv", 1}, {"Relu", 2}, {"If", 1}};
  EXPECT_EQ(onnx_node_counts(model.SerializeAsString(), "handmade"), expected);
}

TEST(NodeCounts, DifferenceNamesEachOpTypeWhoseCountChanged) {
  const std::map<std::string, int64_t> before = {{"MatMul", 48}, {"Add", 10}, {"com.microsoft:FusedConv", 7}};
  const std::map<std::string, int64_t> after = {{"MatMul", 32}, {"Add", 10}, {"Split", 16}};
  EXPECT_EQ(node_count_difference(before, after), "MatMul 48→32, Split 0→16, com.microsoft:FusedConv 7→0");
  EXPECT_EQ(node_count_difference(before, before), "");
  EXPECT_EQ(node_count_difference(before, after, 1), "MatMul 48→32 and 2 more");
}

}  // namespace
}  // namespace graphworld
