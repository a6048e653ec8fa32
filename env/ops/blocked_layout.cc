#include "env/ops/blocked_layout.h"

namespace graphworld {
namespace {

bool bit(uint64_t mask, size_t k) { return k < 64 && ((mask >> k) & 1u) != 0; }

}  // namespace

bool symmetric_pads(const std::vector<int64_t>& pads) { return pads[0] == pads[2] && pads[1] == pads[3]; }

bool pool_pads_supported(const std::vector<int64_t>& pads, const std::vector<int64_t>& kernel) {
  return symmetric_pads(pads) && pads[0] * 2 <= kernel[0] && pads[1] * 2 <= kernel[1];
}

bool pool_runs_in_onednn(const Op& pool) {
  return pool_pads_supported(pool.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0}), pool.attrs.get_ints(AttrKey::KernelShape, {1, 1})) &&
         pool.attrs.get_ints(AttrKey::Dilations, {1, 1}) == std::vector<int64_t>{1, 1};
}

bool conv_runs_in_onednn(const Op& conv, uint64_t constant_inputs) {
  if (conv.type != OpType::Conv || !onednn_available() || conv.inputs.size() < 2) return false;
  // oneDNN tensors take relu, sigmoid and tanh in place, not the piecewise-linear ones.
  auto act = static_cast<Activation>(conv.attrs.get_int(AttrKey::Activation, 0));
  if (act == Activation::HardSigmoid || act == Activation::HardSwish || act == Activation::LeakyRelu) return false;
  if (!symmetric_pads(conv.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0})) || !bit(constant_inputs, 1)) return false;
  return conv.inputs.size() < 3 || bit(constant_inputs, 2);
}

bool output_is_blocked(const Graph& graph, const Op& op, uint64_t constant_inputs, uint64_t blocked_inputs) {
  bool first_blocked = !op.inputs.empty() && bit(blocked_inputs, 0);
  switch (op.type) {
    case OpType::Conv:
      return conv_runs_in_onednn(op, constant_inputs);
    case OpType::Relu:
    case OpType::Sigmoid:
    case OpType::Tanh:
    case OpType::BatchNorm:
      return first_blocked;
    case OpType::Add:
    case OpType::Mul:
      return op.inputs.size() == 2 && (first_blocked || bit(blocked_inputs, 1)) &&
             graph.info(op.inputs[0]).shape == graph.info(op.inputs[1]).shape;
    case OpType::MaxPool:
    case OpType::AvgPool:
      return first_blocked && pool_runs_in_onednn(op);
    case OpType::GlobalAvgPool:
      return first_blocked && graph.info(op.inputs[0]).rank() == 4;
    default:
      return false;
  }
}

uint64_t blocked_input_mask(const Op& op, const std::vector<uint8_t>& blocked) {
  uint64_t mask = 0;
  for (size_t k = 0; k < op.inputs.size() && k < 64; ++k)
    if (blocked[static_cast<size_t>(op.inputs[k].op)]) mask |= uint64_t{1} << k;
  return mask;
}

}  // namespace graphworld
