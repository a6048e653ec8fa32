#include "env/ops/onednn_kernels.h"

#include <ATen/Context.h>

#include "env/ops/aten_kernels.h"

namespace graphworld {
namespace {

// Converts args[k] to the blocked layout (or, below, to plain), reusing the
// conversion a previous reader of the same value left in `other_layouts`.
at::Tensor& as_onednn(std::vector<at::Tensor>& args, size_t k, std::vector<at::Tensor>* other_layouts) {
  at::Tensor& t = args[k];
  if (t.is_mkldnn()) return t;
  at::Tensor* cached = other_layouts ? &(*other_layouts)[k] : nullptr;
  if (cached && cached->defined() && cached->is_mkldnn()) return t = *cached;
  t = t.contiguous().to_mkldnn();
  if (cached) *cached = t;
  return t;
}

void as_plain(std::vector<at::Tensor>& args, size_t k, std::vector<at::Tensor>* other_layouts) {
  at::Tensor& t = args[k];
  if (!t.defined() || !t.is_mkldnn()) return;
  at::Tensor* cached = other_layouts ? &(*other_layouts)[k] : nullptr;
  if (cached && cached->defined() && !cached->is_mkldnn()) {
    t = *cached;
    return;
  }
  t = t.to_dense();
  if (cached) *cached = t;
}

}  // namespace

bool onednn_available() { return at::hasMKLDNN() && at::globalContext().userEnabledMkldnn(); }

PreparedOp prepare_onednn(const Op& op, const std::vector<at::Tensor>& constant_inputs) {
  PreparedOp prepared;
  uint64_t constant_mask = 0;
  for (size_t k = 0; k < constant_inputs.size() && k < 64; ++k)
    if (constant_inputs[k].defined()) constant_mask |= uint64_t{1} << k;
  // The same decision the cost models make ahead of time (blocked_layout.h).
  if (!conv_runs_in_onednn(op, constant_mask)) return prepared;
  auto pads = op.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0});
  std::vector<int64_t> padding = {pads[0], pads[1]};
  prepared.packed_weight = at::mkldnn_reorder_conv2d_weight(
      constant_inputs[1].contiguous().to_mkldnn(), padding, op.attrs.get_ints(AttrKey::Strides, {1, 1}),
      op.attrs.get_ints(AttrKey::Dilations, {1, 1}), op.attrs.get_int(AttrKey::Group, 1));
  if (constant_inputs.size() > 2) prepared.bias = constant_inputs[2].contiguous().to_mkldnn();
  return prepared;
}

std::vector<at::Tensor> run_layout_aware(const Op& op, const PreparedOp& prepared, std::vector<at::Tensor>& args,
                                         bool first_input_dies, std::vector<at::Tensor>* other_layouts) {
  bool first_blocked = !args.empty() && args[0].is_mkldnn();
  // In place only on tensors this op owns outright (not views of graph inputs or weights).
  bool in_place = first_input_dies && first_blocked;
  switch (op.type) {
    case OpType::Conv:
      if (prepared.packed_weight.defined()) {
        auto pads = op.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0});
        c10::optional<at::Tensor> bias;
        if (prepared.bias.defined()) bias = prepared.bias;
        at::Tensor out = at::mkldnn_convolution(as_onednn(args, 0, other_layouts), prepared.packed_weight, bias, {pads[0], pads[1]},
                                                op.attrs.get_ints(AttrKey::Strides, {1, 1}),
                                                op.attrs.get_ints(AttrKey::Dilations, {1, 1}),
                                                op.attrs.get_int(AttrKey::Group, 1));
        return {apply_activation(out, op)};
      }
      break;
    case OpType::Relu:
      if (first_blocked) return {in_place ? args[0].relu_() : at::relu(args[0])};
      break;
    case OpType::Sigmoid:
      if (first_blocked) return {in_place ? args[0].sigmoid_() : at::sigmoid(args[0])};
      break;
    case OpType::Tanh:
      if (first_blocked) return {in_place ? args[0].tanh_() : at::tanh(args[0])};
      break;
    case OpType::Add:
    case OpType::Mul:
      // oneDNN's add/mul do not broadcast.
      if ((args[0].is_mkldnn() || args[1].is_mkldnn()) && args[0].sizes() == args[1].sizes()) {
        as_onednn(args, 0, other_layouts);
        as_onednn(args, 1, other_layouts);
        return {op.type == OpType::Add ? at::add(args[0], args[1]) : at::mul(args[0], args[1])};
      }
      break;
    case OpType::BatchNorm:
      if (first_blocked)
        return {at::batch_norm(args[0], args[1], args[2], args[3], args[4], false, 0.0,
                               op.attrs.get_float(AttrKey::Epsilon, 1e-5), false)};
      break;
    case OpType::MaxPool:
    case OpType::AvgPool:
      if (first_blocked && pool_runs_in_onednn(op)) {
        auto kernel = op.attrs.require_ints(AttrKey::KernelShape);
        auto strides = op.attrs.get_ints(AttrKey::Strides, {1, 1});
        auto pads = op.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0});
        bool ceil_mode = op.attrs.get_int(AttrKey::CeilMode, 0);
        if (op.type == OpType::MaxPool) return {at::max_pool2d(args[0], kernel, strides, {pads[0], pads[1]}, {1, 1}, ceil_mode)};
        return {at::avg_pool2d(args[0], kernel, strides, {pads[0], pads[1]}, ceil_mode,
                               op.attrs.get_int(AttrKey::CountIncludePad, 0) != 0)};
      }
      break;
    case OpType::GlobalAvgPool:
      if (first_blocked && args[0].dim() == 4) return {at::adaptive_avg_pool2d(args[0], {1, 1})};
      break;
    default:
      break;
  }
  for (size_t k = 0; k < args.size(); ++k) as_plain(args, k, other_layouts);
  return run_aten_op(op, args);
}

}  // namespace graphworld
