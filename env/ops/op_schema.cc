#include "env/ops/op_schema.h"

#include <algorithm>
#include <numeric>

#include "common/error.h"

namespace graphworld {
namespace {

[[noreturn]] void fail(OpType type, std::string_view name, const std::string& why) {
  throw GraphError(std::string(op_type_name(type)) + " '" + std::string(name) + "': " + why);
}

std::string shapes_text(const std::vector<TensorInfo>& inputs) {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) out += (i ? ", " : "") + shape_to_string(inputs[i].shape);
  return out;
}

void require_rank(OpType type, std::string_view name, const TensorInfo& info, int64_t rank, const char* layout) {
  if (info.rank() != rank)
    fail(type, name, "takes a rank-" + std::to_string(rank) + " input (" + layout + "), got shape " +
                         shape_to_string(info.shape));
}

void require_float(OpType type, std::string_view name, const std::vector<TensorInfo>& inputs) {
  for (const TensorInfo& in : inputs)
    if (in.dtype != DType::Float32)
      fail(type, name, "takes float32 inputs, got " + dtype_name(in.dtype) + " " + shape_to_string(in.shape));
}

std::vector<int64_t> ints_of_size(const Attributes& attrs, AttrKey key, size_t size, int64_t fill, OpType type,
                                  std::string_view name) {
  std::vector<int64_t> v = attrs.get_ints(key, std::vector<int64_t>(size, fill));
  if (v.size() != size)
    fail(type, name, std::string(attr_key_name(key)) + " must have " + std::to_string(size) + " values, has " +
                         std::to_string(v.size()));
  return v;
}

TensorInfo infer_conv(const Attributes& attrs, const std::vector<TensorInfo>& in, std::string_view name) {
  const OpType t = OpType::Conv;
  require_float(t, name, in);
  require_rank(t, name, in[0], 4, "N,C,H,W");
  require_rank(t, name, in[1], 4, "weight O,C/group,kH,kW");
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  int64_t group = attrs.get_int(AttrKey::Group, 1);
  if (group < 1 || x[1] % group != 0 || w[0] % group != 0)
    fail(t, name, "group " + std::to_string(group) + " does not divide input channels " + std::to_string(x[1]) +
                      " and output channels " + std::to_string(w[0]));
  if (w[1] * group != x[1])
    fail(t, name, "weight " + shape_to_string(w) + " expects " + std::to_string(w[1] * group) +
                      " input channels, input " + shape_to_string(x) + " has " + std::to_string(x[1]));
  if (in.size() == 3 && in[2].shape != Shape{w[0]})
    fail(t, name, "bias " + shape_to_string(in[2].shape) + " must be [" + std::to_string(w[0]) + "]");
  auto strides = ints_of_size(attrs, AttrKey::Strides, 2, 1, t, name);
  auto pads = ints_of_size(attrs, AttrKey::Pads, 4, 0, t, name);
  auto dil = ints_of_size(attrs, AttrKey::Dilations, 2, 1, t, name);
  for (int k = 0; k < 2; ++k)
    if (strides[k] < 1 || dil[k] < 1 || pads[k] < 0 || pads[k + 2] < 0 || w[2 + k] < 1)
      fail(t, name, "kernel, strides and dilations must be >= 1 and pads >= 0");
  Shape out = {x[0], w[0], 0, 0};
  for (int k = 0; k < 2; ++k) {
    out[2 + k] = window_output_size(x[2 + k], w[2 + k], strides[k], pads[k], pads[k + 2], dil[k], false);
    if (out[2 + k] < 1)
      fail(t, name, "kernel " + shape_to_string(w) + " does not fit input " + shape_to_string(x) + " with these pads");
  }
  return {DType::Float32, out};
}

Shape matmul_shape(const Shape& a0, const Shape& b0, std::string_view name) {
  if (a0.empty() || b0.empty()) fail(OpType::MatMul, name, "inputs must have rank >= 1");
  Shape a = a0, b = b0;
  bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (a.back() != b[b.size() - 2])
    fail(OpType::MatMul, name,
         "inner dimensions differ: " + shape_to_string(a0) + " x " + shape_to_string(b0));
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  Shape out = broadcast_shapes(batch_a, batch_b, "MatMul '" + std::string(name) + "' batch dimensions");
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return out;
}

Shape pool_shape(OpType t, const Attributes& attrs, const TensorInfo& in, std::string_view name) {
  require_rank(t, name, in, 4, "N,C,H,W");
  auto kernel = attrs.get_ints(AttrKey::KernelShape);
  if (kernel.size() != 2) fail(t, name, "kernel_shape must have 2 values");
  auto strides = ints_of_size(attrs, AttrKey::Strides, 2, 1, t, name);
  auto pads = ints_of_size(attrs, AttrKey::Pads, 4, 0, t, name);
  auto dil = ints_of_size(attrs, AttrKey::Dilations, 2, 1, t, name);
  bool ceil_mode = attrs.get_int(AttrKey::CeilMode, 0) != 0;
  Shape out = {in.shape[0], in.shape[1], 0, 0};
  for (int k = 0; k < 2; ++k) {
    if (kernel[k] < 1 || strides[k] < 1 || dil[k] < 1) fail(t, name, "kernel, strides and dilations must be >= 1");
    if (pads[k] < 0 || pads[k + 2] < 0) fail(t, name, "pads must be >= 0");
    if (pads[k] >= kernel[k] || pads[k + 2] >= kernel[k])
      fail(t, name, "pads " + shape_to_string(pads) + " must be smaller than the kernel " + shape_to_string(kernel));
    out[2 + k] = window_output_size(in.shape[2 + k], kernel[k], strides[k], pads[k], pads[k + 2], dil[k], ceil_mode);
    if (out[2 + k] < 1)
      fail(t, name, "kernel " + shape_to_string(kernel) + " does not fit input " + shape_to_string(in.shape));
  }
  return out;
}

std::vector<int64_t> normalized_axes(const std::vector<int64_t>& axes, int64_t rank, OpType t, std::string_view name) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(normalize_axis(a, rank, std::string(op_type_name(t)) + " '" + std::string(name) + "'"));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) fail(t, name, "axes repeat");
  return out;
}


// ConvTranspose: x [N,C,H,W], weight [C, O/group, kH, kW]. Each spatial output
// is stride * (in - 1) + output_padding + dilation * (k - 1) + 1 - pads.
TensorInfo infer_conv_transpose(const Attributes& attrs, const std::vector<TensorInfo>& in, std::string_view name) {
  const OpType t = OpType::ConvTranspose;
  require_float(t, name, in);
  require_rank(t, name, in[0], 4, "N,C,H,W");
  require_rank(t, name, in[1], 4, "weight C,O/group,kH,kW");
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  int64_t group = attrs.get_int(AttrKey::Group, 1);
  if (group < 1 || x[1] % group != 0) fail(t, name, "group " + std::to_string(group) + " does not divide input channels " + std::to_string(x[1]));
  if (w[0] != x[1])
    fail(t, name, "weight " + shape_to_string(w) + " expects " + std::to_string(w[0]) + " input channels, input " +
                      shape_to_string(x) + " has " + std::to_string(x[1]));
  int64_t out_channels = w[1] * group;
  if (in.size() == 3 && in[2].shape != Shape{out_channels})
    fail(t, name, "bias " + shape_to_string(in[2].shape) + " must be [" + std::to_string(out_channels) + "]");
  auto strides = ints_of_size(attrs, AttrKey::Strides, 2, 1, t, name);
  auto pads = ints_of_size(attrs, AttrKey::Pads, 4, 0, t, name);
  auto dil = ints_of_size(attrs, AttrKey::Dilations, 2, 1, t, name);
  auto extra = ints_of_size(attrs, AttrKey::OutputPadding, 2, 0, t, name);
  Shape out = {x[0], out_channels, 0, 0};
  for (int k = 0; k < 2; ++k) {
    if (strides[k] < 1 || dil[k] < 1 || pads[k] < 0 || pads[k + 2] < 0 || extra[k] < 0 || w[2 + k] < 1)
      fail(t, name, "kernel, strides and dilations must be >= 1, pads and output_padding >= 0");
    out[2 + k] = strides[k] * (x[2 + k] - 1) + extra[k] + dil[k] * (w[2 + k] - 1) + 1 - pads[k] - pads[k + 2];
    if (out[2 + k] < 1) fail(t, name, "pads " + shape_to_string(pads) + " remove the whole output of input " + shape_to_string(x));
  }
  return {DType::Float32, out};
}

std::vector<int64_t> reduced_shape(OpType t, const Attributes& attrs, const TensorInfo& in, std::string_view name) {
  std::vector<int64_t> axes = normalized_axes(attrs.get_ints(AttrKey::Axes), in.rank(), t, name);
  if (axes.empty())
    for (int64_t a = 0; a < in.rank(); ++a) axes.push_back(a);
  bool keep = attrs.get_int(AttrKey::KeepDims, 1) != 0;
  Shape out;
  for (int64_t a = 0; a < in.rank(); ++a) {
    bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!reduced) out.push_back(in.shape[a]);
    else if (keep) out.push_back(1);
  }
  return out;
}

TensorInfo infer_resize(const Attributes& attrs, const TensorInfo& in, std::string_view name) {
  const OpType t = OpType::Resize;
  require_float(t, name, {in});
  Shape out = attrs.require_ints(AttrKey::Shape);
  if (static_cast<int64_t>(out.size()) != in.rank())
    fail(t, name, "output shape " + shape_to_string(out) + " must have the input's rank " + std::to_string(in.rank()));
  for (int64_t d : out)
    if (d < 1) fail(t, name, "output shape " + shape_to_string(out) + " must be positive");
  int64_t mode = attrs.get_int(AttrKey::ResizeMode, 0), coord = attrs.get_int(AttrKey::CoordinateMode, 0);
  int64_t nearest = attrs.get_int(AttrKey::NearestMode, 0);
  if (mode < 0 || mode > 1 || coord < 0 || coord > 4 || nearest < 0 || nearest > 3)
    fail(t, name, "unknown mode, coordinate mode or nearest mode");
  return {DType::Float32, out};
}

TensorInfo infer_gather(const Attributes& attrs, const std::vector<TensorInfo>& in, std::string_view name) {
  const OpType t = OpType::Gather;
  if (in[1].dtype != DType::Int64) fail(t, name, "indices must be int64, got " + dtype_name(in[1].dtype));
  if (in[0].rank() < 1) fail(t, name, "data must have rank >= 1");
  int64_t axis = normalize_axis(attrs.get_int(AttrKey::Axis, 0), in[0].rank(), "Gather '" + std::string(name) + "'");
  Shape out(in[0].shape.begin(), in[0].shape.begin() + axis);
  out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
  out.insert(out.end(), in[0].shape.begin() + axis + 1, in[0].shape.end());
  return {in[0].dtype, out};
}

TensorInfo infer_tile(const Attributes& attrs, const TensorInfo& in, std::string_view name) {
  std::vector<int64_t> repeats = attrs.require_ints(AttrKey::Repeats);
  if (static_cast<int64_t>(repeats.size()) != in.rank())
    fail(OpType::Tile, name, "repeats " + shape_to_string(repeats) + " must have one value per input dim (" +
                                 std::to_string(in.rank()) + ")");
  Shape out = in.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 1) fail(OpType::Tile, name, "repeats must be >= 1, got " + shape_to_string(repeats));
    out[d] *= repeats[d];
  }
  return {in.dtype, out};
}

// Output of an op of the elementwise list (env/graph/op_type.h).
TensorInfo infer_elementwise(const ElementwiseOp& op, const std::vector<TensorInfo>& in, std::string_view name) {
  const OpType t = op.type;
  const std::string what = std::string(op_type_name(t)) + " '" + std::string(name) + "'";
  if (op.float_only) require_float(t, name, in);
  switch (op.shape) {
    case ElementwiseShape::Same:
      return in[0];
    case ElementwiseShape::FirstInput:
      if (broadcast_shapes(in[0].shape, in[1].shape, what) != in[0].shape)
        fail(t, name, "input " + shape_to_string(in[1].shape) + " must broadcast to the first input " +
                          shape_to_string(in[0].shape));
      return in[0];
    case ElementwiseShape::Broadcast:
      break;
  }
  Shape out = in[0].shape;
  for (size_t k = 1; k < in.size(); ++k) {
    if (in[k].dtype != in[0].dtype)
      fail(t, name, "input types differ: " + dtype_name(in[0].dtype) + " and " + dtype_name(in[k].dtype));
    out = broadcast_shapes(out, in[k].shape, what);
  }
  return {in[0].dtype, out};
}

}  // namespace

int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw GraphError(std::string(what) + ": axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return a;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view what) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw GraphError(std::string(what) + ": shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                       " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                           int64_t dilation, bool ceil_mode) {
  int64_t span = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in PyTorch and onnxruntime: the last window must start inside the
  // input or the leading padding, never entirely in the trailing padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

OpArity op_arity(OpType type) {
  if (const ElementwiseOp* elementwise = elementwise_op(type)) return {elementwise->min_inputs, elementwise->max_inputs};
  switch (type) {
    case OpType::Input:
    case OpType::Weight: return {0, 0};
    case OpType::Conv: return {2, 3};
    case OpType::Gemm: return {2, 3};
    case OpType::LayerNorm: return {2, 3};
    case OpType::BatchNorm: return {5, 5};
    case OpType::MatMul: return {2, 2};
    case OpType::Concat: return {1, -1};
    case OpType::Gather: return {2, 2};
    case OpType::ConvTranspose: return {2, 3};
    default: return {1, 1};
  }
}

std::vector<TensorInfo> infer_outputs(OpType t, const Attributes& attrs, const std::vector<TensorInfo>& in,
                                      std::string_view name) {
  OpArity arity = op_arity(t);
  int n = static_cast<int>(in.size());
  if (n < arity.min_inputs || (arity.max_inputs >= 0 && n > arity.max_inputs))
    fail(t, name, "takes " + std::to_string(arity.min_inputs) +
                      (arity.max_inputs == arity.min_inputs ? std::string()
                       : arity.max_inputs < 0           ? std::string(" or more")
                                                        : " to " + std::to_string(arity.max_inputs)) +
                      " inputs, got " + std::to_string(n));
  const std::string what = std::string(op_type_name(t)) + " '" + std::string(name) + "'";
  switch (t) {
    case OpType::Input:
    case OpType::Weight:
      fail(t, name, "leaf ops have no inferred outputs");
    case OpType::Conv:
      return {infer_conv(attrs, in, name)};
    case OpType::MatMul:
      require_float(t, name, in);
      return {{DType::Float32, matmul_shape(in[0].shape, in[1].shape, name)}};
    case OpType::Gemm: {
      require_float(t, name, in);
      require_rank(t, name, in[0], 2, "M,K");
      require_rank(t, name, in[1], 2, "K,N");
      bool ta = attrs.get_int(AttrKey::TransA, 0), tb = attrs.get_int(AttrKey::TransB, 0);
      int64_t m = ta ? in[0].shape[1] : in[0].shape[0];
      int64_t k = ta ? in[0].shape[0] : in[0].shape[1];
      int64_t k2 = tb ? in[1].shape[1] : in[1].shape[0];
      int64_t nn = tb ? in[1].shape[0] : in[1].shape[1];
      if (k != k2) fail(t, name, "inner dimensions differ: " + shapes_text(in));
      Shape out = {m, nn};
      if (in.size() == 3 && broadcast_shapes(out, in[2].shape, what + " bias") != out)
        fail(t, name, "bias " + shape_to_string(in[2].shape) + " does not broadcast to " + shape_to_string(out));
      return {{DType::Float32, out}};
    }
    case OpType::Softmax:
      require_float(t, name, in);
      normalize_axis(attrs.get_int(AttrKey::Axis, -1), in[0].rank(), what);
      return {in[0]};
    case OpType::LayerNorm: {
      require_float(t, name, in);
      int64_t axis = normalize_axis(attrs.get_int(AttrKey::Axis, -1), in[0].rank(), what);
      Shape normalized(in[0].shape.begin() + axis, in[0].shape.end());
      for (size_t k = 1; k < in.size(); ++k)
        if (broadcast_shapes(normalized, in[k].shape, what) != normalized)
          fail(t, name, "scale/bias " + shape_to_string(in[k].shape) + " must broadcast to the normalised dims " +
                            shape_to_string(normalized));
      return {in[0]};
    }
    case OpType::BatchNorm: {
      require_float(t, name, in);
      if (in[0].rank() < 2) fail(t, name, "input must be N,C,... with rank >= 2, got " + shape_to_string(in[0].shape));
      for (size_t k = 1; k < 5; ++k)
        if (in[k].shape != Shape{in[0].shape[1]})
          fail(t, name, "scale, bias, mean and var must be [" + std::to_string(in[0].shape[1]) + "], got " +
                            shape_to_string(in[k].shape));
      return {in[0]};
    }
    case OpType::MaxPool:
    case OpType::AvgPool:
      require_float(t, name, in);
      return {{DType::Float32, pool_shape(t, attrs, in[0], name)}};
    case OpType::GlobalAvgPool:
      require_float(t, name, in);
      if (in[0].rank() < 3) fail(t, name, "input must be N,C,spatial... got " + shape_to_string(in[0].shape));
      {
        Shape out = in[0].shape;
        for (size_t k = 2; k < out.size(); ++k) out[k] = 1;
        return {{DType::Float32, out}};
      }
    case OpType::ReduceMean:
    case OpType::ReduceSum:
    case OpType::ReduceMax:
    case OpType::ReduceMin:
      if (t == OpType::ReduceMean) require_float(t, name, in);
      return {{in[0].dtype, reduced_shape(t, attrs, in[0], name)}};
    case OpType::Concat: {
      int64_t axis = normalize_axis(attrs.require_int(AttrKey::Axis), in[0].rank(), what);
      Shape out = in[0].shape;
      for (size_t k = 1; k < in.size(); ++k) {
        if (in[k].rank() != in[0].rank() || in[k].dtype != in[0].dtype)
          fail(t, name, "inputs differ in rank or type: " + shapes_text(in));
        for (int64_t d = 0; d < in[0].rank(); ++d)
          if (d != axis && in[k].shape[d] != out[d])
            fail(t, name, "inputs differ outside axis " + std::to_string(axis) + ": " + shapes_text(in));
        out[axis] += in[k].shape[axis];
      }
      return {{in[0].dtype, out}};
    }
    case OpType::Split: {
      int64_t axis = normalize_axis(attrs.get_int(AttrKey::Axis, 0), in[0].rank(), what);
      std::vector<int64_t> sizes = attrs.require_ints(AttrKey::Split);
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0) fail(t, name, "split sizes must be >= 0");
        total += s;
      }
      if (total != in[0].shape[axis])
        fail(t, name, "split sizes " + shape_to_string(sizes) + " do not add up to dimension " +
                          std::to_string(in[0].shape[axis]) + " of " + shape_to_string(in[0].shape));
      std::vector<TensorInfo> outs;
      for (int64_t s : sizes) {
        TensorInfo o = in[0];
        o.shape[axis] = s;
        outs.push_back(o);
      }
      return outs;
    }
    case OpType::Slice: {
      auto starts = attrs.require_ints(AttrKey::Starts);
      auto ends = attrs.require_ints(AttrKey::Ends);
      auto axes = attrs.require_ints(AttrKey::Axes);
      auto steps = attrs.get_ints(AttrKey::Steps, std::vector<int64_t>(axes.size(), 1));
      if (starts.size() != axes.size() || ends.size() != axes.size() || steps.size() != axes.size())
        fail(t, name, "starts, ends, axes and steps must have equal lengths");
      Shape out = in[0].shape;
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t a = normalize_axis(axes[k], in[0].rank(), what);
        int64_t dim = in[0].shape[a];
        if (steps[k] < 1) fail(t, name, "only positive steps are supported, got " + std::to_string(steps[k]));
        int64_t s = std::clamp(starts[k] < 0 ? starts[k] + dim : starts[k], int64_t{0}, dim);
        int64_t e = std::clamp(ends[k] < 0 ? ends[k] + dim : ends[k], int64_t{0}, dim);
        out[a] = e > s ? (e - s + steps[k] - 1) / steps[k] : 0;
      }
      return {{in[0].dtype, out}};
    }
    case OpType::Reshape: {
      Shape shape = attrs.require_ints(AttrKey::Shape);
      for (int64_t d : shape)
        if (d < 0) fail(t, name, "target shape " + shape_to_string(shape) + " must be fully resolved");
      if (num_elements(shape) != in[0].numel())
        fail(t, name, "cannot reshape " + shape_to_string(in[0].shape) + " (" + std::to_string(in[0].numel()) +
                          " elements) to " + shape_to_string(shape));
      return {{in[0].dtype, shape}};
    }
    case OpType::Flatten: {
      int64_t axis = attrs.get_int(AttrKey::Axis, 1);
      if (axis < 0) axis += in[0].rank();
      if (axis < 0 || axis > in[0].rank()) fail(t, name, "axis " + std::to_string(axis) + " out of range");
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < in[0].rank(); ++d) (d < axis ? outer : inner) *= in[0].shape[d];
      return {{in[0].dtype, {outer, inner}}};
    }
    case OpType::Transpose: {
      std::vector<int64_t> perm = attrs.get_ints(AttrKey::Perm);
      int64_t rank = in[0].rank();
      if (perm.empty())
        for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
      std::vector<int64_t> sorted = perm;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int64_t> iota(rank);
      std::iota(iota.begin(), iota.end(), 0);
      if (sorted != iota)
        fail(t, name, "perm " + shape_to_string(perm) + " is not a permutation of rank " + std::to_string(rank));
      Shape out(rank);
      for (int64_t d = 0; d < rank; ++d) out[d] = in[0].shape[perm[d]];
      return {{in[0].dtype, out}};
    }
    case OpType::Squeeze: {
      std::vector<int64_t> axes = normalized_axes(attrs.get_ints(AttrKey::Axes), in[0].rank(), t, name);
      Shape out;
      for (int64_t d = 0; d < in[0].rank(); ++d) {
        bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (listed && in[0].shape[d] != 1)
          fail(t, name, "cannot squeeze axis " + std::to_string(d) + " of size " + std::to_string(in[0].shape[d]));
        if (axes.empty() ? in[0].shape[d] != 1 : !listed) out.push_back(in[0].shape[d]);
      }
      return {{in[0].dtype, out}};
    }
    case OpType::Unsqueeze: {
      int64_t out_rank = in[0].rank() + static_cast<int64_t>(attrs.require_ints(AttrKey::Axes).size());
      std::vector<int64_t> axes = normalized_axes(attrs.require_ints(AttrKey::Axes), out_rank, t, name);
      Shape out;
      size_t src = 0;
      for (int64_t d = 0; d < out_rank; ++d) {
        if (std::find(axes.begin(), axes.end(), d) != axes.end()) out.push_back(1);
        else out.push_back(in[0].shape[src++]);
      }
      return {{in[0].dtype, out}};
    }
    case OpType::Pad: {
      auto pads = attrs.require_ints(AttrKey::Pads);
      int64_t rank = in[0].rank();
      if (static_cast<int64_t>(pads.size()) != 2 * rank)
        fail(t, name, "pads must have 2*rank = " + std::to_string(2 * rank) + " values, has " + std::to_string(pads.size()));
      Shape out = in[0].shape;
      for (int64_t d = 0; d < rank; ++d) {
        out[d] += pads[d] + pads[d + rank];
        if (out[d] < 0) fail(t, name, "pads " + shape_to_string(pads) + " remove more than the input has");
      }
      return {{in[0].dtype, out}};
    }
    case OpType::EnlargeKernel: {
      require_rank(t, name, in[0], 4, "weight O,I,kH,kW");
      auto kernel = attrs.require_ints(AttrKey::KernelShape);
      if (kernel.size() != 2) fail(t, name, "kernel_shape must have 2 values");
      for (int k = 0; k < 2; ++k)
        if (kernel[k] < in[0].shape[2 + k] || (kernel[k] - in[0].shape[2 + k]) % 2 != 0)
          fail(t, name, "cannot centre kernel " + shape_to_string(in[0].shape) + " in " + shape_to_string(kernel));
      return {{DType::Float32, {in[0].shape[0], in[0].shape[1], kernel[0], kernel[1]}}};
    }
    case OpType::Resize:
      return {infer_resize(attrs, in[0], name)};
    case OpType::ConvTranspose:
      return {infer_conv_transpose(attrs, in, name)};
    case OpType::Gather:
      return {infer_gather(attrs, in, name)};
    case OpType::Tile:
      return {infer_tile(attrs, in[0], name)};
    default:
      if (const ElementwiseOp* elementwise = elementwise_op(t)) return {infer_elementwise(*elementwise, in, name)};
      break;
  }
  fail(t, name, "unknown op type");
}

OpWork op_work(OpType type, const Attributes& attrs, const std::vector<TensorInfo>& inputs,
               const std::vector<TensorInfo>& outputs) {
  OpWork work;
  for (const TensorInfo& i : inputs) work.bytes += static_cast<double>(i.nbytes());
  for (const TensorInfo& o : outputs) work.bytes += static_cast<double>(o.nbytes());
  const double out_elems = outputs.empty() ? 0.0 : static_cast<double>(outputs[0].numel());
  const double in_elems = inputs.empty() ? 0.0 : static_cast<double>(inputs[0].numel());
  double activation = attrs.get_int(AttrKey::Activation, 0) != 0 ? out_elems : 0.0;
  switch (type) {
    case OpType::Conv: {
      const Shape& w = inputs[1].shape;
      work.flops = 2.0 * out_elems * static_cast<double>(w[1] * w[2] * w[3]) + activation;
      if (inputs.size() == 3) work.flops += out_elems;
      break;
    }
    case OpType::MatMul: {
      const Shape& a = inputs[0].shape;
      int64_t k = a.back();
      work.flops = 2.0 * out_elems * static_cast<double>(k) + activation;
      break;
    }
    case OpType::Gemm: {
      bool ta = attrs.get_int(AttrKey::TransA, 0);
      int64_t k = ta ? inputs[0].shape[0] : inputs[0].shape[1];
      work.flops = 2.0 * out_elems * static_cast<double>(k) + out_elems + activation;
      break;
    }
    case OpType::Softmax: work.flops = 5 * out_elems; break;
    case OpType::LayerNorm: work.flops = 8 * out_elems; break;
    case OpType::BatchNorm: work.flops = 2 * out_elems; break;
    case OpType::MaxPool:
    case OpType::AvgPool: {
      auto kernel = attrs.get_ints(AttrKey::KernelShape, {1, 1});
      work.flops = out_elems * static_cast<double>(kernel[0] * kernel[1]);
      break;
    }
    case OpType::GlobalAvgPool:
    case OpType::ReduceMean:
    case OpType::ReduceSum: work.flops = in_elems; break;
    case OpType::Resize:
      // Linear: a weighted pair per resized axis; nearest only copies.
      work.flops = attrs.get_int(AttrKey::ResizeMode, 0) == static_cast<int64_t>(ResizeMode::Linear) ? 6 * out_elems : 0;
      break;
    case OpType::ConvTranspose: {
      const Shape& w = inputs[1].shape;
      work.flops = 2.0 * in_elems * static_cast<double>(w[1] * w[2] * w[3]) + activation;
      if (inputs.size() == 3) work.flops += out_elems;
      break;
    }
    case OpType::ReduceMax:
    case OpType::ReduceMin: work.flops = in_elems; break;
    case OpType::Gather:
      // A lookup reads what it writes, not the whole table.
      work.bytes = static_cast<double>(inputs[1].nbytes()) + 2.0 * static_cast<double>(outputs[0].nbytes());
      break;
    default:
      if (const ElementwiseOp* elementwise = elementwise_op(type)) {
        const double operands = elementwise->max_inputs < 0 ? static_cast<double>(inputs.size()) : 1.0;
        work.flops = elementwise->flops_per_output * out_elems * operands;
      }
      break;  // else data movement and leaves: no arithmetic
  }
  return work;
}

OpWork op_work(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  std::vector<TensorInfo> inputs;
  inputs.reserve(op.inputs.size());
  for (const TensorRef& ref : op.inputs) inputs.push_back(graph.info(ref));
  return op_work(op.type, op.attrs, inputs, op.outputs);
}

}  // namespace graphworld
