#include "env/ops/aten_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "env/ops/op_schema.h"
#include "env/ops/resize_coordinates.h"

namespace graphworld {
namespace {

std::vector<int64_t> attr_ints(const Op& op, AttrKey key, std::vector<int64_t> fallback) {
  return op.attrs.get_ints(key, std::move(fallback));
}

// ATen pads the last dimension first: [w_begin, w_end, h_begin, h_end].
std::vector<int64_t> aten_spatial_pads(const std::vector<int64_t>& onnx_pads) {
  return {onnx_pads[1], onnx_pads[3], onnx_pads[0], onnx_pads[2]};
}

at::Tensor conv(const Op& op, const std::vector<at::Tensor>& in) {
  auto strides = attr_ints(op, AttrKey::Strides, {1, 1});
  auto pads = attr_ints(op, AttrKey::Pads, {0, 0, 0, 0});
  auto dil = attr_ints(op, AttrKey::Dilations, {1, 1});
  int64_t group = op.attrs.get_int(AttrKey::Group, 1);
  at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
  at::Tensor x = in[0];
  std::vector<int64_t> conv_pads = {pads[0], pads[1]};
  if (!symmetric_pads(pads)) {
    x = at::constant_pad_nd(x, aten_spatial_pads(pads), 0);
    conv_pads = {0, 0};
  }
  return apply_activation(at::conv2d(x, in[1], bias, strides, conv_pads, dil, group), op);
}

at::Tensor gemm(const Op& op, const std::vector<at::Tensor>& in) {
  at::Tensor a = op.attrs.get_int(AttrKey::TransA, 0) ? in[0].t() : in[0];
  at::Tensor b = op.attrs.get_int(AttrKey::TransB, 0) ? in[1].t() : in[1];
  double alpha = op.attrs.get_float(AttrKey::Alpha, 1.0);
  double beta = op.attrs.get_float(AttrKey::Beta, 1.0);
  at::Tensor out;
  if (in.size() > 2 && beta != 0) {
    out = at::addmm(in[2], a, b, beta, alpha);
  } else {
    out = at::mm(a, b);
    if (alpha != 1.0) out.mul_(alpha);
  }
  return apply_activation(out, op);
}

// With explicit padding ATen applies ceil_mode's last-window rule to the
// padded size; the shape rule (op_schema.cc) applies it to input plus leading
// padding, as onnxruntime does. Keep the windows the shape rule keeps.
at::Tensor crop_to_output(const at::Tensor& pooled, const Op& op) {
  const Shape& out = op.outputs.at(0).shape;
  return pooled.slice(2, 0, out[2]).slice(3, 0, out[3]);
}

at::Tensor max_pool(const Op& op, const at::Tensor& x) {
  auto kernel = op.attrs.require_ints(AttrKey::KernelShape);
  auto strides = attr_ints(op, AttrKey::Strides, {1, 1});
  auto pads = attr_ints(op, AttrKey::Pads, {0, 0, 0, 0});
  auto dil = attr_ints(op, AttrKey::Dilations, {1, 1});
  bool ceil_mode = op.attrs.get_int(AttrKey::CeilMode, 0);
  if (pool_pads_supported(pads, kernel))
    return at::max_pool2d(x, kernel, strides, {pads[0], pads[1]}, dil, ceil_mode);
  at::Tensor padded = at::constant_pad_nd(x, aten_spatial_pads(pads), -std::numeric_limits<float>::infinity());
  return crop_to_output(at::max_pool2d(padded, kernel, strides, {0, 0}, dil, ceil_mode), op);
}

at::Tensor avg_pool(const Op& op, const at::Tensor& x) {
  auto kernel = op.attrs.require_ints(AttrKey::KernelShape);
  auto strides = attr_ints(op, AttrKey::Strides, {1, 1});
  auto pads = attr_ints(op, AttrKey::Pads, {0, 0, 0, 0});
  bool ceil_mode = op.attrs.get_int(AttrKey::CeilMode, 0);
  bool include_pad = op.attrs.get_int(AttrKey::CountIncludePad, 0);
  if (pool_pads_supported(pads, kernel))
    return at::avg_pool2d(x, kernel, strides, {pads[0], pads[1]}, ceil_mode, include_pad);
  // Asymmetric padding: pool the explicitly padded input. Without
  // count_include_pad, divide by the pooled mask of real elements instead.
  at::Tensor padded = at::constant_pad_nd(x, aten_spatial_pads(pads), 0);
  at::Tensor sums = crop_to_output(at::avg_pool2d(padded, kernel, strides, {0, 0}, ceil_mode, true), op);
  if (include_pad) return sums;
  at::Tensor mask = at::constant_pad_nd(at::ones({1, 1, x.size(2), x.size(3)}, x.options()), aten_spatial_pads(pads), 0);
  return sums / crop_to_output(at::avg_pool2d(mask, kernel, strides, {0, 0}, ceil_mode, true), op);
}

at::Tensor layer_norm(const Op& op, const std::vector<at::Tensor>& in) {
  int64_t rank = in[0].dim();
  int64_t axis = normalize_axis(op.attrs.get_int(AttrKey::Axis, -1), rank, op.name);
  std::vector<int64_t> normalized(in[0].sizes().begin() + axis, in[0].sizes().end());
  at::Tensor scale = in[1].expand(normalized).contiguous();
  at::Tensor bias = in.size() > 2 ? in[2].expand(normalized).contiguous() : at::Tensor();
  return at::layer_norm(in[0], normalized, scale, bias, op.attrs.get_float(AttrKey::Epsilon, 1e-5));
}

std::vector<int64_t> reduce_axes(const Op& op, int64_t rank) {
  std::vector<int64_t> axes = op.attrs.get_ints(AttrKey::Axes);
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  for (int64_t& a : axes) a = normalize_axis(a, rank, op.name);
  return axes;
}

at::Tensor slice(const Op& op, at::Tensor x) {
  auto starts = op.attrs.require_ints(AttrKey::Starts);
  auto ends = op.attrs.require_ints(AttrKey::Ends);
  auto axes = op.attrs.require_ints(AttrKey::Axes);
  auto steps = op.attrs.get_ints(AttrKey::Steps, std::vector<int64_t>(axes.size(), 1));
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = normalize_axis(axes[k], x.dim(), op.name);
    int64_t dim = x.size(a);
    int64_t s = std::clamp(starts[k] < 0 ? starts[k] + dim : starts[k], int64_t{0}, dim);
    int64_t e = std::clamp(ends[k] < 0 ? ends[k] + dim : ends[k], int64_t{0}, dim);
    x = x.slice(a, s, std::max(s, e), steps[k]);
  }
  return x;
}

at::Tensor pad(const Op& op, const at::Tensor& x) {
  auto pads = op.attrs.require_ints(AttrKey::Pads);
  int64_t rank = x.dim();
  std::vector<int64_t> aten_pads;
  for (int64_t d = rank - 1; d >= 0; --d) {
    aten_pads.push_back(pads[d]);
    aten_pads.push_back(pads[d + rank]);
  }
  return at::constant_pad_nd(x, aten_pads, op.attrs.get_float(AttrKey::Value, 0.0));
}


// ConvTranspose with ONNX's pads, which may differ per side: the full
// transposed convolution, zero rows for output_padding (they receive only
// the bias), then the pads cropped away. Symmetric pads take ATen's own path.
at::Tensor conv_transpose(const Op& op, const std::vector<at::Tensor>& in) {
  auto strides = attr_ints(op, AttrKey::Strides, {1, 1});
  auto pads = attr_ints(op, AttrKey::Pads, {0, 0, 0, 0});
  auto dil = attr_ints(op, AttrKey::Dilations, {1, 1});
  auto extra = attr_ints(op, AttrKey::OutputPadding, {0, 0});
  int64_t group = op.attrs.get_int(AttrKey::Group, 1);
  at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
  bool aten_accepts = symmetric_pads(pads);
  for (int k = 0; k < 2; ++k) aten_accepts = aten_accepts && extra[k] < std::max(strides[k], dil[k]);
  if (aten_accepts)
    return apply_activation(at::conv_transpose2d(in[0], in[1], bias, strides, {pads[0], pads[1]}, extra, group, dil), op);
  at::Tensor full = at::conv_transpose2d(in[0], in[1], at::Tensor(), strides, {0, 0}, {0, 0}, group, dil);
  if (extra[0] || extra[1]) full = at::constant_pad_nd(full, {0, extra[1], 0, extra[0]}, 0);
  const Shape& out = op.outputs.at(0).shape;
  full = full.slice(2, pads[0], pads[0] + out[2]).slice(3, pads[1], pads[1] + out[3]);
  if (bias.defined()) full = full + bias.reshape({1, -1, 1, 1});
  return apply_activation(full.contiguous(), op);
}

// ONNX Resize, one axis at a time (nearest picks, linear blends two
// neighbours; both are separable). Axes whose size does not change are left
// as they are.
at::Tensor resize(const Op& op, at::Tensor x) {
  const Shape& out = op.outputs.at(0).shape;
  auto mode = static_cast<ResizeMode>(op.attrs.get_int(AttrKey::ResizeMode, 0));
  auto coord = static_cast<ResizeCoordinateMode>(op.attrs.get_int(AttrKey::CoordinateMode, 0));
  auto nearest = static_cast<ResizeNearestMode>(op.attrs.get_int(AttrKey::NearestMode, 0));
  for (int64_t axis = 0; axis < x.dim(); ++axis) {
    int64_t in = x.size(axis), size = out[static_cast<size_t>(axis)];
    if (in == size) continue;
    if (mode == ResizeMode::Nearest) {
      x = x.index_select(axis, at::tensor(resize_nearest_indices(coord, nearest, in, size), at::kLong));
      continue;
    }
    std::vector<int64_t> low(static_cast<size_t>(size)), high(static_cast<size_t>(size));
    std::vector<double> weight(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) {
      double src = std::clamp(resize_source_coordinate(coord, i, in, size), 0.0, static_cast<double>(in - 1));
      auto lo = static_cast<int64_t>(std::floor(src));
      low[static_cast<size_t>(i)] = lo;
      high[static_cast<size_t>(i)] = std::min(lo + 1, in - 1);
      weight[static_cast<size_t>(i)] = src - static_cast<double>(lo);
    }
    std::vector<int64_t> weight_shape(static_cast<size_t>(x.dim()), 1);
    weight_shape[static_cast<size_t>(axis)] = size;
    at::Tensor w = at::tensor(weight, at::kDouble).to(x.scalar_type()).reshape(weight_shape);
    at::Tensor a = x.index_select(axis, at::tensor(low, at::kLong));
    at::Tensor b = x.index_select(axis, at::tensor(high, at::kLong));
    x = a + (b - a) * w;
  }
  return x.contiguous();
}

at::Tensor gather(const Op& op, const std::vector<at::Tensor>& in) {
  int64_t axis = normalize_axis(op.attrs.get_int(AttrKey::Axis, 0), in[0].dim(), op.name);
  at::Tensor index = in[1].reshape({-1});
  // ONNX counts negative indices from the end of the axis.
  index = at::where(index < 0, index + in[0].size(axis), index);
  return in[0].index_select(axis, index).reshape(op.outputs.at(0).shape);
}

at::Tensor reduce_over(const std::vector<at::Tensor>& in, OpType type) {
  at::Tensor acc = in[0];
  for (size_t k = 1; k < in.size(); ++k) {
    if (type == OpType::Max) acc = at::maximum(acc, in[k]);
    else if (type == OpType::Min) acc = at::minimum(acc, in[k]);
    else acc = acc + in[k];
  }
  if (type == OpType::Mean) acc = acc / static_cast<double>(in.size());
  return in.size() == 1 ? acc.clone() : acc;
}

}  // namespace

at::Tensor apply_activation(at::Tensor t, const Op& op) {
  switch (static_cast<Activation>(op.attrs.get_int(AttrKey::Activation, 0))) {
    case Activation::None: return t;
    case Activation::Relu: return t.relu_();
    case Activation::Sigmoid: return t.sigmoid_();
    case Activation::Tanh: return t.tanh_();
    case Activation::HardSigmoid:
      return t.mul_(op.attrs.get_float(AttrKey::ActivationAlpha, 0.2))
          .add_(op.attrs.get_float(AttrKey::ActivationBeta, 0.5))
          .clamp_(0.0, 1.0);
    case Activation::HardSwish: return at::hardswish_(t);
    case Activation::LeakyRelu: return at::leaky_relu_(t, op.attrs.get_float(AttrKey::ActivationAlpha, 0.01));
  }
  throw GraphError("unknown activation on " + op.name);
}

at::ScalarType scalar_type_of(DType dtype) { return dtype == DType::Float32 ? at::kFloat : at::kLong; }

std::vector<at::Tensor> run_aten_op(const Op& op, const std::vector<at::Tensor>& in) {
  switch (op.type) {
    case OpType::Conv: return {conv(op, in)};
    case OpType::MatMul: return {apply_activation(at::matmul(in[0], in[1]), op)};
    case OpType::Gemm: return {gemm(op, in)};
    case OpType::Add: return {at::add(in[0], in[1])};
    case OpType::Sub: return {at::sub(in[0], in[1])};
    case OpType::Mul: return {at::mul(in[0], in[1])};
    case OpType::Div:
      if (in[0].scalar_type() == at::kLong) return {at::div(in[0], in[1], "trunc")};
      return {at::div(in[0], in[1])};
    case OpType::Pow: return {at::pow(in[0], in[1])};
    case OpType::Sqrt: return {at::sqrt(in[0])};
    case OpType::Relu: return {at::relu(in[0])};
    case OpType::Sigmoid: return {at::sigmoid(in[0])};
    case OpType::Tanh: return {at::tanh(in[0])};
    case OpType::Erf: return {at::erf(in[0])};
    case OpType::Gelu: return {at::gelu(in[0])};
    case OpType::Clip: {
      const AttrValue* lo = op.attrs.find(AttrKey::Min);
      const AttrValue* hi = op.attrs.find(AttrKey::Max);
      c10::optional<at::Scalar> min, max;
      if (lo) min = op.attrs.get_float(AttrKey::Min, 0);
      if (hi) max = op.attrs.get_float(AttrKey::Max, 0);
      return {at::clamp(in[0], min, max)};
    }
    case OpType::Softmax:
      return {at::softmax(in[0], normalize_axis(op.attrs.get_int(AttrKey::Axis, -1), in[0].dim(), op.name))};
    case OpType::LayerNorm: return {layer_norm(op, in)};
    case OpType::BatchNorm:
      return {at::batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.0, op.attrs.get_float(AttrKey::Epsilon, 1e-5),
                             false)};
    case OpType::MaxPool: return {max_pool(op, in[0])};
    case OpType::AvgPool: return {avg_pool(op, in[0])};
    case OpType::GlobalAvgPool: {
      std::vector<int64_t> dims;
      for (int64_t d = 2; d < in[0].dim(); ++d) dims.push_back(d);
      return {in[0].mean(dims, true)};
    }
    case OpType::ReduceMean:
      return {at::mean(in[0], reduce_axes(op, in[0].dim()), op.attrs.get_int(AttrKey::KeepDims, 1) != 0)};
    case OpType::ReduceSum:
      return {at::sum(in[0], reduce_axes(op, in[0].dim()), op.attrs.get_int(AttrKey::KeepDims, 1) != 0)};
    case OpType::Concat: return {at::cat(in, normalize_axis(op.attrs.require_int(AttrKey::Axis), in[0].dim(), op.name))};
    case OpType::Split: {
      auto parts = at::split_with_sizes(in[0], op.attrs.require_ints(AttrKey::Split),
                                        normalize_axis(op.attrs.get_int(AttrKey::Axis, 0), in[0].dim(), op.name));
      return std::vector<at::Tensor>(parts.begin(), parts.end());
    }
    case OpType::Slice: return {slice(op, in[0])};
    case OpType::Reshape:
    case OpType::Flatten:
    case OpType::Squeeze:
    case OpType::Unsqueeze: return {in[0].reshape(op.outputs[0].shape)};
    case OpType::Transpose: {
      std::vector<int64_t> perm = op.attrs.get_ints(AttrKey::Perm);
      if (perm.empty())
        for (int64_t d = in[0].dim() - 1; d >= 0; --d) perm.push_back(d);
      // Materialised, as every runtime does: a transpose moves data.
      return {in[0].permute(perm).contiguous()};
    }
    case OpType::Pad: return {pad(op, in[0])};
    case OpType::Identity:
    case OpType::Dropout: return {in[0]};
    case OpType::EnlargeKernel: {
      auto kernel = op.attrs.require_ints(AttrKey::KernelShape);
      int64_t dh = (kernel[0] - in[0].size(2)) / 2, dw = (kernel[1] - in[0].size(3)) / 2;
      return {at::constant_pad_nd(in[0], {dw, dw, dh, dh}, 0)};
    }
    case OpType::HardSigmoid:
      return {at::clamp(in[0] * op.attrs.get_float(AttrKey::Alpha, 0.2) + op.attrs.get_float(AttrKey::Beta, 0.5), 0.0, 1.0)};
    case OpType::HardSwish: return {at::hardswish(in[0])};
    case OpType::LeakyRelu: return {at::leaky_relu(in[0], op.attrs.get_float(AttrKey::Alpha, 0.01))};
    case OpType::PRelu: return {at::where(in[0] < 0, in[0] * in[1], in[0])};
    case OpType::Softplus: return {at::softplus(in[0])};
    case OpType::Mish: return {at::mish(in[0])};
    case OpType::Resize: return {resize(op, in[0])};
    case OpType::ConvTranspose: return {conv_transpose(op, in)};
    case OpType::ReduceMax:
      return {at::amax(in[0], reduce_axes(op, in[0].dim()), op.attrs.get_int(AttrKey::KeepDims, 1) != 0)};
    case OpType::ReduceMin:
      return {at::amin(in[0], reduce_axes(op, in[0].dim()), op.attrs.get_int(AttrKey::KeepDims, 1) != 0)};
    case OpType::Max:
    case OpType::Min:
    case OpType::Mean: return {reduce_over(in, op.type)};
    case OpType::Gather: return {gather(op, in)};
    case OpType::Tile: return {in[0].repeat(op.attrs.require_ints(AttrKey::Repeats))};
    case OpType::Input:
    case OpType::Weight:
    case OpType::kCount: break;
  }
  throw GraphError("no kernel for " + std::string(op_type_name(op.type)) + " '" + op.name + "'");
}

at::Tensor to_aten(std::shared_ptr<const TensorData> data) {
  const TensorData* raw = data.get();
  auto keep_alive = [owner = std::move(data)](void*) {};
  return at::from_blob(const_cast<void*>(raw->raw()), raw->shape(), keep_alive,
                       at::TensorOptions().dtype(scalar_type_of(raw->dtype())));
}

std::shared_ptr<TensorData> from_aten(const at::Tensor& tensor) {
  DType dtype;
  at::Tensor t = tensor;
  if (t.scalar_type() == at::kFloat) {
    dtype = DType::Float32;
  } else if (t.scalar_type() == at::kLong) {
    dtype = DType::Int64;
  } else if (t.scalar_type() == at::kDouble || t.scalar_type() == at::kHalf) {
    t = t.to(at::kFloat);
    dtype = DType::Float32;
  } else {
    t = t.to(at::kLong);
    dtype = DType::Int64;
  }
  t = t.contiguous();
  auto data = std::make_shared<TensorData>(dtype, Shape(t.sizes().begin(), t.sizes().end()));
  if (data->nbytes()) std::memcpy(data->raw(), t.data_ptr(), data->nbytes());
  return data;
}

at::Tensor weight_tensor(const Op& op) {
  if (op.value) return to_aten(op.value);
  if (!op.random) throw GraphError("weight '" + op.name + "' has no values");
  at::Tensor t = at::empty(op.outputs[0].shape, at::kFloat);
  fill_random(*op.random, t.data_ptr<float>(), t.numel());
  return t;
}

}  // namespace graphworld
