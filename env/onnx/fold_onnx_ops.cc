// ATen evaluation of the ONNX ops that appear only in shape computations.
// They never become IR ops: the importer folds them into constants.
#include <c10/core/InferenceMode.h>

#include "common/error.h"
#include "env/onnx/import_context.h"
#include "env/onnx/tensor_proto.h"
#include "env/ops/aten_kernels.h"
#include "env/ops/op_schema.h"

namespace graphworld {
namespace {

at::Tensor arg(const std::vector<std::shared_ptr<const TensorData>>& inputs, size_t i, const std::string& where) {
  if (i >= inputs.size() || !inputs[i]) throw ImportError(where + ": required input " + std::to_string(i) + " is missing");
  return to_aten(inputs[i]);
}

// Bools are stored as int64 0/1 in TensorData.
at::Tensor as_bool(const at::Tensor& t) { return t.ne(0); }
at::Tensor from_bool(const at::Tensor& t) { return t.to(at::kLong); }

// Numeric ops between an int64 and a float operand promote like numpy.
std::pair<at::Tensor, at::Tensor> promoted(at::Tensor a, at::Tensor b) {
  if (a.scalar_type() != b.scalar_type()) {
    a = a.to(at::kFloat);
    b = b.to(at::kFloat);
  }
  return {a, b};
}

}  // namespace

std::vector<std::shared_ptr<TensorData>> fold_onnx_only_op(const std::string& op,
                                                           const NodeAttrs& attrs,
                                                           const std::vector<std::shared_ptr<const TensorData>>& in,
                                                           const std::string& where) {
  c10::InferenceMode guard;
  at::Tensor out;
  try {
    if (op == "Gather") {
      at::Tensor data = arg(in, 0, where), indices = arg(in, 1, where);
      int64_t axis = normalize_axis(attrs.get_int("axis", 0), data.dim(), where);
      at::Tensor idx = indices.to(at::kLong);
      idx = at::where(idx < 0, idx + data.size(axis), idx);
      out = at::index_select(data, axis, idx.reshape({-1}));
      std::vector<int64_t> shape(data.sizes().begin(), data.sizes().begin() + axis);
      for (int64_t d : indices.sizes()) shape.push_back(d);
      shape.insert(shape.end(), data.sizes().begin() + axis + 1, data.sizes().end());
      out = out.reshape(shape);
    } else if (op == "ConstantOfShape") {
      std::vector<int64_t> shape = from_aten(arg(in, 0, where))->to_int_vector();
      at::Tensor value = at::zeros({1}, at::kFloat);
      if (const onnx::TensorProto* t = attrs.get_tensor("value")) value = to_aten(tensor_from_proto(*t, where)).reshape({1});
      out = value.expand(shape).contiguous();
    } else if (op == "Expand") {
      at::Tensor data = arg(in, 0, where);
      std::vector<int64_t> shape = from_aten(arg(in, 1, where))->to_int_vector();
      Shape target = broadcast_shapes(Shape(data.sizes().begin(), data.sizes().end()), shape, where + " Expand");
      out = data.expand(target).contiguous();
    } else if (op == "Where") {
      auto [x, y] = promoted(arg(in, 1, where), arg(in, 2, where));
      out = at::where(as_bool(arg(in, 0, where)), x, y);
    } else if (op == "Cast") {
      int64_t to = attrs.get_int("to", onnx::TensorProto::FLOAT);
      at::Tensor x = arg(in, 0, where);
      if (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE || to == onnx::TensorProto::FLOAT16)
        out = x.to(at::kFloat);
      else if (to == onnx::TensorProto::BOOL)
        out = from_bool(as_bool(x));
      else
        out = x.to(at::kLong);  // float -> int truncates toward zero, as ONNX does
    } else if (op == "Equal" || op == "Less" || op == "Greater") {
      auto [a, b] = promoted(arg(in, 0, where), arg(in, 1, where));
      out = from_bool(op == "Equal" ? a.eq(b) : op == "Less" ? a.lt(b) : a.gt(b));
    } else if (op == "Not") {
      out = from_bool(as_bool(arg(in, 0, where)).logical_not());
    } else if (op == "Neg") {
      out = arg(in, 0, where).neg();
    } else if (op == "Range") {
      at::Tensor s = arg(in, 0, where), l = arg(in, 1, where), d = arg(in, 2, where);
      if (s.scalar_type() == at::kLong)
        out = at::arange(s.item<int64_t>(), l.item<int64_t>(), d.item<int64_t>(), at::kLong);
      else
        out = at::arange(s.item<double>(), l.item<double>(), d.item<double>(), at::kFloat);
    } else if (op == "Slice") {
      // Only reached for constant data with a negative step.
      at::Tensor x = arg(in, 0, where);
      std::vector<int64_t> starts = from_aten(arg(in, 1, where))->to_int_vector();
      std::vector<int64_t> ends = from_aten(arg(in, 2, where))->to_int_vector();
      for (size_t i = 3; i < 5 && i < in.size(); ++i)
        if (in[i] && in[i]->numel() != static_cast<int64_t>(starts.size()))
          throw ImportError(where + ": Slice starts, ends, axes and steps differ in length");
      std::vector<int64_t> axes, steps;
      for (size_t k = 0; k < starts.size(); ++k) {
        axes.push_back(in.size() > 3 && in[3] ? in[3]->ints()[k] : static_cast<int64_t>(k));
        steps.push_back(in.size() > 4 && in[4] ? in[4]->ints()[k] : 1);
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t axis = normalize_axis(axes[k], x.dim(), where);
        int64_t dim = x.size(axis);
        if (steps[k] == 0) throw ImportError(where + ": Slice step 0");
        if (steps[k] > 0) {
          x = x.slice(axis, std::clamp(starts[k] < 0 ? starts[k] + dim : starts[k], int64_t{0}, dim),
                      std::clamp(ends[k] < 0 ? ends[k] + dim : ends[k], int64_t{0}, dim), steps[k]);
        } else {
          int64_t s = std::clamp(starts[k] < 0 ? starts[k] + dim : starts[k], int64_t{-1}, dim - 1);
          int64_t e = std::clamp(ends[k] < 0 ? ends[k] + dim : ends[k], int64_t{-1}, dim - 1);
          std::vector<int64_t> idx;
          for (int64_t i = s; i > e; i += steps[k]) idx.push_back(i);
          x = at::index_select(x, axis, at::tensor(idx, at::kLong));
        }
      }
      out = x;
    } else {
      throw ImportError(where + ": no constant folding for op type " + op);
    }
  } catch (const GraphError& e) {
    throw ImportError(where + ": " + e.what());
  } catch (const c10::Error& e) {
    throw ImportError(where + ": folding " + op + " failed: " + e.what_without_backtrace());
  }
  return {from_aten(out)};
}

}  // namespace graphworld
