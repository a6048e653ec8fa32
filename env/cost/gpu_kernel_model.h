// The utilization-aware GPU model: what the kernels the `cuda` timer runs
// for one op (cuda_op_spec.h) take on a GpuDevice, without a GPU.
//
// Why it is not FLOPs over a rate: at batch 1 a GEMM or convolution is cut
// into output tiles, one thread block (CTA) each, and the tiles run in
// waves over the SMs. A [64 x 1024] x [1024 x 1024] product has 16 tiles of
// 64x64 for 132 SMs, so most of the chip idles; three such products cost
// nearly three times one [64 x 3072] product, which fills the chip in the
// same time (NVIDIA, "Matrix Multiplication Background User's Guide",
// DU-09799-001: tile and wave quantization). Libraries counter small grids
// with smaller tiles and split-K, which the model chooses as they do:
// the fastest of their tile shapes and splits.
//
//   GEMM / conv:  launch + max(waves x CTA time, bytes / bandwidth) [+ split-K reduction]
//                 CTA time = 2 tm tn k_chunk / (SM rate x tile efficiency) + CTA overhead
//   other ops:    launch + max(bytes / bandwidth, flops / FP32 rate), per kernel
//
// The kernels per op follow the timer: a conv with a bias and an activation
// is the conv and a kernel for each after it, or for relu one fused kernel,
// whichever is quicker; a GEMM with an activation is cuBLAS plus an
// elementwise kernel; a Concat is one copy per piece (a Split, views of its
// input, is free: gpu_cost_model.h).
#pragma once

#include <cstdint>
#include <string>

#include "env/cost/cuda_op_spec.h"
#include "env/cost/gpu_device.h"

namespace graphworld {

struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool tensor_cores = false;  // TF32 tensor-core tiles (cuDNN convs on Ampere and later)
  double efficiency = 1;      // the device's gemm or conv efficiency
  double bytes = 0;           // operands and result, for the memory bound
  int max_split_k = 32;       // the largest split-K the library uses for it
  double extra_cta_overhead_cycles = 0;  // beyond the device's cta_overhead_cycles (convs)
};

// How the model runs one GEMM: the library's choice of tile and split.
struct GemmPlan {
  int tile_m = 0, tile_n = 0, split_k = 1;
  int64_t ctas = 0, waves = 0;
  double compute_us = 0, memory_us = 0, reduction_us = 0;
  double us = 0;  // without the launch
};

// The fastest tile and split-K for `p` on `device`.
GemmPlan plan_gemm(const GpuDevice& device, const GemmProblem& p);
// A tile's efficiency relative to the 128x128 tile the gemm/conv efficiency
// is quoted for: operand loads per FMA fall as (tm + tn) / (tm tn), and each
// costs `load_cost` FMAs' time (GpuDevice::tile_load_cost).
double tile_efficiency(int tile_m, int tile_n, double load_cost);
// A streaming kernel moving `bytes` and doing `flops` (no launch).
double memory_kernel_us(const GpuDevice& device, double bytes, double flops);

// Microseconds the timer's kernels for `spec` take, launches included.
double gpu_spec_time_us(const GpuDevice& device, const CudaOpSpec& spec);
// The kernels the timer launches for `spec` that pay the launch overhead
// outside the op's body (a conv's bias and activation kernels, which may be
// fused, are priced in its body).
int gpu_spec_kernels(const CudaOpSpec& spec);

}  // namespace graphworld
