#include "learner/gae.h"

#include <cmath>
#include <string>

#include "common/error.h"

namespace graphworld {

GaeResult compute_gae(const std::vector<float>& rewards, const std::vector<float>& values,
                      const std::vector<uint8_t>& dones, float bootstrap_value, float gamma, float lambda) {
  const size_t T = rewards.size();
  if (values.size() != T || dones.size() != T)
    throw UsageError("GAE needs one value and one done flag per reward: " + std::to_string(T) + " rewards, " +
                     std::to_string(values.size()) + " values, " + std::to_string(dones.size()) + " dones");
  if (!(gamma >= 0 && gamma <= 1) || !(lambda >= 0 && lambda <= 1))
    throw UsageError("GAE: gamma and lambda must be in [0, 1]");
  GaeResult out;
  out.advantages.assign(T, 0.0f);
  out.returns.assign(T, 0.0f);
  // Accumulate in double: long segments of small rewards lose bits in float.
  double next_advantage = 0, next_value = bootstrap_value;
  for (size_t k = T; k-- > 0;) {
    const double live = dones[k] ? 0.0 : 1.0;
    const double delta = rewards[k] + gamma * live * next_value - values[k];
    const double advantage = delta + gamma * lambda * live * next_advantage;
    out.advantages[k] = static_cast<float>(advantage);
    out.returns[k] = static_cast<float>(advantage + values[k]);
    next_advantage = advantage;
    next_value = values[k];
  }
  return out;
}

void normalize_advantages(std::vector<float>& advantages, float eps) {
  if (advantages.empty()) return;
  double mean = 0;
  for (float a : advantages) mean += a;
  mean /= static_cast<double>(advantages.size());
  double var = 0;
  for (float a : advantages) var += (a - mean) * (a - mean);
  const double std = advantages.size() > 1 ? std::sqrt(var / static_cast<double>(advantages.size())) : 0.0;
  for (float& a : advantages) a = static_cast<float>((a - mean) / (std + eps));
}

}  // namespace graphworld
