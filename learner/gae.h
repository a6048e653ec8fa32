// Generalised advantage estimation (Schulman et al., 2016), on plain arrays.
//
// For one actor's segment of T steps (episodes may end inside it):
//   delta[t] = r[t] + gamma * (1 - done[t]) * V[t+1] - V[t]
//   A[t]     = delta[t] + gamma * lambda * (1 - done[t]) * A[t+1]
//   R[t]     = A[t] + V[t]                      (the value target)
// where done[t] says the episode ended with step t, and V[T] is
// `bootstrap_value`, the value of the state after the segment's last step
// (ignored when that step ended an episode).
#pragma once

#include <cstdint>
#include <vector>

namespace graphworld {

struct GaeResult {
  std::vector<float> advantages;
  std::vector<float> returns;
};

// Throws UsageError when the lengths differ or gamma/lambda are outside [0, 1].
GaeResult compute_gae(const std::vector<float>& rewards, const std::vector<float>& values,
                      const std::vector<uint8_t>& dones, float bootstrap_value, float gamma, float lambda);

// (x - mean) / (std + eps), in place; a batch of one is left at 0.
void normalize_advantages(std::vector<float>& advantages, float eps = 1e-8f);

}  // namespace graphworld
