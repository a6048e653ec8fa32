// The agent's network: a graph encoder (message passing over edges, nodes
// and globals, in the style of graph_nets) and a two-level policy with a
// value head (docs/architecture.md).
//
//   xfer head      logits over the N rules plus NO-OP from the graph's
//                  embedding; masked xfers get probability exactly 0.
//   location head  scores each candidate location of the chosen xfer from
//                  the mean embedding of the nodes it matched, the xfer's own
//                  learned embedding and the graph's embedding. It scores
//                  what a location is, not its index, so a policy carries
//                  over to graphs it was not trained on.
//   value head     the graph embedding's expected return.
//
// With `location_rewards`, both policy heads also read the reward each
// allowed location would earn at once (Observation::location_reward, the
// step greedy search looks one ahead for): the location head takes a
// candidate's own reward as one more input, and each xfer's logit gains a
// learned function of its best location's reward. The policy starts from
// what greedy search sees and learns where to depart from it.
//
// log p(action) = log p(xfer) + log p(location | xfer); NO-OP has no
// location term. Many observations of different sizes share one forward
// pass (learner/observation_batch.h). This header is free of LibTorch; the
// torch modules are in learner/policy_module.h, for learner/ .cc files.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/gym/graph_env.h"

namespace graphworld {

struct PolicyNetworkConfig {
  int32_t num_xfers = 0;  // N, the rule library's size; NO-OP is xfer N
  int32_t hidden = 32;    // embedding width
  int32_t message_rounds = 3;
  uint64_t seed = 0;      // parameter initialisation
  // Read the observations' location rewards (their environments must have
  // GraphEnvOptions::location_rewards on; acting on one without them is a
  // UsageError).
  bool location_rewards = false;
};

// One observation's action and what PPO keeps of it.
struct PolicyStep {
  Action action;
  float log_prob = 0;  // log p(xfer) + log p(location | xfer)
  float value = 0;
};

class PolicyNetwork {
 public:
  // Throws UsageError naming a bad setting.
  explicit PolicyNetwork(const PolicyNetworkConfig& config);
  ~PolicyNetwork();
  PolicyNetwork(PolicyNetwork&&) noexcept;
  PolicyNetwork& operator=(PolicyNetwork&&) noexcept;

  const PolicyNetworkConfig& config() const;
  int64_t num_parameters() const;

  // One action per observation, from one batched forward pass without
  // gradients: sampled with `rng`, or the most likely xfer and location when
  // `greedy`. Throws UsageError if an observation's xfer count differs from
  // the network's.
  std::vector<PolicyStep> act(const std::vector<const Observation*>& observations, std::mt19937_64& rng,
                              bool greedy = false);

  // log p(action) per observation under the current parameters (no gradient).
  std::vector<float> log_probs(const std::vector<const Observation*>& observations, const std::vector<Action>& actions);

  // The value head's estimate per observation (no gradient).
  std::vector<float> values(const std::vector<const Observation*>& observations);

  // The parameters as bytes (a LibTorch archive), and back. load_parameters
  // throws FormatError naming `what` when the bytes are not an archive of a
  // network with this one's configuration.
  std::string save_parameters() const;
  void load_parameters(const std::string& bytes, const std::string& what);
  // Copies another network's parameters (same configuration) into this one.
  void copy_parameters_from(const PolicyNetwork& other);

  // Moves the parameters to "cpu" or "cuda:N" (learner/compute_device.h
  // resolves a config's request). Move before an optimiser takes them.
  // Every method keeps working: inputs go to the device, results come back.
  void to_device(const std::string& device);
  std::string device() const;

  // The embeddings of the observations' graphs, [num observations][2 * hidden]
  // (no gradient): for tests, and the world model's latent state later.
  std::vector<std::vector<float>> graph_embeddings(const std::vector<const Observation*>& observations);

  struct Impl;  // the torch side (learner/policy_module.h)
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
