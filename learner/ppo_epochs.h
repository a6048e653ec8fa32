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

#include "learner/policy_module.h"
#include "learner/ppo_learner.h"
#include "learner/ppo_loss.h"

namespace graphworld {

class DataParallelGroup;
class WorkerThreads;
class FlatParameters;
class FlatAdam;

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
// `module`'s evaluation of rollout steps, sample i being steps[i] (its
// observation and stored action): what PpoLearner's replicas run. `steps`
// must outlive the function.
EvaluateSamples evaluate_rollout_steps(PolicyModule module, const std::vector<const RolloutStep*>& steps);

// Copies of one network that share each minibatch in one process, each on
// its own thread (common/worker_threads.h): replica 0 is the network the
// optimiser steps; the others take its parameters before every minibatch,
// and their gradients are added to its own, in replica order (so a run is
// as deterministic with several replicas as with one). Each replica
// evaluates a contiguous part of the minibatch (of about equal work with
// sample_cost).
struct PpoReplicas {
  std::vector<EvaluateSamples> evaluate;               // per replica
  std::vector<std::vector<torch::Tensor>> parameters;  // per replica, the same layout in each
  WorkerThreads* threads = nullptr;                    // evaluate.size() workers; may be null for one replica
  // Optional, one per replica: its parameters in one buffer
  // (learner/flat_parameters.h), for whole-network copies, sums, zeroing
  // and clipping. Used while every one is intact.
  std::vector<const FlatParameters*> flat;
  // Optional: steps the optimiser on replica 0's flat buffer
  // (learner/flat_adam.h) in place of optimizer.step().
  FlatAdam* flat_adam = nullptr;
  // Optional: the work of evaluating sample i (its graph's size), so that
  // the replicas' contiguous parts are of about equal work rather than of
  // equal counts. Each part's loss is still weighted by its sample count.
  std::function<double(int64_t)> sample_cost;
  // Optional: computes a minibatch's gradients into replica 0's flat
  // buffer in place of `evaluate` (minibatch_gradients' contract, one
  // network): the padded path, captured in a CUDA graph on a GPU
  // (learner/padded_ppo_gradients.h).
  std::function<PpoLoss(const PpoSamples&, const std::vector<int64_t>& indices, double weight,
                        const PpoCoefficients&)>
      padded;
};

// Evaluates the samples at `indices` split into contiguous parts over the
// replicas, and backpropagates each part's loss scaled by `weight` times the
// part's share of `indices`. Replica 0's gradients are zeroed first and end
// as the sum over the replicas: with weight 1, the gradient of the mean loss
// over `indices`, as one network computes it. The returned figures are the
// parts' figures weighted the same way (summed); its `total` is undefined.
// `samples` must be normalised already.
PpoLoss minibatch_gradients(const PpoReplicas& replicas, const PpoSamples& samples,
                            const std::vector<int64_t>& indices, double weight,
                            const PpoCoefficients& coefficients);

// Runs options.epochs epochs over `samples` with `optimizer` on replica 0's
// parameters, drawing each epoch's order from `shuffle_rng`. With a
// data-parallel group every rank calls it with the same samples, evaluates
// only its contiguous share of each minibatch, and the gradients and losses
// are summed over the group. Returns the averages over the steps taken, the
// explained variance and the skipped steps; update_s is left to the caller.
UpdateStats run_ppo_epochs(const PpoOptions& options, PpoSamples samples, const PpoReplicas& replicas,
                           torch::optim::Optimizer& optimizer, std::mt19937_64& shuffle_rng,
                           DataParallelGroup* group = nullptr);
// One network, on the calling thread.
UpdateStats run_ppo_epochs(const PpoOptions& options, PpoSamples samples, const EvaluateSamples& evaluate,
                           torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& parameters,
                           std::mt19937_64& shuffle_rng, DataParallelGroup* group = nullptr);

}  // namespace graphworld
