#include "env/cost/gpu_kernel_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace graphworld {
namespace {

struct Tile {
  int m, n;
};

// cuBLAS's SGEMM kernels (FP32 lanes) come in these output tiles...
constexpr Tile kSimtTiles[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}, {128, 32},
                               {32, 128},  {64, 32},  {32, 64},  {32, 32}};
// ...and cuDNN's TF32 implicit-GEMM kernels in these.
constexpr Tile kTensorCoreTiles[] = {{256, 128}, {128, 256}, {128, 128}, {128, 64},
                                     {64, 128},  {64, 64},   {64, 32},   {32, 64}};
// Split-K factors the libraries use, and the smallest K slice they split to.
constexpr int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
constexpr int64_t kMinSplitSlice = 64;
// Kernels step through K in slices of this many (MMA and SGEMM inner loops).
constexpr int64_t kStepK = 8;
// Below this many output columns per group, cuDNN runs a direct kernel
// (depthwise and narrow grouped convolutions), not an implicit GEMM.
constexpr int64_t kMinGemmColumns = 8;
// Grouped convs with fewer output channels per group than this have both
// a direct kernel and a batched implicit GEMM (one problem per group) to
// choose from, and the timer keeps the quicker: the direct kernel wins on
// small maps (ResNeXt's 32 groups of 4 to 32 ran at one rate per FLOP
// whatever their shape), the GEMM on large ones (32 groups of 32 on a
// 56x56 map: 64 us, where the direct rate says 448; configs/gpu/measurements/).
constexpr int64_t kMinGroupedGemmColumns = 64;

// cuDNN's forward implicit-GEMM kernels walk the whole reduction in one
// thread block: a conv with few output tiles and a deep K (a 3x3 conv over
// 512 channels at 7x7) leaves the GPU idle, where cuBLAS would split K. A
// 1x1 conv is a plain GEMM, and split like one.
constexpr int kConvMaxSplitK = 1;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The timer's elementwise kernels run 256 threads a block (at most 65535
// blocks); a grid smaller than the GPU reaches only its share of the
// bandwidth.
constexpr int64_t kThreadsPerBlock = 256;
double grid_fraction(const GpuDevice& d, double blocks) {
  return std::clamp(blocks / d.sm_count, 1.0 / d.sm_count, 1.0);
}

double numel(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

double tile_load_ratio(int m, int n, double load_cost) {
  const double area = static_cast<double>(m) * n;
  return area / (area + load_cost * (m + n));
}

// HBM's sustained rate, or L2's when the kernel's bytes fit there.
double bytes_per_us(const GpuDevice& d, double bytes) {
  const bool in_l2 = d.l2_cache_mb > 0 && bytes <= d.l2_cache_mb * 1e6;
  return d.memory_bandwidth_gbs * 1e3 * d.memory_efficiency * (in_l2 ? d.l2_bandwidth_factor : 1);
}
double fp32_flops_per_us(const GpuDevice& d) { return d.fp32_tflops * 1e6 * d.gemm_efficiency; }

// A kernel of `blocks` thread blocks moving `bytes` and doing `flops`.
double gridded_us(const GpuDevice& d, double blocks, double bytes, double flops) {
  return memory_kernel_us(d, bytes, flops) / grid_fraction(d, blocks);
}

// An elementwise kernel over `elements` outputs reading `inputs` operands.
double streaming_us(const GpuDevice& d, double elements, double inputs, double flops_per_element = 1) {
  return gridded_us(d, std::ceil(elements / kThreadsPerBlock), 4 * elements * (inputs + 1), elements * flops_per_element);
}

// cuDNN's output size of a window: ONNX's asymmetric pads are timed with the
// larger pad on both sides (cuda_spec_for), which cuDNN turns into its own size.
int64_t cudnn_window_output(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return std::max<int64_t>(1, (in + 2 * pad - dilation * (kernel - 1) - 1) / std::max<int64_t>(1, stride) + 1);
}

// cuDNN's ConvolutionBiasActivationForward fuses relu (identity only with
// one slow algorithm, which the timer measured no quicker than a separate add).
bool conv_fuses_relu(const CudaOpSpec& s) { return s.activation == 1; }

double conv_us(const GpuDevice& d, const CudaOpSpec& s) {
  // in [N, C, H, W], weight [O, C/g, kh, kw], out [N, O, OH, OW] as cuDNN sizes it.
  const int64_t g = std::max<int64_t>(1, s.groups);
  const int64_t out_channels = s.in2[0];
  auto at = [](const std::vector<int64_t>& v, size_t i, int64_t fallback) { return i < v.size() ? v[i] : fallback; };
  const int64_t oh = cudnn_window_output(s.in[2], s.in2[2], at(s.strides, 0, 1), at(s.pads, 0, 0), at(s.dilations, 0, 1));
  const int64_t ow = cudnn_window_output(s.in[3], s.in2[3], at(s.strides, 1, 1), at(s.pads, 1, 0), at(s.dilations, 1, 1));
  const int64_t pixels = s.in[0] * oh * ow;
  const double out_elements = static_cast<double>(pixels * out_channels);
  // A 1x1 window at stride 1 reads its input as a plain [C, H*W] matrix: a
  // GEMM, split and staged like one.
  const bool pointwise = s.in2[2] == 1 && s.in2[3] == 1 && at(s.strides, 0, 1) == 1 && at(s.strides, 1, 1) == 1;
  GemmProblem p;
  p.batch = g;
  p.m = pixels;
  p.n = out_channels / g;
  p.k = s.in2[1] * s.in2[2] * s.in2[3];
  p.bytes = 4 * (numel(s.in) + numel(s.in2) + out_elements);
  double us = 0;
  GemmProblem fused_problem;
  const bool direct = p.n < kMinGemmColumns || (g > 1 && p.n < kMinGroupedGemmColumns);
  if (direct) {
    const double flops = 2.0 * static_cast<double>(p.batch * p.m) * static_cast<double>(p.n * p.k);
    us = std::max(p.bytes / bytes_per_us(d, p.bytes), flops / (d.fp32_tflops * 1e6 * d.direct_conv_efficiency));
    // A grouped (not depthwise) conv's direct kernel pays the implicit-GEMM
    // prologue too: ResNeXt's and the sweep's smallest grouped convs took
    // 12-14 us on the H100 whatever their FLOPs, depthwise ones 2.4-5.
    if (g > 1 && s.in2[1] > 1) us += d.conv_cta_overhead_cycles / d.boost_clock_mhz;
  }
  if (!direct || p.n >= kMinGemmColumns) {
    p.tensor_cores = d.has_tf32();
    // cuDNN's tuned kernels are for 1x1 and 3x3 windows; other windows
    // (1x7, 5x5, 7x7) and grouped convs run slower generic ones (measured:
    // configs/gpu/measurements/).
    const bool tuned_window = pointwise || (s.in2[2] == 3 && s.in2[3] == 3);
    if (!pointwise) p.max_split_k = kConvMaxSplitK;
    // A 1x1 conv reads its input as a [C, H*W] matrix; when H*W is not a
    // multiple of 4 floats its rows are not 16-byte aligned and the kernel
    // cannot use vector loads (35x35, 17x17 maps in Inception).
    const bool unaligned = pointwise && (s.in[2] * s.in[3]) % 4 != 0;
    p.extra_cta_overhead_cycles = pointwise && g == 1 ? 0 : d.conv_cta_overhead_cycles;
    p.efficiency = d.conv_efficiency * (tuned_window ? 1 : d.conv_odd_kernel_efficiency) *
                   (g > 1 ? d.conv_grouped_efficiency : 1) * (unaligned ? d.conv_unaligned_efficiency : 1);
    const double gemm = plan_gemm(d, p).us;
    us = direct ? std::min(us, gemm) : gemm;
    fused_problem = p;
  }
  // Bias and activation. cuDNN's implicit-GEMM kernels for ungrouped convs
  // other than a stride-1 1x1 take them in their epilogue at no measurable
  // cost (on the H100, with every algorithm timed: a median 0.1 us over 60
  // such convs timed with and without them, strided 1x1 ones among them).
  // Stride-1 1x1 and grouped convs pay for them (a median 1.8-2.0 us each):
  // kernels after the conv, or, for relu, cuDNN's fused conv-bias-relu (one
  // kernel with its own efficiency); the timer keeps the quicker, and so
  // does the model.
  if (!direct && g == 1 && !pointwise && s.activation <= 1) return us;
  double separate = us;
  if (s.has_bias) separate += d.launch_overhead_us + streaming_us(d, out_elements, 1);
  if (s.activation != 0) separate += d.launch_overhead_us + streaming_us(d, out_elements, 1);
  if (conv_fuses_relu(s) && fused_problem.m > 0) {
    fused_problem.efficiency *= d.fused_conv_efficiency;
    return std::min(separate, plan_gemm(d, fused_problem).us);
  }
  return separate;
}

double gemm_us(const GpuDevice& d, const CudaOpSpec& s) {
  GemmProblem p;
  p.batch = s.batch;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.efficiency = d.gemm_efficiency;
  const double b = static_cast<double>(s.batch);
  p.bytes = 4 * ((s.a_broadcast ? 1 : b) * static_cast<double>(s.m * s.k) +
                 (s.b_broadcast ? 1 : b) * static_cast<double>(s.k * s.n) +
                 b * static_cast<double>(s.m * s.n) * (s.has_bias ? 2 : 1));
  // A product with one row or one column is a matrix-vector product: cuBLAS
  // runs GEMV, which streams the matrix at the memory's rate, no tiles.
  const bool matrix_vector = s.m == 1 || s.n == 1;
  double us = matrix_vector ? memory_kernel_us(d, p.bytes, 2.0 * b * static_cast<double>(s.m * s.n * s.k))
                            : plan_gemm(d, p).us;
  if (s.activation != 0) us += streaming_us(d, b * static_cast<double>(s.m * s.n), 1);
  return us;
}

double transpose_us(const GpuDevice& d, const CudaOpSpec& s) {
  // The timer's kernel writes in order and gathers its reads: when the
  // innermost output axis that is longer than 1 does not read the
  // innermost input axis longer than 1, neighbouring threads read far
  // apart and each read pulls a whole memory sector.
  const double n = numel(s.in);
  int64_t inner_in = -1, inner_out = -1;
  for (size_t a = 0; a < s.in.size(); ++a)
    if (s.in[a] > 1) inner_in = static_cast<int64_t>(a);
  for (size_t a = 0; a < s.perm.size(); ++a) {
    const int64_t from = s.perm[a];
    if (from >= 0 && from < static_cast<int64_t>(s.in.size()) && s.in[static_cast<size_t>(from)] > 1) inner_out = from;
  }
  const bool scattered = inner_out != inner_in;
  return streaming_us(d, n, 0) + memory_kernel_us(d, 4 * n * (scattered ? d.uncoalesced_read_factor : 1), 0);
}

}  // namespace

double tile_efficiency(int tile_m, int tile_n, double load_cost) {
  return tile_load_ratio(tile_m, tile_n, load_cost) / tile_load_ratio(128, 128, load_cost);
}

double memory_kernel_us(const GpuDevice& device, double bytes, double flops) {
  return std::max(bytes / bytes_per_us(device, bytes), flops / fp32_flops_per_us(device));
}

GemmPlan plan_gemm(const GpuDevice& d, const GemmProblem& p) {
  const bool tensor = p.tensor_cores && d.has_tf32();
  const double sm_flops_per_us = (tensor ? d.tf32_tflops : d.fp32_tflops) * 1e6 / d.sm_count;
  const double cta_overhead_us = (d.cta_overhead_cycles + p.extra_cta_overhead_cycles) / d.boost_clock_mhz;
  const double memory_us = p.bytes / bytes_per_us(d, p.bytes);
  const int64_t k = std::max<int64_t>(1, p.k);
  GemmPlan best;
  if (p.m <= 0 || p.n <= 0 || p.batch <= 0) return best;  // nothing to compute
  best.us = std::numeric_limits<double>::infinity();
  auto consider = [&](Tile t) {
    const int64_t tiles = ceil_div(std::max<int64_t>(1, p.m), t.m) * ceil_div(std::max<int64_t>(1, p.n), t.n) *
                          std::max<int64_t>(1, p.batch);
    const double efficiency = std::clamp(p.efficiency * tile_efficiency(t.m, t.n, d.tile_load_cost), 1e-3, 1.0);
    for (int split : kSplits) {
      if (split > p.max_split_k) break;
      const int64_t slice = ceil_div(ceil_div(k, split), kStepK) * kStepK;
      if (split > 1 && slice < kMinSplitSlice) break;
      GemmPlan plan;
      plan.tile_m = t.m;
      plan.tile_n = t.n;
      plan.split_k = split;
      plan.ctas = tiles * split;
      plan.waves = ceil_div(plan.ctas, d.sm_count);
      const double cta_us = 2.0 * t.m * t.n * static_cast<double>(slice) / (sm_flops_per_us * efficiency) + cta_overhead_us;
      plan.compute_us = static_cast<double>(plan.waves) * cta_us;
      // Split-K's partial tiles are written by the main kernel and read back.
      const double partial_bytes = 4.0 * static_cast<double>(p.batch * p.m * p.n) * split;
      plan.memory_us = memory_us + (split > 1 ? partial_bytes / bytes_per_us(d, partial_bytes) : 0);
      // Split-K partial sums: each split writes its tile, one more kernel adds them.
      if (split > 1)
        plan.reduction_us = d.launch_overhead_us +
                            streaming_us(d, static_cast<double>(p.batch * p.m * p.n), split);
      plan.us = std::max(plan.compute_us, plan.memory_us) + plan.reduction_us;
      if (plan.us < best.us) best = plan;
    }
  };
  if (tensor)
    for (Tile t : kTensorCoreTiles) consider(t);
  else
    for (Tile t : kSimtTiles) consider(t);
  return best;
}

int gpu_spec_kernels(const CudaOpSpec& s) {
  switch (s.kind) {
    case CudaOpKind::Conv: return 1;  // the bias and activation kernels are priced in conv_us
    case CudaOpKind::Gemm: return 1 + (s.activation != 0);
    case CudaOpKind::Concat: return 0;  // its copies pay copy_overhead_us in the body
    default: return 1;
  }
}

double gpu_spec_time_us(const GpuDevice& d, const CudaOpSpec& s) {
  double body = 0;
  switch (s.kind) {
    case CudaOpKind::Conv: body = conv_us(d, s); break;
    case CudaOpKind::Gemm: body = gemm_us(d, s); break;
    case CudaOpKind::Pool: {
      const double window = s.kernel.size() == 2 ? static_cast<double>(s.kernel[0] * s.kernel[1]) : 1;
      body = gridded_us(d, std::ceil(numel(s.out) / kThreadsPerBlock), 4 * (numel(s.in) + numel(s.out)),
                        numel(s.out) * window);
      break;
    }
    case CudaOpKind::Activation: body = streaming_us(d, numel(s.in), 1, 4); break;
    case CudaOpKind::BatchNorm: body = streaming_us(d, numel(s.in), 1, 2); break;
    case CudaOpKind::OpTensor:
      body = gridded_us(d, std::ceil(numel(s.out) / kThreadsPerBlock), 4 * (numel(s.in) + numel(s.in2) + numel(s.out)),
                        numel(s.out));
      break;
    case CudaOpKind::Softmax: {
      const double n = static_cast<double>(s.rows * s.cols * s.inner);
      // Two passes over the input, one write; a block per row of inner positions.
      body = gridded_us(d, static_cast<double>(s.rows) * std::ceil(static_cast<double>(s.inner) / kThreadsPerBlock),
                        4 * 3 * n, 8 * n);
      break;
    }
    case CudaOpKind::Reduce:
      body = gridded_us(d, std::ceil(numel(s.in) / kThreadsPerBlock), 4 * (numel(s.in) + numel(s.out)), numel(s.in));
      break;
    case CudaOpKind::Transpose: body = transpose_us(d, s); break;
    case CudaOpKind::Concat:
      for (int64_t piece : s.piece_inner)
        body += d.copy_overhead_us + streaming_us(d, static_cast<double>(s.outer * piece), 1, 0);
      break;
    case CudaOpKind::Elementwise:
      body = streaming_us(d, static_cast<double>(s.numel), s.num_inputs, s.flops_per_element);
      break;
    case CudaOpKind::LayerNorm: {
      const double n = static_cast<double>(s.rows * s.cols);
      body = gridded_us(d, static_cast<double>(s.rows), 4 * 3 * n, 5 * n);  // a block per row: two reads, one write
      break;
    }
  }
  return gpu_spec_kernels(s) * d.launch_overhead_us + body;
}

}  // namespace graphworld
