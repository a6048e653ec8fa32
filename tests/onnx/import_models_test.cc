// Importing real exports from torch.onnx (made by tests/data/export_models.py).
#include <gtest/gtest.h>

#include <ostream>

#include "env/onnx/onnx_import.h"
#include "env/ops/validate.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

struct Expected {
  std::string file;
  Shape input;
  Shape output;
  int64_t opset;
  bool has_batchnorm;
};

void PrintTo(const Expected& e, std::ostream* os) { *os << e.file; }

class ImportTorchvision : public ::testing::TestWithParam<Expected> {};

TEST_P(ImportTorchvision, ImportsWithShapesOpsetAndBatchNormAsExported) {
  const Expected& e = GetParam();
  ImportInfo info;
  Graph g = import_onnx_file(testing::model_path(e.file), &info);
  EXPECT_EQ(info.opset, e.opset);
  EXPECT_NE(info.producer.find("pytorch"), std::string::npos);
  ASSERT_EQ(g.input_ops().size(), 1u);
  EXPECT_EQ(g.op(g.input_ops()[0]).name, "input");
  EXPECT_EQ(g.op(g.input_ops()[0]).outputs[0].shape, e.input);
  ASSERT_EQ(g.outputs().size(), 1u);
  EXPECT_EQ(g.outputs()[0].name, "output");
  EXPECT_EQ(g.info(g.outputs()[0].ref).shape, e.output);
  auto counts = testing::op_type_counts(g);
  EXPECT_EQ(counts.count(OpType::BatchNorm) > 0, e.has_batchnorm);
  EXPECT_GT(counts[OpType::Conv], 0);
  EXPECT_NO_THROW(validate_graph(g));
  // Every Conv weight is a concrete initializer, never a random one.
  for (const Op& op : g.ops())
    if (op.type == OpType::Weight) {
      EXPECT_TRUE(op.value != nullptr) << op.name;
    }
}

INSTANTIATE_TEST_SUITE_P(
    Models, ImportTorchvision,
    ::testing::Values(Expected{"resnet18_bn.onnx", {1, 3, 224, 224}, {1, 1000}, 11, true},
                      Expected{"resnet18_folded.onnx", {1, 3, 224, 224}, {1, 1000}, 11, false},
                      Expected{"resnet50_bn.onnx", {1, 3, 224, 224}, {1, 1000}, 17, true},
                      Expected{"resnet50_folded.onnx", {1, 3, 224, 224}, {1, 1000}, 17, false},
                      Expected{"squeezenet1_1.onnx", {1, 3, 224, 224}, {1, 1000}, 13, false},
                      Expected{"inception_v3_bn.onnx", {1, 3, 299, 299}, {1, 1000}, 17, true},
                      Expected{"inception_v3_folded.onnx", {1, 3, 299, 299}, {1, 1000}, 17, false}),
    [](const auto& info) {
      std::string name = info.param.file.substr(0, info.param.file.find('.'));
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(ImportModels, InceptionKeepsPadBeforeAveragePool) {
  Graph g = import_onnx_file(testing::model_path("inception_v3_folded.onnx"));
  int pad_then_pool = 0;
  for (const Op& op : g.ops())
    if (op.type == OpType::AvgPool && g.op(op.inputs[0].op).type == OpType::Pad) {
      ++pad_then_pool;
      EXPECT_EQ(op.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0}), (std::vector<int64_t>{0, 0, 0, 0}));
    }
  EXPECT_GT(pad_then_pool, 0);
}

TEST(ImportModels, GemmKeepsTransposeFlagAndFlattenIsImported) {
  Graph g = import_onnx_file(testing::model_path("resnet18_folded.onnx"));
  auto counts = testing::op_type_counts(g);
  EXPECT_EQ(counts[OpType::Flatten], 1);
  ASSERT_EQ(counts[OpType::Gemm], 1);
  for (const Op& op : g.ops()) {
    if (op.type == OpType::Gemm) {
      EXPECT_EQ(op.attrs.get_int(AttrKey::TransB, 0), 1);
    }
  }
}

TEST(ImportModels, TransformerEncoderShapeSubgraphsAreFolded) {
  for (const char* file : {"transformer_encoder_op13.onnx", "transformer_encoder_op17.onnx"}) {
    ImportInfo info;
    Graph g = import_onnx_file(testing::model_path(file), &info);
    auto counts = testing::op_type_counts(g);
    EXPECT_GT(info.folded_nodes, 0) << file;
    EXPECT_EQ(g.info(g.outputs()[0].ref).shape, (Shape{1, 32, 256})) << file;
    EXPECT_EQ(counts[OpType::Softmax], 2) << file;
    EXPECT_GT(counts[OpType::MatMul], 0) << file;
    EXPECT_EQ(counts[OpType::LayerNorm], info.opset == 17 ? 4 : 0) << file;
    // No shape arithmetic survives: every Reshape target is a resolved attribute.
    for (const Op& op : g.ops()) {
      if (op.type == OpType::Weight) {
        EXPECT_EQ(op.outputs[0].dtype, DType::Float32) << file << " " << op.name;
      }
    }
  }
}

}  // namespace
}  // namespace graphworld
