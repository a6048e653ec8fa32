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

struct CudaTimingPolicy {
  int warmup = 2;
  int min_repeats = 7;
  int max_repeats = 60;
  double min_total_ms = 10.0;
};

// Both throw std::runtime_error saying what failed (no GPU, a CUDA or cuDNN
// status). Defined in cuda_op_timer.cu.
std::string cuda_device_fingerprint();
double cuda_time_op(const CudaOpSpec& spec, const CudaTimingPolicy& policy);

}  // namespace graphworld
