#include "learner/padded_minibatch.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace graphworld {

int64_t capacity_step(int64_t n) {
  if (n < 1) return 1;
  int64_t power = 1;
  while (power * 2 <= n) power *= 2;
  if (power < 4) return n;  // 1, 2, 3: the ladder's quarters are not whole yet
  for (int64_t quarters = 4; quarters <= 8; ++quarters) {
    const int64_t step = power / 4 * quarters;
    if (step >= n) return step;
  }
  return power * 2;
}

MinibatchCapacity capacity_for(int64_t samples, const ObservationBatch& batch, const LocationCandidates& candidates) {
  MinibatchCapacity c;
  c.samples = samples;
  c.nodes = capacity_step(batch.num_nodes + 1);
  c.edges = capacity_step(batch.num_edges + 1);
  c.candidates = capacity_step(candidates.num_candidates + 1);
  c.members = capacity_step(static_cast<int64_t>(candidates.member_node.size()) + 1);
  return c;
}

PaddedLayout padded_layout(const MinibatchCapacity& capacity, int32_t num_xfers) {
  PaddedLayout l;
  l.capacity = capacity;
  l.num_xfers = num_xfers;
  l.slots = capacity.samples + 1;
  int64_t at = 0;
  auto take = [&at](int64_t count) {
    const int64_t offset = at;
    at += count;
    return offset;
  };
  l.node_features = take(capacity.nodes * kNodeFeatureDim);
  l.edge_features = take(capacity.edges * kEdgeFeatureDim);
  l.globals = take(l.slots * kGlobalFeatureDim);
  l.weight = take(l.slots);
  l.old_log_prob = take(l.slots);
  l.advantage = take(l.slots);
  l.value_target = take(l.slots);
  l.taken = take(capacity.candidates);
  l.floats = at;
  at = 0;
  l.senders = take(capacity.edges);
  l.receivers = take(capacity.edges);
  l.edge_graph = take(capacity.edges);
  l.node_graph = take(capacity.nodes);
  l.xfer = take(l.slots);
  l.candidate_graph = take(capacity.candidates);
  l.member_node = take(capacity.members);
  l.member_candidate = take(capacity.members);
  l.ints = at;
  l.mask_bytes = l.slots * (num_xfers + 1);
  return l;
}

void write_padded_minibatch(const ObservationBatch& batch, const LocationCandidates& c,
                            const std::vector<Action>& actions, const PaddedTargets& t, const PaddedLayout& l,
                            float* floats, int64_t* ints, uint8_t* mask) {
  const MinibatchCapacity& cap = l.capacity;
  const int64_t samples = batch.num_graphs;
  const auto n = static_cast<size_t>(samples);
  if (actions.size() != n || t.weight.size() != n || t.old_log_prob.size() != n || t.advantage.size() != n ||
      t.value_target.size() != n)
    throw UsageError("padded minibatch: " + std::to_string(samples) +
                     " observations but the actions or targets differ in count");
  if (samples > cap.samples || batch.num_nodes >= cap.nodes || batch.num_edges >= cap.edges ||
      c.num_candidates >= cap.candidates || static_cast<int64_t>(c.member_node.size()) >= cap.members)
    throw UsageError("padded minibatch: the minibatch does not fit its capacity (it needs room for one padded "
                     "row of each kind)");
  if (samples > 0 && batch.num_xfers != l.num_xfers)
    throw UsageError("padded minibatch: the observations have " + std::to_string(batch.num_xfers) +
                     " xfers but the layout was made for " + std::to_string(l.num_xfers));
  const int64_t pad_graph = cap.samples;          // the padding's own slot
  const int64_t pad_node = batch.num_nodes;       // its first node
  const int64_t pad_candidate = c.num_candidates;  // its first candidate
  const int64_t width = l.num_xfers + 1;

  std::fill(floats, floats + l.floats, 0.0f);
  std::copy(batch.node_features.begin(), batch.node_features.end(), floats + l.node_features);
  std::copy(batch.edge_features.begin(), batch.edge_features.end(), floats + l.edge_features);
  std::copy(batch.globals.begin(), batch.globals.end(), floats + l.globals);
  std::copy(t.weight.begin(), t.weight.end(), floats + l.weight);
  std::copy(t.old_log_prob.begin(), t.old_log_prob.end(), floats + l.old_log_prob);
  std::copy(t.advantage.begin(), t.advantage.end(), floats + l.advantage);
  std::copy(t.value_target.begin(), t.value_target.end(), floats + l.value_target);
  const std::vector<float> taken = taken_candidates(c, actions);
  std::copy(taken.begin(), taken.end(), floats + l.taken);

  auto fill = [ints](int64_t offset, int64_t from, int64_t to, int64_t value) {
    std::fill(ints + offset + from, ints + offset + to, value);
  };
  std::copy(batch.senders.begin(), batch.senders.end(), ints + l.senders);
  fill(l.senders, batch.num_edges, cap.edges, pad_node);
  std::copy(batch.receivers.begin(), batch.receivers.end(), ints + l.receivers);
  fill(l.receivers, batch.num_edges, cap.edges, pad_node);
  std::copy(batch.edge_graph.begin(), batch.edge_graph.end(), ints + l.edge_graph);
  fill(l.edge_graph, batch.num_edges, cap.edges, pad_graph);
  std::copy(batch.node_graph.begin(), batch.node_graph.end(), ints + l.node_graph);
  fill(l.node_graph, batch.num_nodes, cap.nodes, pad_graph);
  for (size_t g = 0; g < n; ++g) ints[l.xfer + static_cast<int64_t>(g)] = actions[g].xfer;
  fill(l.xfer, samples, l.slots, l.num_xfers);
  std::copy(c.candidate_graph.begin(), c.candidate_graph.end(), ints + l.candidate_graph);
  fill(l.candidate_graph, c.num_candidates, cap.candidates, pad_graph);
  const auto members = static_cast<int64_t>(c.member_node.size());
  std::copy(c.member_node.begin(), c.member_node.end(), ints + l.member_node);
  fill(l.member_node, members, cap.members, pad_node);
  std::copy(c.member_candidate.begin(), c.member_candidate.end(), ints + l.member_candidate);
  fill(l.member_candidate, members, cap.members, pad_candidate);

  std::copy(batch.xfer_mask.begin(), batch.xfer_mask.end(), mask);
  for (int64_t slot = samples; slot < l.slots; ++slot) {
    std::fill(mask + slot * width, mask + (slot + 1) * width, uint8_t{0});
    mask[slot * width + l.num_xfers] = 1;  // NO-OP only
  }
}

}  // namespace graphworld
