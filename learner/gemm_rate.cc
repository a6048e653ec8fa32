#include "learner/gemm_rate.h"

#include <torch/torch.h>

#include "common/latency.h"
#include "learner/compute_threads.h"

namespace graphworld {

double measure_gemm_gflops(const std::string& device, int threads) {
  const torch::Device where(device);
  // Large enough that launch and transfer times vanish beside the product.
  const int64_t n = where.is_cuda() ? 8192 : 1024;
  ComputeThreads scope(threads);
  torch::NoGradGuard no_grad;
  const torch::Tensor a = torch::randn({n, n}, torch::TensorOptions(where));
  const torch::Tensor b = torch::randn({n, n}, torch::TensorOptions(where));
  torch::Tensor c = torch::empty({n, n}, torch::TensorOptions(where));
  // Reading one element back waits for a GPU's queue to drain.
  const LatencyStats t = measure_latency([&] { torch::mm_out(c, a, b)[0][0].item<float>(); }, 2, 9);
  return 2.0 * n * n * n / (t.median_ms * 1e6);
}

}  // namespace graphworld
