#include "learner/flat_parameters.h"

#include "common/error.h"

namespace graphworld {
namespace {

// A tensor of `like`'s shape over `buffer`'s storage from `offset` on, that
// is not an autograd view (its gradient may be assigned and detached).
torch::Tensor alias(const torch::Tensor& buffer, int64_t offset, const torch::Tensor& like) {
  return torch::empty({0}, buffer.options()).set_(buffer.storage(), buffer.storage_offset() + offset, like.sizes(),
                                                  c10::contiguous_strides(like.sizes()));
}

}  // namespace

FlatParameters::FlatParameters(const std::vector<torch::Tensor>& parameters) : parameters_(parameters) {
  if (parameters_.empty()) throw UsageError("flat parameters: no parameters");
  int64_t total = 0;
  for (const torch::Tensor& p : parameters_) {
    if (p.scalar_type() != torch::kFloat32 || p.device() != parameters_[0].device())
      throw UsageError("flat parameters: every parameter must be float on one device");
    total += p.numel();
  }
  const torch::TensorOptions options = parameters_[0].options().requires_grad(false);
  values_ = torch::empty({total}, options);
  gradients_ = torch::zeros({total}, options);
  torch::NoGradGuard no_grad;
  int64_t offset = 0;
  for (torch::Tensor& p : parameters_) {
    torch::Tensor data = alias(values_, offset, p);
    data.copy_(p);
    p.set_data(data);
    p.mutable_grad() = alias(gradients_, offset, p);
    offset += p.numel();
  }
}

bool FlatParameters::intact() const {
  const char* begin = static_cast<const char*>(values_.data_ptr());
  const char* grad_begin = static_cast<const char*>(gradients_.data_ptr());
  int64_t offset = 0;
  for (const torch::Tensor& p : parameters_) {
    const size_t at = sizeof(float) * static_cast<size_t>(offset);
    if (p.data_ptr() != begin + at || !p.grad().defined() || p.grad().data_ptr() != grad_begin + at) return false;
    offset += p.numel();
  }
  return true;
}

double clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> gradients;
  for (const torch::Tensor& p : parameters)
    if (p.grad().defined()) gradients.push_back(p.grad().flatten());
  if (gradients.empty()) return 0;
  const double norm = torch::cat(gradients).norm().item<double>();
  const double scale = max_norm / (norm + 1e-6);
  if (scale < 1.0)
    for (const torch::Tensor& p : parameters)
      if (p.grad().defined()) p.grad().mul_(scale);
  return norm;
}

double clip_flat_gradients(const FlatParameters& flat, double max_norm) {
  torch::NoGradGuard no_grad;
  const double norm = flat.gradients().norm().item<double>();
  const double scale = max_norm / (norm + 1e-6);
  if (scale < 1.0) flat.gradients().mul_(scale);
  return norm;
}

}  // namespace graphworld
