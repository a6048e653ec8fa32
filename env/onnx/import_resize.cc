// Resize (opset 10 on) and Upsample (opsets 7 to 9) become the IR's Resize,
// whose output shape is fixed at import. What each opset means:
//   Upsample 7-8   scales attribute; 9: scales input. Asymmetric coordinates.
//   Resize 10      scales input; asymmetric coordinates, like Upsample.
//   Resize 11-17   roi, scales, sizes inputs; coordinate_transformation_mode,
//                  nearest_mode.
//   Resize 18-21   axes, antialias, keep_aspect_ratio_policy; 19 adds
//                  half_pixel_symmetric.
// Upsample and Resize-10 round nearest neighbours the way onnxruntime does
// for them: down when enlarging, up when shrinking. Scales must give whole
// sizes: then every coordinate mode's scale is out / in, which the IR's
// kernel uses, and half_pixel_symmetric is half_pixel.
#include <cmath>

#include "common/error.h"
#include "env/onnx/import_context.h"
#include "env/ops/op_schema.h"

namespace graphworld {
namespace {

using Node = onnx::NodeProto;

std::vector<double> float_values(const TensorData& data) {
  std::vector<double> out;
  for (int64_t k = 0; k < data.numel(); ++k)
    out.push_back(data.dtype() == DType::Float32 ? static_cast<double>(data.floats()[k])
                                                 : static_cast<double>(data.ints()[k]));
  return out;
}

// floor(in * scale) per axis, as ONNX defines and onnxruntime computes it (in
// float). The IR's kernel maps output coordinates with out / in, which is the
// scale only when in * scale is whole; for any other scale the two would
// sample differently, so it is refused.
Shape sizes_from_scales(const ImportContext& ctx, const Node& node, const Shape& in, const std::vector<double>& scales) {
  if (scales.size() != in.size())
    throw ImportError(ctx.where(node) + ": " + std::to_string(scales.size()) + " scales for an input of rank " +
                      std::to_string(in.size()));
  Shape out;
  for (size_t k = 0; k < in.size(); ++k) {
    const double scale = scales[k];
    if (!(scale > 0) || !(scale < 1e6))
      throw ImportError(ctx.where(node) + ": scale " + std::to_string(scale) + " on axis " + std::to_string(k) +
                        " is out of range (0, 1e6)");
    const double exact = static_cast<double>(in[k]) * scale;
    const auto size = static_cast<int64_t>(static_cast<float>(scale) * static_cast<float>(in[k]));
    if (size < 1 || std::abs(exact - static_cast<double>(size)) > 1e-6 * static_cast<double>(size))
      throw ImportError(ctx.where(node) + ": scale " + std::to_string(scale) + " on axis " + std::to_string(k) +
                        " of size " + std::to_string(in[k]) + " gives " + std::to_string(exact) +
                        " elements, not a whole number; graphworld resizes to whole sizes only (give `sizes` instead)");
    out.push_back(size);
  }
  return out;
}

// Upsample and Resize-10: asymmetric coordinates; nearest rounds down on the
// axes it enlarges and up on those it shrinks (onnxruntime's rule for these
// opsets). Nearest sampling is separable, so an op that does both becomes two
// IR Resizes: the shrinking axes first, then the enlarged ones.
Value emit_legacy_resize(ImportContext& ctx, const Node& node, const std::string& mode, const Shape& in,
                         const Shape& out) {
  Attributes attrs{{AttrKey::CoordinateMode, static_cast<int64_t>(ResizeCoordinateMode::Asymmetric)}};
  Value x = ctx.input(node, 0);
  if (mode == "linear" || mode == "bilinear") {
    attrs.set(AttrKey::ResizeMode, static_cast<int64_t>(ResizeMode::Linear));
    attrs.set(AttrKey::Shape, out);
    return ctx.emit(node, OpType::Resize, {x}, attrs)[0];
  }
  if (mode != "nearest")
    throw ImportError(ctx.where(node) + ": mode '" + mode + "' is not supported (nearest and linear are)");
  attrs.set(AttrKey::ResizeMode, static_cast<int64_t>(ResizeMode::Nearest));
  Shape shrunk = in;
  for (size_t k = 0; k < in.size(); ++k) shrunk[k] = std::min(in[k], out[k]);
  if (shrunk != in) {
    attrs.set(AttrKey::NearestMode, static_cast<int64_t>(ResizeNearestMode::Ceil));
    attrs.set(AttrKey::Shape, shrunk);
    x = ctx.emit(node, OpType::Resize, {x}, attrs, shrunk == out ? "" : "/shrink")[0];
  }
  if (shrunk == out) return x;
  attrs.set(AttrKey::NearestMode, static_cast<int64_t>(ResizeNearestMode::Floor));
  attrs.set(AttrKey::Shape, out);
  return ctx.emit(node, OpType::Resize, {x}, attrs)[0];
}

ResizeCoordinateMode coordinate_mode(const ImportContext& ctx, const Node& node, const std::string& name) {
  if (name == "half_pixel" || name == "half_pixel_symmetric") return ResizeCoordinateMode::HalfPixel;
  if (name == "pytorch_half_pixel") return ResizeCoordinateMode::PytorchHalfPixel;
  if (name == "asymmetric") return ResizeCoordinateMode::Asymmetric;
  if (name == "align_corners") return ResizeCoordinateMode::AlignCorners;
  if (name == "tf_half_pixel_for_nn") return ResizeCoordinateMode::TfHalfPixelForNearest;
  throw ImportError(ctx.where(node) + ": coordinate_transformation_mode '" + name +
                    "' is not supported (half_pixel, half_pixel_symmetric, pytorch_half_pixel, asymmetric, "
                    "align_corners and tf_half_pixel_for_nn are)");
}

ResizeNearestMode nearest_mode(const ImportContext& ctx, const Node& node, const std::string& name) {
  if (name == "round_prefer_floor") return ResizeNearestMode::RoundPreferFloor;
  if (name == "round_prefer_ceil") return ResizeNearestMode::RoundPreferCeil;
  if (name == "floor") return ResizeNearestMode::Floor;
  if (name == "ceil") return ResizeNearestMode::Ceil;
  throw ImportError(ctx.where(node) + ": nearest_mode '" + name + "' is not supported");
}

// Values given for `axes` only (opset 18) spread over every axis; the others keep `fill`.
template <typename T>
std::vector<T> over_all_axes(const ImportContext& ctx, const Node& node, const std::vector<T>& values,
                             const std::vector<int64_t>& axes, size_t rank, std::vector<T> fill) {
  if (axes.empty()) return values;
  if (values.size() != axes.size())
    throw ImportError(ctx.where(node) + ": " + std::to_string(values.size()) + " values for " + std::to_string(axes.size()) + " axes");
  for (size_t k = 0; k < axes.size(); ++k)
    fill[static_cast<size_t>(normalize_axis(axes[k], static_cast<int64_t>(rank), ctx.where(node)))] = values[k];
  return fill;
}

}  // namespace

void convert_upsample(ImportContext& ctx, const Node& node) {
  NodeAttrs a(node, ctx.where(node));
  Shape in = ctx.input_info(node, 0).shape;
  std::vector<double> scales;
  if (ctx.opset < 9) {
    const onnx::AttributeProto* attr = a.find("scales");
    if (!attr) throw ImportError(ctx.where(node) + ": the scales attribute is missing");
    for (float s : attr->floats()) scales.push_back(s);
  } else {
    scales = float_values(*ctx.constant(node, 1, "scales"));
  }
  Shape out = sizes_from_scales(ctx, node, in, scales);
  ctx.set_output(node, 0, emit_legacy_resize(ctx, node, a.get_string("mode", "nearest"), in, out));
}

void convert_resize(ImportContext& ctx, const Node& node) {
  NodeAttrs a(node, ctx.where(node));
  Shape in = ctx.input_info(node, 0).shape;
  std::string mode = a.get_string("mode", "nearest");
  if (ctx.opset < 11) {
    Shape out = sizes_from_scales(ctx, node, in, float_values(*ctx.constant(node, 1, "scales")));
    ctx.set_output(node, 0, emit_legacy_resize(ctx, node, mode, in, out));
    return;
  }
  if (mode != "nearest" && mode != "linear")
    throw ImportError(ctx.where(node) + ": mode '" + mode + "' is not supported (nearest and linear are)");
  if (a.get_int("antialias", 0) != 0) throw ImportError(ctx.where(node) + ": antialias=1 is not supported");
  std::string policy = a.get_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    throw ImportError(ctx.where(node) + ": keep_aspect_ratio_policy '" + policy + "' is not supported (only 'stretch')");
  std::string coord_name = a.get_string("coordinate_transformation_mode", "half_pixel");
  if (coord_name == "tf_crop_and_resize")
    throw ImportError(ctx.where(node) + ": coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  if (coord_name == "tf_half_pixel_for_nn" && (ctx.opset >= 13 || mode != "nearest"))
    throw ImportError(ctx.where(node) + ": coordinate_transformation_mode 'tf_half_pixel_for_nn' exists for nearest "
                                        "resizing at opsets 11 and 12 only");
  std::vector<int64_t> axes = a.get_ints("axes");
  Shape out;
  bool has_sizes = ctx.has_input(node, 3) && ctx.constant(node, 3, "sizes")->numel() > 0;
  if (has_sizes) {
    out = over_all_axes(ctx, node, ctx.constant_ints(node, 3, "sizes"), axes, in.size(), in);
    if (out.size() != in.size())
      throw ImportError(ctx.where(node) + ": sizes " + shape_to_string(out) + " do not match the input rank " +
                        std::to_string(in.size()));
  } else {
    if (!ctx.has_input(node, 2)) throw ImportError(ctx.where(node) + ": neither scales nor sizes is given");
    std::vector<double> scales = float_values(*ctx.constant(node, 2, "scales"));
    scales = over_all_axes(ctx, node, scales, axes, in.size(), std::vector<double>(in.size(), 1.0));
    out = sizes_from_scales(ctx, node, in, scales);
  }
  Attributes attrs{{AttrKey::Shape, out},
                   {AttrKey::ResizeMode, static_cast<int64_t>(mode == "linear" ? ResizeMode::Linear : ResizeMode::Nearest)},
                   {AttrKey::CoordinateMode, static_cast<int64_t>(coordinate_mode(ctx, node, coord_name))},
                   {AttrKey::NearestMode,
                    static_cast<int64_t>(nearest_mode(ctx, node, a.get_string("nearest_mode", "round_prefer_floor")))}};
  ctx.set_output(node, 0, ctx.emit(node, OpType::Resize, {ctx.input(node, 0)}, attrs)[0]);
}

}  // namespace graphworld
