// The description of one op that the CUDA timer (cuda_op_timer.cu) runs.
// Plain C++17 with no graphworld IR types, because nvcc compiles it too;
// cuda_op_timer.cc translates an OpCostKey into it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphworld {

enum class CudaOpKind : int {
  Conv,         // cudnnFindConvolutionForwardAlgorithmEx, then the best algorithm
  Gemm,         // cublasSgemm / cublasSgemmStridedBatched
  Pool,         // cudnnPoolingForward
  Activation,   // cudnnActivationForward
  BatchNorm,    // cudnnBatchNormalizationForwardInference
  OpTensor,     // cudnnOpTensor (add, mul, sub) with broadcasting of B
  Softmax,      // cudnnSoftmaxForward
  Reduce,       // cudnnReduceTensor
  Transpose,    // permuting copy kernel
  Concat,       // one strided cudaMemcpy2DAsync per piece (also Split)
  Elementwise,  // generic memory-bound kernel (Div, Pow, Erf, Gelu, Pad, Slice...)
  LayerNorm,    // one block per row
};

struct CudaOpSpec {
  CudaOpKind kind = CudaOpKind::Elementwise;
  std::vector<int64_t> in;   // first input's dims
  std::vector<int64_t> in2;  // conv weight / second operand dims
  std::vector<int64_t> out;  // output dims
  // Conv and Pool (2-D): per spatial dim.
  std::vector<int64_t> kernel, strides, pads, dilations;
  int64_t groups = 1;
  bool has_bias = false;
  int activation = 0;  // 0 none, 1 relu, 2 sigmoid, 3 tanh, 4 clipped relu
  double clip_max = 6.0;
  // Pool: 0 max, 1 average counting padding, 2 average excluding padding.
  // OpTensor: 0 add, 1 mul, 2 sub. Reduce: 0 sum, 1 mean.
  int mode = 0;
  // Gemm: C[batch] = op(A[batch]) * op(B[batch]); a stride of 0 broadcasts.
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false, a_broadcast = false, b_broadcast = false;
  // Transpose.
  std::vector<int64_t> perm;
  // Concat/Split: `outer` rows; each piece copies piece_inner[i] floats per row.
  int64_t outer = 1;
  std::vector<int64_t> piece_inner;
  // Elementwise: floats written, inputs read per output, and arithmetic per element.
  int64_t numel = 0;
  int num_inputs = 1;
  int flops_per_element = 1;
  // LayerNorm and Softmax: rows x cols (Softmax: outer x dim x inner).
  int64_t rows = 0, cols = 0, inner = 1;
};

// How an op is timed. Each sample runs `batch` calls back to back between
// two CUDA events and divides (TASO's method): at batch 1 a small kernel's
// time is mostly the event and launch latency of that one call, and varies
// with the host. `batch` is chosen so that a sample lasts min_sample_ms.
//   kGraph: the calls are captured once in a CUDA graph and the graph is
//           replayed, so a call costs its kernels' device time with the
//           short gap between graph nodes, as in a runtime that replays
//           graphs (the default: what the GPU does, repeatable);
//   kLoop:  the calls are launched from the host, so a call costs the larger
//           of its kernels' time and its launches' host time, as in an eager
//           runtime. On an H100 at batch 1 most ops then cost the host's
//           20-40 us per cuDNN call, and that varies by tens of percent from
//           one run to the next (configs/gpu/measurements/).
enum class CudaTimingMethod { kGraph, kLoop };

struct CudaTimingPolicy {
  int warmup = 2;
  int min_repeats = 7;
  int max_repeats = 60;
  double min_total_ms = 10.0;
  double min_sample_ms = 0.5;
  int max_batch = 100;
  CudaTimingMethod method = CudaTimingMethod::kGraph;
};

// Both throw std::runtime_error saying what failed (no GPU, a CUDA or cuDNN
// status). Defined in cuda_op_timer.cu.
// The GPU, CUDA, cuDNN and cuBLAS versions and the timer, with
// "; method=graph" for CudaTimingMethod::kGraph.
std::string cuda_device_fingerprint(CudaTimingMethod method = CudaTimingMethod::kGraph);
double cuda_time_op(const CudaOpSpec& spec, const CudaTimingPolicy& policy);

}  // namespace graphworld
