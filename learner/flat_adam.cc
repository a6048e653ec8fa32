#include "learner/flat_adam.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace graphworld {
namespace {

std::string state_key(const torch::Tensor& p) { return c10::guts::to_string(p.unsafeGetTensorImpl()); }

torch::Tensor alias(const torch::Tensor& buffer, int64_t offset, const torch::Tensor& like) {
  return torch::empty({0}, buffer.options()).set_(buffer.storage(), buffer.storage_offset() + offset, like.sizes(),
                                                  c10::contiguous_strides(like.sizes()));
}

#if defined(__x86_64__)
#define GRAPHWORLD_ADAM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GRAPHWORLD_ADAM_CLONES
#endif

// Adam on n floats, torch::optim::Adam's arithmetic element by element:
// m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
// p -= step_size m / (sqrt(v) / sqrt(bias_correction2) + eps); with
// kZero the gradient is left zero. (This file is built with
// -fno-math-errno, so that the square root vectorises.)
template <bool kZero>
GRAPHWORLD_ADAM_CLONES void adam_pass(float* __restrict values, float* __restrict grads, float* __restrict m,
                                      float* __restrict v, int64_t n, float scale, float beta1, float beta2,
                                      float root_correction2, float eps, float step_size) {
  const float keep1 = 1.0f - beta1, keep2 = 1.0f - beta2;
  for (int64_t i = 0; i < n; ++i) {
    const float g = grads[i] * scale;
    const float mi = beta1 * m[i] + keep1 * g;
    const float vi = beta2 * v[i] + keep2 * g * g;
    m[i] = mi;
    v[i] = vi;
    values[i] -= step_size * mi / (std::sqrt(vi) / root_correction2 + eps);
    if (kZero) grads[i] = 0.0f;
  }
}

GRAPHWORLD_ADAM_CLONES double sum_of_squares(const float* __restrict x, int64_t n) {
  float lanes[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int64_t k = 0; k < 16; ++k) lanes[k] += x[i + k] * x[i + k];
  double sum = 0;
  for (int64_t k = 0; k < 16; ++k) sum += lanes[k];
  for (; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return sum;
}

// Splits [0, total) into parts cut at multiples of 256 floats, one per
// thread, and runs part(begin, count) for each.
void split_over(WorkerThreads* threads, int64_t total, const std::function<void(int64_t, int64_t)>& part) {
  constexpr int64_t kAlign = 256;
  if (threads == nullptr || threads->count() < 2 || total < 2 * kAlign) {
    part(0, total);
    return;
  }
  const int64_t parts = threads->count();
  const int64_t share = (total / parts + kAlign - 1) / kAlign * kAlign;
  threads->run([&](int32_t k) {
    torch::NoGradGuard worker_no_grad;  // grad mode is per thread
    const int64_t begin = std::min(total, k * share);
    const int64_t end = k + 1 == parts ? total : std::min(total, (k + 1) * share);
    if (end > begin) part(begin, end - begin);
  });
}

bool fused_applies(const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous(); }

}  // namespace

double FlatAdam::gradient_norm(WorkerThreads* threads) const {
  const torch::Tensor& g = flat_.gradients();
  if (!fused_applies(g)) {
    torch::NoGradGuard no_grad;
    return g.norm().item<double>();
  }
  constexpr int64_t kBlock = 1 << 14;
  const int64_t total = g.numel(), blocks = (total + kBlock - 1) / kBlock;
  std::vector<double> sums(static_cast<size_t>(blocks), 0.0);
  const float* data = g.data_ptr<float>();
  const int32_t workers = threads == nullptr ? 1 : threads->count();
  auto blocks_of = [&](int32_t k) {
    for (int64_t b = k; b < blocks; b += workers)
      sums[static_cast<size_t>(b)] = sum_of_squares(data + b * kBlock, std::min(kBlock, total - b * kBlock));
  };
  if (workers < 2) blocks_of(0);
  else threads->run(blocks_of);
  double sum = 0;
  for (double s : sums) sum += s;
  return std::sqrt(sum);
}

FlatAdam::FlatAdam(torch::optim::Adam& adam, const FlatParameters& flat)
    : adam_(adam),
      flat_(flat),
      exp_avg_(torch::zeros_like(flat.values())),
      exp_avg_sq_(torch::zeros_like(flat.values())) {}

bool FlatAdam::adopt_state() {
  if (adam_.param_groups().size() != 1) return false;
  const auto& options = static_cast<const torch::optim::AdamOptions&>(adam_.param_groups()[0].options());
  if (options.amsgrad() || options.weight_decay() != 0) return false;
  const std::vector<torch::Tensor>& params = adam_.param_groups()[0].params();
  auto& states = adam_.state();
  int64_t offset = 0, step = -1;
  torch::NoGradGuard no_grad;
  for (const torch::Tensor& p : params) {
    auto found = states.find(state_key(p));
    if (found == states.end()) {
      auto state = std::make_unique<torch::optim::AdamParamState>();
      state->step(0);
      torch::Tensor m = alias(exp_avg_, offset, p), v = alias(exp_avg_sq_, offset, p);
      m.zero_();
      v.zero_();
      state->exp_avg(m);
      state->exp_avg_sq(v);
      found = states.emplace(state_key(p), std::move(state)).first;
    }
    auto& state = static_cast<torch::optim::AdamParamState&>(*found->second);
    if (step >= 0 && state.step() != step) return false;
    step = state.step();
    const char* at = static_cast<const char*>(exp_avg_.data_ptr()) + sizeof(float) * static_cast<size_t>(offset);
    if (state.exp_avg().data_ptr() != at) {
      // Loaded from a checkpoint (or made by adam.step()): moved in.
      torch::Tensor m = alias(exp_avg_, offset, p), v = alias(exp_avg_sq_, offset, p);
      m.copy_(state.exp_avg());
      v.copy_(state.exp_avg_sq());
      state.exp_avg(m);
      state.exp_avg_sq(v);
    }
    offset += p.numel();
  }
  return offset == flat_.values().numel();
}

FlatAdam::Scalars FlatAdam::scalars(int64_t step) const {
  const auto& options = static_cast<const torch::optim::AdamOptions&>(adam_.param_groups()[0].options());
  Scalars s;
  s.beta1 = std::get<0>(options.betas());
  s.beta2 = std::get<1>(options.betas());
  s.bias_correction1 = 1 - std::pow(s.beta1, static_cast<double>(step));
  s.bias_correction2 = 1 - std::pow(s.beta2, static_cast<double>(step));
  s.lr = options.lr();
  s.eps = options.eps();
  return s;
}

bool FlatAdam::begin_step(int64_t& step) {
  if (!flat_.intact() || !adopt_state()) return false;
  for (const torch::Tensor& p : adam_.param_groups()[0].params()) {
    auto& state = static_cast<torch::optim::AdamParamState&>(*adam_.state()[state_key(p)]);
    state.step(state.step() + 1);
    step = state.step();
  }
  return true;
}

void FlatAdam::step(WorkerThreads* threads) {
  int64_t step = 0;
  if (!begin_step(step)) {
    adam_.step();
    return;
  }
  // torch::optim::Adam's arithmetic, on every parameter at once.
  torch::NoGradGuard no_grad;
  const Scalars s = scalars(step);
  split_over(threads, flat_.values().numel(), [&](int64_t begin, int64_t count) {
    const torch::Tensor grad = flat_.gradients().narrow(0, begin, count);
    torch::Tensor m = exp_avg_.narrow(0, begin, count), v = exp_avg_sq_.narrow(0, begin, count);
    m.mul_(s.beta1).add_(grad, 1 - s.beta1);
    v.mul_(s.beta2).addcmul_(grad, grad, 1 - s.beta2);
    const torch::Tensor denom = (v.sqrt() / std::sqrt(s.bias_correction2)).add_(s.eps);
    flat_.values().narrow(0, begin, count).addcdiv_(m, denom, -s.lr / s.bias_correction1);
  });
}

void FlatAdam::fused_step(WorkerThreads* threads, double gradient_scale, bool zero_gradients) {
  const bool fused = fused_applies(flat_.values()) && fused_applies(flat_.gradients()) && fused_applies(exp_avg_) &&
                     fused_applies(exp_avg_sq_);
  int64_t step = 0;
  if (!fused || !begin_step(step)) {
    torch::NoGradGuard no_grad;
    if (gradient_scale != 1.0) flat_.gradients().mul_(gradient_scale);
    if (fused) adam_.step();  // begin_step refused: the flat form does not apply
    else this->step(threads);
    if (zero_gradients) flat_.gradients().zero_();
    return;
  }
  const Scalars s = scalars(step);
  float *values = flat_.values().data_ptr<float>(), *grads = flat_.gradients().data_ptr<float>();
  float *m = exp_avg_.data_ptr<float>(), *v = exp_avg_sq_.data_ptr<float>();
  split_over(threads, flat_.values().numel(), [&](int64_t begin, int64_t count) {
    auto* pass = zero_gradients ? &adam_pass<true> : &adam_pass<false>;
    pass(values + begin, grads + begin, m + begin, v + begin, count, static_cast<float>(gradient_scale),
         static_cast<float>(s.beta1), static_cast<float>(s.beta2), static_cast<float>(std::sqrt(s.bias_correction2)),
         static_cast<float>(s.eps), static_cast<float>(s.lr / s.bias_correction1));
  });
}

}  // namespace graphworld
