#include "env/cost/aten_op_timer.h"

#include <c10/core/InferenceMode.h>
#include <torch/csrc/api/include/torch/version.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "common/error.h"
#include "common/latency.h"
#include "common/stopwatch.h"
#include "env/ops/aten_kernels.h"
#include "env/ops/executor.h"
#include "env/ops/onednn_kernels.h"

namespace graphworld {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown";
}

at::Tensor random_value(const TensorInfo& info, uint64_t seed) {
  auto data = std::make_shared<TensorData>(info.dtype, info.shape);
  if (info.dtype == DType::Float32) {
    fill_random(RandomInit{seed, -1.0f, 1.0f}, data->floats(), data->numel());
  } else {
    std::fill(data->ints(), data->ints() + data->numel(), 0);
  }
  return to_aten(std::move(data));
}

// `dense` in oneDNN's blocked layout, as a convolution leaves it. A plain
// to_mkldnn() keeps the NCHW order, on which oneDNN's pools and eltwise ops
// run 10-20x slower than on the blocked layout they meet in a network.
at::Tensor blocked_like_conv_output(const at::Tensor& dense) {
  int64_t channels = dense.size(1);
  at::Tensor ones = at::ones({channels, 1, 1, 1}, dense.options()).to_mkldnn();
  at::Tensor packed = at::mkldnn_reorder_conv2d_weight(ones, {0, 0}, {1, 1}, {1, 1}, channels);
  return at::mkldnn_convolution(dense.contiguous().to_mkldnn(), packed, c10::nullopt, {0, 0}, {1, 1}, {1, 1}, channels);
}

}  // namespace

std::string cpu_fingerprint(int threads) {
  return "cpu=" + cpu_model_name() + "; cores=" + std::to_string(std::thread::hardware_concurrency()) +
         "; threads=" + std::to_string(threads) + "; libtorch=" + TORCH_VERSION +
         "; onednn=" + (onednn_available() ? "1" : "0") + "; timer=aten-3";
}

AtenOpTimer::AtenOpTimer(int threads, TimingPolicy policy)
    : threads_(set_compute_threads(threads)), policy_(policy) {}

std::string AtenOpTimer::fingerprint() const { return cpu_fingerprint(threads_); }

namespace {

// One configuration made ready to run the way the executor runs it: random
// inputs (in oneDNN's blocked layout where the op would meet them so), conv
// weights packed once.
class RunnableOp {
 public:
  explicit RunnableOp(const OpCostKey& key) {
    op_.type = key.type;
    op_.name = "timed";
    op_.attrs = key.attrs;
    op_.outputs = key.outputs;
    std::vector<at::Tensor> constants;
    for (size_t k = 0; k < key.inputs.size(); ++k) {
      args_.push_back(random_value(key.inputs[k], 1000 + k));
      constants.push_back(key.input_is_constant(k) ? args_.back() : at::Tensor());
    }
    prepared_ = prepare_onednn(op_, constants);
    // Inputs arrive in the layout the key says (the executor's, see
    // blocked_layout.h): an op that keeps the blocked layout is timed without
    // a reorder, one that cannot pays for converting, as in the network.
    for (size_t k = 0; k < args_.size(); ++k)
      if (key.input_is_blocked(k) && key.inputs[k].rank() == 4 && key.inputs[k].dtype == DType::Float32)
        args_[k] = blocked_like_conv_output(args_[k]);
  }

  void run_once() {
    // A fresh copy of the argument list each run: run_layout_aware replaces
    // entries with their conversions, which every run must pay for again.
    std::vector<at::Tensor> args = args_;
    // As in a network where nothing else reads the input: a Relu, Sigmoid or
    // Tanh on a blocked input overwrites it (the values stay finite however
    // often it is applied).
    std::vector<at::Tensor> outs = run_layout_aware(op_, prepared_, args, /*first_input_dies=*/true);
    // A view that is not contiguous costs a copy wherever it is read next.
    for (at::Tensor& out : outs)
      if (!out.is_mkldnn() && !out.is_contiguous()) out = out.contiguous();
  }

  // Milliseconds of one run.
  double timed_run() {
    Stopwatch watch;
    run_once();
    return watch.elapsed_ms();
  }

 private:
  Op op_;
  std::vector<at::Tensor> args_;
  PreparedOp prepared_;
};

bool wants_more(size_t samples, const Stopwatch& total, int min_repeats, int max_repeats, double min_total_ms) {
  int n = static_cast<int>(samples);
  return n < min_repeats || (total.elapsed_ms() < min_total_ms && n < max_repeats);
}

}  // namespace

double AtenOpTimer::time_ms(const OpCostKey& key) {
  set_compute_threads(threads_);
  c10::InferenceMode guard;
  try {
    RunnableOp op(key);
    for (int i = 0; i < policy_.warmup; ++i) op.run_once();
    std::vector<double> samples;
    Stopwatch total;
    while (wants_more(samples.size(), total, policy_.min_repeats, policy_.max_repeats, policy_.min_total_ms))
      samples.push_back(op.timed_run());
    return percentile(std::move(samples), 0.5);
  } catch (const c10::Error& e) {
    throw GraphError("timing " + key.canonical() + " failed: " + e.what_without_backtrace());
  }
}

double AtenOpTimer::time_ratio(const OpCostKey& key, const OpCostKey& anchor) {
  set_compute_threads(threads_);
  c10::InferenceMode guard;
  try {
    RunnableOp op(key);
    RunnableOp reference(anchor);
    for (int i = 0; i < policy_.warmup; ++i) {
      op.run_once();
      reference.run_once();
    }
    // Each sample is one run of each, back to back, so both see the same
    // moment of the machine; which goes first alternates, so neither is
    // always the one that runs on the other's leftovers in the caches.
    std::vector<double> ratios;
    Stopwatch total;
    while (wants_more(ratios.size(), total, policy_.ratio_min_repeats, policy_.ratio_max_repeats,
                      policy_.ratio_min_total_ms)) {
      double op_ms = 0, reference_ms = 0;
      if (ratios.size() % 2 == 0) {
        op_ms = op.timed_run();
        reference_ms = reference.timed_run();
      } else {
        reference_ms = reference.timed_run();
        op_ms = op.timed_run();
      }
      ratios.push_back(op_ms / std::max(reference_ms, 1e-6));
    }
    return percentile(std::move(ratios), 0.5);
  } catch (const c10::Error& e) {
    throw GraphError("timing " + key.canonical() + " against " + anchor.canonical() +
                     " failed: " + e.what_without_backtrace());
  }
}

}  // namespace graphworld
