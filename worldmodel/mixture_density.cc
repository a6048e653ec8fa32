#include "worldmodel/mixture_density.h"

#include <algorithm>
#include <cmath>

#include "worldmodel/device_random.h"

namespace graphworld {

torch::Tensor mixture_nll(const GaussianMixture& m, const torch::Tensor& target) {
  // log N(x | mu, sigma) per component, summed over dimensions:
  // -0.5 ((x - mu) / sigma)^2 - log sigma - 0.5 log(2 pi).
  const torch::Tensor x = target.unsqueeze(1);  // [B, 1, D]
  const torch::Tensor z = (x - m.means) * torch::exp(-m.log_sigma);
  const double half_log_two_pi = 0.5 * std::log(2.0 * M_PI);
  const torch::Tensor log_density = (-0.5 * z * z - m.log_sigma - half_log_two_pi).sum(-1);  // [B, K]
  const torch::Tensor log_weights = torch::log_softmax(m.logits, -1);
  return -torch::logsumexp(log_weights + log_density, -1);
}

torch::Tensor sample_mixture(const GaussianMixture& m, double tau, torch::Generator generator) {
  tau = std::max(tau, 1e-6);
  // Drawn where the mixture lives, with `generator` (a generator of that
  // device, device_random.h): nothing is read back to the host.
  const torch::Tensor component = sample_categorical(torch::softmax(m.logits / tau, -1), generator);  // [B]
  const int64_t d = m.means.size(2);
  const torch::Tensor pick = component.view({-1, 1, 1}).expand({-1, 1, d});  // [B, 1, D]
  const torch::Tensor mean = m.means.gather(1, pick).squeeze(1);               // [B, D]
  const torch::Tensor sigma = torch::exp(m.log_sigma.gather(1, pick).squeeze(1)) * std::sqrt(tau);
  const torch::Tensor noise = at::normal(0.0, 1.0, mean.sizes(), generator, mean.options());
  return mean + sigma * noise;
}

}  // namespace graphworld
