// CudaGraphWork where this build's LibTorch has no CUDA (Debian's): there is
// nothing to capture on (cuda_graph_work_cuda.cc is the real one).
#include "common/error.h"
#include "learner/cuda_graph_work.h"

namespace graphworld {

struct CudaGraphWork::Impl {};

bool CudaGraphWork::available() { return false; }

std::string CudaGraphWork::unavailable_reason() {
  return "CUDA graphs need a LibTorch built with CUDA, and this build's has none; build against a CUDA "
         "PyTorch's LibTorch (cmake -DCMAKE_PREFIX_PATH=$(python3 -c 'import torch; "
         "print(torch.utils.cmake_prefix_path)'), as tests/bench/gpu_learner_rows does)";
}

CudaGraphWork::CudaGraphWork(int32_t, const std::function<void()>&, const std::string& what, int32_t) {
  throw UsageError(what + " cannot be captured: " + unavailable_reason());
}

CudaGraphWork::~CudaGraphWork() = default;

void CudaGraphWork::replay() { throw UsageError(unavailable_reason()); }

}  // namespace graphworld
