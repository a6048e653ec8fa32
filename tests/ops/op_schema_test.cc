// Shape rules, their error messages, and work counts.
#include "env/ops/op_schema.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace graphworld {
namespace {

using V = std::vector<int64_t>;
TensorInfo f(Shape s) { return {DType::Float32, std::move(s)}; }

std::string error_of(OpType type, const Attributes& attrs, const std::vector<TensorInfo>& inputs) {
  try {
    infer_outputs(type, attrs, inputs, "node7");
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

TEST(OpSchema, ConvShapes) {
  Attributes a{{AttrKey::Strides, V{2, 2}}, {AttrKey::Pads, V{3, 3, 3, 3}}};
  EXPECT_EQ(infer_outputs(OpType::Conv, a, {f({1, 3, 224, 224}), f({64, 3, 7, 7})}, "c")[0].shape, (Shape{1, 64, 112, 112}));
  Attributes g{{AttrKey::Group, int64_t{32}}, {AttrKey::Pads, V{1, 1, 1, 1}}};
  EXPECT_EQ(infer_outputs(OpType::Conv, g, {f({1, 128, 56, 56}), f({128, 4, 3, 3})}, "c")[0].shape, (Shape{1, 128, 56, 56}));
}

TEST(OpSchema, ErrorsNameTheOpAndTheProblem) {
  std::string rank = error_of(OpType::Conv, {}, {f({1, 3, 224}), f({8, 3, 3, 3})});
  EXPECT_NE(rank.find("node7"), std::string::npos) << rank;
  EXPECT_NE(rank.find("rank-4"), std::string::npos) << rank;
  std::string channels = error_of(OpType::Conv, {}, {f({1, 4, 8, 8}), f({8, 3, 3, 3})});
  EXPECT_NE(channels.find("input channels"), std::string::npos) << channels;
  std::string inner = error_of(OpType::MatMul, {}, {f({2, 3}), f({4, 5})});
  EXPECT_NE(inner.find("inner dimensions"), std::string::npos) << inner;
  std::string bcast = error_of(OpType::Add, {}, {f({2, 3}), f({4})});
  EXPECT_NE(bcast.find("do not broadcast"), std::string::npos) << bcast;
  std::string reshape = error_of(OpType::Reshape, {{AttrKey::Shape, V{5}}}, {f({2, 3})});
  EXPECT_NE(reshape.find("cannot reshape"), std::string::npos) << reshape;
  std::string concat = error_of(OpType::Concat, {{AttrKey::Axis, int64_t{1}}}, {f({2, 3}), f({3, 3})});
  EXPECT_NE(concat.find("differ outside axis"), std::string::npos) << concat;
  std::string split = error_of(OpType::Split, {{AttrKey::Split, V{1, 1}}}, {f({3})});
  EXPECT_NE(split.find("do not add up"), std::string::npos) << split;
  std::string arity = error_of(OpType::Add, {}, {f({2})});
  EXPECT_NE(arity.find("takes 2 inputs, got 1"), std::string::npos) << arity;
  std::string axis = error_of(OpType::Softmax, {{AttrKey::Axis, int64_t{3}}}, {f({2, 3})});
  EXPECT_NE(axis.find("out of range"), std::string::npos) << axis;
}

TEST(OpSchema, MatMulBroadcastsBatchAndHandlesVectors) {
  EXPECT_EQ(infer_outputs(OpType::MatMul, {}, {f({2, 1, 4, 8}), f({3, 8, 5})}, "m")[0].shape, (Shape{2, 3, 4, 5}));
  EXPECT_EQ(infer_outputs(OpType::MatMul, {}, {f({8}), f({8, 5})}, "m")[0].shape, (Shape{5}));
  EXPECT_EQ(infer_outputs(OpType::MatMul, {}, {f({4, 8}), f({8})}, "m")[0].shape, (Shape{4}));
}

TEST(OpSchema, PoolCeilModeKeepsLastWindowInside) {
  // PyTorch/onnxruntime rule: a window starting in the trailing padding is dropped.
  EXPECT_EQ(window_output_size(111, 3, 2, 0, 0, 1, true), 55);
  EXPECT_EQ(window_output_size(6, 3, 2, 0, 0, 1, true), 3);
  EXPECT_EQ(window_output_size(5, 2, 2, 0, 1, 1, true), 3);
  EXPECT_EQ(window_output_size(6, 2, 2, 1, 1, 1, true), 4);
  EXPECT_EQ(window_output_size(7, 3, 2, 0, 0, 1, false), 3);
}

TEST(OpSchema, SqueezeUnsqueezeSliceTransposeShapes) {
  EXPECT_EQ(infer_outputs(OpType::Unsqueeze, {{AttrKey::Axes, V{0, -1}}}, {f({3, 4})}, "u")[0].shape, (Shape{1, 3, 4, 1}));
  EXPECT_EQ(infer_outputs(OpType::Squeeze, {}, {f({1, 3, 1})}, "s")[0].shape, (Shape{3}));
  Attributes slice{{AttrKey::Starts, V{1}}, {AttrKey::Ends, V{10}}, {AttrKey::Axes, V{1}}, {AttrKey::Steps, V{3}}};
  EXPECT_EQ(infer_outputs(OpType::Slice, slice, {f({2, 8})}, "s")[0].shape, (Shape{2, 3}));
  EXPECT_EQ(infer_outputs(OpType::Transpose, {{AttrKey::Perm, V{0, 2, 3, 1}}}, {f({1, 2, 3, 4})}, "t")[0].shape,
            (Shape{1, 3, 4, 2}));
  EXPECT_FALSE(error_of(OpType::Transpose, {{AttrKey::Perm, V{0, 0}}}, {f({2, 2})}).empty());
}

TEST(OpSchema, WorkCounts) {
  std::vector<TensorInfo> in = {f({1, 64, 56, 56}), f({64, 64, 3, 3})};
  Attributes a{{AttrKey::Pads, V{1, 1, 1, 1}}};
  auto out = infer_outputs(OpType::Conv, a, in, "c");
  OpWork w = op_work(OpType::Conv, a, in, out);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 64 * 56 * 56 * 64 * 9);
  EXPECT_DOUBLE_EQ(w.bytes, 4.0 * (64 * 56 * 56 * 2 + 64 * 64 * 9));
  OpWork mm = op_work(OpType::MatMul, {}, {f({64, 1024}), f({1024, 1024})}, {f({64, 1024})});
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 64 * 1024 * 1024);
  EXPECT_EQ(op_work(OpType::Reshape, {}, {f({4})}, {f({2, 2})}).flops, 0);
}

// The elementwise list (env/graph/op_type.h) drives arity, shapes, types and
// work counts for every op on it.
TEST(OpSchema, ElementwiseOpsFollowTheirRow) {
  int rows = 0;
  for (int i = 0; i < kNumOpTypes; ++i) {
    const auto type = static_cast<OpType>(i);
    const ElementwiseOp* row = elementwise_op(type);
    if (row == nullptr) continue;
    ++rows;
    SCOPED_TRACE(std::string(op_type_name(type)));
    EXPECT_EQ(row->type, type);
    EXPECT_EQ(op_arity(type).min_inputs, row->min_inputs);
    EXPECT_EQ(op_arity(type).max_inputs, row->max_inputs);
    std::vector<TensorInfo> in = {f({2, 3, 4})};
    if (row->min_inputs == 2) in.push_back(f({3, 1}));
    std::vector<TensorInfo> out = infer_outputs(type, {}, in, "e");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (Shape{2, 3, 4}));
    EXPECT_DOUBLE_EQ(op_work(type, {}, in, out).flops, row->flops_per_output * 24);
    const TensorInfo ints{DType::Int64, {2, 3, 4}};
    const std::string refused = error_of(type, {}, std::vector<TensorInfo>(in.size(), ints));
    EXPECT_EQ(refused.empty(), !row->float_only) << refused;
  }
  EXPECT_EQ(rows, 23);
  EXPECT_TRUE(is_elementwise_binary(OpType::Pow));
  EXPECT_FALSE(is_elementwise_binary(OpType::Max));
  EXPECT_TRUE(is_elementwise_unary(OpType::Mish));
  EXPECT_FALSE(is_elementwise_unary(OpType::Softmax));
  EXPECT_EQ(elementwise_op(OpType::Conv), nullptr);
  // Variadic ops count their arithmetic per input; types must agree.
  std::vector<TensorInfo> three = {f({4}), f({4}), f({1})};
  EXPECT_DOUBLE_EQ(op_work(OpType::Max, {}, three, {f({4})}).flops, 12);
  const std::string mixed = error_of(OpType::Min, {}, {f({4}), {DType::Int64, {4}}});
  EXPECT_NE(mixed.find("input types differ: float32 and int64"), std::string::npos) << mixed;
  const std::string slope = error_of(OpType::PRelu, {}, {f({3}), f({2, 3})});
  EXPECT_NE(slope.find("must broadcast to the first input"), std::string::npos) << slope;
}

}  // namespace
}  // namespace graphworld
