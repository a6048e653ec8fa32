#include "learner/ppo_loss.h"

namespace graphworld {

PpoLoss ppo_loss(const torch::Tensor& log_prob, const torch::Tensor& old_log_prob, const torch::Tensor& advantages,
                 const torch::Tensor& values, const torch::Tensor& returns, const torch::Tensor& entropy,
                 const PpoCoefficients& c) {
  // Equal 1-D shapes: a [B, 1] against a [B] would broadcast to [B, B] silently.
  for (const torch::Tensor* t : {&old_log_prob, &advantages, &values, &returns, &entropy})
    TORCH_CHECK(t->dim() == 1 && log_prob.dim() == 1 && t->size(0) == log_prob.size(0),
                "ppo_loss: every input must be a 1-D tensor of the minibatch's size");
  const torch::Tensor log_ratio = log_prob - old_log_prob;
  const torch::Tensor ratio = log_ratio.exp();
  const torch::Tensor unclipped = ratio * advantages;
  const torch::Tensor clipped = ratio.clamp(1.0 - c.clip, 1.0 + c.clip) * advantages;
  const torch::Tensor policy = -torch::min(unclipped, clipped).mean();
  const torch::Tensor value = 0.5 * (values - returns).pow(2).mean();
  const torch::Tensor mean_entropy = entropy.mean();
  PpoLoss out;
  out.total = policy + c.value_coef * value - c.entropy_coef * mean_entropy;
  out.policy = policy.item<double>();
  out.value = value.item<double>();
  out.entropy = mean_entropy.item<double>();
  {
    torch::NoGradGuard no_grad;
    out.approx_kl = ((ratio - 1) - log_ratio).mean().item<double>();
    out.clip_fraction = ((ratio - 1).abs() > c.clip).to(torch::kFloat32).mean().item<double>();
  }
  return out;
}

WeightedPpoLoss weighted_ppo_loss(const torch::Tensor& log_prob, const torch::Tensor& old_log_prob,
                                  const torch::Tensor& advantages, const torch::Tensor& values,
                                  const torch::Tensor& returns, const torch::Tensor& entropy,
                                  const torch::Tensor& weights, const PpoCoefficients& c) {
  for (const torch::Tensor* t : {&old_log_prob, &advantages, &values, &returns, &entropy, &weights})
    TORCH_CHECK(t->dim() == 1 && log_prob.dim() == 1 && t->size(0) == log_prob.size(0),
                "weighted_ppo_loss: every input must be a 1-D tensor of the minibatch's size");
  const torch::Tensor log_ratio = log_prob - old_log_prob;
  const torch::Tensor ratio = log_ratio.exp();
  const torch::Tensor unclipped = ratio * advantages;
  const torch::Tensor clipped = ratio.clamp(1.0 - c.clip, 1.0 + c.clip) * advantages;
  const torch::Tensor policy = -(weights * torch::min(unclipped, clipped)).sum();
  const torch::Tensor value = 0.5 * (weights * (values - returns).pow(2)).sum();
  const torch::Tensor mean_entropy = (weights * entropy).sum();
  WeightedPpoLoss out;
  out.total = policy + c.value_coef * value - c.entropy_coef * mean_entropy;
  torch::NoGradGuard no_grad;
  const torch::Tensor approx_kl = (weights * ((ratio - 1) - log_ratio)).sum();
  const torch::Tensor clip_fraction = (weights * ((ratio - 1).abs() > c.clip).to(weights.scalar_type())).sum();
  out.figures = torch::stack({policy.detach(), value.detach(), mean_entropy.detach(), approx_kl, clip_fraction});
  return out;
}

PpoLoss read_figures(const torch::Tensor& figures) {
  const torch::Tensor host = figures.to(torch::kCPU, torch::kFloat64).contiguous();
  TORCH_CHECK(host.numel() == 5, "read_figures: five figures expected");
  const double* f = host.data_ptr<double>();
  PpoLoss out;
  out.policy = f[0];
  out.value = f[1];
  out.entropy = f[2];
  out.approx_kl = f[3];
  out.clip_fraction = f[4];
  return out;
}

}  // namespace graphworld
