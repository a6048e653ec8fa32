// Exported models are valid SSA ONNX with initializers and the source signature.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <set>

#include "common/error.h"

#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/graph_builder.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes));
  return model;
}

TEST(Export, KeepsSignatureAndUsesInitializersAndIsSsa) {
  const std::string path = testing::model_path("resnet18_bn.onnx");
  onnx::ModelProto source = parse(read_file_bytes(path));
  std::string bytes = export_onnx_bytes(import_onnx_file(path));
  EXPECT_NO_THROW(check_onnx_model_bytes(bytes, "resnet18_bn export"));
  onnx::ModelProto out = parse(bytes);
  ASSERT_EQ(out.graph().input_size(), 1);
  EXPECT_EQ(out.graph().input(0).name(), source.graph().input(0).name());
  EXPECT_EQ(out.graph().input(0).type().SerializeAsString(), source.graph().input(0).type().SerializeAsString());
  ASSERT_EQ(out.graph().output_size(), 1);
  EXPECT_EQ(out.graph().output(0).name(), source.graph().output(0).name());
  EXPECT_EQ(out.graph().output(0).type().tensor_type().shape().SerializeAsString(),
            source.graph().output(0).type().tensor_type().shape().SerializeAsString());
  EXPECT_GT(out.graph().initializer_size(), 40);
  std::set<std::string> produced;
  for (const auto& node : out.graph().node()) {
    EXPECT_NE(node.op_type(), "Constant");
    for (const auto& o : node.output()) EXPECT_TRUE(produced.insert(o).second) << "assigned twice: " << o;
  }
  for (const auto& init : out.graph().initializer()) EXPECT_TRUE(produced.insert(init.name()).second) << init.name();
}

TEST(Export, FusedActivationsGeluAndWeightSubgraphsBecomeValidOnnx) {
  GraphBuilder b(3);
  TensorRef x = b.input("x", {1, 2, 5, 5});
  TensorRef w = b.random_weight({4, 2, 1, 1}, -1, 1, "w1x1");
  TensorRef big = b.add1(OpType::EnlargeKernel, {w}, {{AttrKey::KernelShape, std::vector<int64_t>{3, 3}}}, "enlarge");
  TensorRef c = b.add1(OpType::Conv, {x, big},
                       {{AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}, {AttrKey::Activation, int64_t(Activation::Relu)}},
                       "conv");
  TensorRef g = b.add1(OpType::Gelu, {c}, {}, "gelu");
  b.output(g, "y");
  b.output(x, "x_again");  // an output that is a graph input needs an Identity
  std::string bytes = export_onnx_bytes(b.finish());
  EXPECT_NO_THROW(check_onnx_model_bytes(bytes, "fused"));
  onnx::ModelProto out = parse(bytes);
  std::multiset<std::string> types;
  for (const auto& node : out.graph().node()) types.insert(node.op_type());
  EXPECT_EQ(types.count("Pad"), 0u) << "EnlargeKernel on a weight must be folded";
  EXPECT_EQ(types.count("Relu"), 1u);
  EXPECT_EQ(types.count("Erf"), 1u);
  EXPECT_EQ(types.count("Identity"), 1u);
}

TEST(Export, ZooTransformerWithLayerNormPassesTheChecker) {
  std::string bytes = export_onnx_bytes(build_zoo_model("bert-full"));
  EXPECT_NO_THROW(check_onnx_model_bytes(bytes, "bert-full"));
  Graph back = import_onnx_bytes(bytes, "bert-full export");
  EXPECT_EQ(back.info(back.outputs()[0].ref).shape, (Shape{1, 64, 1024}));
}

TEST(Export, CheckerRejectsAnInvalidModel) {
  onnx::ModelProto model = parse(export_onnx_bytes(build_zoo_model("nasrnn")));
  model.mutable_graph()->mutable_node(0)->set_input(0, "undefined_tensor");
  EXPECT_THROW(check_onnx_model_bytes(model.SerializeAsString(), "broken"), ImportError);
}

}  // namespace
}  // namespace graphworld
