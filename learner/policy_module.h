// The torch side of PolicyNetwork. Included only by learner/ .cc files:
// <torch/torch.h> is slow to compile and stays out of public headers.
#pragma once

#include <torch/torch.h>

#include "learner/observation_batch.h"
#include "learner/policy_network.h"
#include "learner/segment_ops.h"

namespace graphworld {

// Tensors of an ObservationBatch.
struct BatchTensors {
  torch::Tensor node_features, edge_features, globals;  // [Nn, F], [Ne, E], [B, G]
  torch::Tensor senders, receivers, node_graph, edge_graph;  // int64
  torch::Tensor node_count, edge_count;  // [B, 1] float, at least 1 (for means)
  torch::Tensor xfer_mask;  // [B, N + 1] bool
  torch::Tensor xfer_best_reward;  // [B, N + 1] float, when the batch carries location rewards
  int64_t num_graphs = 0;
};
// Built on the host, then moved to `device` (the network's).
BatchTensors to_tensors(const ObservationBatch& batch, const torch::Device& device = torch::kCPU);

// What the encoder gives the heads.
struct Encoded {
  torch::Tensor nodes;  // [Nn, H]
  torch::Tensor graphs;  // [B, 2H]: globals and the mean of the nodes
};

// What the heads of a network with location rewards read of them: per
// reward, [reward, reward / the largest magnitude in its group (at least
// kRewardScaleFloor), 1 where it is its group's largest and positive]:
// [R, kRewardFeatures]. `group` [R] int64 in [0, groups).
inline constexpr int64_t kRewardFeatures = 3;
inline constexpr float kRewardScaleFloor = 0.01f;  // percent of the initial cost
// The initial weight of being the best paying choice in the reward prior
// (PolicyModuleImpl::reward_prior): e^4 against a few dozen allowed rules
// makes greedy search's choice the likely one before any training.
inline constexpr float kGreedyPrior = 2.0f;
torch::Tensor reward_features(const torch::Tensor& rewards, const torch::Tensor& group, int64_t groups);

// log_softmax within each segment of a flat vector of logits.
torch::Tensor segment_log_softmax(const torch::Tensor& logits, const torch::Tensor& index, int64_t segments);

struct GraphEncoderImpl : torch::nn::Module {
  GraphEncoderImpl(int64_t hidden, int64_t rounds);
  Encoded forward(const BatchTensors& b);
  // The same function computed as before learner/segment_ops.h's fused
  // kernels (forward() takes this path while AtenRowOps is active): the
  // reference for tests and benchmarks.
  Encoded forward_reference(const BatchTensors& b);

  torch::nn::Linear node_in{nullptr}, edge_in{nullptr}, global_in{nullptr};
  torch::nn::ModuleList edge_mlps, node_mlps, global_mlps, node_norms;
  int64_t hidden = 0;
};
TORCH_MODULE(GraphEncoder);

struct PolicyModuleImpl : torch::nn::Module {
  explicit PolicyModuleImpl(const PolicyNetworkConfig& config);

  Encoded encode(const BatchTensors& b) { return encoder->forward(b); }
  // [B, N + 1] log-probabilities; masked xfers are -inf (probability 0).
  torch::Tensor xfer_log_probs(const Encoded& e, const BatchTensors& b);
  // [C] log-probabilities of each candidate location within its observation.
  torch::Tensor location_log_probs(const Encoded& e, const LocationCandidates& c, const std::vector<int32_t>& xfers,
                                   int64_t num_graphs);
  // The same from tensors on the module's device: candidate k belongs to
  // graph candidate_graph[k] and is the mean of the node rows member_node[j]
  // with member_candidate[j] == k; xfer_rows [B, H] is the embedding of each
  // graph's chosen xfer.
  // `candidate_reward` [C]: each candidate's location reward, which a module
  // with a reward head needs (undefined otherwise).
  torch::Tensor candidate_log_probs(const Encoded& e, const torch::Tensor& xfer_rows, const torch::Tensor& member_node,
                                    const torch::Tensor& member_candidate, const torch::Tensor& candidate_graph,
                                    int64_t num_candidates, int64_t num_graphs,
                                    const torch::Tensor& candidate_reward = torch::Tensor());
  torch::Tensor values(const Encoded& e);  // [B]

  GraphEncoder encoder{nullptr};
  torch::nn::Sequential xfer_head{nullptr}, location_head{nullptr}, value_head{nullptr};
  // With PolicyNetworkConfig::location_rewards: reward features
  // (reward_features) to a term of a score, the same for every xfer and
  // location: a learned MLP plus a linear prior that starts greedy.
  torch::nn::Sequential reward_head{nullptr};
  torch::nn::Linear reward_prior{nullptr};
  // reward_head's and reward_prior's sum, [R, 1].
  torch::Tensor reward_score(const torch::Tensor& features);
  torch::nn::Embedding xfer_embedding{nullptr};
  int64_t num_xfers = 0;
};
TORCH_MODULE(PolicyModule);

// The log-probabilities, entropies and values of given actions, with
// gradients: what a PPO update differentiates. The entropy is the xfer
// head's plus the location head's for the taken xfer (the full conditional
// entropy would score every allowed xfer's locations).
struct ActionEvaluation {
  torch::Tensor log_prob;  // [B]
  torch::Tensor entropy;   // [B]
  torch::Tensor value;     // [B]
};
ActionEvaluation evaluate_actions(PolicyModule& module, const std::vector<const Observation*>& observations,
                                  const std::vector<Action>& actions);

// Actions as tensors on the module's device, for evaluate_action_tensors.
struct ActionTensors {
  torch::Tensor xfer;  // [B] int64, the chosen xfer per graph (NO-OP = N)
  // The candidate locations of the chosen xfers (observation_batch.h's
  // LocationCandidates) and, per candidate, 1 where it is the taken one.
  torch::Tensor member_node, member_candidate, candidate_graph;  // int64
  torch::Tensor taken;                                           // [C] float
  torch::Tensor candidate_reward;  // [C] float, for a module that reads location rewards
  int64_t num_candidates = 0;
};
// evaluate_actions after its host work: on encoded graphs and their actions,
// with nothing read back to the host (a step that a CUDA graph can capture).
// `xfer_rows` [B, H] is each graph's chosen xfer's embedding, computed by
// the caller from the module's xfer_embedding (unused without candidates).
ActionEvaluation evaluate_action_tensors(PolicyModule& module, const Encoded& encoded, const BatchTensors& tensors,
                                         const ActionTensors& actions, const torch::Tensor& xfer_rows);

struct PolicyNetwork::Impl {
  PolicyNetworkConfig config;
  PolicyModule module{nullptr};
  torch::Device device{torch::kCPU};  // where the module's parameters live
};

// The device a module's parameters live on.
torch::Device module_device(PolicyModule& module);
// A new module with `config.seed`'s initial parameters, drawn without
// disturbing torch's global random stream for anyone else.
PolicyModule seeded_module(const PolicyNetworkConfig& config);
// The network's parameters in a module on the CPU (what files and
// messages hold, whatever the network's device).
PolicyModule host_copy(const PolicyNetwork::Impl& impl);

}  // namespace graphworld
