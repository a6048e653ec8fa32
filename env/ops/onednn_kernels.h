// Fast CPU execution in oneDNN's blocked layout (ATen's "mkldnn" tensors).
//
// The reference kernels (aten_kernels.h) take plain NCHW tensors; for a
// convolution, ATen then reorders the input, the weights and the output on
// every call, which costs more than the convolution on small batches. Here
// conv weights are reordered once, when the executor is built, and
// activations stay in the blocked layout through the ops oneDNN supports
// (conv, batch norm, pools, relu/sigmoid/tanh, same-shape add/mul). Any other
// op gets plain tensors. Values are identical up to float rounding.
#pragma once

#include <ATen/ATen.h>

#include <vector>

#include "env/graph/graph.h"
#include "env/ops/blocked_layout.h"  // onednn_available; the same decisions ahead of time

namespace graphworld {

struct PreparedOp {
  at::Tensor packed_weight;  // defined: run the conv with oneDNN
  at::Tensor bias;
};

// Prepares `op` given its inputs' values where they are constants (undefined
// tensors otherwise). Only convolutions with constant weights and symmetric
// padding are prepared; everything else runs as before.
PreparedOp prepare_onednn(const Op& op, const std::vector<at::Tensor>& constant_inputs);

// Runs `op`, keeping or converting layouts as described above; the layout of
// the output follows from the op and its inputs' layouts alone
// (blocked_layout.h). May replace entries of `args` with converted tensors.
// `first_input_dies`: nothing reads args[0] after this op, so unary
// activations may overwrite it instead of allocating.
// `other_layouts` (optional, one entry per arg): a conversion of each input
// that an earlier reader made, used instead of converting again, and filled
// in with the conversions made here, for later readers.
std::vector<at::Tensor> run_layout_aware(const Op& op, const PreparedOp& prepared, std::vector<at::Tensor>& args,
                                         bool first_input_dies = false,
                                         std::vector<at::Tensor>* other_layouts = nullptr);

}  // namespace graphworld
