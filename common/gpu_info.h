// What GPU support this build has and what the machine offers.
//
// The header is free of CUDA types so any target can include it; the CUDA
// implementation (gpu_info_cuda.cu) is compiled only when the toolkit is found
// (GRAPHWORLD_CUDA), otherwise gpu_info_none.cc reports "not built".
#pragma once

#include <string>
#include <vector>

namespace graphworld {

struct GpuDevice {
  int index = 0;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  double memory_gib = 0;
};

struct GpuInfo {
  bool cuda_built = false;      // this binary has CUDA/cuDNN/cuBLAS/NCCL paths
  std::string runtime_error;    // why devices could not be listed, if so
  int cuda_runtime_version = 0; // e.g. 13000
  int cudnn_version = 0;        // e.g. 90100
  int cublas_version = 0;
  int nccl_version = 0;
  std::vector<GpuDevice> devices;
  // On the first device: a cuBLAS SGEMM and a cuDNN ReLU were run and matched
  // a CPU reference. Empty when there is no device.
  std::string self_test;
};

// Probes the CUDA runtime, cuDNN, cuBLAS and NCCL. Never throws: problems are
// reported in runtime_error so `graphworld devices` can always print something.
GpuInfo probe_gpus();

}  // namespace graphworld
