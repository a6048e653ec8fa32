// Values of every op's ATen kernel against hand-computed cases.
#include <cmath>

#include "tests/ops/op_test_util.h"

namespace graphworld {
namespace {

using V = std::vector<int64_t>;

std::shared_ptr<const TensorData> iota(Shape shape, float start = 1) {
  std::vector<float> v(static_cast<size_t>(num_elements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return floats(shape, v);
}

TEST(Kernels, ConvPlainPaddedStridedGroupedAndFused) {
  auto x = iota({1, 1, 3, 3});
  auto w = floats({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_values(*eval(OpType::Conv, {x, w})[0], {1, 1, 2, 2}, {12, 16, 24, 28});
  expect_values(*eval(OpType::Conv, {x, w}, {{AttrKey::Pads, V{1, 1, 1, 1}}, {AttrKey::Strides, V{2, 2}}})[0],
                {1, 1, 2, 2}, {1, 5, 11, 28});
  // Asymmetric padding (bottom/right only).
  expect_values(*eval(OpType::Conv, {x, w}, {{AttrKey::Pads, V{0, 0, 1, 1}}})[0], {1, 1, 3, 3},
                {12, 16, 9, 24, 28, 15, 15, 17, 9});
  auto bias = floats({1}, {-20});
  expect_values(*eval(OpType::Conv, {x, w, bias}, {{AttrKey::Activation, int64_t(Activation::Relu)}})[0], {1, 1, 2, 2},
                {0, 0, 4, 8});
  auto x2 = iota({1, 2, 1, 1});
  auto wg = floats({2, 1, 1, 1}, {1, 2});
  expect_values(*eval(OpType::Conv, {x2, wg}, {{AttrKey::Group, int64_t{2}}})[0], {1, 2, 1, 1}, {1, 4});
  // Dilation 2 on 3x3 with a 2x2 kernel reads the corners.
  expect_values(*eval(OpType::Conv, {x, w}, {{AttrKey::Dilations, V{2, 2}}})[0], {1, 1, 1, 1}, {1 + 3 + 7 + 9});
}

TEST(Kernels, MatMulBatchedAndGemm) {
  auto a = iota({2, 3});
  auto b = floats({3, 2}, {1, 0, 0, 1, 1, 1});
  expect_values(*eval(OpType::MatMul, {a, b})[0], {2, 2}, {4, 5, 10, 11});
  auto batched = iota({2, 1, 2, 3});
  auto out = eval(OpType::MatMul, {batched, b})[0];
  expect_values(*out, {2, 1, 2, 2}, {4, 5, 10, 11, 16, 17, 22, 23});
  auto bt = floats({2, 3}, {1, 0, 1, 0, 1, 1});  // b transposed
  auto c = floats({2}, {1, -1});
  Attributes gemm{{AttrKey::TransB, int64_t{1}}, {AttrKey::Alpha, 2.0}, {AttrKey::Beta, 0.5}};
  expect_values(*eval(OpType::Gemm, {a, bt, c}, gemm)[0], {2, 2}, {8.5, 9.5, 20.5, 21.5});
  auto relu = Attributes{{AttrKey::Activation, int64_t(Activation::Relu)}};
  expect_values(*eval(OpType::MatMul, {floats({1, 2}, {1, -1}), floats({2, 2}, {1, 0, 2, 1})}, relu)[0], {1, 2}, {0, 0});
}

TEST(Kernels, BroadcastingBinaryOps) {
  auto a = floats({2, 1}, {1, 2});
  auto b = floats({3}, {1, 2, 4});
  expect_values(*eval(OpType::Add, {a, b})[0], {2, 3}, {2, 3, 5, 3, 4, 6});
  expect_values(*eval(OpType::Sub, {a, b})[0], {2, 3}, {0, -1, -3, 1, 0, -2});
  expect_values(*eval(OpType::Mul, {a, b})[0], {2, 3}, {1, 2, 4, 2, 4, 8});
  expect_values(*eval(OpType::Div, {a, b})[0], {2, 3}, {1, 0.5, 0.25, 2, 1, 0.5});
  expect_values(*eval(OpType::Pow, {a, floats({}, {2})})[0], {2, 1}, {1, 4});
}

TEST(Kernels, UnaryOps) {
  auto x = floats({4}, {-1, 0, 1, 4});
  expect_values(*eval(OpType::Relu, {x})[0], {4}, {0, 0, 1, 4});
  expect_values(*eval(OpType::Sigmoid, {x})[0], {4}, {0.26894142f, 0.5f, 0.73105858f, 0.98201379f});
  expect_values(*eval(OpType::Tanh, {x})[0], {4}, {-0.76159416f, 0, 0.76159416f, 0.99932930f});
  expect_values(*eval(OpType::Erf, {x})[0], {4}, {-0.84270079f, 0, 0.84270079f, 1.0f});
  expect_values(*eval(OpType::Gelu, {x})[0], {4}, {-0.15865525f, 0, 0.84134475f, 3.99987335f});
  expect_values(*eval(OpType::Sqrt, {floats({2}, {4, 9})})[0], {2}, {2, 3});
  expect_values(*eval(OpType::Clip, {x}, {{AttrKey::Min, 0.0}, {AttrKey::Max, 2.0}})[0], {4}, {0, 0, 1, 2});
  expect_values(*eval(OpType::Clip, {x}, {{AttrKey::Max, 0.5}})[0], {4}, {-1, 0, 0.5, 0.5});
  expect_values(*eval(OpType::Identity, {x})[0], {4}, {-1, 0, 1, 4});
  expect_values(*eval(OpType::Dropout, {x})[0], {4}, {-1, 0, 1, 4});
}

TEST(Kernels, MobileActivations) {
  auto x = floats({5}, {-4, -1, 0, 1, 4});
  // HardSigmoid(x) = clamp(0.2 x + 0.5, 0, 1); HardSwish(x) = x * clamp(x / 6 + 0.5, 0, 1).
  expect_values(*eval(OpType::HardSigmoid, {x}, {{AttrKey::Alpha, 0.2}, {AttrKey::Beta, 0.5}})[0], {5},
                {0, 0.3f, 0.5f, 0.7f, 1});
  expect_values(*eval(OpType::HardSwish, {x})[0], {5}, {0, -1.0f / 3, 0, 2.0f / 3, 4});
  expect_values(*eval(OpType::LeakyRelu, {x}, {{AttrKey::Alpha, 0.1}})[0], {5}, {-0.4f, -0.1f, 0, 1, 4});
  // Softplus(x) = log(1 + e^x); Mish(x) = x tanh(softplus(x)).
  expect_values(*eval(OpType::Softplus, {x})[0], {5}, {0.01814993f, 0.31326169f, 0.69314718f, 1.31326169f, 4.01814993f});
  expect_values(*eval(OpType::Mish, {x})[0], {5}, {-0.07259175f, -0.30340144f, 0, 0.86509836f, 3.99741281f});
  // PRelu: one slope per channel of [1, 2, 2].
  auto c = floats({1, 2, 2}, {-2, 3, -4, 5});
  expect_values(*eval(OpType::PRelu, {c, floats({2, 1}, {0.5f, 0.25f})})[0], {1, 2, 2}, {-1, 3, -1, 5});
  // The fused forms on a 1x1 conv with weight 1 give the same values.
  auto xs = floats({1, 1, 1, 5}, {-4, -1, 0, 1, 4});
  auto one = floats({1, 1, 1, 1}, {1});
  expect_values(*eval(OpType::Conv, {xs, one},
                      {{AttrKey::Activation, int64_t(Activation::HardSigmoid)},
                       {AttrKey::ActivationAlpha, 0.2},
                       {AttrKey::ActivationBeta, 0.5}})[0],
                {1, 1, 1, 5}, {0, 0.3f, 0.5f, 0.7f, 1});
  expect_values(*eval(OpType::Conv, {xs, one}, {{AttrKey::Activation, int64_t(Activation::HardSwish)}})[0], {1, 1, 1, 5},
                {0, -1.0f / 3, 0, 2.0f / 3, 4});
}

TEST(Kernels, ResizeNearestAndLinearByCoordinateMode) {
  auto x = floats({1, 1, 1, 3}, {0, 10, 20});
  auto resize = [&](ResizeMode mode, ResizeCoordinateMode coord, ResizeNearestMode nearest, int64_t width) {
    return eval(OpType::Resize, {x},
                {{AttrKey::Shape, V{1, 1, 1, width}},
                 {AttrKey::ResizeMode, int64_t(mode)},
                 {AttrKey::CoordinateMode, int64_t(coord)},
                 {AttrKey::NearestMode, int64_t(nearest)}})[0];
  };
  // 3 -> 6, asymmetric: source x / 2 = 0, .5, 1, 1.5, 2, 2.5.
  expect_values(*resize(ResizeMode::Nearest, ResizeCoordinateMode::Asymmetric, ResizeNearestMode::Floor, 6),
                {1, 1, 1, 6}, {0, 0, 10, 10, 20, 20});
  expect_values(*resize(ResizeMode::Nearest, ResizeCoordinateMode::Asymmetric, ResizeNearestMode::RoundPreferCeil, 6),
                {1, 1, 1, 6}, {0, 10, 10, 20, 20, 20});
  expect_values(*resize(ResizeMode::Linear, ResizeCoordinateMode::Asymmetric, ResizeNearestMode::Floor, 6),
                {1, 1, 1, 6}, {0, 5, 10, 15, 20, 20});
  // Half pixel: (x + 0.5) / 2 - 0.5 = -.25, .25, .75, 1.25, 1.75, 2.25, clamped for linear.
  expect_values(*resize(ResizeMode::Linear, ResizeCoordinateMode::HalfPixel, ResizeNearestMode::Floor, 6),
                {1, 1, 1, 6}, {0, 2.5f, 7.5f, 12.5f, 17.5f, 20});
  // Align corners: x * 2 / 4 = 0, .5, 1, 1.5, 2.
  expect_values(*resize(ResizeMode::Linear, ResizeCoordinateMode::AlignCorners, ResizeNearestMode::Floor, 5),
                {1, 1, 1, 5}, {0, 5, 10, 15, 20});
}

TEST(Kernels, ConvTransposeWithStridePadsAndOutputPadding) {
  // One channel, kernel [1, 2] of ones, stride 2: each input lands on two outputs.
  auto x = floats({1, 1, 1, 3}, {1, 2, 3});
  auto w = floats({1, 1, 1, 2}, {1, 1});
  expect_values(*eval(OpType::ConvTranspose, {x, w}, {{AttrKey::Strides, V{1, 2}}})[0], {1, 1, 1, 6}, {1, 1, 2, 2, 3, 3});
  // output_padding adds a column that only the bias reaches; pads crop (asymmetric: one at the start).
  auto b = floats({1}, {10});
  expect_values(*eval(OpType::ConvTranspose, {x, w, b},
                      {{AttrKey::Strides, V{1, 2}}, {AttrKey::OutputPadding, V{0, 1}}, {AttrKey::Pads, V{0, 1, 0, 0}}})[0],
                {1, 1, 1, 6}, {11, 12, 12, 13, 13, 10});
  // Stride 1 with a kernel of 2 overlaps: 1, 1+2, 2+3, 3.
  expect_values(*eval(OpType::ConvTranspose, {x, w})[0], {1, 1, 1, 4}, {1, 3, 5, 3});
}

TEST(Kernels, VariadicReductionsGatherAndTile) {
  auto a = floats({2}, {1, 5}), b = floats({1}, {3}), c = floats({2}, {4, 0});
  expect_values(*eval(OpType::Max, {a, b, c})[0], {2}, {4, 5});
  expect_values(*eval(OpType::Min, {a, b, c})[0], {2}, {1, 0});
  expect_values(*eval(OpType::Mean, {a, b, c})[0], {2}, {8.0f / 3, 8.0f / 3});
  auto m = floats({2, 3}, {1, 7, 3, 4, 2, 6});
  expect_values(*eval(OpType::ReduceMax, {m}, {{AttrKey::Axes, V{1}}, {AttrKey::KeepDims, int64_t{0}}})[0], {2}, {7, 6});
  expect_values(*eval(OpType::ReduceMin, {m}, {{AttrKey::Axes, V{0}}})[0], {1, 3}, {1, 2, 3});
  // Gather with 2-D indices (one negative) along axis 1.
  auto idx = TensorData::from_ints({2, 2}, {0, -1, 1, 1});
  expect_values(*eval(OpType::Gather, {m, idx}, {{AttrKey::Axis, int64_t{1}}})[0], {2, 2, 2}, {1, 3, 7, 7, 4, 6, 2, 2});
  expect_values(*eval(OpType::Tile, {floats({1, 2}, {1, 2})}, {{AttrKey::Repeats, V{2, 2}}})[0], {2, 4},
                {1, 2, 1, 2, 1, 2, 1, 2});
}

TEST(Kernels, SoftmaxLayerNormBatchNorm) {
  expect_values(*eval(OpType::Softmax, {floats({1, 3}, {1, 2, 3})}, {{AttrKey::Axis, int64_t{-1}}})[0], {1, 3},
                {0.09003057f, 0.24472847f, 0.66524096f});
  expect_values(*eval(OpType::Softmax, {floats({2, 1}, {1, 2})}, {{AttrKey::Axis, int64_t{0}}})[0], {2, 1},
                {0.26894142f, 0.73105858f});
  auto x = floats({1, 3}, {1, 2, 3});
  Attributes ln{{AttrKey::Axis, int64_t{-1}}, {AttrKey::Epsilon, 0.0}};
  expect_values(*eval(OpType::LayerNorm, {x, floats({3}, {1, 1, 1})}, ln)[0], {1, 3}, {-1.2247449f, 0, 1.2247449f});
  expect_values(*eval(OpType::LayerNorm, {x, floats({3}, {2, 2, 2}), floats({3}, {1, 1, 1})}, ln)[0], {1, 3},
                {-1.4494898f, 1, 3.4494898f});
  auto bn_x = floats({1, 2, 1, 2}, {1, 2, 3, 4});
  expect_values(*eval(OpType::BatchNorm,
                      {bn_x, floats({2}, {1, 2}), floats({2}, {0, 1}), floats({2}, {1, 2}), floats({2}, {1, 4})},
                      {{AttrKey::Epsilon, 0.0}})[0],
                {1, 2, 1, 2}, {0, 1, 2, 3});
}

TEST(Kernels, Pools) {
  auto x = iota({1, 1, 4, 4});
  Attributes max{{AttrKey::KernelShape, V{2, 2}}, {AttrKey::Strides, V{2, 2}}};
  expect_values(*eval(OpType::MaxPool, {x}, max)[0], {1, 1, 2, 2}, {6, 8, 14, 16});
  Attributes ceil{{AttrKey::KernelShape, V{2, 2}}, {AttrKey::Strides, V{2, 2}}, {AttrKey::CeilMode, int64_t{1}}};
  expect_values(*eval(OpType::MaxPool, {iota({1, 1, 3, 3})}, ceil)[0], {1, 1, 2, 2}, {5, 6, 8, 9});
  auto small = iota({1, 1, 2, 2});
  Attributes avg{{AttrKey::KernelShape, V{3, 3}}, {AttrKey::Pads, V{1, 1, 1, 1}}};
  expect_values(*eval(OpType::AvgPool, {small}, avg)[0], {1, 1, 2, 2}, {2.5, 2.5, 2.5, 2.5});
  avg.set(AttrKey::CountIncludePad, int64_t{1});
  float ninth = 10.0f / 9.0f;
  expect_values(*eval(OpType::AvgPool, {small}, avg)[0], {1, 1, 2, 2}, {ninth, ninth, ninth, ninth});
  // Asymmetric padding: only the trailing zero pad, excluded from the count.
  Attributes asym{{AttrKey::KernelShape, V{2, 2}}, {AttrKey::Pads, V{0, 0, 1, 1}}};
  expect_values(*eval(OpType::AvgPool, {small}, asym)[0], {1, 1, 2, 2}, {2.5, 3, 3.5, 4});
  expect_values(*eval(OpType::GlobalAvgPool, {x})[0], {1, 1, 1, 1}, {8.5});
  // Asymmetric padding with ceil_mode: no window may start in the trailing pad.
  Attributes ceil_asym{{AttrKey::KernelShape, V{2, 2}}, {AttrKey::Strides, V{2, 2}}, {AttrKey::Pads, V{0, 0, 1, 1}},
                       {AttrKey::CeilMode, int64_t{1}}};
  expect_values(*eval(OpType::MaxPool, {x}, ceil_asym)[0], {1, 1, 2, 2}, {6, 8, 14, 16});
  expect_values(*eval(OpType::AvgPool, {x}, ceil_asym)[0], {1, 1, 2, 2}, {3.5, 5.5, 11.5, 13.5});
}

TEST(Kernels, Reductions) {
  auto x = iota({2, 3});
  expect_values(*eval(OpType::ReduceMean, {x}, {{AttrKey::Axes, V{1}}, {AttrKey::KeepDims, int64_t{0}}})[0], {2}, {2, 5});
  expect_values(*eval(OpType::ReduceSum, {x}, {{AttrKey::Axes, V{0}}})[0], {1, 3}, {5, 7, 9});
  expect_values(*eval(OpType::ReduceSum, {x}, {{AttrKey::KeepDims, int64_t{0}}})[0], {}, {21});
}

TEST(Kernels, DataMovement) {
  auto a = iota({2, 2});
  auto b = floats({2, 1}, {9, 8});
  expect_values(*eval(OpType::Concat, {a, b}, {{AttrKey::Axis, int64_t{1}}})[0], {2, 3}, {1, 2, 9, 3, 4, 8});
  auto parts = eval(OpType::Split, {iota({1, 3})}, {{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, V{1, 2}}});
  ASSERT_EQ(parts.size(), 2u);
  expect_values(*parts[0], {1, 1}, {1});
  expect_values(*parts[1], {1, 2}, {2, 3});
  auto row = iota({6}, 0);
  Attributes slice{{AttrKey::Starts, V{1}}, {AttrKey::Ends, V{3}}, {AttrKey::Axes, V{0}}};
  expect_values(*eval(OpType::Slice, {row}, slice)[0], {2}, {1, 2});
  slice = {{AttrKey::Starts, V{0}}, {AttrKey::Ends, V{5}}, {AttrKey::Axes, V{0}}, {AttrKey::Steps, V{2}}};
  expect_values(*eval(OpType::Slice, {row}, slice)[0], {3}, {0, 2, 4});
  slice = {{AttrKey::Starts, V{-2}}, {AttrKey::Ends, V{1000}}, {AttrKey::Axes, V{-1}}};
  expect_values(*eval(OpType::Slice, {row}, slice)[0], {2}, {4, 5});
  expect_values(*eval(OpType::Reshape, {row}, {{AttrKey::Shape, V{3, 2}}})[0], {3, 2}, {0, 1, 2, 3, 4, 5});
  expect_values(*eval(OpType::Flatten, {iota({2, 1, 2})}, {{AttrKey::Axis, int64_t{1}}})[0], {2, 2}, {1, 2, 3, 4});
  expect_values(*eval(OpType::Transpose, {iota({2, 3})}, {{AttrKey::Perm, V{1, 0}}})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_values(*eval(OpType::Transpose, {iota({2, 3})})[0], {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_values(*eval(OpType::Squeeze, {iota({1, 2, 1})}, {{AttrKey::Axes, V{0}}})[0], {2, 1}, {1, 2});
  expect_values(*eval(OpType::Squeeze, {iota({1, 2, 1})})[0], {2}, {1, 2});
  expect_values(*eval(OpType::Unsqueeze, {iota({2})}, {{AttrKey::Axes, V{0, 2}}})[0], {1, 2, 1}, {1, 2});
  expect_values(*eval(OpType::Pad, {iota({2})}, {{AttrKey::Pads, V{1, 2}}, {AttrKey::Value, 9.0}})[0], {5},
                {9, 1, 2, 9, 9});
}

TEST(Kernels, EnlargeKernelCentresTheWeight) {
  auto w = floats({1, 1, 1, 1}, {5});
  expect_values(*eval(OpType::EnlargeKernel, {w}, {{AttrKey::KernelShape, V{3, 3}}})[0], {1, 1, 3, 3},
                {0, 0, 0, 0, 5, 0, 0, 0, 0});
  auto w13 = floats({1, 1, 1, 3}, {1, 2, 3});
  expect_values(*eval(OpType::EnlargeKernel, {w13}, {{AttrKey::KernelShape, V{3, 3}}})[0], {1, 1, 3, 3},
                {0, 0, 0, 1, 2, 3, 0, 0, 0});
}

}  // namespace
}  // namespace graphworld
