// A network's parameters, and their gradients, moved into one contiguous
// buffer each. The parameter tensors stay the same objects (modules and
// optimisers keep working) but their data lives in `values()`, and their
// gradients are fixed tensors in `gradients()` that backward passes add
// into. Whole-network work is then one operation instead of one per tensor
// (sixty-odd here): zeroing, copying a network into its replicas, summing
// the replicas' gradients, and the gradient norm and its clipping, which a
// PPO minibatch step on a CPU otherwise spends a tenth of its time
// dispatching. Internal to learner/ (it takes tensors).
#pragma once

#include <torch/torch.h>

#include <vector>

namespace graphworld {

class FlatParameters {
 public:
  // Moves the data of `parameters` (all on one device, float) into one
  // buffer, values unchanged, and gives each a zero gradient in another.
  explicit FlatParameters(const std::vector<torch::Tensor>& parameters);

  const torch::Tensor& values() const { return values_; }        // [total]
  const torch::Tensor& gradients() const { return gradients_; }  // [total]
  // Whether the tensors' data and gradients are still this buffer's (a
  // module moved to another device, or a gradient replaced, is not).
  bool intact() const;

 private:
  std::vector<torch::Tensor> parameters_;
  torch::Tensor values_, gradients_;
};

// Gradient-norm clipping, the one definition the learners use: the L2 norm
// of all the gradients as one vector; when max_norm / (norm + 1e-6) is
// below 1 every gradient is scaled by it. Returns the norm before. The two
// forms give the same bits for the same gradients (the norm of one
// contiguous vector either way).
double clip_flat_gradients(const FlatParameters& flat, double max_norm);
// Parameters without a gradient are left out.
double clip_gradients(const std::vector<torch::Tensor>& parameters, double max_norm);

}  // namespace graphworld
