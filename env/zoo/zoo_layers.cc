#include "env/zoo/zoo_layers.h"

#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <mutex>

#include "env/graph/tensor.h"

namespace graphworld::zoo {
namespace {

constexpr float kBiasBound = 0.1f;

TensorRef small_uniform(GraphBuilder& b, Shape shape, const std::string& name) {
  return b.random_weight(std::move(shape), -kBiasBound, kBiasBound, name);
}

}  // namespace

std::string join(const std::string& name, std::string_view part) {
  if (name.empty()) return {};
  return name + "." + std::string(part);
}

ConvSpec ConvSpec::square(int64_t out_channels, int64_t k, int64_t stride, int64_t pad) {
  ConvSpec spec;
  spec.out_channels = out_channels;
  spec.kernel_h = k;
  spec.kernel_w = k;
  spec.stride = stride;
  spec.pads = {pad, pad, pad, pad};
  return spec;
}

ConvSpec ConvSpec::same(int64_t out_channels, int64_t kh, int64_t kw) {
  ConvSpec spec;
  spec.out_channels = out_channels;
  spec.kernel_h = kh;
  spec.kernel_w = kw;
  spec.pads = {kh / 2, kw / 2, kh / 2, kw / 2};
  return spec;
}

TensorRef conv(GraphBuilder& b, TensorRef x, const ConvSpec& spec, const std::string& name) {
  // Copy what we need: adding weights may move the graph's op storage.
  const int64_t in_channels = b.shape(x).at(1);
  const int64_t per_group = in_channels / std::max<int64_t>(spec.group, 1);
  int64_t fan_in = per_group * spec.kernel_h * spec.kernel_w;
  if (spec.relu_gain) fan_in = std::max<int64_t>(fan_in / 2, 1);
  std::vector<TensorRef> inputs = {
      x, b.random_weight_for_fan_in({spec.out_channels, per_group, spec.kernel_h, spec.kernel_w}, fan_in,
                                    join(name, "weight"))};
  if (spec.bias) inputs.push_back(small_uniform(b, {spec.out_channels}, join(name, "bias")));
  Attributes attrs = {{AttrKey::Strides, Ints{spec.stride, spec.stride}},
                      {AttrKey::Pads, Ints(spec.pads.begin(), spec.pads.end())}};
  // Defaults are left out, as an ONNX exporter would.
  if (spec.group != 1) attrs.set(AttrKey::Group, spec.group);
  if (spec.activation != Activation::None) attrs.set(AttrKey::Activation, static_cast<int64_t>(spec.activation));
  return b.add1(OpType::Conv, std::move(inputs), std::move(attrs), name);
}

TensorRef batch_norm(GraphBuilder& b, TensorRef x, const std::string& name) {
  const int64_t channels = b.shape(x).at(1);
  TensorRef scale = b.random_weight({channels}, 0.5f, 1.5f, join(name, "scale"));
  TensorRef bias = small_uniform(b, {channels}, join(name, "bias"));
  TensorRef mean = small_uniform(b, {channels}, join(name, "mean"));
  TensorRef var = b.random_weight({channels}, 0.5f, 1.5f, join(name, "var"));
  return b.add1(OpType::BatchNorm, {x, scale, bias, mean, var}, {{AttrKey::Epsilon, 1e-5}}, name);
}

TensorRef conv_bn(GraphBuilder& b, TensorRef x, const ConvSpec& spec, bool relu, const std::string& name) {
  TensorRef t = conv(b, x, spec, join(name, "conv"));
  t = batch_norm(b, t, join(name, "bn"));
  return relu ? unary(b, OpType::Relu, t, join(name, "relu")) : t;
}

TensorRef unary(GraphBuilder& b, OpType type, TensorRef x, const std::string& name) {
  return b.add1(type, {x}, {}, name);
}

TensorRef binary(GraphBuilder& b, OpType type, TensorRef x, TensorRef y, const std::string& name) {
  return b.add1(type, {x, y}, {}, name);
}

TensorRef max_pool(GraphBuilder& b, TensorRef x, int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode,
                   const std::string& name) {
  Attributes attrs = {{AttrKey::KernelShape, Ints{kernel, kernel}},
                      {AttrKey::Strides, Ints{stride, stride}},
                      {AttrKey::Pads, Ints{pad, pad, pad, pad}}};
  if (ceil_mode) attrs.set(AttrKey::CeilMode, int64_t{1});
  return b.add1(OpType::MaxPool, {x}, std::move(attrs), name);
}

TensorRef avg_pool(GraphBuilder& b, TensorRef x, int64_t kernel, int64_t stride, int64_t pad,
                   bool count_include_pad, const std::string& name) {
  Attributes attrs = {{AttrKey::KernelShape, Ints{kernel, kernel}},
                      {AttrKey::Strides, Ints{stride, stride}},
                      {AttrKey::Pads, Ints{pad, pad, pad, pad}}};
  if (count_include_pad) attrs.set(AttrKey::CountIncludePad, int64_t{1});
  return b.add1(OpType::AvgPool, {x}, std::move(attrs), name);
}

TensorRef global_pool_flatten(GraphBuilder& b, TensorRef x, const std::string& name) {
  TensorRef pooled = b.add1(OpType::GlobalAvgPool, {x}, {}, name);
  return b.add1(OpType::Flatten, {pooled}, {{AttrKey::Axis, int64_t{1}}}, join(name, "flatten"));
}

TensorRef concat(GraphBuilder& b, std::vector<TensorRef> xs, int64_t axis, const std::string& name) {
  return b.add1(OpType::Concat, std::move(xs), {{AttrKey::Axis, axis}}, name);
}

TensorRef reshape(GraphBuilder& b, TensorRef x, Shape shape, const std::string& name) {
  return b.add1(OpType::Reshape, {x}, {{AttrKey::Shape, std::move(shape)}}, name);
}

TensorRef transpose(GraphBuilder& b, TensorRef x, Ints perm, const std::string& name) {
  return b.add1(OpType::Transpose, {x}, {{AttrKey::Perm, std::move(perm)}}, name);
}

TensorRef linear(GraphBuilder& b, TensorRef x, int64_t out_features, bool bias, const std::string& name) {
  const int64_t in_features = b.shape(x).back();
  TensorRef w = b.random_weight_for_fan_in({in_features, out_features}, in_features, join(name, "weight"));
  TensorRef y = b.add1(OpType::MatMul, {x, w}, {}, name);
  if (!bias) return y;
  return binary(b, OpType::Add, y, small_uniform(b, {out_features}, join(name, "bias")), join(name, "add"));
}

TensorRef gemm_classifier(GraphBuilder& b, TensorRef x, int64_t out_features, const std::string& name) {
  const int64_t in_features = b.shape(x).at(1);
  TensorRef w = b.random_weight_for_fan_in({out_features, in_features}, in_features, join(name, "weight"));
  TensorRef bias = small_uniform(b, {out_features}, join(name, "bias"));
  return b.add1(OpType::Gemm, {x, w, bias}, {{AttrKey::TransB, int64_t{1}}}, name);
}

TensorRef layer_norm(GraphBuilder& b, TensorRef x, const std::string& name) {
  const int64_t width = b.shape(x).back();
  TensorRef scale = b.random_weight({width}, 0.9f, 1.1f, join(name, "scale"));
  TensorRef bias = small_uniform(b, {width}, join(name, "bias"));
  return b.add1(OpType::LayerNorm, {x, scale, bias}, {{AttrKey::Axis, int64_t{-1}}, {AttrKey::Epsilon, 1e-5}},
                name);
}

TensorRef scalar_constant(GraphBuilder& b, float value, const std::string& name) {
  static std::mutex mutex;
  static std::map<uint32_t, std::shared_ptr<const TensorData>> cache;  // by the value's bits
  std::shared_ptr<const TensorData> data;
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::shared_ptr<const TensorData>& slot = cache[std::bit_cast<uint32_t>(value)];
    if (!slot) slot = TensorData::from_floats({1}, {value});
    data = slot;
  }
  return b.weight(std::move(data), name);
}

}  // namespace graphworld::zoo
