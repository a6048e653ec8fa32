#include "learner/policy_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "common/error.h"
#include "learner/policy_module.h"
#include "learner/residual_norm.h"
#include "learner/torch_bytes.h"

namespace graphworld {
namespace {

torch::nn::Sequential mlp(int64_t in, int64_t hidden, int64_t out) {
  return torch::nn::Sequential(torch::nn::Linear(in, hidden), torch::nn::ReLU(), torch::nn::Linear(hidden, out));
}

torch::Tensor int64_tensor(const std::vector<int64_t>& v) {
  return torch::from_blob(const_cast<int64_t*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kInt64).clone();
}

torch::Tensor float_tensor(const std::vector<float>& v, int64_t rows, int64_t cols) {
  return torch::from_blob(const_cast<float*>(v.data()), {rows, cols}, torch::kFloat32).clone();
}

// An index into a categorical distribution given as probabilities: the
// first whose cumulative sum exceeds u. A zero-probability entry never
// widens the sum, so it is never chosen.
int64_t sample_index(const float* probs, int64_t n, std::mt19937_64& rng) {
  const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += probs[i];
  double cumulative = 0;
  int64_t last_positive = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (probs[i] <= 0) continue;
    last_positive = i;
    cumulative += probs[i];
    if (cumulative > u * total) return i;
  }
  return last_positive;  // rounding left u*total just above the sum
}

int64_t argmax_index(const float* probs, int64_t n) { return std::max_element(probs, probs + n) - probs; }

}  // namespace

namespace {

// Each segment's largest value, -inf for an empty one; no gradient.
torch::Tensor segment_max(const torch::Tensor& values, const torch::Tensor& index, int64_t segments) {
  if (values.device().is_cpu()) {
    // On the host with a plain loop: ATen's scatter_reduce is still beta in
    // this LibTorch and warns (on stderr, in every command that acts).
    const torch::Tensor v = values.detach().contiguous();
    const torch::Tensor ids = index.to(torch::kCPU).contiguous();
    TORCH_CHECK(v.scalar_type() == torch::kFloat32, "segment_max: float values");
    std::vector<float> max(static_cast<size_t>(segments), -std::numeric_limits<float>::infinity());
    const float* x = v.data_ptr<float>();
    const int64_t* id = ids.data_ptr<int64_t>();
    for (int64_t k = 0; k < v.size(0); ++k) {
      TORCH_CHECK(id[k] >= 0 && id[k] < segments, "segment_max: segment id out of range");
      max[static_cast<size_t>(id[k])] = std::max(max[static_cast<size_t>(id[k])], x[k]);
    }
    return torch::from_blob(max.data(), {segments}).clone();
  }
  // On the device, with nothing read back: a GPU step stays free of host
  // waits, and can be captured in a CUDA graph.
  return torch::full({segments}, -std::numeric_limits<float>::infinity(), values.options())
      .scatter_reduce(0, index, values.detach(), "amax", /*include_self=*/true);
}

}  // namespace

torch::Tensor segment_log_softmax(const torch::Tensor& logits, const torch::Tensor& index, int64_t segments) {
  // Subtract each segment's max before exponentiating, for stability. The
  // max is a constant for the gradient.
  const torch::Tensor max = segment_max(logits, index, segments);
  torch::Tensor shifted = logits - gather_rows(max, index);
  torch::Tensor sums = segment_sum(shifted.exp(), index, segments);
  return shifted - gather_rows(sums.log(), index);
}

BatchTensors to_tensors(const ObservationBatch& batch, const torch::Device& device) {
  BatchTensors t;
  t.num_graphs = batch.num_graphs;
  t.node_features = float_tensor(batch.node_features, batch.num_nodes, kNodeFeatureDim).to(device);
  t.edge_features = float_tensor(batch.edge_features, batch.num_edges, kEdgeFeatureDim).to(device);
  t.globals = float_tensor(batch.globals, batch.num_graphs, kGlobalFeatureDim).to(device);
  t.senders = int64_tensor(batch.senders).to(device);
  t.receivers = int64_tensor(batch.receivers).to(device);
  t.node_graph = int64_tensor(batch.node_graph).to(device);
  t.edge_graph = int64_tensor(batch.edge_graph).to(device);
  auto ones_nodes = torch::ones({batch.num_nodes, 1}, torch::TensorOptions(device));
  auto ones_edges = torch::ones({batch.num_edges, 1}, torch::TensorOptions(device));
  t.node_count = segment_sum(ones_nodes, t.node_graph, batch.num_graphs).clamp_min(1);
  t.edge_count = segment_sum(ones_edges, t.edge_graph, batch.num_graphs).clamp_min(1);
  // .to() copies, so the tensor does not point into the batch.
  t.xfer_mask = torch::from_blob(const_cast<uint8_t*>(batch.xfer_mask.data()), {batch.num_graphs, batch.num_xfers + 1},
                                 torch::kUInt8)
                    .to(device, torch::kBool);
  if (!batch.xfer_best_reward.empty())
    t.xfer_best_reward = float_tensor(batch.xfer_best_reward, batch.num_graphs, batch.num_xfers + 1).to(device);
  return t;
}

namespace {
// The candidates' location rewards on `device`; undefined without them.
torch::Tensor candidate_reward_tensor(const LocationCandidates& c, const torch::Device& device) {
  if (c.candidate_reward.empty()) return {};
  return float_tensor(c.candidate_reward, c.num_candidates, 1).reshape({c.num_candidates}).to(device);
}
}  // namespace

torch::Device module_device(PolicyModule& module) { return module->value_head->parameters().front().device(); }

GraphEncoderImpl::GraphEncoderImpl(int64_t h, int64_t rounds) : hidden(h) {
  node_in = register_module("node_in", torch::nn::Linear(kNodeFeatureDim, h));
  edge_in = register_module("edge_in", torch::nn::Linear(kEdgeFeatureDim, h));
  global_in = register_module("global_in", torch::nn::Linear(kGlobalFeatureDim, h));
  for (int64_t r = 0; r < rounds; ++r) {
    edge_mlps->push_back(mlp(4 * h, h, h));    // edge, sender, receiver, globals
    node_mlps->push_back(mlp(4 * h, h, h));    // node, incoming, outgoing, globals
    global_mlps->push_back(mlp(3 * h, h, h));  // globals, mean node, mean edge
    node_norms->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({h})));
  }
  register_module("edge_mlps", edge_mlps);
  register_module("node_mlps", node_mlps);
  register_module("global_mlps", global_mlps);
  register_module("node_norms", node_norms);
}

namespace {

// x times the column block [part * width, (part + 1) * width) of a Linear's
// weight: that block's share of the layer applied to a concatenation.
torch::Tensor project_part(const torch::nn::LinearImpl& layer, int64_t part, const torch::Tensor& x) {
  const int64_t width = x.size(1);
  return x.matmul(layer.weight.narrow(1, part * width, width).t());
}

// The MLP over cat(parts) without building the concatenation: the first
// layer is a sum of column blocks, and each part is projected on its own
// rows before it is gathered. An edge reads its two end nodes and its graph,
// so projecting N nodes and B graphs and then gathering E rows does less
// arithmetic and copying than gathering 4h-wide rows first (E > N >> B). The
// weights are those of Linear(parts * h, h), so saved networks are unchanged.
struct PartInput {
  torch::Tensor rows;
  torch::Tensor index;  // undefined: rows are already one per output row
};

torch::Tensor mlp_over_parts(torch::nn::SequentialImpl& mlp, const std::vector<PartInput>& parts) {
  const torch::nn::LinearImpl& first = *mlp[0]->as<torch::nn::Linear>();
  std::vector<torch::Tensor> projected, indices;
  int64_t rows = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    projected.push_back(project_part(first, static_cast<int64_t>(k), parts[k].rows));
    indices.push_back(parts[k].index);
    rows = std::max(rows, parts[k].index.defined() ? parts[k].index.size(0) : parts[k].rows.size(0));
  }
  const torch::Tensor hidden = gathered_sum(projected, indices, first.bias, rows, /*relu=*/true);
  return mlp[2]->as<torch::nn::Linear>()->forward(hidden);
}

}  // namespace

namespace {

// The graph's residual update from the means of its nodes and edges (the
// global MLP reads globals, mean node, mean edge, in that order).
torch::Tensor global_update(torch::nn::SequentialImpl& mlp, const torch::Tensor& u, const torch::Tensor& h,
                            const torch::Tensor& e, const BatchTensors& b) {
  const torch::Tensor mean_nodes = segment_sum(h, b.node_graph, b.num_graphs) / b.node_count;
  const torch::Tensor mean_edges = segment_sum(e, b.edge_graph, b.num_graphs) / b.edge_count;
  return u + mlp.forward(torch::cat({u, mean_nodes, mean_edges}, 1));
}

// What the heads read: the nodes, and per graph its globals beside its mean node.
Encoded encoded(const torch::Tensor& h, const torch::Tensor& u, const BatchTensors& b) {
  Encoded out;
  out.nodes = h;
  out.graphs = torch::cat({u, segment_sum(h, b.node_graph, b.num_graphs) / b.node_count}, 1);
  return out;
}

}  // namespace

Encoded GraphEncoderImpl::forward(const BatchTensors& b) {
  if (AtenRowOps::active()) return forward_reference(b);
  torch::Tensor h = node_in->forward(b.node_features);
  torch::Tensor e = edge_in->forward(b.edge_features);
  torch::Tensor u = global_in->forward(b.globals);
  const int64_t nodes = h.size(0), edges = e.size(0), w = hidden;
  for (size_t r = 0; r < edge_mlps->size(); ++r) {
    // As forward_reference computes it, with fewer and larger products: the
    // sender's and receiver's blocks of the edge MLP's first layer in one
    // product with the nodes, and a node's own, incoming and outgoing blocks
    // in one product with the three side by side (node_inputs).
    torch::nn::SequentialImpl& edge_mlp = *edge_mlps[r]->as<torch::nn::Sequential>();
    const torch::nn::LinearImpl& edge_first = *edge_mlp[0]->as<torch::nn::Linear>();
    const torch::Tensor& we = edge_first.weight;  // [w, 4w]: edge, sender, receiver, graph
    const torch::Tensor edge_part = e.matmul(we.narrow(1, 0, w).t());
    const torch::Tensor ends = h.matmul(torch::cat({we.narrow(1, w, w), we.narrow(1, 2 * w, w)}, 0).t());  // [N, 2w]
    const torch::Tensor edge_graph_part = u.matmul(we.narrow(1, 3 * w, w).t());
    const torch::Tensor edge_hidden =
        gathered_sum({edge_part, ends, edge_graph_part},
                     {{0, 0, {}}, {1, 0, b.senders}, {1, w, b.receivers}, {2, 0, b.edge_graph}}, edge_first.bias,
                     edges, /*relu=*/true);
    e = e + edge_mlp[2]->as<torch::nn::Linear>()->forward(edge_hidden);

    torch::nn::SequentialImpl& node_mlp = *node_mlps[r]->as<torch::nn::Sequential>();
    const torch::nn::LinearImpl& node_first = *node_mlp[0]->as<torch::nn::Linear>();
    const torch::Tensor& wn = node_first.weight;  // [w, 4w]: node, incoming, outgoing, graph
    const torch::Tensor node_part = node_inputs(h, e, b.senders, b.receivers).matmul(wn.narrow(1, 0, 3 * w).t());
    const torch::Tensor node_graph_part = u.matmul(wn.narrow(1, 3 * w, w).t());
    const torch::Tensor node_hidden = gathered_sum({node_part, node_graph_part}, {{0, 0, {}}, {1, 0, b.node_graph}},
                                                   node_first.bias, nodes, /*relu=*/true);
    const torch::nn::LayerNormImpl& norm = *node_norms[r]->as<torch::nn::LayerNorm>();
    h = residual_layer_norm(h, node_mlp[2]->as<torch::nn::Linear>()->forward(node_hidden), norm.weight, norm.bias,
                            norm.options.eps());
    u = global_update(*global_mlps[r]->as<torch::nn::Sequential>(), u, h, e, b);
  }
  return encoded(h, u, b);
}

Encoded GraphEncoderImpl::forward_reference(const BatchTensors& b) {
  torch::Tensor h = node_in->forward(b.node_features);
  torch::Tensor e = edge_in->forward(b.edge_features);
  torch::Tensor u = global_in->forward(b.globals);
  const int64_t nodes = h.size(0);
  const torch::Tensor none;
  for (size_t r = 0; r < edge_mlps->size(); ++r) {
    // Residual updates: edges from their ends and the graph, nodes from the
    // sums of their incoming and outgoing edges, the graph from the means.
    // Each MLP reads the concatenation its comment names, in that order.
    e = e + mlp_over_parts(*edge_mlps[r]->as<torch::nn::Sequential>(),  // edge, sender, receiver, graph
                           {{e, none}, {h, b.senders}, {h, b.receivers}, {u, b.edge_graph}});
    torch::Tensor incoming = segment_sum(e, b.receivers, nodes);
    torch::Tensor outgoing = segment_sum(e, b.senders, nodes);
    h = node_norms[r]->as<torch::nn::LayerNorm>()->forward(
        h + mlp_over_parts(*node_mlps[r]->as<torch::nn::Sequential>(),  // node, incoming, outgoing, graph
                           {{h, none}, {incoming, none}, {outgoing, none}, {u, b.node_graph}}));
    u = global_update(*global_mlps[r]->as<torch::nn::Sequential>(), u, h, e, b);
  }
  return encoded(h, u, b);
}

PolicyModuleImpl::PolicyModuleImpl(const PolicyNetworkConfig& config) : num_xfers(config.num_xfers) {
  const int64_t h = config.hidden;
  encoder = register_module("encoder", GraphEncoder(h, config.message_rounds));
  xfer_head = register_module("xfer_head", mlp(2 * h, h, config.num_xfers + 1));
  xfer_embedding = register_module("xfer_embedding", torch::nn::Embedding(config.num_xfers + 1, h));
  // candidate, xfer, graph (2h), and the candidate's reward features
  location_head =
      register_module("location_head", mlp(4 * h + (config.location_rewards ? kRewardFeatures : 0), h, 1));
  value_head = register_module("value_head", mlp(2 * h, h, 1));
  if (config.location_rewards) {
    reward_head = register_module("reward_head", mlp(kRewardFeatures, h, 1));
    // The untrained policy plays about as greedy search does: the prior adds
    // to each xfer's and each location's score its reward relative to the
    // best, and more for the best paying one. Among a few dozen allowed rules
    // that makes greedy search's choice the likely one, and PPO learns from
    // there where paying now loses later (the MLP beside it starts random).
    reward_prior = register_module("reward_prior", torch::nn::Linear(kRewardFeatures, 1));
    torch::NoGradGuard no_grad;
    reward_prior->weight.copy_(torch::tensor({{0.0f, kGreedyPrior / 2, kGreedyPrior / 2}}));
    reward_prior->bias.zero_();
  }
}

namespace {
[[noreturn]] void missing_location_rewards() {
  throw UsageError(
      "this policy reads location rewards (network.location_rewards) but the observations carry none: step the "
      "environment with location rewards on (GraphEnvOptions::location_rewards, Python's location_rewards=True)");
}
}  // namespace

torch::Tensor reward_features(const torch::Tensor& rewards, const torch::Tensor& group, int64_t groups) {
  // Rewards are percent of the initial cost: a merge on a large graph earns
  // a few tenths, which a randomly initialised head barely notices. Beside
  // the raw value, each reward relative to the largest magnitude in its
  // group, and whether it is the group's best paying one: what greedy search
  // acts on, as features a head can use from the first update.
  // (An empty group's -inf magnitude is never read: no reward is in it.)
  const torch::Tensor magnitude = segment_max(rewards.abs(), group, groups);
  const torch::Tensor best = segment_max(rewards, group, groups);
  const torch::Tensor scale = magnitude.clamp_min(kRewardScaleFloor).index_select(0, group);
  const torch::Tensor is_best =
      (rewards >= best.index_select(0, group)).logical_and(rewards > 0).to(rewards.scalar_type());
  return torch::stack({rewards, rewards / scale, is_best}, -1);
}

torch::Tensor PolicyModuleImpl::reward_score(const torch::Tensor& features) {
  return reward_head->forward(features) + reward_prior->forward(features);
}

torch::Tensor PolicyModuleImpl::xfer_log_probs(const Encoded& e, const BatchTensors& b) {
  torch::Tensor logits = xfer_head->forward(e.graphs);
  if (reward_head) {
    if (!b.xfer_best_reward.defined()) missing_location_rewards();
    // Grouped by graph: each xfer's best reward against the graph's best.
    const int64_t width = b.xfer_best_reward.size(1);
    const torch::Tensor row =
        torch::arange(b.num_graphs, torch::TensorOptions(b.xfer_best_reward.device()).dtype(torch::kInt64))
            .repeat_interleave(width);
    const torch::Tensor features = reward_features(b.xfer_best_reward.reshape({-1}), row, b.num_graphs);
    logits = logits + reward_score(features).reshape({b.num_graphs, width});
  }
  logits = logits.masked_fill(b.xfer_mask.logical_not(), -std::numeric_limits<float>::infinity());
  return torch::log_softmax(logits, 1);
}

torch::Tensor PolicyModuleImpl::location_log_probs(const Encoded& e, const LocationCandidates& c,
                                                   const std::vector<int32_t>& xfers, int64_t num_graphs) {
  const torch::Device device = e.nodes.device();
  if (c.num_candidates == 0) return torch::zeros({0}, torch::TensorOptions(device));
  std::vector<int64_t> xfer_ids(xfers.begin(), xfers.end());
  return candidate_log_probs(e, xfer_embedding->forward(int64_tensor(xfer_ids).to(device)),
                             int64_tensor(c.member_node).to(device), int64_tensor(c.member_candidate).to(device),
                             int64_tensor(c.candidate_graph).to(device), c.num_candidates, num_graphs,
                             candidate_reward_tensor(c, device));
}

torch::Tensor PolicyModuleImpl::candidate_log_probs(const Encoded& e, const torch::Tensor& xfer_rows,
                                                    const torch::Tensor& member_node,
                                                    const torch::Tensor& member_candidate,
                                                    const torch::Tensor& candidate_graph, int64_t num_candidates,
                                                    int64_t num_graphs, const torch::Tensor& candidate_reward) {
  const torch::Device device = e.nodes.device();
  torch::Tensor members = segment_sum(torch::ones({member_node.size(0), 1}, torch::TensorOptions(device)),
                                      member_candidate, num_candidates);
  torch::Tensor candidates =
      segment_sum(gather_rows(e.nodes, member_node), member_candidate, num_candidates) / members.clamp_min(1);
  std::vector<torch::Tensor> inputs{candidates, gather_rows(xfer_rows, candidate_graph),
                                    gather_rows(e.graphs, candidate_graph)};
  torch::Tensor features;
  if (reward_head) {
    if (!candidate_reward.defined()) missing_location_rewards();
    features = reward_features(candidate_reward, candidate_graph, num_graphs);
    inputs.push_back(features);
  }
  torch::Tensor scores = location_head->forward(torch::cat(inputs, 1)).squeeze(1);
  if (reward_head) scores = scores + reward_score(features).squeeze(1);
  return segment_log_softmax(scores, candidate_graph, num_graphs);
}

torch::Tensor PolicyModuleImpl::values(const Encoded& e) { return value_head->forward(e.graphs).squeeze(1); }

namespace {
void check_xfers(const std::vector<const Observation*>& observations, int32_t num_xfers);
void check_locations(const std::vector<const Observation*>& observations, const std::vector<Action>& actions);
}  // namespace

ActionEvaluation evaluate_actions(PolicyModule& m, const std::vector<const Observation*>& observations,
                                  const std::vector<Action>& actions) {
  if (actions.size() != observations.size()) throw UsageError("evaluate_actions: one action per observation is needed");
  check_xfers(observations, static_cast<int32_t>(m->num_xfers));
  check_locations(observations, actions);
  const ObservationBatch batch = batch_observations(observations);
  const torch::Device device = module_device(m);
  const BatchTensors t = to_tensors(batch, device);
  std::vector<int32_t> xfers;
  std::vector<int64_t> xfer_index;
  for (const Action& a : actions) {
    xfers.push_back(a.xfer);
    xfer_index.push_back(a.xfer);
  }
  const LocationCandidates c = location_candidates(observations, batch, xfers);
  ActionTensors a;
  a.xfer = int64_tensor(xfer_index).to(device);
  a.num_candidates = c.num_candidates;
  if (c.num_candidates > 0) {
    std::vector<float> taken = taken_candidates(c, actions);
    a.taken = torch::from_blob(taken.data(), {c.num_candidates}).clone().to(device);
    a.member_node = int64_tensor(c.member_node).to(device);
    a.member_candidate = int64_tensor(c.member_candidate).to(device);
    a.candidate_graph = int64_tensor(c.candidate_graph).to(device);
    a.candidate_reward = candidate_reward_tensor(c, device);
  }
  const Encoded e = m->encode(t);
  return evaluate_action_tensors(m, e, t, a, c.num_candidates > 0 ? m->xfer_embedding->forward(a.xfer) : torch::Tensor());
}

ActionEvaluation evaluate_action_tensors(PolicyModule& m, const Encoded& e, const BatchTensors& t,
                                         const ActionTensors& a, const torch::Tensor& xfer_rows) {
  const int64_t graphs = t.num_graphs;
  const torch::Tensor xfer_lp = m->xfer_log_probs(e, t);
  torch::Tensor log_prob = xfer_lp.gather(1, a.xfer.unsqueeze(1)).squeeze(1);
  // A masked xfer's log-probability is -inf: 0 * -inf would be NaN, in the
  // forward pass and (even behind a where on the product) in the backward
  // one, so the -inf is replaced before the product.
  const torch::Tensor finite_lp = torch::where(t.xfer_mask, xfer_lp, torch::zeros_like(xfer_lp));
  torch::Tensor entropy = -(xfer_lp.exp() * finite_lp).sum(1);
  if (a.num_candidates > 0) {
    const torch::Tensor loc_lp = m->candidate_log_probs(e, xfer_rows, a.member_node, a.member_candidate,
                                                        a.candidate_graph, a.num_candidates, graphs, a.candidate_reward);
    log_prob = log_prob + segment_sum(loc_lp * a.taken, a.candidate_graph, graphs);
    entropy = entropy - segment_sum(loc_lp.exp() * loc_lp, a.candidate_graph, graphs);
  }
  return {log_prob, entropy, m->values(e)};
}

PolicyNetwork::PolicyNetwork(const PolicyNetworkConfig& config) : impl_(std::make_unique<Impl>()) {
  if (config.num_xfers < 1) throw UsageError("policy network: num_xfers must be at least 1 (the rule library's size)");
  if (config.hidden < 4 || config.hidden > 1024) throw UsageError("policy network: hidden must be in [4, 1024]");
  if (config.message_rounds < 0 || config.message_rounds > 16)
    throw UsageError("policy network: message_rounds must be in [0, 16]");
  impl_->config = config;
  impl_->module = seeded_module(config);
}

namespace {
std::mutex seeding;
}  // namespace

PolicyModule seeded_module(const PolicyNetworkConfig& config) {
  // Parameters are drawn from torch's global generator: seed it for this
  // construction only, and give it back as it was, so building a network
  // does not reset every other user's random stream.
  std::lock_guard<std::mutex> lock(seeding);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const at::Tensor saved = generator.get_state();
  generator.set_current_seed(config.seed);
  PolicyModule module(config);
  generator.set_state(saved);
  return module;
}

PolicyModule host_copy(const PolicyNetwork::Impl& impl) {
  PolicyModule host = seeded_module(impl.config);
  torch::NoGradGuard no_grad;
  auto to = host->named_parameters();
  for (const auto& item : impl.module->named_parameters()) to[item.key()].copy_(item.value());
  return host;
}

PolicyNetwork::~PolicyNetwork() = default;
PolicyNetwork::PolicyNetwork(PolicyNetwork&&) noexcept = default;
PolicyNetwork& PolicyNetwork::operator=(PolicyNetwork&&) noexcept = default;

const PolicyNetworkConfig& PolicyNetwork::config() const { return impl_->config; }

int64_t PolicyNetwork::num_parameters() const {
  int64_t n = 0;
  for (const torch::Tensor& p : impl_->module->parameters()) n += p.numel();
  return n;
}

namespace {

void check_locations(const std::vector<const Observation*>& observations, const std::vector<Action>& actions) {
  for (size_t g = 0; g < observations.size(); ++g) {
    const Action& a = actions[g];
    if (a.xfer < 0 || a.xfer > observations[g]->num_xfers) continue;  // location_candidates names a bad xfer
    if (a.xfer != observations[g]->num_xfers &&
        (a.location < 0 || a.location >= observations[g]->location_count(a.xfer)))
      throw UsageError("action " + std::to_string(g) + ": location " + std::to_string(a.location) + " of xfer " +
                       std::to_string(a.xfer) + " is not one of its " +
                       std::to_string(observations[g]->location_count(a.xfer)) + " locations");
  }
}

void check_xfers(const std::vector<const Observation*>& observations, int32_t num_xfers) {
  for (const Observation* o : observations)
    if (o->num_xfers != num_xfers)
      throw UsageError("the observation has " + std::to_string(o->num_xfers) + " xfers but the policy was made for " +
                       std::to_string(num_xfers) + ": another rule library");
}

}  // namespace

std::vector<PolicyStep> PolicyNetwork::act(const std::vector<const Observation*>& observations, std::mt19937_64& rng,
                                           bool greedy) {
  check_xfers(observations, impl_->config.num_xfers);
  std::vector<PolicyStep> steps(observations.size());
  if (observations.empty()) return steps;
  torch::NoGradGuard no_grad;
  PolicyModule& m = impl_->module;
  const ObservationBatch batch = batch_observations(observations);
  const BatchTensors t = to_tensors(batch, impl_->device);
  const Encoded e = m->encode(t);
  // Sampling reads the probabilities on the host.
  const torch::Tensor xfer_lp = m->xfer_log_probs(e, t).to(torch::kCPU).contiguous();
  const torch::Tensor xfer_p = xfer_lp.exp().contiguous();
  const torch::Tensor values = m->values(e).to(torch::kCPU).contiguous();
  const int64_t width = impl_->config.num_xfers + 1;
  std::vector<int32_t> xfers(observations.size());
  for (size_t g = 0; g < observations.size(); ++g) {
    const float* p = xfer_p.data_ptr<float>() + g * width;
    xfers[g] = static_cast<int32_t>(greedy ? argmax_index(p, width) : sample_index(p, width, rng));
    steps[g].action.xfer = xfers[g];
    steps[g].log_prob = xfer_lp.data_ptr<float>()[g * width + xfers[g]];
    steps[g].value = values.data_ptr<float>()[g];
  }
  const LocationCandidates c = location_candidates(observations, batch, xfers);
  const torch::Tensor loc_lp = m->location_log_probs(e, c, xfers, batch.num_graphs).to(torch::kCPU).contiguous();
  // Candidates of one observation are contiguous, in location order.
  int64_t begin = 0;
  for (size_t g = 0; g < observations.size(); ++g) {
    int64_t end = begin;
    while (end < c.num_candidates && c.candidate_graph[end] == static_cast<int64_t>(g)) ++end;
    if (end > begin) {
      std::vector<float> p(static_cast<size_t>(end - begin));
      for (int64_t k = begin; k < end; ++k) p[k - begin] = std::exp(loc_lp.data_ptr<float>()[k]);
      const int64_t pick = greedy ? argmax_index(p.data(), end - begin) : sample_index(p.data(), end - begin, rng);
      steps[g].action.location = c.candidate_location[begin + pick];
      steps[g].log_prob += loc_lp.data_ptr<float>()[begin + pick];
    }
    begin = end;
  }
  return steps;
}

std::vector<float> PolicyNetwork::log_probs(const std::vector<const Observation*>& observations,
                                            const std::vector<Action>& actions) {
  check_xfers(observations, impl_->config.num_xfers);
  if (actions.size() != observations.size()) throw UsageError("log_probs: one action per observation is needed");
  check_locations(observations, actions);
  torch::NoGradGuard no_grad;
  PolicyModule& m = impl_->module;
  const ObservationBatch batch = batch_observations(observations);
  const BatchTensors t = to_tensors(batch, impl_->device);
  const Encoded e = m->encode(t);
  const torch::Tensor xfer_lp = m->xfer_log_probs(e, t);
  std::vector<int32_t> xfers;
  for (const Action& a : actions) xfers.push_back(a.xfer);
  const LocationCandidates c = location_candidates(observations, batch, xfers);
  const torch::Tensor loc_lp = m->location_log_probs(e, c, xfers, batch.num_graphs);
  const torch::Tensor xfer_host = xfer_lp.to(torch::kCPU).contiguous();
  const torch::Tensor loc_host = loc_lp.to(torch::kCPU).contiguous();
  const int64_t width = impl_->config.num_xfers + 1;
  std::vector<float> out(observations.size());
  for (size_t g = 0; g < observations.size(); ++g) out[g] = xfer_host.data_ptr<float>()[g * width + actions[g].xfer];
  for (int64_t k = 0; k < c.num_candidates; ++k) {
    const int64_t g = c.candidate_graph[k];
    if (c.candidate_location[k] == actions[g].location) out[g] += loc_host.data_ptr<float>()[k];
  }
  return out;
}

std::vector<std::vector<float>> PolicyNetwork::graph_embeddings(const std::vector<const Observation*>& observations) {
  check_xfers(observations, impl_->config.num_xfers);
  torch::NoGradGuard no_grad;
  const ObservationBatch batch = batch_observations(observations);
  const torch::Tensor graphs = impl_->module->encode(to_tensors(batch, impl_->device)).graphs.to(torch::kCPU).contiguous();
  std::vector<std::vector<float>> out;
  for (int64_t g = 0; g < graphs.size(0); ++g)
    out.emplace_back(graphs.data_ptr<float>() + g * graphs.size(1), graphs.data_ptr<float>() + (g + 1) * graphs.size(1));
  return out;
}

}  // namespace graphworld

namespace graphworld {

std::vector<float> PolicyNetwork::values(const std::vector<const Observation*>& observations) {
  check_xfers(observations, impl_->config.num_xfers);
  if (observations.empty()) return {};
  torch::NoGradGuard no_grad;
  PolicyModule& m = impl_->module;
  const torch::Tensor v =
      m->values(m->encode(to_tensors(batch_observations(observations), impl_->device))).to(torch::kCPU).contiguous();
  return std::vector<float>(v.data_ptr<float>(), v.data_ptr<float>() + v.numel());
}

std::string PolicyNetwork::save_parameters() const {
  torch::serialize::OutputArchive archive;
  if (impl_->device.is_cpu()) {
    impl_->module->save(archive);
  } else {
    // Saved from the host, so the bytes load on machines without a GPU.
    host_copy(*impl_)->save(archive);
  }
  return archive_to_bytes(archive);
}

void PolicyNetwork::to_device(const std::string& device) {
  const torch::Device target(device);
  impl_->module->to(target);
  impl_->device = target;
}

std::string PolicyNetwork::device() const { return impl_->device.str(); }

void PolicyNetwork::load_parameters(const std::string& bytes, const std::string& what) {
  torch::serialize::InputArchive archive;
  archive_from_bytes(archive, bytes, what);
  // Load into a fresh module first, so a failed load leaves this one intact.
  PolicyModule loaded(impl_->config);
  try {
    loaded->load(archive);
  } catch (const c10::Error& e) {
    throw FormatError(what + ": the parameters do not fit this network (" + std::string(e.what_without_backtrace()) +
                      "); was it made with another hidden size, message_rounds or rule library?");
  }
  // Copied into the existing tensors, so an optimiser holding them stays valid.
  torch::NoGradGuard no_grad;
  auto to = impl_->module->named_parameters();
  for (const auto& item : loaded->named_parameters()) to[item.key()].copy_(item.value());
}

void PolicyNetwork::copy_parameters_from(const PolicyNetwork& other) {
  const auto from = other.impl_->module->named_parameters();
  auto to = impl_->module->named_parameters();
  torch::NoGradGuard no_grad;
  for (const auto& item : from) {
    torch::Tensor* target = to.find(item.key());
    if (!target || target->sizes() != item.value().sizes())
      throw UsageError("copy_parameters_from: the networks' configurations differ at '" + item.key() + "'");
    target->copy_(item.value());
  }
}

}  // namespace graphworld
