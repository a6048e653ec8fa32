#include "worldmodel/lstm_sequence.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "learner/compute_threads.h"
#include "common/worker_threads.h"

namespace graphworld {
namespace {

constexpr int64_t kTensorsPerRun = 5;  // input, w_ih, w_hh, b_ih, b_hh
constexpr int64_t kOutputsPerRun = 3;  // output, h_n, c_n

// What one LSTM's forward pass keeps for its backward pass.
struct LstmTape {
  torch::Tensor gates;  // [T * B, 4H]: the activated gates i, f, g, o of every step
  torch::Tensor cells;  // [T, B, H]: c of every step
  torch::Tensor cell_tanh;  // [T, B, H]: tanh(c)
};

struct LstmForward {
  torch::Tensor output, h_n, c_n;
  LstmTape tape;
};

// The vector code below is built for AVX-512, AVX2 and plain x86-64, chosen
// when the program loads.
#if defined(__x86_64__)
#define GRAPHWORLD_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GRAPHWORLD_VECTOR_CLONES
#endif

// The activations, in place: sigmoid over n floats, tanh over n floats.
// This file is compiled with -ffast-math so that these loops call glibc's
// vector exp and tanh (libmvec), 16 lanes wide where the CPU has AVX-512;
// nothing here tests for NaN or infinity.
GRAPHWORLD_VECTOR_CLONES void sigmoid_in_place(float* __restrict x, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x[k] = 1.0f / (1.0f + std::exp(-x[k]));
}
GRAPHWORLD_VECTOR_CLONES void tanh_in_place(float* __restrict x, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x[k] = std::tanh(x[k]);
}

// c[rows, n] += a[rows, k] . b[k, n], all row-major: a time step's product
// with the recurrent weights. OpenBLAS copies the whole weight matrix into
// its packed layout on every call, which for the few rows of a step of
// long episodes cost more than the product, up to 100 times per episode,
// and for tens of rows still half the time. Here b is read where it is, 64
// of its columns at a time (which then stay in cache for every row), and
// each block of up to 8 rows x 64 columns of c is summed in registers over
// the whole of k (32 16-float vectors with AVX-512): about 80 GFLOP/s on
// one core of an AVX-512 Xeon from 4 rows up, where OpenBLAS reached 40
// at 64 rows; one row is bound by reading b (1 MiB in 26 us).
constexpr int64_t kColumnBlock = 64;
template <int64_t kRows>
GRAPHWORLD_VECTOR_CLONES void add_block_rows(const float* __restrict a, const float* __restrict b, float* __restrict c,
                                             int64_t k_len, int64_t n, int64_t j0) {
  float acc[kRows][kColumnBlock] = {};
  for (int64_t k = 0; k < k_len; ++k) {
    const float* bk = b + k * n + j0;
    for (int64_t rr = 0; rr < kRows; ++rr) {
      const float x = a[rr * k_len + k];
      for (int64_t jj = 0; jj < kColumnBlock; ++jj) acc[rr][jj] += x * bk[jj];
    }
  }
  for (int64_t rr = 0; rr < kRows; ++rr)
    for (int64_t jj = 0; jj < kColumnBlock; ++jj) c[rr * n + j0 + jj] += acc[rr][jj];
}

using BlockOfRows = void (*)(const float*, const float*, float*, int64_t, int64_t, int64_t);
constexpr BlockOfRows kBlockOfRows[9] = {nullptr,           &add_block_rows<1>, &add_block_rows<2>,
                                         &add_block_rows<3>, &add_block_rows<4>, &add_block_rows<5>,
                                         &add_block_rows<6>, &add_block_rows<7>, &add_block_rows<8>};

void add_step_product(const float* __restrict a, const float* __restrict b, float* __restrict c, int64_t rows,
                      int64_t k_len, int64_t n) {
  const int64_t full_columns = n / kColumnBlock * kColumnBlock;
  for (int64_t j0 = 0; j0 < full_columns; j0 += kColumnBlock) {
    // Blocks of 8 rows, then one of the rows left (a block of that height).
    for (int64_t r0 = 0; r0 < rows; r0 += 8)
      kBlockOfRows[std::min<int64_t>(8, rows - r0)](a + r0 * k_len, b, c + r0 * n, k_len, n, j0);
  }
  for (int64_t j = full_columns; j < n; ++j)
    for (int64_t r = 0; r < rows; ++r) {
      float sum = 0.0f;
      for (int64_t k = 0; k < k_len; ++k) sum += a[r * k_len + k] * b[k * n + j];
      c[r * n + j] += sum;
    }
}

// gates[r] += h[r] . w_hh^T: gates [rows, 4H], h [rows, H], w_hh [4H, H],
// as dot products with w_hh's rows where they are: for steps too few to
// pay for transposing w_hh (transpose_into, about 0.3 ms) for
// add_step_product. Each weight row is read once for all the rows.
GRAPHWORLD_VECTOR_CLONES void add_recurrent_dot_product(const float* __restrict h, const float* __restrict w_hh,
                                                        float* __restrict gates, int64_t rows, int64_t width) {
  for (int64_t j = 0; j < 4 * width; ++j) {
    const float* wj = w_hh + j * width;
    for (int64_t r = 0; r < rows; ++r) {
      const float* hr = h + r * width;
      float sum = 0.0f;
      for (int64_t k = 0; k < width; ++k) sum += hr[k] * wj[k];
      gates[r * 4 * width + j] += sum;
    }
  }
}

// Fewer recurrent rows than this in a call (its steps after the first
// times its rows) take add_recurrent_dot_product; more take w_hh
// transposed once and add_step_product (measured on a 2-core AVX-512 Xeon:
// one row 42 us a step against 26, eight rows 190 against 51).
constexpr int64_t kTransposeFromRows = 16;

#if defined(__x86_64__)
// One 8 x 8 tile of transpose_into: eight rows in, eight rows out.
__attribute__((target("avx2"))) void transpose_8x8_avx2(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  __m256 r0 = _mm256_loadu_ps(src + 0 * src_stride), r1 = _mm256_loadu_ps(src + 1 * src_stride);
  __m256 r2 = _mm256_loadu_ps(src + 2 * src_stride), r3 = _mm256_loadu_ps(src + 3 * src_stride);
  __m256 r4 = _mm256_loadu_ps(src + 4 * src_stride), r5 = _mm256_loadu_ps(src + 5 * src_stride);
  __m256 r6 = _mm256_loadu_ps(src + 6 * src_stride), r7 = _mm256_loadu_ps(src + 7 * src_stride);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst + 0 * dst_stride, _mm256_permute2f128_ps(s0, s4, 0x20));
  _mm256_storeu_ps(dst + 1 * dst_stride, _mm256_permute2f128_ps(s1, s5, 0x20));
  _mm256_storeu_ps(dst + 2 * dst_stride, _mm256_permute2f128_ps(s2, s6, 0x20));
  _mm256_storeu_ps(dst + 3 * dst_stride, _mm256_permute2f128_ps(s3, s7, 0x20));
  _mm256_storeu_ps(dst + 4 * dst_stride, _mm256_permute2f128_ps(s0, s4, 0x31));
  _mm256_storeu_ps(dst + 5 * dst_stride, _mm256_permute2f128_ps(s1, s5, 0x31));
  _mm256_storeu_ps(dst + 6 * dst_stride, _mm256_permute2f128_ps(s2, s6, 0x31));
  _mm256_storeu_ps(dst + 7 * dst_stride, _mm256_permute2f128_ps(s3, s7, 0x31));
}
#endif

// dst [cols, rows] = src [rows, cols]^T: 8 x 8 tiles in AVX2 registers,
// taken down the columns so that each tile's rows are written one after
// another (across the rows, the writes 4 KiB apart fought over the same
// cache sets): 0.15 ms for 1 MiB on a 2-core AVX-512 Xeon, where a scalar
// loop took 0.3 ms and LibTorch's copy of a transposed view more.
void transpose_into(const float* __restrict src, float* __restrict dst, int64_t rows, int64_t cols) {
  int64_t full_rows = 0, full_cols = 0;
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  constexpr int64_t kTile = 8;
  if (avx2) {
    full_rows = rows / kTile * kTile;
    full_cols = cols / kTile * kTile;
  }
  for (int64_t c0 = 0; c0 < full_cols; c0 += kTile)
    for (int64_t r0 = 0; r0 < full_rows; r0 += kTile)
      transpose_8x8_avx2(src + r0 * cols + c0, cols, dst + c0 * rows + r0, rows);
#endif
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = (r < full_rows ? full_cols : 0); c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

// One LSTM over [T, B, I] from a zero state, on the calling thread: its
// only LibTorch calls are matrix products (BLAS) and allocations, so it
// starts no thread of LibTorch's.
LstmForward lstm_forward(const torch::Tensor& input, const torch::Tensor& w_ih, const torch::Tensor& w_hh,
                         const torch::Tensor& b_ih, const torch::Tensor& b_hh) {
  const int64_t t_len = input.size(0), rows = input.size(1), h = w_hh.size(1);
  LstmForward f;
  // Every step's input projection and both biases at once: [T * B, 4H].
  f.tape.gates = torch::empty({t_len * rows, 4 * h}, input.options());
  {
    float* g = f.tape.gates.data_ptr<float>();
    const float *bi = b_ih.data_ptr<float>(), *bh = b_hh.data_ptr<float>();
    for (int64_t r = 0; r < t_len * rows; ++r)
      for (int64_t k = 0; k < 4 * h; ++k) g[r * 4 * h + k] = bi[k] + bh[k];
  }
  f.tape.gates.addmm_(input.reshape({t_len * rows, input.size(2)}), w_ih.t());
  f.output = torch::empty({t_len, rows, h}, input.options());
  f.tape.cells = torch::empty({t_len, rows, h}, input.options());
  f.tape.cell_tanh = torch::empty({t_len, rows, h}, input.options());
  torch::Tensor w_hh_rows;  // w_hh^T, [H, 4H] row-major, for add_step_product: made once per call
  if ((t_len - 1) * rows >= kTransposeFromRows) {
    w_hh_rows = torch::empty({h, 4 * h}, w_hh.options());
    transpose_into(w_hh.data_ptr<float>(), w_hh_rows.data_ptr<float>(), 4 * h, h);
  }
  float* gates = f.tape.gates.data_ptr<float>();
  float* cells = f.tape.cells.data_ptr<float>();
  float* cell_tanh = f.tape.cell_tanh.data_ptr<float>();
  float* output = f.output.data_ptr<float>();
  for (int64_t t = 0; t < t_len; ++t) {
    if (t > 0 && w_hh_rows.defined())
      add_step_product(output + (t - 1) * rows * h, w_hh_rows.data_ptr<float>(), gates + t * rows * 4 * h, rows, h,
                       4 * h);
    else if (t > 0)
      add_recurrent_dot_product(output + (t - 1) * rows * h, w_hh.data_ptr<float>(), gates + t * rows * 4 * h, rows, h);
    float* c = cells + t * rows * h;
    const float* c_prev = t > 0 ? c - rows * h : nullptr;
    float* tc = cell_tanh + t * rows * h;
    float* out = output + t * rows * h;
    for (int64_t r = 0; r < rows; ++r) {
      float* gr = gates + (t * rows + r) * 4 * h;  // i, f, g, o
      sigmoid_in_place(gr, 2 * h);
      tanh_in_place(gr + 2 * h, h);
      sigmoid_in_place(gr + 3 * h, h);
      float* cr = c + r * h;
      if (c_prev) {
        const float* pr = c_prev + r * h;
        for (int64_t k = 0; k < h; ++k) cr[k] = gr[h + k] * pr[k] + gr[k] * gr[2 * h + k];
      } else {
        for (int64_t k = 0; k < h; ++k) cr[k] = gr[k] * gr[2 * h + k];
      }
      float* tr = tc + r * h;
      for (int64_t k = 0; k < h; ++k) tr[k] = cr[k];
      tanh_in_place(tr, h);
      for (int64_t k = 0; k < h; ++k) out[r * h + k] = gr[3 * h + k] * tr[k];
    }
  }
  f.h_n = f.output[t_len - 1].unsqueeze(0).clone();
  f.c_n = f.tape.cells[t_len - 1].unsqueeze(0).clone();
  return f;
}

struct LstmGradients {
  torch::Tensor input, w_ih, w_hh, b_ih, b_hh;
};

// The backward pass of lstm_forward: gradients of the loss with respect to
// the LSTM's tensors from those with respect to its outputs (any of which
// may be undefined: no gradient arrives there). The weights' and biases'
// gradients are added into `accumulate`'s tensors where those are defined.
LstmGradients lstm_backward(const torch::Tensor& input, const torch::Tensor& w_ih, const torch::Tensor& w_hh,
                            const torch::Tensor& output, const LstmTape& tape, const torch::Tensor& grad_output,
                            const torch::Tensor& grad_h_n, const torch::Tensor& grad_c_n, bool input_gradient,
                            const LstmGradients& accumulate) {
  const int64_t t_len = input.size(0), rows = input.size(1), h = w_hh.size(1);
  const torch::Tensor d_out = grad_output.defined() ? grad_output.contiguous() : torch::Tensor();
  // Plain copies and fills: LibTorch's would run in parallel regions of
  // their own beside the other LSTM's thread.
  auto start_from = [&](const torch::Tensor& grad) {
    torch::Tensor out = torch::empty({rows, h}, input.options());
    float* o = out.data_ptr<float>();
    if (grad.defined()) {
      const torch::Tensor g = grad.contiguous();
      std::copy(g.data_ptr<float>(), g.data_ptr<float>() + rows * h, o);
    } else {
      std::fill(o, o + rows * h, 0.0f);
    }
    return out;
  };
  torch::Tensor dh = start_from(grad_h_n), dc = start_from(grad_c_n);
  // Gradients of the gates' pre-activations, every step: [T * B, 4H].
  torch::Tensor d_gates = torch::empty({t_len * rows, 4 * h}, input.options());
  float* dh_p = dh.data_ptr<float>();
  float* dc_p = dc.data_ptr<float>();
  for (int64_t t = t_len - 1; t >= 0; --t) {
    const float* g = tape.gates.data_ptr<float>() + t * rows * 4 * h;
    const float* tc = tape.cell_tanh.data_ptr<float>() + t * rows * h;
    const float* c_prev = t > 0 ? tape.cells.data_ptr<float>() + (t - 1) * rows * h : nullptr;
    const float* dy = d_out.defined() ? d_out.data_ptr<float>() + t * rows * h : nullptr;
    float* dg = d_gates.data_ptr<float>() + t * rows * 4 * h;
    for (int64_t r = 0; r < rows; ++r) {
      const float* gr = g + r * 4 * h;
      float* dgr = dg + r * 4 * h;
      for (int64_t k = 0; k < h; ++k) {
        const int64_t e = r * h + k;
        const float i = gr[k], fg = gr[h + k], cand = gr[2 * h + k], o = gr[3 * h + k], tanh_c = tc[e];
        const float d_h = dh_p[e] + (dy ? dy[e] : 0.0f);
        const float d_c = dc_p[e] + d_h * o * (1.0f - tanh_c * tanh_c);
        dgr[k] = d_c * cand * i * (1.0f - i);
        dgr[h + k] = c_prev ? d_c * c_prev[e] * fg * (1.0f - fg) : 0.0f;
        dgr[2 * h + k] = d_c * i * (1.0f - cand * cand);
        dgr[3 * h + k] = d_h * tanh_c * o * (1.0f - o);
        dc_p[e] = d_c * fg;  // to the step before
      }
    }
    if (t > 0) {
      std::fill(dh_p, dh_p + rows * h, 0.0f);
      add_step_product(d_gates.data_ptr<float>() + t * rows * 4 * h, w_hh.data_ptr<float>(), dh_p, rows, 4 * h, h);
    }
  }
  LstmGradients out;
  const torch::Tensor x = input.reshape({t_len * rows, input.size(2)});
  // Weight gradients: added straight into the parameters' own gradients
  // where `accumulate` gives them (the result is then left undefined, and
  // autograd adds nothing), or returned for autograd to add.
  auto weight_gradient = [&](const torch::Tensor& into, const torch::Tensor& a, const torch::Tensor& b,
                             const torch::Tensor& like) {
    if (into.defined()) {
      if (a.size(1) > 0) into.addmm_(a, b);
      return torch::Tensor();
    }
    return a.size(1) > 0 ? torch::mm(a, b) : torch::zeros_like(like);
  };
  out.w_ih = weight_gradient(accumulate.w_ih, d_gates.t(), x, w_ih);
  // One step: the recurrent weights never acted.
  out.w_hh = weight_gradient(accumulate.w_hh, d_gates.narrow(0, rows, (t_len - 1) * rows).t(),
                             output.narrow(0, 0, t_len - 1).reshape({(t_len - 1) * rows, h}), w_hh);
  // The biases' gradient: the gates' summed over every row, in row order.
  torch::Tensor bias = torch::empty({4 * h}, input.options());
  {
    float* b = bias.data_ptr<float>();
    std::fill(b, b + 4 * h, 0.0f);
    const float* dg = d_gates.data_ptr<float>();
    for (int64_t r = 0; r < t_len * rows; ++r)
      for (int64_t k = 0; k < 4 * h; ++k) b[k] += dg[r * 4 * h + k];
  }
  for (auto [into, result] : {std::make_pair(accumulate.b_ih, &out.b_ih), std::make_pair(accumulate.b_hh, &out.b_hh)}) {
    if (into.defined()) {
      float* g = into.data_ptr<float>();
      const float* b = bias.data_ptr<float>();
      for (int64_t k = 0; k < 4 * h; ++k) g[k] += b[k];
    } else {
      *result = bias.clone();
    }
  }
  if (input_gradient) out.input = torch::mm(d_gates, w_ih).reshape(input.sizes());
  return out;
}

thread_local bool side_by_side = false;
thread_local bool gradients_in_place = false;

// Threads kept for the process's life for LSTMs side by side: a thread's
// first LibTorch call sets up LibTorch's thread pools again, which a new
// thread per call would pay every time. One user at a time (the mutex);
// another finds it busy and runs its LSTMs one after another.
struct SideBySideThreads {
  std::mutex busy;
  std::unique_ptr<WorkerThreads> threads;
};
SideBySideThreads& side_by_side_threads() {
  static SideBySideThreads instance;
  return instance;
}

// Runs job(k) for k in [0, count): side by side, each on one thread of
// its own with one-thread matrix products, inside an LstmSideBySide scope;
// one after another on the calling thread otherwise.
void run_jobs(int64_t count, const std::function<void(int64_t)>& job) {
  SideBySideThreads& pool = side_by_side_threads();
  std::unique_lock<std::mutex> lock(pool.busy, std::defer_lock);
  if (count < 2 || !side_by_side || !lock.try_lock()) {
    for (int64_t k = 0; k < count; ++k) job(k);
    return;
  }
  if (!pool.threads || pool.threads->count() < count) pool.threads = std::make_unique<WorkerThreads>(static_cast<int32_t>(count));
  const BlasThreads one_each(1);
  const unsigned mode = denormal_mode();
  pool.threads->run([&](int32_t k) {
    if (k >= count) return;
    const DenormalMode same_as_caller(mode);
    torch::NoGradGuard no_grad;  // grad mode is per thread
    job(k);
  });
}

// All the LSTMs as one autograd node, so that their backward passes run
// side by side too. Inputs: per LSTM its input, w_ih, w_hh, b_ih, b_hh;
// outputs: per LSTM its output, h_n, c_n.
struct LstmSequences : torch::autograd::Function<LstmSequences> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, torch::TensorList tensors) {
    const int64_t count = static_cast<int64_t>(tensors.size()) / kTensorsPerRun;
    std::vector<LstmForward> results(static_cast<size_t>(count));
    std::vector<torch::Tensor> contiguous(tensors.begin(), tensors.end());
    for (torch::Tensor& t : contiguous) t = t.contiguous();
    run_jobs(count, [&](int64_t k) {
      const torch::Tensor* in = contiguous.data() + k * kTensorsPerRun;
      results[static_cast<size_t>(k)] = lstm_forward(in[0], in[1], in[2], in[3], in[4]);
    });
    torch::autograd::variable_list outputs, saved;
    std::vector<bool> input_gradient;
    for (int64_t k = 0; k < count; ++k) {
      const LstmForward& f = results[static_cast<size_t>(k)];
      outputs.insert(outputs.end(), {f.output, f.h_n, f.c_n});
      const torch::Tensor* in = contiguous.data() + k * kTensorsPerRun;
      saved.insert(saved.end(), {in[0], in[1], in[2], f.output, f.tape.gates, f.tape.cells, f.tape.cell_tanh});
      ctx->saved_data["input_gradient_" + std::to_string(k)] = tensors[static_cast<size_t>(k * kTensorsPerRun)].requires_grad();
      // The parameters themselves, whose gradients the backward pass adds
      // into in place inside an LstmGradientsInPlace (parameter_gradient).
      if (gradients_in_place)
        for (int64_t j = 1; j < kTensorsPerRun; ++j)
          ctx->saved_data["parameter_" + std::to_string(k * kTensorsPerRun + j)] =
              tensors[static_cast<size_t>(k * kTensorsPerRun + j)];
    }
    ctx->saved_data["count"] = count;
    ctx->save_for_backward(saved);
    return outputs;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const int64_t count = ctx->saved_data["count"].toInt();
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    std::vector<LstmGradients> results(static_cast<size_t>(count)), accumulate(static_cast<size_t>(count));
    // Inside an LstmGradientsInPlace (at the forward pass), a parameter's
    // gradient that is already there (a flat buffer's view,
    // learner/flat_parameters.h) is added into in place.
    auto parameter_gradient = [&](int64_t index) {
      const std::string key = "parameter_" + std::to_string(index);
      if (!ctx->needs_input_grad(static_cast<size_t>(index)) || !ctx->saved_data.count(key)) return torch::Tensor();
      const torch::Tensor p = ctx->saved_data[key].toTensor();
      const torch::Tensor& g = p.grad();
      const bool fits = g.defined() && g.is_contiguous() && g.sizes() == p.sizes() && g.scalar_type() == torch::kFloat &&
                        g.device().is_cpu() && !g.requires_grad();
      return fits ? g : torch::Tensor();
    };
    for (int64_t k = 0; k < count; ++k)
      accumulate[static_cast<size_t>(k)] = {torch::Tensor(), parameter_gradient(k * kTensorsPerRun + 1),
                                            parameter_gradient(k * kTensorsPerRun + 2),
                                            parameter_gradient(k * kTensorsPerRun + 3),
                                            parameter_gradient(k * kTensorsPerRun + 4)};
    run_jobs(count, [&](int64_t k) {
      const torch::Tensor* s = saved.data() + k * 7;
      const LstmTape tape{s[4], s[5], s[6]};
      const torch::Tensor* g = grads.data() + k * kOutputsPerRun;
      results[static_cast<size_t>(k)] = lstm_backward(s[0], s[1], s[2], s[3], tape, g[0], g[1], g[2],
                                                      ctx->saved_data["input_gradient_" + std::to_string(k)].toBool(),
                                                      accumulate[static_cast<size_t>(k)]);
    });
    torch::autograd::variable_list out;
    for (const LstmGradients& r : results) out.insert(out.end(), {r.input, r.w_ih, r.w_hh, r.b_ih, r.b_hh});
    return out;
  }
};

}  // namespace

LstmGradientsInPlace::LstmGradientsInPlace() : previous_(gradients_in_place) { gradients_in_place = true; }
LstmGradientsInPlace::~LstmGradientsInPlace() { gradients_in_place = previous_; }

LstmSideBySide::LstmSideBySide(bool on) : previous_(side_by_side) { side_by_side = on; }
LstmSideBySide::~LstmSideBySide() { side_by_side = previous_; }

bool lstm_sequence_applies(const torch::nn::LSTM& lstm, const torch::Tensor& input) {
  static const bool aten_only = [] {
    const char* value = std::getenv("GRAPHWORLD_ATEN_LSTM");
    return value != nullptr && std::string(value) == "1";
  }();
  const torch::nn::LSTMOptions& o = lstm->options;
  return !aten_only && o.num_layers() == 1 && !o.bidirectional() && o.bias() && !o.batch_first() && o.proj_size() == 0 &&
         input.dim() == 3 && input.size(0) > 0 && input.scalar_type() == torch::kFloat && input.device().is_cpu();
}

std::vector<LstmSequenceResult> lstm_sequences(const std::vector<LstmSequenceRun>& runs) {
  std::vector<torch::Tensor> tensors;
  for (const LstmSequenceRun& run : runs) {
    TORCH_CHECK(lstm_sequence_applies(run.lstm, run.input),
                "lstm_sequences: a one-layer, one-direction LSTM with biases over a [T, B, I] float CPU tensor");
    auto p = run.lstm->named_parameters();
    tensors.insert(tensors.end(), {run.input, p["weight_ih_l0"], p["weight_hh_l0"], p["bias_ih_l0"], p["bias_hh_l0"]});
  }
  const torch::autograd::variable_list outputs = LstmSequences::apply(torch::TensorList(tensors));
  std::vector<LstmSequenceResult> results;
  for (size_t k = 0; k < runs.size(); ++k)
    results.push_back({outputs[k * kOutputsPerRun], outputs[k * kOutputsPerRun + 1], outputs[k * kOutputsPerRun + 2]});
  return results;
}

}  // namespace graphworld
