// Layers shared by the zoo builders. Each adds a few ops, with their
// seeded-random weights, to a GraphBuilder and returns the resulting tensor.
//
// Naming: a layer called "layer1.0.conv1" gives its main op that name and its
// weights "layer1.0.conv1.weight", "layer1.0.conv1.bias", ...; helper ops get
// a suffix ("encoder.0.ffn.in.add"). An empty name lets the builder choose
// unique names.
//
// Weight scales: conv and matmul weights are uniform with variance 1/fan_in
// (GraphBuilder::random_weight_for_fan_in), so a layer keeps the mean square of
// its input. Biases and BatchNorm shifts are small, and BatchNorm statistics
// are close to (0, 1), so a random network's activations stay O(1).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "env/graph/graph.h"
#include "env/ops/graph_builder.h"

namespace graphworld::zoo {

using Ints = std::vector<int64_t>;

// "block3" + "conv1" -> "block3.conv1"; an empty name stays empty (auto-named).
std::string join(const std::string& name, std::string_view part);

// A 2-D convolution: weight [out_channels, C/group, kernel_h, kernel_w].
struct ConvSpec {
  int64_t out_channels = 0;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride = 1;                   // on both axes
  std::array<int64_t, 4> pads = {};     // top, left, bottom, right
  int64_t group = 1;
  bool bias = false;                    // a third input, uniform [-0.1, 0.1)
  Activation activation = Activation::None;  // fused into the Conv
  // Doubles the weight variance (He init) to make up for the ReLU that
  // follows. For plain ReLU chains (Inception, SqueezeNet), where each ReLU
  // would otherwise halve the signal's mean square; residual networks keep the
  // plain scale, since their identity paths already carry the signal.
  bool relu_gain = false;

  // A k x k kernel with `pad` on every side.
  static ConvSpec square(int64_t out_channels, int64_t k, int64_t stride = 1, int64_t pad = 0);
  // A kh x kw kernel, stride 1, padded to keep the spatial size (odd kernels).
  static ConvSpec same(int64_t out_channels, int64_t kh, int64_t kw);

  ConvSpec& with_bias() { bias = true; return *this; }
  ConvSpec& with_relu() { activation = Activation::Relu; return *this; }
  ConvSpec& with_group(int64_t g) { group = g; return *this; }
  ConvSpec& with_relu_gain() { relu_gain = true; return *this; }
};

TensorRef conv(GraphBuilder& b, TensorRef x, const ConvSpec& spec, const std::string& name);

// Inference BatchNorm over axis 1 with sane random parameters: scale uniform
// [0.5, 1.5), bias and mean uniform [-0.1, 0.1), var uniform [0.5, 1.5).
TensorRef batch_norm(GraphBuilder& b, TensorRef x, const std::string& name);

// Conv (no bias) -> BatchNorm -> optional Relu, as in torchvision's ResNets.
// The ops are named name + ".conv" / ".bn" / ".relu".
TensorRef conv_bn(GraphBuilder& b, TensorRef x, const ConvSpec& spec, bool relu, const std::string& name);

// Any single-input op without parameters (Relu, Sigmoid, Tanh, Gelu, ...).
TensorRef unary(GraphBuilder& b, OpType type, TensorRef x, const std::string& name);
// Any two-input elementwise op (Add, Mul, ...).
TensorRef binary(GraphBuilder& b, OpType type, TensorRef x, TensorRef y, const std::string& name);

TensorRef max_pool(GraphBuilder& b, TensorRef x, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode,
                   const std::string& name);
TensorRef avg_pool(GraphBuilder& b, TensorRef x, int64_t kernel, int64_t stride, int64_t pad,
                   bool count_include_pad, const std::string& name);
// GlobalAvgPool then Flatten: [N, C, H, W] -> [N, C].
TensorRef global_pool_flatten(GraphBuilder& b, TensorRef x, const std::string& name);

TensorRef concat(GraphBuilder& b, std::vector<TensorRef> xs, int64_t axis, const std::string& name);
TensorRef reshape(GraphBuilder& b, TensorRef x, Shape shape, const std::string& name);
TensorRef transpose(GraphBuilder& b, TensorRef x, Ints perm, const std::string& name);

// MatMul by a weight [K, out_features] (K = last dim of x), plus an optional
// bias Add of a [out_features] weight.
TensorRef linear(GraphBuilder& b, TensorRef x, int64_t out_features, bool bias, const std::string& name);

// Classifier head: Gemm of x [N, K] with a weight [out_features, K]
// (transB = 1, as torchvision's Linear exports) and a bias [out_features].
TensorRef gemm_classifier(GraphBuilder& b, TensorRef x, int64_t out_features, const std::string& name);

// LayerNorm over the last axis (eps 1e-5): scale uniform [0.9, 1.1), bias
// uniform [-0.1, 0.1).
TensorRef layer_norm(GraphBuilder& b, TensorRef x, const std::string& name);

// A [1] float constant with an exact value. Its data is shared by every graph
// built in this process: weights compare by data identity, so two builds with
// the same seed stay structurally equal.
TensorRef scalar_constant(GraphBuilder& b, float value, const std::string& name);

}  // namespace graphworld::zoo
