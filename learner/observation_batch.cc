#include "learner/observation_batch.h"

#include <string>

#include "common/error.h"

namespace graphworld {

bool has_location_rewards(const Observation& o) {
  return o.xfer_reward.size() == static_cast<size_t>(o.num_xfers) + 1 && !o.node_begin.empty() &&
         o.location_reward.size() + 1 == o.node_begin.size();
}

ObservationBatch batch_observations(const std::vector<const Observation*>& observations) {
  ObservationBatch b;
  b.num_graphs = static_cast<int32_t>(observations.size());
  if (observations.empty()) return b;
  b.num_xfers = observations[0]->num_xfers;
  int64_t nodes = 0, edges = 0;
  for (size_t g = 0; g < observations.size(); ++g) {
    const Observation* o = observations[g];
    const std::string where = "observation " + std::to_string(g);
    if (o->num_xfers != b.num_xfers)
      throw UsageError("observations from different rule libraries cannot share a batch: " +
                       std::to_string(o->num_xfers) + " xfers against " + std::to_string(b.num_xfers));
    if (o->xfer_mask.size() != static_cast<size_t>(b.num_xfers + 1) || !o->xfer_mask[b.num_xfers])
      throw UsageError(where + " is terminal (NO-OP is not allowed, as after an episode ends) or malformed: reset "
                       "the environment before acting on it");
    const GraphTuple& t = o->graph;
    if (t.node_features.size() != static_cast<size_t>(t.num_nodes) * kNodeFeatureDim ||
        t.edge_features.size() != static_cast<size_t>(t.num_edges) * kEdgeFeatureDim ||
        t.globals.size() != static_cast<size_t>(kGlobalFeatureDim) || t.senders.size() != static_cast<size_t>(t.num_edges) ||
        t.receivers.size() != static_cast<size_t>(t.num_edges))
      throw UsageError(where + ": the graph tuple's arrays do not match its node and edge counts");
    nodes += t.num_nodes;
    edges += t.num_edges;
  }
  b.num_nodes = nodes;
  b.num_edges = edges;
  b.node_features.reserve(static_cast<size_t>(nodes) * kNodeFeatureDim);
  b.edge_features.reserve(static_cast<size_t>(edges) * kEdgeFeatureDim);
  b.senders.reserve(static_cast<size_t>(edges));
  b.receivers.reserve(static_cast<size_t>(edges));
  b.node_graph.reserve(static_cast<size_t>(nodes));
  b.edge_graph.reserve(static_cast<size_t>(edges));
  b.node_offset.reserve(observations.size() + 1);
  b.xfer_mask.reserve(observations.size() * static_cast<size_t>(b.num_xfers + 1));
  int64_t offset = 0;
  for (int64_t g = 0; g < b.num_graphs; ++g) {
    const GraphTuple& t = observations[g]->graph;
    b.node_offset.push_back(offset);
    b.node_features.insert(b.node_features.end(), t.node_features.begin(), t.node_features.end());
    b.edge_features.insert(b.edge_features.end(), t.edge_features.begin(), t.edge_features.end());
    b.globals.insert(b.globals.end(), t.globals.begin(), t.globals.end());
    for (int32_t e = 0; e < t.num_edges; ++e) {
      b.senders.push_back(offset + t.senders[e]);
      b.receivers.push_back(offset + t.receivers[e]);
      b.edge_graph.push_back(g);
    }
    b.node_graph.insert(b.node_graph.end(), static_cast<size_t>(t.num_nodes), g);
    b.xfer_mask.insert(b.xfer_mask.end(), observations[g]->xfer_mask.begin(), observations[g]->xfer_mask.end());
    offset += t.num_nodes;
  }
  b.node_offset.push_back(offset);
  bool rewards = true;
  for (const Observation* o : observations) rewards = rewards && has_location_rewards(*o);
  if (rewards) {
    b.xfer_best_reward.reserve(observations.size() * static_cast<size_t>(b.num_xfers + 1));
    for (const Observation* o : observations)
      b.xfer_best_reward.insert(b.xfer_best_reward.end(), o->xfer_reward.begin(), o->xfer_reward.end());
  }
  return b;
}

LocationCandidates location_candidates(const std::vector<const Observation*>& observations,
                                       const ObservationBatch& batch, const std::vector<int32_t>& xfers) {
  if (xfers.size() != observations.size())
    throw UsageError("location_candidates: one xfer per observation is needed");
  LocationCandidates c;
  for (size_t g = 0; g < observations.size(); ++g) {
    const Observation& o = *observations[g];
    const int32_t x = xfers[g];
    if (x < 0 || x > o.num_xfers || !o.xfer_mask[x])
      throw UsageError("xfer " + std::to_string(x) + " is not allowed in observation " + std::to_string(g));
    if (x == o.num_xfers) continue;  // NO-OP has no location
    for (int32_t loc = 0; loc < o.location_count(x); ++loc) {
      const int64_t id = c.num_candidates++;
      c.candidate_graph.push_back(static_cast<int64_t>(g));
      c.candidate_location.push_back(loc);
      if (!batch.xfer_best_reward.empty())
        c.candidate_reward.push_back(o.location_reward[static_cast<size_t>(o.location_begin[static_cast<size_t>(x)] + loc)]);
      for (int32_t node : o.matched_nodes(x, loc)) {
        c.member_node.push_back(batch.node_offset[g] + node);
        c.member_candidate.push_back(id);
      }
    }
  }
  return c;
}

std::vector<float> taken_candidates(const LocationCandidates& c, const std::vector<Action>& actions) {
  std::vector<float> taken(static_cast<size_t>(c.num_candidates));
  for (size_t k = 0; k < taken.size(); ++k)
    taken[k] = c.candidate_location[k] == actions[static_cast<size_t>(c.candidate_graph[k])].location ? 1.0f : 0.0f;
  return taken;
}

}  // namespace graphworld
