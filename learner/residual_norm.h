// LayerNorm(x + update) over the last dimension, with its gradients, in one
// pass per row: a node update's residual and normalisation. ATen's
// layer_norm on rows 32 wide took longer than the products around it on a
// CPU; this one reads each row once forward and twice backward. Float CPU
// tensors take this kernel; anything else (or under AtenRowOps) ATen's
// operators. Internal to learner/ (it takes tensors).
#pragma once

#include <torch/torch.h>

namespace graphworld {

// x, update [rows, width]; weight, bias [width]; as
// torch::layer_norm(x + update, {width}, weight, bias, eps).
torch::Tensor residual_layer_norm(const torch::Tensor& x, const torch::Tensor& update, const torch::Tensor& weight,
                                  const torch::Tensor& bias, double eps);

}  // namespace graphworld
