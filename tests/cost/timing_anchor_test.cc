#include "env/cost/timing_anchor.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphworld {
namespace {

TensorInfo f32(Shape shape) { return TensorInfo{DType::Float32, std::move(shape)}; }

// Conv of x[1,c,h,h] with a constant [k,c,s,s] weight (and a bias when asked).
OpCostKey conv_key(int64_t c, int64_t k, int64_t h, int64_t s, bool bias = false) {
  OpCostKey key;
  key.type = OpType::Conv;
  int64_t pad = s / 2;
  key.attrs = Attributes{{AttrKey::Pads, std::vector<int64_t>{pad, pad, pad, pad}}};
  key.inputs = {f32({1, c, h, h}), f32({k, c, s, s})};
  key.constant_inputs = 0b10;
  if (bias) {
    key.inputs.push_back(f32({k}));
    key.constant_inputs = 0b110;
  }
  key.outputs = {f32({1, k, h, h})};
  return key;
}

OpCostKey relu_key(Shape shape) {
  OpCostKey key;
  key.type = OpType::Relu;
  key.inputs = {f32(shape)};
  key.outputs = {f32(shape)};
  return key;
}

TEST(TimingAnchor, TheSameConvWithoutItsBiasIsTheNearestRelative) {
  std::vector<OpCostKey> priced = {conv_key(256, 256, 14, 1), conv_key(128, 128, 28, 3), conv_key(256, 256, 14, 3)};
  EXPECT_EQ(nearest_anchor(conv_key(256, 256, 14, 3, true), priced), 2);
  EXPECT_DOUBLE_EQ(anchor_distance(conv_key(256, 256, 14, 3, true), priced[2]), 0.5);
}

TEST(TimingAnchor, AFusedActivationIsOneDifferingParameter) {
  OpCostKey fused = conv_key(64, 64, 56, 3);
  fused.attrs.set(AttrKey::Activation, int64_t{1});
  EXPECT_DOUBLE_EQ(anchor_distance(fused, conv_key(64, 64, 56, 3)), 0.5);
}

TEST(TimingAnchor, AMergedConvAnchorsOnOneOfItsHalves) {
  // Doubling the output channels doubles the weight and the output.
  OpCostKey merged = conv_key(256, 512, 14, 3);
  EXPECT_NEAR(anchor_distance(merged, conv_key(256, 256, 14, 3)), 2 * std::log(2.0), 1e-12);
  EXPECT_EQ(nearest_anchor(merged, {conv_key(64, 64, 56, 3), conv_key(256, 256, 14, 3)}), 1);
}

TEST(TimingAnchor, UnrelatedConfigurationsAreTimedOnTheirOwn) {
  // Another op type, another rank, another constness, or sizes far apart.
  OpCostKey relu = relu_key({1, 64, 56, 56});
  EXPECT_TRUE(std::isinf(anchor_distance(relu, conv_key(64, 64, 56, 3))));
  EXPECT_TRUE(std::isinf(anchor_distance(relu, relu_key({64, 3136}))));
  OpCostKey variable_weight = conv_key(64, 64, 56, 3);
  variable_weight.constant_inputs = 0;
  EXPECT_TRUE(std::isinf(anchor_distance(variable_weight, conv_key(64, 64, 56, 3))));
  EXPECT_EQ(nearest_anchor(relu_key({1, 64, 56, 56}), {relu_key({1, 2048, 56, 56}), relu_key({1, 4, 7, 7})}), -1);
  EXPECT_EQ(nearest_anchor(relu, {}), -1);
}

TEST(TimingAnchor, TiesGoToTheEarliestCandidate) {
  OpCostKey key = relu_key({1, 64, 28, 28});
  std::vector<OpCostKey> priced = {relu_key({1, 64, 56, 28}), relu_key({1, 64, 28, 56}), relu_key({1, 64, 14, 28})};
  EXPECT_EQ(nearest_anchor(key, priced), 0);
}

}  // namespace
}  // namespace graphworld
