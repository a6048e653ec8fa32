// Adam's step on a network whose parameters are one flat buffer
// (learner/flat_parameters.h): the same arithmetic as LibTorch's
// torch::optim::Adam, on the whole network in a handful of operations
// instead of a dozen per parameter tensor. The torch::optim::Adam object
// stays the owner of the state (step counts and moments), which it saves
// and loads as before: its moment tensors are made views of two flat
// buffers here, and moments it loaded from a checkpoint are moved into
// them on the next step. Internal to learner/ (it takes tensors).
#pragma once

#include <torch/torch.h>

#include "learner/flat_parameters.h"
#include "common/worker_threads.h"

namespace graphworld {

// One Adam step of `adam` on `flat`'s parameters, which must be exactly
// adam's parameters in order, with their gradients in `flat`. Falls back
// to adam.step() where the flat form does not apply (AMSGrad, weight decay,
// parameter tensors with different step counts, a broken flat buffer).
class FlatAdam {
 public:
  FlatAdam(torch::optim::Adam& adam, const FlatParameters& flat);
  // With `threads`, each of them updates its own part of the buffers (cut
  // at multiples of 256 floats, so that every element goes through the same
  // vector code as in one piece: the same bits); the step is memory-bound,
  // and a world model's million parameters made it a sixth of an epoch.
  // The parameters after it are torch::optim::Adam's, bit for bit.
  void step(WorkerThreads* threads = nullptr);

  // The same step as one pass over the buffers on the CPU with float
  // buffers (gradient, both moments and the values read once, each written
  // once), where LibTorch's operators make eight: 3.5x faster on a world
  // model's million parameters. The arithmetic is Adam's, but rounded as
  // this loop rounds it (contracted multiply-adds), not as LibTorch's
  // kernels do, so not bit for bit torch::optim::Adam's. Each gradient is
  // multiplied by `gradient_scale` first (clipping, folded in), and with
  // `zero_gradients` the gradients are left zero for the next backward
  // pass. Elsewhere (a GPU's buffers) it is step() after scaling.
  void fused_step(WorkerThreads* threads, double gradient_scale, bool zero_gradients);

  // The L2 norm of all the gradients: on the CPU over fixed blocks of the
  // buffer, each summed on whichever thread takes it, so the result does
  // not depend on the thread count.
  double gradient_norm(WorkerThreads* threads = nullptr) const;

 private:
  // Adam's options and bias corrections for step number `step`.
  struct Scalars {
    double beta1, beta2, bias_correction1, bias_correction2, lr, eps;
  };
  Scalars scalars(int64_t step) const;
  // Counts the step in adam's state; false where the flat form does not
  // apply (then adam.step() must run instead).
  bool begin_step(int64_t& step);
  // Makes every parameter's state views of moments_ (creating or moving it).
  bool adopt_state();

  torch::optim::Adam& adam_;
  const FlatParameters& flat_;
  torch::Tensor exp_avg_, exp_avg_sq_;  // [total], the moments
};

}  // namespace graphworld
