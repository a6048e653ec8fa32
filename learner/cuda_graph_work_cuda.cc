// CudaGraphWork with LibTorch's CUDA graphs (at::cuda::CUDAGraph). Built
// where LibTorch has CUDA; where only the CUDA toolkit exists it is still
// compiled, not linked, so that the code is checked (learner/CMakeLists.txt).
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <exception>
#include <string>

#include "common/error.h"
#include "learner/cuda_graph_work.h"
#include "learner/cuda_graph_capture.h"

namespace graphworld {

struct CudaGraphWork::Impl {
  int32_t device = 0;
  at::cuda::CUDAGraph graph;
};

bool CudaGraphWork::available() { return true; }

std::string CudaGraphWork::unavailable_reason() { return ""; }

CudaGraphWork::CudaGraphWork(int32_t device_index, const std::function<void()>& work, const std::string& what,
                             int32_t warmup_runs) {
  if (device_index < 0) throw UsageError(what + " is captured in a CUDA graph only on a GPU");
  const c10::cuda::CUDAGuard on_device(static_cast<c10::DeviceIndex>(device_index));
  impl_ = std::make_unique<Impl>();  // (a CUDAGraph asks for the current stream: after the guard)
  impl_->device = device_index;
  // Whatever the current stream queued (the inputs' copies) comes first:
  // the side stream below does not wait for it otherwise.
  c10::cuda::device_synchronize();
  c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(device_index));
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    for (int32_t i = 0; i < warmup_runs; ++i) work();
    side.synchronize();
    begin_thread_local_capture(impl_->graph);
    try {
      work();
      impl_->graph.capture_end();
    } catch (const std::exception& e) {
      try {
        impl_->graph.capture_end();
      } catch (const std::exception&) {
        // The capture was already invalid; the first error says why.
      }
      throw UsageError(what + " could not be captured in a CUDA graph (it must only issue device work: no value "
                              "read back, no data-dependent shape); this process may not use the GPU reliably "
                              "after a failed capture, so start again without CUDA graphs: " +
                       std::string(e.what()));
    }
  }
  c10::cuda::device_synchronize();
}

CudaGraphWork::~CudaGraphWork() {
  if (!impl_) return;
  const c10::cuda::CUDAGuard on_device(static_cast<c10::DeviceIndex>(impl_->device));
  impl_.reset();
  // A graph's private memory pool is only marked free when the graph goes;
  // it returns to the device here, so a graph made again in its place
  // (a larger capacity) does not hold both.
  c10::cuda::CUDACachingAllocator::emptyCache();
}

void CudaGraphWork::replay() {
  const c10::cuda::CUDAGuard on_device(static_cast<c10::DeviceIndex>(impl_->device));
  impl_->graph.replay();
}

}  // namespace graphworld
