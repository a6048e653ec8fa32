// Random draws that stay on the device their tensors live on. A dream step
// on a GPU must not wait for the host: a draw made with a CPU generator, or
// torch::multinomial's checks, copy to the host and back every step. Both
// helpers here are fixed-shape tensor operations with the device's own
// generator, so a step issues kernels and never reads a value back.
//
// On the CPU the draws are the CPU generator's, so a seed gives the same
// dream on every CPU run; a GPU's generator gives other (equally seeded,
// equally repeatable) draws.
//
// Included only by worldmodel/ .cc files and tests.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace graphworld {

// A new generator for `device`, seeded with `seed`, independent of the
// device's default generator (which it copies the kind of, not the state).
torch::Generator seeded_generator(const torch::Device& device, uint64_t seed);

// The device's default generator itself, reseeded with `seed` (for the whole
// process): the one a CUDA graph advances between replays (dream_step_graph.h).
torch::Generator seeded_default_generator(const torch::Device& device, uint64_t seed);

// One index per row of `probabilities` [B, K] (non-negative, each row with
// a positive entry; rows need not sum to 1), drawn by inverse CDF from one
// uniform per row: [B] int64, on the same device. An entry of probability
// 0 is never drawn (a masked action stays masked).
torch::Tensor sample_categorical(const torch::Tensor& probabilities, torch::Generator& generator);

}  // namespace graphworld
