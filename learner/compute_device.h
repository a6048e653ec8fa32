// Where a learner's tensors live: "cpu", or "cuda" ("cuda:N" for one GPU
// of several). CUDA needs a CUDA-enabled LibTorch and a visible GPU;
// Debian's LibTorch is CPU-only. Without them a run asking for cuda trains
// on the CPU and says so, rather than failing hours into a queue.
#pragma once

#include <cstdint>
#include <string>

namespace graphworld {

struct ResolvedDevice {
  std::string device = "cpu";  // what tensors use: "cpu" or "cuda:N"
  std::string note;            // why it differs from the request; empty if it does not
};

// UsageError for a name that is neither (naming `key`). A plain "cuda"
// gives data-parallel rank R the GPU R modulo the GPUs it sees (under
// srun --gpus-per-task=1 each rank sees one: cuda:0).
ResolvedDevice resolve_compute_device(const std::string& requested, const std::string& key = "train.device",
                                      int32_t rank = 0);

// True if this LibTorch was built with CUDA and sees at least one GPU.
bool cuda_available();

}  // namespace graphworld
