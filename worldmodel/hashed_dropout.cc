#include "worldmodel/hashed_dropout.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstdint>
#include <mutex>

namespace graphworld {
namespace {

// SplitMix64's finaliser: consecutive counters give independent-looking
// 64-bit values, two 32-bit draws each.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

uint64_t draw_dropout_seed() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return at::check_generator<at::CPUGeneratorImpl>(generator)->random64();
}

bool hashed_dropout_hashes(const torch::Tensor& x, double p, bool training) {
  return training && p > 0 && p < 1 && x.device().is_cpu() && x.scalar_type() == torch::kFloat;
}

torch::Tensor hashed_dropout_with_seed(const torch::Tensor& x, double p, uint64_t seed) {
  const uint64_t threshold = static_cast<uint64_t>(std::ldexp(p, 32));  // keep when a 32-bit draw >= this
  const float kept = static_cast<float>(1.0 / (1.0 - p));
  torch::Tensor mask = torch::empty(x.sizes(), x.options().requires_grad(false));
  float* m = mask.data_ptr<float>();
  const int64_t n = mask.numel();
  const uint64_t base = mix(seed);
  for (int64_t i = 0; i < n; i += 2) {
    const uint64_t draw = mix(base + static_cast<uint64_t>(i / 2) * 0x9e3779b97f4a7c15ULL);
    m[i] = (draw & 0xffffffffULL) >= threshold ? kept : 0.0f;
    if (i + 1 < n) m[i + 1] = (draw >> 32) >= threshold ? kept : 0.0f;
  }
  return x * mask;
}

torch::Tensor hashed_dropout(const torch::Tensor& x, double p, bool training) {
  if (!training || p == 0) return x;
  if (!hashed_dropout_hashes(x, p, training)) return torch::dropout(x, p, training);
  return hashed_dropout_with_seed(x, p, draw_dropout_seed());
}

}  // namespace graphworld
