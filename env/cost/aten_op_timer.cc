#include "env/cost/aten_op_timer.h"

#include <c10/core/InferenceMode.h>
#include <torch/csrc/api/include/torch/version.h>

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

// Ops the executor runs in oneDNN's blocked layout when their input already is.
bool takes_blocked_input(OpType type) {
  switch (type) {
    case OpType::Conv:
    case OpType::Relu:
    case OpType::Sigmoid:
    case OpType::Tanh:
    case OpType::Add:
    case OpType::Mul:
    case OpType::BatchNorm:
    case OpType::MaxPool:
    case OpType::AvgPool:
    case OpType::GlobalAvgPool:
      return true;
    default:
      return false;
  }
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
         "; onednn=" + (onednn_available() ? "1" : "0") + "; timer=aten-2";
}

AtenOpTimer::AtenOpTimer(int threads, TimingPolicy policy)
    : threads_(set_compute_threads(threads)), policy_(policy) {}

std::string AtenOpTimer::fingerprint() const { return cpu_fingerprint(threads_); }

double AtenOpTimer::time_ms(const OpCostKey& key) {
  set_compute_threads(threads_);
  c10::InferenceMode guard;
  Op op;
  op.type = key.type;
  op.name = "timed";
  op.attrs = key.attrs;
  op.outputs = key.outputs;

  std::vector<at::Tensor> args;
  std::vector<at::Tensor> constants;
  for (size_t k = 0; k < key.inputs.size(); ++k) {
    args.push_back(random_value(key.inputs[k], 1000 + k));
    constants.push_back(key.input_is_constant(k) ? args.back() : at::Tensor());
  }
  PreparedOp prepared = prepare_onednn(op, constants);
  // In a network, the input of a blocked-layout op usually comes from another
  // such op, so it is timed already in that layout (not paying the reorder).
  if (onednn_available() && takes_blocked_input(op.type) && !args.empty() && key.inputs[0].rank() == 4 &&
      key.inputs[0].dtype == DType::Float32 && !key.input_is_constant(0)) {
    bool same_shape = args.size() < 2 || key.inputs[1].shape == key.inputs[0].shape;
    if (op.type == OpType::Conv ? prepared.packed_weight.defined() : same_shape) {
      for (size_t k = 0; k < args.size(); ++k)
        if (!key.input_is_constant(k) && key.inputs[k].rank() == 4) args[k] = blocked_like_conv_output(args[k]);
    }
  }

  auto run_once = [&] {
    std::vector<at::Tensor> outs = run_layout_aware(op, prepared, args, false);
    // A view that is not contiguous costs a copy wherever it is read next.
    for (at::Tensor& out : outs)
      if (!out.is_mkldnn() && !out.is_contiguous()) out = out.contiguous();
  };
  try {
    for (int i = 0; i < policy_.warmup; ++i) run_once();
    std::vector<double> samples;
    Stopwatch total;
    while (static_cast<int>(samples.size()) < policy_.min_repeats ||
           (total.elapsed_ms() < policy_.min_total_ms && static_cast<int>(samples.size()) < policy_.max_repeats)) {
      Stopwatch watch;
      run_once();
      samples.push_back(watch.elapsed_ms());
    }
    return percentile(std::move(samples), 0.5);
  } catch (const c10::Error& e) {
    throw GraphError("timing " + key.canonical() + " failed: " + e.what_without_backtrace());
  }
}

}  // namespace graphworld
