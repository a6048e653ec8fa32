// The physical limit a benchmark's figure is set against: the rate at which
// this machine multiplies large float matrices (sgemm on CPUs, the GEMM of
// the GPU's BLAS on CUDA), measured in the same run as the figure.
#pragma once

#include <string>

namespace graphworld {

// GFLOP/s of a square float product on `device` ("cpu" or "cuda:N"; 1024
// wide on CPUs, 8192 on GPUs), the median of several runs after a warm-up;
// on the CPU with `threads` intra-op threads.
double measure_gemm_gflops(const std::string& device, int threads);

}  // namespace graphworld
