#include "worldmodel/lstm_sequence.h"

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

// The activations, in place: sigmoid over n floats, tanh over n floats.
// This file is compiled with -ffast-math so that these loops call glibc's
// vector exp and tanh (libmvec); nothing here tests for NaN or infinity.
void sigmoid_in_place(float* __restrict x, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x[k] = 1.0f / (1.0f + std::exp(-x[k]));
}
void tanh_in_place(float* __restrict x, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x[k] = std::tanh(x[k]);
}

// A step's product with the recurrent weights when it has only a few rows
// (a batch of long episodes is a handful of them): OpenBLAS copies the
// whole 4H x H matrix into its packed layout on every call, which for one
// row costs several times the product itself, 100 times per episode. Here
// the weights are read where they are. Built for AVX-512, AVX2 and plain
// x86-64, chosen when the program loads.
constexpr int64_t kFewRows = 8;
#if defined(__x86_64__)
#define GRAPHWORLD_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GRAPHWORLD_VECTOR_CLONES
#endif

// gates[r] += h[r] . w_hh^T: gates [rows, 4H], h [rows, H], w_hh [4H, H].
GRAPHWORLD_VECTOR_CLONES void add_recurrent_product(
    const float* __restrict h, const float* __restrict w_hh, float* __restrict gates, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* hr = h + r * width;
    float* gr = gates + r * 4 * width;
    for (int64_t j = 0; j < 4 * width; ++j) {
      const float* wj = w_hh + j * width;
      float sum = 0.0f;
      for (int64_t k = 0; k < width; ++k) sum += hr[k] * wj[k];
      gr[j] += sum;
    }
  }
}

// dh[r] = d_gates[r] . w_hh: dh [rows, H], d_gates [rows, 4H], w_hh [4H, H].
GRAPHWORLD_VECTOR_CLONES void recurrent_gradient(
    const float* __restrict d_gates, const float* __restrict w_hh, float* __restrict dh, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    float* out = dh + r * width;
    for (int64_t k = 0; k < width; ++k) out[k] = 0.0f;
    const float* dg = d_gates + r * 4 * width;
    for (int64_t j = 0; j < 4 * width; ++j) {
      const float a = dg[j];
      const float* wj = w_hh + j * width;
      for (int64_t k = 0; k < width; ++k) out[k] += a * wj[k];
    }
  }
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
  const torch::Tensor w_hh_t = w_hh.t();
  float* gates = f.tape.gates.data_ptr<float>();
  float* cells = f.tape.cells.data_ptr<float>();
  float* cell_tanh = f.tape.cell_tanh.data_ptr<float>();
  float* output = f.output.data_ptr<float>();
  for (int64_t t = 0; t < t_len; ++t) {
    if (t > 0 && rows <= kFewRows)
      add_recurrent_product(output + (t - 1) * rows * h, w_hh.data_ptr<float>(), gates + t * rows * 4 * h, rows, h);
    else if (t > 0)
      f.tape.gates.narrow(0, t * rows, rows).addmm_(f.output[t - 1], w_hh_t);
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
// may be undefined: no gradient arrives there).
LstmGradients lstm_backward(const torch::Tensor& input, const torch::Tensor& w_ih, const torch::Tensor& w_hh,
                            const torch::Tensor& output, const LstmTape& tape, const torch::Tensor& grad_output,
                            const torch::Tensor& grad_h_n, const torch::Tensor& grad_c_n, bool input_gradient) {
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
    if (t > 0 && rows <= kFewRows)
      recurrent_gradient(d_gates.data_ptr<float>() + t * rows * 4 * h, w_hh.data_ptr<float>(), dh_p, rows, h);
    else if (t > 0)
      torch::mm_out(dh, d_gates.narrow(0, t * rows, rows), w_hh);
  }
  LstmGradients out;
  const torch::Tensor x = input.reshape({t_len * rows, input.size(2)});
  out.w_ih = torch::mm(d_gates.t(), x);
  if (t_len > 1)
    out.w_hh = torch::mm(d_gates.narrow(0, rows, (t_len - 1) * rows).t(), output.narrow(0, 0, t_len - 1).reshape({(t_len - 1) * rows, h}));
  else
    out.w_hh = torch::zeros_like(w_hh);  // one step: the recurrent weights never acted
  // The biases' gradient: the gates' summed over every row, in row order.
  out.b_ih = torch::empty({4 * h}, input.options());
  {
    float* b = out.b_ih.data_ptr<float>();
    std::fill(b, b + 4 * h, 0.0f);
    const float* dg = d_gates.data_ptr<float>();
    for (int64_t r = 0; r < t_len * rows; ++r)
      for (int64_t k = 0; k < 4 * h; ++k) b[k] += dg[r * 4 * h + k];
  }
  out.b_hh = torch::empty_like(out.b_ih);
  std::copy(out.b_ih.data_ptr<float>(), out.b_ih.data_ptr<float>() + 4 * h, out.b_hh.data_ptr<float>());
  if (input_gradient) out.input = torch::mm(d_gates, w_ih).reshape(input.sizes());
  return out;
}

thread_local bool side_by_side = false;

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
    }
    ctx->saved_data["count"] = count;
    ctx->save_for_backward(saved);
    return outputs;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const int64_t count = ctx->saved_data["count"].toInt();
    const torch::autograd::variable_list saved = ctx->get_saved_variables();
    std::vector<LstmGradients> results(static_cast<size_t>(count));
    run_jobs(count, [&](int64_t k) {
      const torch::Tensor* s = saved.data() + k * 7;
      const LstmTape tape{s[4], s[5], s[6]};
      const torch::Tensor* g = grads.data() + k * kOutputsPerRun;
      results[static_cast<size_t>(k)] = lstm_backward(s[0], s[1], s[2], s[3], tape, g[0], g[1], g[2],
                                                      ctx->saved_data["input_gradient_" + std::to_string(k)].toBool());
    });
    torch::autograd::variable_list out;
    for (const LstmGradients& r : results) out.insert(out.end(), {r.input, r.w_ih, r.w_hh, r.b_ih, r.b_hh});
    return out;
  }
};

}  // namespace

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
