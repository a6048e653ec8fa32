// The mixture-density maths of the MDN-RNN (Ha and Schmidhuber's World
// Models): the next latent z_{t+1} is modelled as a mixture of K diagonal
// Gaussians, one mixture per batch row.
//
// A mixture is given by unnormalised log weights (logits) [B, K], means
// [B, K, D] and log standard deviations [B, K, D]. Temperature tau shapes
// sampling: weights softmax(logits / tau) and deviations sigma * sqrt(tau),
// so tau -> 0 returns the mean of the most likely component and tau > 1
// makes dreams wilder than the data (the controller trained in them is
// harder to fool).
//
// Included only by worldmodel/ .cc files and tests: <torch/torch.h> is slow
// to compile and stays out of widely included headers.
#pragma once

#include <torch/torch.h>

namespace graphworld {

struct GaussianMixture {
  torch::Tensor logits;     // [B, K]
  torch::Tensor means;      // [B, K, D]
  torch::Tensor log_sigma;  // [B, K, D]
};

// Negative log-likelihood of `target` [B, D] under each row's mixture: [B].
// Computed with log-sum-exp over components, so it stays finite however
// small a component's weight or deviation.
torch::Tensor mixture_nll(const GaussianMixture& mixture, const torch::Tensor& target);

// One sample per row, [B, D], at temperature `tau` (values below 1e-6 are
// taken as 1e-6, where the sample is the most likely component's mean to
// within a thousandth of its deviation). Deterministic given `generator`,
// which must be a generator of the mixture's device (seeded_generator in
// device_random.h): the draws stay there.
torch::Tensor sample_mixture(const GaussianMixture& mixture, double tau, torch::Generator generator);

}  // namespace graphworld
