// Where a learner's tensors live: "cpu", or "cuda" ("cuda:N" for one GPU
// of several). CUDA needs a CUDA-enabled LibTorch and a visible GPU;
// Debian's LibTorch is CPU-only. Without them a run asking for cuda trains
// on the CPU and says so, rather than failing hours into a queue.
#pragma once

#include <string>

namespace graphworld {

struct ResolvedDevice {
  std::string device = "cpu";  // what tensors use: "cpu" or "cuda:N"
  std::string note;            // why it differs from the request; empty if it does not
};

// UsageError for a name that is neither (naming `key`).
ResolvedDevice resolve_compute_device(const std::string& requested, const std::string& key = "train.device");

// True if this LibTorch was built with CUDA and sees at least one GPU.
bool cuda_available();

}  // namespace graphworld
