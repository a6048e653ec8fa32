// One converter per ONNX op type: reads the node's attributes and constant
// inputs into IR parameters and emits IR ops. Opset differences (attributes
// that became inputs, Softmax's axis semantics) are resolved here.
#include <algorithm>
#include <limits>

#include "common/error.h"
#include "env/onnx/import_context.h"
#include "env/onnx/tensor_proto.h"
#include "env/ops/op_schema.h"

namespace graphworld {
namespace {

using Node = onnx::NodeProto;

NodeAttrs attrs_of(const ImportContext& ctx, const Node& node) { return NodeAttrs(node, ctx.where(node)); }

void bind(ImportContext& ctx, const Node& node, std::vector<Value> outs) {
  for (size_t k = 0; k < outs.size(); ++k) ctx.set_output(node, static_cast<int>(k), outs[k]);
}

std::vector<Value> all_inputs(ImportContext& ctx, const Node& node) {
  std::vector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i)
    if (ctx.has_input(node, i)) inputs.push_back(ctx.input(node, i));
  return inputs;
}

// Same op type, same inputs, no parameters.
NodeConverter direct(OpType type) {
  return [type](ImportContext& ctx, const Node& node) { bind(ctx, node, ctx.emit(node, type, all_inputs(ctx, node), {})); };
}

// Kernel, strides and dilations must have one value per spatial dim, all >= 1.
void check_window(ImportContext& ctx, const Node& node, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  for (const auto* list : {&kernel, &strides, &dilations}) {
    if (list->size() != 2)
      throw ImportError(ctx.where(node) + ": kernel_shape, strides and dilations need 2 values each (2-D windows)");
    for (int64_t v : *list)
      if (v < 1) throw ImportError(ctx.where(node) + ": kernel_shape, strides and dilations must be >= 1, got " + std::to_string(v));
  }
}

// Resolves ONNX auto_pad into explicit [begin..., end...] pads.
std::vector<int64_t> window_pads(ImportContext& ctx, const Node& node, const NodeAttrs& a, const Shape& in,
                                 const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                 const std::vector<int64_t>& dilations) {
  std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  size_t spatial = kernel.size();
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = a.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    if (pads.size() != 2 * spatial)
      throw ImportError(ctx.where(node) + ": pads has " + std::to_string(pads.size()) + " values, expected " +
                        std::to_string(2 * spatial));
    return pads;
  }
  std::vector<int64_t> pads(2 * spatial, 0);
  if (auto_pad == "VALID") return pads;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    throw ImportError(ctx.where(node) + ": unknown auto_pad '" + auto_pad + "'");
  for (size_t k = 0; k < spatial; ++k) {
    int64_t size = in[2 + k];
    int64_t out = (size + strides[k] - 1) / strides[k];
    int64_t total = std::max<int64_t>((out - 1) * strides[k] + (kernel[k] - 1) * dilations[k] + 1 - size, 0);
    int64_t small = total / 2, large = total - small;
    pads[k] = auto_pad == "SAME_UPPER" ? small : large;
    pads[k + spatial] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

void require_2d(ImportContext& ctx, const Node& node, const TensorInfo& x) {
  if (x.rank() != 4)
    throw ImportError(ctx.where(node) + ": input has shape " + shape_to_string(x.shape) +
                      "; only 2-D windows over N,C,H,W inputs (rank 4) are supported");
}

// Conv and ConvTranspose: an N,C,H,W input, a rank-4 weight whose last two
// dims are the kernel, and checked strides and dilations.
struct ConvWindow {
  TensorInfo x;
  std::vector<int64_t> kernel, strides, dilations;
};

ConvWindow conv_window(ImportContext& ctx, const Node& node, const NodeAttrs& a) {
  ConvWindow win;
  win.x = ctx.input_info(node, 0);
  TensorInfo w = ctx.input_info(node, 1);
  require_2d(ctx, node, win.x);
  if (w.rank() != 4) throw ImportError(ctx.where(node) + ": weight must be rank 4, got " + shape_to_string(w.shape));
  win.kernel = a.get_ints("kernel_shape", {w.shape[2], w.shape[3]});
  if (win.kernel != std::vector<int64_t>{w.shape[2], w.shape[3]})
    throw ImportError(ctx.where(node) + ": kernel_shape " + shape_to_string(win.kernel) + " disagrees with weight " +
                      shape_to_string(w.shape));
  win.strides = a.get_ints("strides", {1, 1});
  win.dilations = a.get_ints("dilations", {1, 1});
  check_window(ctx, node, win.kernel, win.strides, win.dilations);
  return win;
}

void convert_conv(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  auto [x, kernel, strides, dil] = conv_window(ctx, node, a);
  Attributes attrs{{AttrKey::Strides, strides},
                   {AttrKey::Pads, window_pads(ctx, node, a, x.shape, kernel, strides, dil)},
                   {AttrKey::Dilations, dil},
                   {AttrKey::Group, a.get_int("group", 1)}};
  bind(ctx, node, ctx.emit(node, OpType::Conv, all_inputs(ctx, node), attrs));
}

void convert_gemm(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  Attributes attrs{{AttrKey::Alpha, static_cast<double>(a.get_float("alpha", 1.0f))},
                   {AttrKey::Beta, static_cast<double>(a.get_float("beta", 1.0f))},
                   {AttrKey::TransA, a.get_int("transA", 0)},
                   {AttrKey::TransB, a.get_int("transB", 0)}};
  bind(ctx, node, ctx.emit(node, OpType::Gemm, all_inputs(ctx, node), attrs));
}

void convert_clip(ImportContext& ctx, const Node& node) {
  Attributes attrs;
  auto bound = [&](int index, AttrKey key) {
    if (ctx.opset < 11) {  // min and max were attributes, unbounded when absent
      NodeAttrs a = attrs_of(ctx, node);
      const char* name = index == 1 ? "min" : "max";
      if (a.has(name)) attrs.set(key, static_cast<double>(a.get_float(name, 0)));
      return;
    }
    if (!ctx.has_input(node, index)) return;
    auto value = ctx.constant(node, index, index == 1 ? "min" : "max");
    if (value->numel() != 1) throw ImportError(ctx.where(node) + ": min and max must be scalars");
    double v = value->dtype() == DType::Float32 ? value->floats()[0] : static_cast<double>(value->ints()[0]);
    attrs.set(key, v);
  };
  bound(1, AttrKey::Min);
  bound(2, AttrKey::Max);
  bind(ctx, node, ctx.emit(node, OpType::Clip, {ctx.input(node, 0)}, attrs));
}

void convert_softmax(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  Value x = ctx.input(node, 0);
  TensorInfo info = ctx.info(x);
  if (ctx.opset >= 13) {
    bind(ctx, node, ctx.emit(node, OpType::Softmax, {x}, {{AttrKey::Axis, a.get_int("axis", -1)}}));
    return;
  }
  // Before opset 13 Softmax flattens to 2-D at `axis` and normalises rows.
  int64_t axis = normalize_axis(a.get_int("axis", 1), info.rank(), ctx.where(node));
  if (axis == info.rank() - 1) {
    bind(ctx, node, ctx.emit(node, OpType::Softmax, {x}, {{AttrKey::Axis, axis}}));
    return;
  }
  Value flat = ctx.emit(node, OpType::Flatten, {x}, {{AttrKey::Axis, axis}}, "/flatten")[0];
  Value soft = ctx.emit(node, OpType::Softmax, {flat}, {{AttrKey::Axis, int64_t{1}}}, "/softmax")[0];
  bind(ctx, node, ctx.emit(node, OpType::Reshape, {soft}, {{AttrKey::Shape, info.shape}}));
}

void convert_layer_norm(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  ctx.mark_extra_outputs_unsupported(node, "(mean / inverse std-dev) is a training output graphworld does not compute");
  Attributes attrs{{AttrKey::Axis, a.get_int("axis", -1)},
                   {AttrKey::Epsilon, static_cast<double>(a.get_float("epsilon", 1e-5f))}};
  bind(ctx, node, ctx.emit(node, OpType::LayerNorm, all_inputs(ctx, node), attrs));
}

void convert_batch_norm(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  if (a.get_int("training_mode", 0) != 0)
    throw ImportError(ctx.where(node) + ": training_mode=1 is not supported; export the model in eval mode");
  if (a.get_int("spatial", 1) != 1)  // opsets 7 and 8
    throw ImportError(ctx.where(node) + ": spatial=0 (per-element statistics) is not supported");
  ctx.mark_extra_outputs_unsupported(node, "(running statistics) exists only in training mode");
  Attributes attrs{{AttrKey::Epsilon, static_cast<double>(a.get_float("epsilon", 1e-5f))}};
  std::vector<Value> inputs;
  for (int i = 0; i < 5; ++i) inputs.push_back(ctx.input(node, i));
  bind(ctx, node, ctx.emit(node, OpType::BatchNorm, inputs, attrs));
}

void convert_pool(ImportContext& ctx, const Node& node, OpType type) {
  NodeAttrs a = attrs_of(ctx, node);
  TensorInfo x = ctx.input_info(node, 0);
  require_2d(ctx, node, x);
  if (type == OpType::MaxPool) {
    ctx.mark_extra_outputs_unsupported(node, "(argmax indices) is not supported");
    if (a.get_int("storage_order", 0) != 0)
      throw ImportError(ctx.where(node) + ": storage_order=1 is not supported");
  }
  std::vector<int64_t> kernel = a.get_ints("kernel_shape");
  if (kernel.size() != 2)
    throw ImportError(ctx.where(node) + ": kernel_shape must have 2 values, has " + std::to_string(kernel.size()));
  std::vector<int64_t> strides = a.get_ints("strides", {1, 1});
  std::vector<int64_t> dil = a.get_ints("dilations", {1, 1});
  check_window(ctx, node, kernel, strides, dil);
  Attributes attrs{{AttrKey::KernelShape, kernel},
                   {AttrKey::Strides, strides},
                   {AttrKey::Pads, window_pads(ctx, node, a, x.shape, kernel, strides, dil)},
                   {AttrKey::CeilMode, a.get_int("ceil_mode", 0)}};
  if (dil != std::vector<int64_t>{1, 1}) {
    if (type != OpType::MaxPool) throw ImportError(ctx.where(node) + ": dilated average pooling is not supported");
    attrs.set(AttrKey::Dilations, dil);
  }
  if (type == OpType::AvgPool) attrs.set(AttrKey::CountIncludePad, a.get_int("count_include_pad", 0));
  bind(ctx, node, ctx.emit(node, type, {ctx.input(node, 0)}, attrs));
}

void convert_reduce(ImportContext& ctx, const Node& node, OpType type) {
  NodeAttrs a = attrs_of(ctx, node);
  std::vector<int64_t> axes;
  // ReduceSum took axes as an input from opset 13, the other reductions from 18.
  bool axes_as_input = ctx.opset >= (type == OpType::ReduceSum ? 13 : 18);
  if (axes_as_input) {
    if (ctx.has_input(node, 1)) axes = ctx.constant_ints(node, 1, "axes");
    if (axes.empty() && a.get_int("noop_with_empty_axes", 0)) {
      bind(ctx, node, ctx.emit(node, OpType::Identity, {ctx.input(node, 0)}, {}));
      return;
    }
  } else {
    axes = a.get_ints("axes");
  }
  Attributes attrs{{AttrKey::KeepDims, a.get_int("keepdims", 1)}};
  if (!axes.empty()) attrs.set(AttrKey::Axes, axes);
  bind(ctx, node, ctx.emit(node, type, {ctx.input(node, 0)}, attrs));
}

void convert_split(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  TensorInfo x = ctx.input_info(node, 0);
  int64_t axis = normalize_axis(a.get_int("axis", 0), x.rank(), ctx.where(node));
  std::vector<int64_t> sizes;
  if (ctx.opset >= 13) {
    if (ctx.has_input(node, 1)) sizes = ctx.constant_ints(node, 1, "split");
  } else {
    sizes = a.get_ints("split");
  }
  if (sizes.empty() && a.has("num_outputs")) {
    // Opset 18: equal parts, the last one smaller when the size does not divide.
    int64_t parts = a.get_int("num_outputs", 1), dim = x.shape[axis];
    if (parts < 1 || parts > dim || parts != node.output_size())
      throw ImportError(ctx.where(node) + ": num_outputs " + std::to_string(parts) + " does not fit dimension " +
                        std::to_string(dim) + " and " + std::to_string(node.output_size()) + " outputs");
    int64_t each = (dim + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::min(each, dim - k * each));
    if (sizes.back() < 1)
      throw ImportError(ctx.where(node) + ": num_outputs " + std::to_string(parts) + " leaves an empty part of dimension " +
                        std::to_string(dim));
  }
  if (sizes.empty()) {
    int64_t parts = node.output_size();
    if (parts < 1 || x.shape[axis] % parts != 0)
      throw ImportError(ctx.where(node) + ": cannot split dimension " + std::to_string(x.shape[axis]) + " into " +
                        std::to_string(parts) + " equal parts");
    sizes.assign(parts, x.shape[axis] / parts);
  }
  bind(ctx, node, ctx.emit(node, OpType::Split, {ctx.input(node, 0)}, {{AttrKey::Axis, axis}, {AttrKey::Split, sizes}}));
}

void convert_slice(ImportContext& ctx, const Node& node) {
  TensorInfo x = ctx.input_info(node, 0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {  // starts, ends and axes were attributes; no steps
    NodeAttrs a = attrs_of(ctx, node);
    starts = a.get_ints("starts");
    ends = a.get_ints("ends");
    axes = a.get_ints("axes");
  } else {
    starts = ctx.constant_ints(node, 1, "starts");
    ends = ctx.constant_ints(node, 2, "ends");
    if (ctx.has_input(node, 3)) axes = ctx.constant_ints(node, 3, "axes");
    if (ctx.has_input(node, 4)) steps = ctx.constant_ints(node, 4, "steps");
  }
  if (axes.empty())
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw ImportError(ctx.where(node) + ": starts, ends, axes and steps differ in length");
  // Store clamped, non-negative bounds so the IR never sees INT64_MAX sentinels.
  for (size_t k = 0; k < axes.size(); ++k) {
    axes[k] = normalize_axis(axes[k], x.rank(), ctx.where(node));
    int64_t dim = x.shape[axes[k]];
    if (steps[k] < 1) {
      if (!ctx.input(node, 0).is_constant())
        throw ImportError(ctx.where(node) + ": negative or zero step " + std::to_string(steps[k]) +
                          " is not supported on computed tensors");
    }
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + dim : v, int64_t{0}, dim); };
    if (steps[k] >= 1) {
      starts[k] = clamp(starts[k]);
      ends[k] = std::max(clamp(ends[k]), starts[k]);
    }
  }
  Value data = ctx.input(node, 0);
  if (data.is_constant() && ctx.opset >= 10 && std::any_of(steps.begin(), steps.end(), [](int64_t s) { return s < 1; })) {
    NodeAttrs a = attrs_of(ctx, node);
    std::vector<std::shared_ptr<const TensorData>> args;
    // Positions matter (axes and steps are optional): absent inputs stay null.
    for (int i = 0; i < node.input_size(); ++i)
      args.push_back(ctx.has_input(node, i) ? ctx.constant(node, i, "slice argument") : nullptr);
    auto out = fold_onnx_only_op("Slice", a, args, ctx.where(node));
    ++ctx.folded_nodes;
    ctx.set_output(node, 0, ctx.constant_value(out[0], node.output(0)));
    return;
  }
  Attributes attrs{{AttrKey::Starts, starts}, {AttrKey::Ends, ends}, {AttrKey::Axes, axes}, {AttrKey::Steps, steps}};
  bind(ctx, node, ctx.emit(node, OpType::Slice, {data}, attrs));
}

void convert_reshape(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  TensorInfo x = ctx.input_info(node, 0);
  std::vector<int64_t> shape = ctx.constant_ints(node, 1, "shape");
  bool allow_zero = a.get_int("allowzero", 0) != 0;
  int64_t known = 1, infer_at = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0 && !allow_zero) {
      if (static_cast<int64_t>(k) >= x.rank())
        throw ImportError(ctx.where(node) + ": shape " + shape_to_string(shape) + " copies dimension " +
                          std::to_string(k) + " that input " + shape_to_string(x.shape) + " does not have");
      shape[k] = x.shape[k];
    }
    if (shape[k] == -1) {
      if (infer_at >= 0) throw ImportError(ctx.where(node) + ": shape " + shape_to_string(shape) + " has two -1");
      infer_at = static_cast<int64_t>(k);
    } else if (shape[k] < 0) {
      throw ImportError(ctx.where(node) + ": invalid dimension " + std::to_string(shape[k]) + " in shape");
    } else {
      known *= shape[k];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known != 0)
      throw ImportError(ctx.where(node) + ": cannot reshape " + shape_to_string(x.shape) + " to " + shape_to_string(shape));
    shape[infer_at] = x.numel() / known;
  }
  bind(ctx, node, ctx.emit(node, OpType::Reshape, {ctx.input(node, 0)}, {{AttrKey::Shape, shape}}));
}

void convert_axes_op(ImportContext& ctx, const Node& node, OpType type) {
  NodeAttrs a = attrs_of(ctx, node);
  std::vector<int64_t> axes;
  if (ctx.opset >= 13) {
    if (ctx.has_input(node, 1)) axes = ctx.constant_ints(node, 1, "axes");
  } else {
    axes = a.get_ints("axes");
  }
  Attributes attrs;
  if (!axes.empty() || type == OpType::Unsqueeze) attrs.set(AttrKey::Axes, axes);
  bind(ctx, node, ctx.emit(node, type, {ctx.input(node, 0)}, attrs));
}

void convert_pad(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  std::string mode = a.get_string("mode", "constant");
  if (mode != "constant")
    throw ImportError(ctx.where(node) + ": pad mode '" + mode + "' is not supported (only 'constant')");
  std::vector<int64_t> pads;
  double value = 0;
  if (ctx.opset < 11) {  // pads and value were attributes
    pads = a.get_ints("pads");
    value = a.get_float("value", 0.0f);
  } else {
    pads = ctx.constant_ints(node, 1, "pads");
    if (ctx.has_input(node, 2)) {
      auto v = ctx.constant(node, 2, "constant_value");
      if (v->numel() != 1) throw ImportError(ctx.where(node) + ": constant_value must be a scalar");
      value = v->dtype() == DType::Float32 ? v->floats()[0] : static_cast<double>(v->ints()[0]);
    }
  }
  if (ctx.has_input(node, 3)) {
    // Opset 18: pads cover only the listed axes; spread them over every axis.
    int64_t rank = ctx.input_info(node, 0).rank();
    std::vector<int64_t> axes = ctx.constant_ints(node, 3, "axes");
    if (pads.size() != 2 * axes.size())
      throw ImportError(ctx.where(node) + ": pads has " + std::to_string(pads.size()) + " values for " +
                        std::to_string(axes.size()) + " axes");
    std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t axis = normalize_axis(axes[k], rank, ctx.where(node));
      full[static_cast<size_t>(axis)] = pads[k];
      full[static_cast<size_t>(axis + rank)] = pads[k + axes.size()];
    }
    pads = full;
  }
  bind(ctx, node, ctx.emit(node, OpType::Pad, {ctx.input(node, 0)}, {{AttrKey::Pads, pads}, {AttrKey::Value, value}}));
}

void convert_constant(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  std::shared_ptr<TensorData> data;
  if (const onnx::TensorProto* t = a.get_tensor("value")) {
    data = tensor_from_proto(*t, ctx.where(node));
  } else if (a.has("value_float")) {
    data = TensorData::from_floats({}, {a.get_float("value_float", 0)});
  } else if (a.has("value_floats")) {
    if (a.find("value_floats")->type() != onnx::AttributeProto::FLOATS)
      throw ImportError(ctx.where(node) + ": attribute 'value_floats' must be a float list");
    const auto& list = a.find("value_floats")->floats();
    data = TensorData::from_floats({static_cast<int64_t>(list.size())}, std::vector<float>(list.begin(), list.end()));
  } else if (a.has("value_int")) {
    data = TensorData::from_ints({}, {a.get_int("value_int", 0)});
  } else if (a.has("value_ints")) {
    auto list = a.get_ints("value_ints");
    data = TensorData::from_ints({static_cast<int64_t>(list.size())}, list);
  } else {
    throw ImportError(ctx.where(node) + ": Constant has no supported value attribute (sparse and string constants are "
                                        "not supported)");
  }
  ctx.set_output(node, 0, ctx.constant_value(data, node.output(0)));
}

void convert_shape(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  Shape shape = ctx.input_info(node, 0).shape;
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t start = a.get_int("start", 0), end = a.get_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  std::vector<int64_t> dims(shape.begin() + start, shape.begin() + end);
  ++ctx.folded_nodes;
  ctx.set_output(node, 0, ctx.constant_value(TensorData::from_ints({static_cast<int64_t>(dims.size())}, dims), node.output(0)));
}

void convert_size(ImportContext& ctx, const Node& node) {
  ++ctx.folded_nodes;
  ctx.set_output(node, 0, ctx.constant_value(TensorData::from_ints({}, {ctx.input_info(node, 0).numel()}), node.output(0)));
}

// Gather of one constant index from a computed tensor is a Slice plus, for a
// scalar index, a Reshape that drops the axis (ViT's class token, x[:, 0]),
// which rules see through. Any other Gather (several indices, or computed
// indices into a table) is the IR's Gather.
void convert_gather(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  Value data = ctx.input(node, 0);
  if (data.is_constant() && ctx.input(node, 1).is_constant()) {
    auto out = fold_onnx_only_op("Gather", a, {data.constant, ctx.constant(node, 1, "indices")}, ctx.where(node));
    ++ctx.folded_nodes;
    ctx.set_output(node, 0, ctx.constant_value(out[0], node.output(0)));
    return;
  }
  TensorInfo x = ctx.info(data);
  int64_t axis = normalize_axis(a.get_int("axis", 0), x.rank(), ctx.where(node));
  const Value& index_value = ctx.input(node, 1);
  if (ctx.info(index_value).dtype != DType::Int64)
    throw ImportError(ctx.where(node) + ": indices must be integers");
  bool one_index = index_value.is_constant() && index_value.constant->numel() == 1 && index_value.constant->shape().size() <= 1;
  if (!one_index) {
    // A lookup (embedding tables, computed indices) or a selection of several rows.
    bind(ctx, node, ctx.emit(node, OpType::Gather, {data, index_value}, {{AttrKey::Axis, axis}}));
    return;
  }
  auto indices = index_value.constant;
  int64_t index = indices->ints()[0];
  if (index < 0) index += x.shape[axis];
  if (index < 0 || index >= x.shape[axis])
    throw ImportError(ctx.where(node) + ": index " + std::to_string(indices->ints()[0]) + " is out of range for axis " +
                      std::to_string(axis) + " of " + shape_to_string(x.shape));
  Attributes slice{{AttrKey::Starts, std::vector<int64_t>{index}},
                   {AttrKey::Ends, std::vector<int64_t>{index + 1}},
                   {AttrKey::Axes, std::vector<int64_t>{axis}},
                   {AttrKey::Steps, std::vector<int64_t>{1}}};
  Value sliced = ctx.emit(node, OpType::Slice, {data}, slice, indices->shape().empty() ? "/slice" : "")[0];
  if (!indices->shape().empty()) {
    ctx.set_output(node, 0, sliced);
    return;
  }
  Shape out = x.shape;
  out.erase(out.begin() + axis);
  bind(ctx, node, ctx.emit(node, OpType::Reshape, {sliced}, {{AttrKey::Shape, out}}));
}


// ConvTranspose: explicit pads, or pads derived from auto_pad / output_shape
// as the ONNX spec defines them.
void convert_conv_transpose(ImportContext& ctx, const Node& node) {
  NodeAttrs a = attrs_of(ctx, node);
  auto [x, kernel, strides, dil] = conv_window(ctx, node, a);
  std::vector<int64_t> extra = a.get_ints("output_padding", {0, 0});
  if (extra.size() != 2) throw ImportError(ctx.where(node) + ": output_padding needs 2 values");
  std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  std::vector<int64_t> output_shape = a.get_ints("output_shape");
  std::vector<int64_t> pads = a.get_ints("pads", {0, 0, 0, 0});
  if (pads.size() != 4) throw ImportError(ctx.where(node) + ": pads needs 4 values");
  if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  else if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    throw ImportError(ctx.where(node) + ": unknown auto_pad '" + auto_pad + "'");
  bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!output_shape.empty() || same) {
    if (output_shape.size() > 2) output_shape.erase(output_shape.begin(), output_shape.end() - 2);
    if (output_shape.empty()) output_shape = {x.shape[2] * strides[0], x.shape[3] * strides[1]};
    if (output_shape.size() != 2) throw ImportError(ctx.where(node) + ": output_shape needs 2 spatial values");
    for (int k = 0; k < 2; ++k) {
      int64_t total = strides[k] * (x.shape[2 + k] - 1) + extra[k] + (kernel[k] - 1) * dil[k] + 1 - output_shape[k];
      if (total < 0)
        throw ImportError(ctx.where(node) + ": output_shape " + shape_to_string(output_shape) +
                          " is larger than the transposed convolution produces; raise output_padding instead");
      // The spec gives SAME_UPPER's odd padding to the end, and otherwise
      // (SAME_LOWER, or output_shape without auto_pad) to the start.
      bool upper = auto_pad == "SAME_UPPER";
      pads[k] = upper ? total / 2 : total - total / 2;
      pads[k + 2] = total - pads[k];
    }
  }
  Attributes attrs{{AttrKey::Strides, strides},
                   {AttrKey::Pads, pads},
                   {AttrKey::Dilations, dil},
                   {AttrKey::Group, a.get_int("group", 1)}};
  if (extra != std::vector<int64_t>{0, 0}) attrs.set(AttrKey::OutputPadding, extra);
  bind(ctx, node, ctx.emit(node, OpType::ConvTranspose, all_inputs(ctx, node), attrs));
}

void convert_tile(ImportContext& ctx, const Node& node) {
  std::vector<int64_t> repeats = ctx.constant_ints(node, 1, "repeats");
  bind(ctx, node, ctx.emit(node, OpType::Tile, {ctx.input(node, 0)}, {{AttrKey::Repeats, repeats}}));
}

void convert_gelu(ImportContext& ctx, const Node& node) {
  std::string approximate = attrs_of(ctx, node).get_string("approximate", "none");
  if (approximate != "none")
    throw ImportError(ctx.where(node) + ": approximate='" + approximate + "' is not supported (only the exact erf form)");
  bind(ctx, node, ctx.emit(node, OpType::Gelu, {ctx.input(node, 0)}, {}));
}

NodeConverter fold_only();

// Expand of a computed tensor (torch's repeat and broadcasts): a Reshape that
// adds the leading axes, then a Tile of the size-1 axes. Constants fold.
void convert_expand(ImportContext& ctx, const Node& node) {
  Value x = ctx.input(node, 0);
  if (x.is_constant() && ctx.input(node, 1).is_constant()) {
    fold_only()(ctx, node);
    return;
  }
  Shape in = ctx.info(x).shape;
  Shape target = broadcast_shapes(in, ctx.constant_ints(node, 1, "shape"), ctx.where(node));
  Shape padded(target.size() - in.size(), 1);
  padded.insert(padded.end(), in.begin(), in.end());
  if (padded != in) x = ctx.emit(node, OpType::Reshape, {x}, {{AttrKey::Shape, padded}}, "/reshape")[0];
  std::vector<int64_t> repeats(target.size(), 1);
  for (size_t k = 0; k < target.size(); ++k) repeats[k] = padded[k] == 0 ? 1 : target[k] / padded[k];
  if (repeats == std::vector<int64_t>(target.size(), 1)) {
    ctx.set_output(node, 0, x);
    return;
  }
  bind(ctx, node, ctx.emit(node, OpType::Tile, {x}, {{AttrKey::Repeats, repeats}}));
}

// An activation with float parameters, stored under IR attribute keys.
NodeConverter with_params(OpType type, std::vector<std::pair<const char*, float>> params) {
  return [type, params](ImportContext& ctx, const Node& node) {
    NodeAttrs a = attrs_of(ctx, node);
    Attributes attrs;
    const AttrKey keys[] = {AttrKey::Alpha, AttrKey::Beta};
    for (size_t k = 0; k < params.size(); ++k)
      attrs.set(keys[k], static_cast<double>(a.get_float(params[k].first, params[k].second)));
    bind(ctx, node, ctx.emit(node, type, {ctx.input(node, 0)}, attrs));
  };
}

// ONNX ops that graphworld only ever sees on constants (shape arithmetic).
NodeConverter fold_only() {
  return [](ImportContext& ctx, const Node& node) {
    NodeAttrs a = attrs_of(ctx, node);
    std::vector<std::shared_ptr<const TensorData>> args;
    for (int i = 0; i < node.input_size(); ++i) {
      if (!ctx.has_input(node, i)) {
        args.push_back(nullptr);
        continue;
      }
      const Value& v = ctx.input(node, i);
      if (!v.is_constant())
        throw ImportError(ctx.where(node) + ": " + node.op_type() + " on a computed tensor ('" + v.name +
                          "') is not supported; graphworld folds " + node.op_type() +
                          " only when its inputs are constants (static shapes)");
      args.push_back(v.constant);
    }
    auto outs = fold_onnx_only_op(node.op_type(), a, args, ctx.where(node));
    ++ctx.folded_nodes;
    for (size_t k = 0; k < outs.size(); ++k)
      ctx.set_output(node, static_cast<int>(k), ctx.constant_value(outs[k], node.output(static_cast<int>(k))));
  };
}

}  // namespace

const std::map<std::string, NodeConverter>& node_converters() {
  static const std::map<std::string, NodeConverter> converters = {
      {"Conv", convert_conv},
      {"MatMul", direct(OpType::MatMul)},
      {"Gemm", convert_gemm},
      {"Add", direct(OpType::Add)},
      {"Sub", direct(OpType::Sub)},
      {"Mul", direct(OpType::Mul)},
      {"Div", direct(OpType::Div)},
      {"Pow", direct(OpType::Pow)},
      {"Sqrt", direct(OpType::Sqrt)},
      {"Relu", direct(OpType::Relu)},
      {"Sigmoid", direct(OpType::Sigmoid)},
      {"Tanh", direct(OpType::Tanh)},
      {"Erf", direct(OpType::Erf)},
      {"Clip", convert_clip},
      {"Softmax", convert_softmax},
      {"LayerNormalization", convert_layer_norm},
      {"BatchNormalization", convert_batch_norm},
      {"MaxPool", [](ImportContext& c, const Node& n) { convert_pool(c, n, OpType::MaxPool); }},
      {"AveragePool", [](ImportContext& c, const Node& n) { convert_pool(c, n, OpType::AvgPool); }},
      {"GlobalAveragePool", direct(OpType::GlobalAvgPool)},
      {"ReduceMean", [](ImportContext& c, const Node& n) { convert_reduce(c, n, OpType::ReduceMean); }},
      {"ReduceSum", [](ImportContext& c, const Node& n) { convert_reduce(c, n, OpType::ReduceSum); }},
      {"Concat", [](ImportContext& c, const Node& n) {
         bind(c, n, c.emit(n, OpType::Concat, all_inputs(c, n), {{AttrKey::Axis, attrs_of(c, n).get_int("axis", 0)}}));
       }},
      {"Split", convert_split},
      {"Slice", convert_slice},
      {"Reshape", convert_reshape},
      {"Flatten", [](ImportContext& c, const Node& n) {
         bind(c, n, c.emit(n, OpType::Flatten, {c.input(n, 0)}, {{AttrKey::Axis, attrs_of(c, n).get_int("axis", 1)}}));
       }},
      {"Transpose", [](ImportContext& c, const Node& n) {
         Attributes attrs;
         auto perm = attrs_of(c, n).get_ints("perm");
         if (!perm.empty()) attrs.set(AttrKey::Perm, perm);
         bind(c, n, c.emit(n, OpType::Transpose, {c.input(n, 0)}, attrs));
       }},
      {"Squeeze", [](ImportContext& c, const Node& n) { convert_axes_op(c, n, OpType::Squeeze); }},
      {"Unsqueeze", [](ImportContext& c, const Node& n) { convert_axes_op(c, n, OpType::Unsqueeze); }},
      {"Pad", convert_pad},
      {"Identity", direct(OpType::Identity)},
      {"Dropout", [](ImportContext& c, const Node& n) {
         // Inference: Dropout is the identity, and its mask output is all true.
         c.mark_extra_outputs_unsupported(n, "(dropout mask) exists only in training");
         bind(c, n, c.emit(n, OpType::Identity, {c.input(n, 0)}, {}));
       }},
      {"Constant", convert_constant},
      {"Shape", convert_shape},
      {"Size", convert_size},
      {"Gather", convert_gather},
      {"ConvTranspose", convert_conv_transpose},
      {"HardSigmoid", with_params(OpType::HardSigmoid, {{"alpha", 0.2f}, {"beta", 0.5f}})},
      {"HardSwish", direct(OpType::HardSwish)},
      {"LeakyRelu", with_params(OpType::LeakyRelu, {{"alpha", 0.01f}})},
      {"PRelu", direct(OpType::PRelu)},
      {"Softplus", direct(OpType::Softplus)},
      {"Mish", direct(OpType::Mish)},
      {"Gelu", convert_gelu},
      {"ReduceMax", [](ImportContext& c, const Node& n) { convert_reduce(c, n, OpType::ReduceMax); }},
      {"ReduceMin", [](ImportContext& c, const Node& n) { convert_reduce(c, n, OpType::ReduceMin); }},
      {"Max", direct(OpType::Max)},
      {"Min", direct(OpType::Min)},
      {"Mean", direct(OpType::Mean)},
      {"Tile", convert_tile},
      {"Resize", convert_resize},
      {"Upsample", convert_upsample},
      {"Einsum", convert_einsum},
      {"ConstantOfShape", fold_only()},
      {"Expand", convert_expand},
      {"Where", fold_only()},
      {"Cast", fold_only()},
      {"Equal", fold_only()},
      {"Less", fold_only()},
      {"Greater", fold_only()},
      {"Not", fold_only()},
      {"Neg", fold_only()},
      {"Range", fold_only()},
  };
  return converters;
}

}  // namespace graphworld
