#include "worldmodel/device_random.h"

#include <mutex>

namespace graphworld {

torch::Generator seeded_generator(const torch::Device& device, uint64_t seed) {
  // Copied, not shared: the default generator's state belongs to whatever
  // else draws in the process.
  at::Generator base = at::globalContext().defaultGenerator(device);
  torch::Generator generator;
  {
    std::lock_guard<std::mutex> lock(base.mutex());
    generator = base.clone();
  }
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

torch::Generator seeded_default_generator(const torch::Device& device, uint64_t seed) {
  torch::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

torch::Tensor sample_categorical(const torch::Tensor& probabilities, torch::Generator& generator) {
  const int64_t k = probabilities.size(1);
  const torch::Tensor cdf = probabilities.cumsum(1);  // [B, K], non-decreasing
  // u in [0, total): a uniform below 1 - 2^-24 times 1 - 2^-23 rounds to a
  // float at least one unit in the last place below the total, so u never
  // reaches it, and the total is a row's last CDF value.
  constexpr double kBelowOne = 1.0 - 1.0 / (1 << 23);
  const torch::Tensor u =
      torch::rand({probabilities.size(0), 1}, generator, torch::TensorOptions(probabilities.device()).dtype(cdf.dtype())) *
      kBelowOne * cdf.narrow(1, k - 1, 1);
  // The first index whose CDF passes u, by binary search (log K per row):
  // an entry of probability 0 has the CDF of the one before it, so it is
  // never the first to pass. The clamp only matters for a row of zeros.
  return torch::searchsorted(cdf, u, /*out_int32=*/false, /*right=*/true).squeeze(1).clamp_max(k - 1);
}

}  // namespace graphworld
