// PPO minibatch gradients at fixed sizes (learner/padded_minibatch.h), so
// that on a GPU a minibatch's forward and backward pass is one CUDA graph
// replay (learner/cuda_graph_work.h) instead of a few hundred kernel
// launches: at the policy network's width a GPU's minibatch step is almost
// all launch overhead.
//
// Per minibatch the samples are laid out padded in three pinned host arrays
// and copied to fixed device buffers; the captured work zeroes the flat
// gradient buffer, evaluates the network on the buffers, forms the clipped
// objective with a weight per slot (learner/ppo_loss.h's
// weighted_ppo_loss; padding weighs 0) and backpropagates into the flat
// gradients. One read of the loss's five figures per minibatch is the only
// wait for the device. Gradient clipping and Adam stay outside the graph
// (run_ppo_epochs reads the norm to skip non-finite steps).
//
// One capacity is held at a time. A minibatch that does not fit grows it
// (each count to at least the ladder's step above what it needs) and the
// work is captured again, so a run makes a handful of captures and keeps
// one graph's memory. Without cuda_graphs (and on a CPU) the same padded
// work runs eagerly: the tests compare it there with minibatch_gradients.
//
// The graph reads the module's parameters and the flat gradients where
// they are: in-place updates (Adam, loading a checkpoint) keep it valid;
// the module must not move to another device. Internal to learner/.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <utility>

#include "learner/flat_parameters.h"
#include "learner/padded_minibatch.h"
#include "learner/policy_module.h"
#include "learner/ppo_epochs.h"

namespace graphworld {

class CudaGraphWork;

class PaddedPpoGradients {
 public:
  // The observation and action of sample i (an index into PpoSamples).
  using SampleAt = std::function<std::pair<const Observation*, Action>(int64_t)>;
  // Sample i is steps[i], which must outlive the function.
  static SampleAt of_steps(const std::vector<const RolloutStep*>& steps);

  // `flat` holds `module`'s parameters. `minibatch_size`: the sample slots
  // of the usual minibatch (a smaller last one is padded up to it).
  // cuda_graphs needs the module on a CUDA device and a LibTorch with CUDA
  // (UsageError otherwise).
  PaddedPpoGradients(PolicyModule module, const FlatParameters& flat, int64_t minibatch_size, bool cuda_graphs);
  ~PaddedPpoGradients();
  PaddedPpoGradients(const PaddedPpoGradients&) = delete;
  PaddedPpoGradients& operator=(const PaddedPpoGradients&) = delete;

  // minibatch_gradients' contract for one network (learner/ppo_epochs.h):
  // flat's gradients become the gradient of `weight` times the mean loss
  // over `indices`, and the figures returned are weighted the same way.
  // UsageError for an action that its observation does not allow, and for
  // any call after a capture failed (the process must start again).
  PpoLoss gradients(const SampleAt& sample, const PpoSamples& samples, const std::vector<int64_t>& indices,
                    double weight, const PpoCoefficients& coefficients);

  int64_t captures() const { return captures_; }  // graphs made so far
  const MinibatchCapacity& capacity() const;      // the one held now (zeros before the first minibatch)

 private:
  struct Buffers;
  void run(Buffers& b);  // the padded forward and backward pass on b's device buffers

  PolicyModule module_;
  const FlatParameters& flat_;
  int64_t minibatch_size_;
  bool cuda_graphs_;
  torch::Device device_;
  std::unique_ptr<Buffers> buffers_;
  std::unique_ptr<CudaGraphWork> graph_;
  int64_t captures_ = 0;
  bool capture_failed_ = false;  // LibTorch may be left unfit to capture again
};

}  // namespace graphworld
