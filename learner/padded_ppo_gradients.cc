#include "learner/padded_ppo_gradients.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "learner/cuda_graph_work.h"

namespace graphworld {

struct PaddedPpoGradients::Buffers {
  PaddedLayout layout;
  PpoCoefficients coefficients;
  // The minibatch as written on the host (pinned on a GPU, so its copies
  // are asynchronous) and where the work reads it (the same tensors on a CPU).
  torch::Tensor host_floats, host_ints, host_mask;
  torch::Tensor floats, ints, mask;
  torch::Tensor figures;  // [5], the last run's loss figures
};

namespace {

bool holds(const MinibatchCapacity& have, const MinibatchCapacity& need) {
  return have.samples >= need.samples && have.nodes >= need.nodes && have.edges >= need.edges &&
         have.candidates >= need.candidates && have.members >= need.members;
}

MinibatchCapacity at_least(const MinibatchCapacity& a, const MinibatchCapacity& b) {
  return {std::max(a.samples, b.samples), std::max(a.nodes, b.nodes), std::max(a.edges, b.edges),
          std::max(a.candidates, b.candidates), std::max(a.members, b.members)};
}

bool same(const PpoCoefficients& a, const PpoCoefficients& b) {
  return a.clip == b.clip && a.value_coef == b.value_coef && a.entropy_coef == b.entropy_coef;
}

}  // namespace

PaddedPpoGradients::SampleAt PaddedPpoGradients::of_steps(const std::vector<const RolloutStep*>& steps) {
  return [&steps](int64_t i) {
    const RolloutStep& step = *steps[static_cast<size_t>(i)];
    return std::make_pair(&step.observation, step.action);
  };
}

PaddedPpoGradients::PaddedPpoGradients(PolicyModule module, const FlatParameters& flat, int64_t minibatch_size,
                                       bool cuda_graphs)
    : module_(std::move(module)),
      flat_(flat),
      minibatch_size_(std::max<int64_t>(1, minibatch_size)),
      cuda_graphs_(cuda_graphs),
      device_(module_device(module_)) {
  if (module_->reward_head)
    throw UsageError("a padded PPO minibatch has no place for location rewards (network.location_rewards); train "
                     "this network without ppo.cuda_graphs");
  if (!cuda_graphs_) return;
  if (!CudaGraphWork::available()) throw UsageError("PPO steps in CUDA graphs: " + CudaGraphWork::unavailable_reason());
  if (!device_.is_cuda())
    throw UsageError("PPO steps are captured in CUDA graphs only on a GPU, and this learner trains on " +
                     device_.str() + "; set the device to cuda or leave CUDA graphs off");
}

PaddedPpoGradients::~PaddedPpoGradients() = default;

const MinibatchCapacity& PaddedPpoGradients::capacity() const {
  static const MinibatchCapacity none;
  return buffers_ ? buffers_->layout.capacity : none;
}

void PaddedPpoGradients::run(Buffers& b) {
  const PaddedLayout& l = b.layout;
  const MinibatchCapacity& cap = l.capacity;
  flat_.gradients().zero_();
  auto floats = [&b](int64_t offset, int64_t count) { return b.floats.narrow(0, offset, count); };
  auto ints = [&b](int64_t offset, int64_t count) { return b.ints.narrow(0, offset, count); };
  BatchTensors t;
  t.num_graphs = l.slots;
  t.node_features = floats(l.node_features, cap.nodes * kNodeFeatureDim).view({cap.nodes, kNodeFeatureDim});
  t.edge_features = floats(l.edge_features, cap.edges * kEdgeFeatureDim).view({cap.edges, kEdgeFeatureDim});
  t.globals = floats(l.globals, l.slots * kGlobalFeatureDim).view({l.slots, kGlobalFeatureDim});
  t.senders = ints(l.senders, cap.edges);
  t.receivers = ints(l.receivers, cap.edges);
  t.node_graph = ints(l.node_graph, cap.nodes);
  t.edge_graph = ints(l.edge_graph, cap.edges);
  const auto options = torch::TensorOptions(device_);
  t.node_count = segment_sum(torch::ones({cap.nodes, 1}, options), t.node_graph, l.slots).clamp_min(1);
  t.edge_count = segment_sum(torch::ones({cap.edges, 1}, options), t.edge_graph, l.slots).clamp_min(1);
  t.xfer_mask = b.mask.view({l.slots, l.num_xfers + 1}).to(torch::kBool);
  ActionTensors a;
  a.xfer = ints(l.xfer, l.slots);
  a.member_node = ints(l.member_node, cap.members);
  a.member_candidate = ints(l.member_candidate, cap.members);
  a.candidate_graph = ints(l.candidate_graph, cap.candidates);
  a.taken = floats(l.taken, cap.candidates);
  a.num_candidates = cap.candidates;
  const Encoded e = module_->encode(t);
  // The xfer embedding's rows by index_select rather than Embedding: the
  // same values, and a backward pass that is one index_add on every device.
  const ActionEvaluation ev =
      evaluate_action_tensors(module_, e, t, a, gather_rows(module_->xfer_embedding->weight, a.xfer));
  const WeightedPpoLoss loss =
      weighted_ppo_loss(ev.log_prob, floats(l.old_log_prob, l.slots), floats(l.advantage, l.slots), ev.value,
                        floats(l.value_target, l.slots), ev.entropy, floats(l.weight, l.slots), b.coefficients);
  loss.total.backward();
  b.figures.copy_(loss.figures);
}

PpoLoss PaddedPpoGradients::gradients(const SampleAt& sample, const PpoSamples& samples,
                                      const std::vector<int64_t>& indices, double weight,
                                      const PpoCoefficients& coefficients) {
  if (!flat_.intact()) throw UsageError("PPO update: the padded minibatch path needs the network in one flat buffer");
  if (capture_failed_)
    throw UsageError("PPO update: an earlier CUDA graph capture failed in this process; start again without "
                     "ppo.cuda_graphs");
  const auto n = static_cast<int64_t>(indices.size());
  std::vector<const Observation*> observations;
  std::vector<Action> actions;
  std::vector<int32_t> xfers;
  PaddedTargets targets;
  for (int64_t i : indices) {
    const std::pair<const Observation*, Action> s = sample(i);
    const Observation& o = *s.first;
    const Action& a = s.second;
    // As evaluate_actions checks: the candidates would otherwise leave a bad
    // location out of the log-probability without a word.
    if (a.xfer >= 0 && a.xfer < o.num_xfers && (a.location < 0 || a.location >= o.location_count(a.xfer)))
      throw UsageError("sample " + std::to_string(i) + ": location " + std::to_string(a.location) + " of xfer " +
                       std::to_string(a.xfer) + " is not one of its " + std::to_string(o.location_count(a.xfer)) +
                       " locations");
    observations.push_back(&o);
    actions.push_back(a);
    xfers.push_back(a.xfer);
    const auto k = static_cast<size_t>(i);
    targets.weight.push_back(static_cast<float>(weight / static_cast<double>(n)));
    targets.old_log_prob.push_back(samples.old_log_prob.at(k));
    targets.advantage.push_back(samples.advantages.at(k));
    targets.value_target.push_back(samples.returns.at(k));
  }
  if (!observations.empty() && observations[0]->num_xfers != module_->num_xfers)
    throw UsageError("the observation has " + std::to_string(observations[0]->num_xfers) +
                     " xfers but the policy was made for " + std::to_string(module_->num_xfers) +
                     ": another rule library");
  const ObservationBatch batch = batch_observations(observations);
  const LocationCandidates candidates = location_candidates(observations, batch, xfers);
  const MinibatchCapacity need =
      capacity_for(n <= minibatch_size_ ? minibatch_size_ : capacity_step(n), batch, candidates);

  if (!buffers_ || !holds(buffers_->layout.capacity, need) || !same(buffers_->coefficients, coefficients)) {
    graph_.reset();  // its memory goes back to the device before the next one's is taken
    auto b = std::make_unique<Buffers>();
    b->layout = padded_layout(buffers_ && same(buffers_->coefficients, coefficients)
                                  ? at_least(buffers_->layout.capacity, need)
                                  : need,
                              static_cast<int32_t>(module_->num_xfers));
    b->coefficients = coefficients;
    const bool pinned = device_.is_cuda();
    auto host = [pinned](int64_t count, torch::ScalarType type) {
      return torch::zeros({count}, torch::TensorOptions().dtype(type).pinned_memory(pinned));
    };
    b->host_floats = host(b->layout.floats, torch::kFloat32);
    b->host_ints = host(b->layout.ints, torch::kInt64);
    b->host_mask = host(b->layout.mask_bytes, torch::kUInt8);
    if (device_.is_cpu()) {
      b->floats = b->host_floats;
      b->ints = b->host_ints;
      b->mask = b->host_mask;
    } else {
      b->floats = b->host_floats.to(device_);
      b->ints = b->host_ints.to(device_);
      b->mask = b->host_mask.to(device_);
    }
    b->figures = torch::zeros({5}, torch::TensorOptions(device_));
    buffers_ = std::move(b);
  }
  Buffers& b = *buffers_;
  write_padded_minibatch(batch, candidates, actions, targets, b.layout, b.host_floats.data_ptr<float>(),
                         b.host_ints.data_ptr<int64_t>(), b.host_mask.data_ptr<uint8_t>());
  if (!device_.is_cpu()) {
    // From pinned memory, queued behind the previous minibatch's work; the
    // read of the figures below waits for all of it, so the host arrays are
    // free again when the next minibatch writes them.
    b.floats.copy_(b.host_floats, /*non_blocking=*/true);
    b.ints.copy_(b.host_ints, /*non_blocking=*/true);
    b.mask.copy_(b.host_mask, /*non_blocking=*/true);
  }
  if (!cuda_graphs_) {
    run(b);
  } else {
    if (!graph_) {
      capture_failed_ = true;  // until the capture returns
      graph_ = std::make_unique<CudaGraphWork>(std::max<int32_t>(0, device_.index()), [this, &b] { run(b); },
                                               "the PPO minibatch step");
      capture_failed_ = false;
      ++captures_;
    }
    graph_->replay();
  }
  return read_figures(b.figures);
}

}  // namespace graphworld
