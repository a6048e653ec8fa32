#include "learner/flat_adam.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace graphworld {
namespace {

std::string state_key(const torch::Tensor& p) { return c10::guts::to_string(p.unsafeGetTensorImpl()); }

torch::Tensor alias(const torch::Tensor& buffer, int64_t offset, const torch::Tensor& like) {
  return torch::empty({0}, buffer.options()).set_(buffer.storage(), buffer.storage_offset() + offset, like.sizes(),
                                                  c10::contiguous_strides(like.sizes()));
}

}  // namespace

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

void FlatAdam::step(WorkerThreads* threads) {
  if (!flat_.intact() || !adopt_state()) {
    adam_.step();
    return;
  }
  const auto& options = static_cast<const torch::optim::AdamOptions&>(adam_.param_groups()[0].options());
  int64_t step = 0;
  for (const torch::Tensor& p : adam_.param_groups()[0].params()) {
    auto& state = static_cast<torch::optim::AdamParamState&>(*adam_.state()[state_key(p)]);
    state.step(state.step() + 1);
    step = state.step();
  }
  // torch::optim::Adam's arithmetic, on every parameter at once.
  torch::NoGradGuard no_grad;
  const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  auto update = [&](int64_t begin, int64_t count) {
    const torch::Tensor grad = flat_.gradients().narrow(0, begin, count);
    torch::Tensor m = exp_avg_.narrow(0, begin, count), v = exp_avg_sq_.narrow(0, begin, count);
    m.mul_(beta1).add_(grad, 1 - beta1);
    v.mul_(beta2).addcmul_(grad, grad, 1 - beta2);
    const torch::Tensor denom = (v.sqrt() / std::sqrt(bias_correction2)).add_(options.eps());
    flat_.values().narrow(0, begin, count).addcdiv_(m, denom, -options.lr() / bias_correction1);
  };
  const int64_t total = flat_.values().numel();
  constexpr int64_t kAlign = 256;
  if (threads == nullptr || threads->count() < 2 || total < 2 * kAlign) {
    update(0, total);
    return;
  }
  const int64_t parts = threads->count();
  const int64_t share = (total / parts + kAlign - 1) / kAlign * kAlign;
  threads->run([&](int32_t k) {
    torch::NoGradGuard worker_no_grad;  // grad mode is per thread
    const int64_t begin = std::min(total, k * share);
    const int64_t end = k + 1 == parts ? total : std::min(total, (k + 1) * share);
    if (end > begin) update(begin, end - begin);
  });
}

}  // namespace graphworld
