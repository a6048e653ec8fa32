// PPO's clipped objective (Schulman et al., 2017) for one minibatch, with
// the diagnostics a run reports per update. Internal to learner/ (it takes
// tensors): the trainer calls it with the network's fresh log-probabilities,
// values and entropies of the minibatch's stored actions.
//
//   r        = exp(log_prob - old_log_prob)
//   policy   = -mean(min(r * A, clip(r, 1 - clip, 1 + clip) * A))
//   value    = 0.5 * mean((V - R)^2)
//   entropy  = mean(H)
//   total    = policy + value_coef * value - entropy_coef * entropy
//   approx_kl     = mean((r - 1) - log r)   (non-negative, unbiased for KL(old || new))
//   clip_fraction = mean(|r - 1| > clip)
#pragma once

#include <torch/torch.h>

namespace graphworld {

struct PpoCoefficients {
  double clip = 0.2;
  double value_coef = 0.5;
  double entropy_coef = 0.01;
};

struct PpoLoss {
  torch::Tensor total;  // what backward() is called on
  double policy = 0, value = 0, entropy = 0, approx_kl = 0, clip_fraction = 0;
};

PpoLoss ppo_loss(const torch::Tensor& log_prob, const torch::Tensor& old_log_prob, const torch::Tensor& advantages,
                 const torch::Tensor& values, const torch::Tensor& returns, const torch::Tensor& entropy,
                 const PpoCoefficients& coefficients);

// The same objective with a weight per sample in place of each mean
// (mean(x) becomes sum(weight * x)), and nothing read back to the host, for
// a step captured in a CUDA graph: weights of 1 / count give ppo_loss's
// figures, and a weight of 0 leaves a padded sample out.
struct WeightedPpoLoss {
  torch::Tensor total;  // what backward() is called on
  torch::Tensor figures;  // [5]: policy, value, entropy, approx_kl, clip_fraction (no gradient)
};
WeightedPpoLoss weighted_ppo_loss(const torch::Tensor& log_prob, const torch::Tensor& old_log_prob,
                                  const torch::Tensor& advantages, const torch::Tensor& values,
                                  const torch::Tensor& returns, const torch::Tensor& entropy,
                                  const torch::Tensor& weights, const PpoCoefficients& coefficients);
// The figures of a WeightedPpoLoss, read back (total left undefined).
PpoLoss read_figures(const torch::Tensor& figures);

}  // namespace graphworld
