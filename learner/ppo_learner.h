// The learning half of training: PPO updates of a PolicyNetwork from
// rollouts (clipped objective, GAE, value loss, entropy bonus, advantage
// normalisation, minibatch Adam, gradient-norm clipping, several epochs).
//
// It owns the parameters and the optimiser. The single-process trainer calls
// update() on each rollout its collector made; the distributed learner calls
// it on rollouts that arrived from actors. save_state()/restore_state() carry
// everything an update depends on (parameters, Adam moments and step counts,
// the minibatch shuffling stream, the update counter) for checkpoints.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "learner/policy_network.h"
#include "learner/rollout.h"

namespace graphworld {

class DataParallelGroup;
class PaddedPpoGradients;

struct PpoOptions {
  double learning_rate = 3e-4;
  int32_t epochs = 2;
  int32_t minibatch_size = 64;
  double gamma = 0.99;
  double gae_lambda = 0.95;
  double clip = 0.2;
  double value_coef = 0.5;
  double entropy_coef = 0.01;
  double max_grad_norm = 0.5;
  bool normalize_advantages = true;
  uint64_t seed = 0;  // minibatch shuffling
  // Threads that share each minibatch, each with its own copy of the network
  // (learner/ppo_epochs.h): on CPUs, one per core the learner may use, with
  // LibTorch itself on one thread. The summed gradient is the one a single
  // network computes, up to rounding.
  int32_t workers = 1;
  // On a GPU: each minibatch's forward and backward pass padded to fixed
  // sizes and replayed from a CUDA graph (learner/padded_ppo_gradients.h),
  // one launch in place of a few hundred. Needs a CUDA device, one worker
  // and a LibTorch with CUDA (UsageError otherwise).
  bool cuda_graphs = false;
};

// Averages over the update's minibatch steps, unless said otherwise.
struct UpdateStats {
  int64_t samples = 0;
  double policy_loss = 0, value_loss = 0, entropy = 0;
  double approx_kl = 0, clip_fraction = 0;
  double explained_variance = 0;  // of the value targets by the acting values, over the whole batch
  double grad_norm = 0;           // before clipping
  double update_s = 0;            // wall time of the update
  int64_t skipped_minibatches = 0;  // steps not taken: the loss or gradient was not finite
};

class PpoLearner {
 public:
  // Throws UsageError naming a bad option. `device`: where the network
  // trains, "cpu" or "cuda:N" (learner/compute_device.h resolves a request).
  PpoLearner(const PolicyNetworkConfig& network, const PpoOptions& options, const std::string& device = "cpu");
  ~PpoLearner();

  PolicyNetwork& policy() { return policy_; }
  const PpoOptions& options() const { return options_; }
  int64_t version() const { return version_; }  // updates done so far

  // One PPO update on the steps of `rollouts`; version() goes up by one.
  // With a data-parallel group, every rank calls it on the same rollouts
  // and evaluates only its share of each minibatch.
  UpdateStats update(const std::vector<const Rollout*>& rollouts);

  // Joins a data-parallel group (learner/data_parallel.h); nullptr leaves
  // it. The group must outlive the learner's updates.
  // Collective (every rank calls it at the same point): gradients are summed
  // over the group from now on, with NCCL where every rank is on a GPU.
  void set_data_parallel(DataParallelGroup* group);

  std::string save_state() const;
  // Throws FormatError (naming `what`) when the bytes are not a learner state
  // for this network configuration.
  void restore_state(const std::string& bytes, const std::string& what);

 private:
  struct Optimizer;
  struct Replicas;
  PpoOptions options_;
  PolicyNetwork policy_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Replicas> replicas_;  // the other workers' copies of the network and their threads
  std::mt19937_64 shuffle_rng_;
  int64_t version_ = 0;
  DataParallelGroup* group_ = nullptr;
  std::unique_ptr<PaddedPpoGradients> padded_;  // with options_.cuda_graphs: reads the policy and replicas_' flat buffer
};

}  // namespace graphworld
