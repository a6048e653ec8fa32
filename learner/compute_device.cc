#include "learner/compute_device.h"

#include <torch/torch.h>

#include <regex>

#include "common/error.h"

namespace graphworld {

bool cuda_available() { return torch::cuda::is_available(); }

ResolvedDevice resolve_compute_device(const std::string& requested, const std::string& key, int32_t rank) {
  ResolvedDevice r;
  if (requested == "cpu") return r;
  std::smatch m;
  if (!std::regex_match(requested, m, std::regex(R"(^cuda(?::(\d{1,2}))?$)")))
    throw UsageError(key + " must be cpu, cuda or cuda:N, got '" + requested + "'");
  if (!cuda_available()) {
    r.note = key + " is " + requested + ", but this graphworld's LibTorch " +
             (torch::cuda::device_count() == 0 && !at::hasCUDA() ? std::string("was built without CUDA")
                                                                 : std::string("sees no GPU")) +
             ": training on the CPU (build against a CUDA LibTorch on a GPU machine, see docs/architecture.md, to use one)";
    return r;
  }
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  const int64_t index = m[1].matched ? std::stoll(m[1].str()) : std::max<int32_t>(rank, 0) % std::max<int64_t>(count, 1);
  if (index >= count)
    throw UsageError(key + " is " + requested + " but this machine has " + std::to_string(count) +
                     " GPU(s) (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
  r.device = "cuda:" + std::to_string(index);
  return r;
}

}  // namespace graphworld
