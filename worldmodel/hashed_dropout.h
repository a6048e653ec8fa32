// Dropout for the MDN-RNN's training on the CPU, with its mask drawn by a
// counter-based hash rather than LibTorch's bernoulli_.
//
// Why: torch::dropout on the CPU draws every element from the default
// generator's Mersenne Twister under its lock; on a world model's batches
// (a few hundred rows of 256) the two dropouts took about 1.2 ms of a
// 16 ms Adam step, more than the heads' forward pass. Here one 64-bit seed
// is drawn from the default generator per call (so torch::manual_seed still
// decides every mask) and element i is kept when a 32-bit hash of
// (seed, i) is at least p * 2^32.
//
// Elsewhere (a GPU, other dtypes) it is torch::dropout.
//
// Included only by worldmodel/ .cc files and tests.
#pragma once

#include <torch/torch.h>

namespace graphworld {

// x with each element zeroed with probability p and the rest scaled by
// 1 / (1 - p) when `training`; x itself otherwise or when p is 0.
// Gradients pass through the same mask.
torch::Tensor hashed_dropout(const torch::Tensor& x, double p, bool training);

}  // namespace graphworld
