// PPO's epochs over one batch of samples: the one update loop of the real
// trainer (PpoLearner::update, on rollouts) and of the dream's
// (learn_from_dream_batch, worldmodel/dream_trainer.h). Per epoch, a
// shuffled order cut into minibatches; per minibatch, the clipped objective
// (ppo_loss.h), backward, the gradient norm clipped and one optimiser step,
// or no step when the loss or the gradient is not finite (counted). Each
// caller lays out its samples and says how its network evaluates some of
// them. Internal to learner/ and worldmodel/ (it takes tensors).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <random>
#include <vector>

#include "learner/ppo_learner.h"

namespace graphworld {

class DataParallelGroup;

// One entry per sample, in the caller's order (the order advantages are
// normalised in, so part of what an update computes).
struct PpoSamples {
  std::vector<float> advantages;    // GAE, per trajectory; normalised here when the options say so
  std::vector<float> returns;       // the value targets
  std::vector<float> old_log_prob;  // of the action, under the acting parameters
  std::vector<float> values;        // the acting values (explained variance)
};

// The network's fresh outputs for the samples at `indices`, each [indices.size()].
struct SampleEvaluation {
  torch::Tensor log_prob, value, entropy;
};
using EvaluateSamples = std::function<SampleEvaluation(const std::vector<int64_t>& indices)>;

// Runs options.epochs epochs over `samples` with `optimizer` on
// `parameters`, drawing each epoch's order from `shuffle_rng`. With a
// data-parallel group every rank calls it with the same samples, evaluates
// only its contiguous share of each minibatch, and the gradients and losses
// are summed over the group. Returns the averages over the steps taken, the
// explained variance and the skipped steps; update_s is left to the caller.
UpdateStats run_ppo_epochs(const PpoOptions& options, PpoSamples samples, const EvaluateSamples& evaluate,
                           torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& parameters,
                           std::mt19937_64& shuffle_rng, DataParallelGroup* group = nullptr);

}  // namespace graphworld
