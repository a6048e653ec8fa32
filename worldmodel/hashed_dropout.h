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

// True where hashed_dropout(x, p, training) draws a seed and hashes its
// mask (training, 0 < p < 1, a float tensor on the CPU).
bool hashed_dropout_hashes(const torch::Tensor& x, double p, bool training);

// The two halves of a hashed_dropout call that hashes, for callers that
// draw their seeds on one thread, in a fixed order, and apply the masks on
// others (mdn_rnn.h, MdnRnnImpl::train_step): hashed_dropout is
// hashed_dropout_with_seed(x, p, draw_dropout_seed()).
uint64_t draw_dropout_seed();
torch::Tensor hashed_dropout_with_seed(const torch::Tensor& x, double p, uint64_t seed);

}  // namespace graphworld
