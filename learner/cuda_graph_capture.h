// How graphworld's CUDA graphs begin a capture, shared by the PPO step's
// (cuda_graph_work_cuda.cc) and the dream step's
// (worldmodel/dream_step_graph_cuda.cc). Included only by those CUDA files.
#pragma once

#include <ATen/cuda/CUDAGraph.h>
#include <torch/version.h>

namespace graphworld {

// Captures in thread-local mode where LibTorch offers it (2.1 on): only
// this thread's unsafe CUDA calls (a cudaMalloc, a synchronisation) break
// the capture, not those of another thread of the process that happens to
// use the GPU meanwhile. Older LibTorch captures in global mode.
inline void begin_thread_local_capture(at::cuda::CUDAGraph& graph) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
  graph.capture_begin();
#endif
}

}  // namespace graphworld
