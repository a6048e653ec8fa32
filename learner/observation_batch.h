// Many observations as one graph: the disjoint union of their graph tuples,
// so one forward pass of the encoder serves every environment (or every
// sample of a PPO minibatch). Plain arrays, no tensor library types: the
// network turns them into tensors.
//
// Node, edge and candidate indices are global across the batch; node_graph,
// edge_graph and candidate_graph say which observation each belongs to.
#pragma once

#include <cstdint>
#include <vector>

#include "env/gym/graph_env.h"
#include "env/gym/observation.h"

namespace graphworld {

struct ObservationBatch {
  int32_t num_graphs = 0;
  int32_t num_xfers = 0;  // N; every observation must have the same N
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  std::vector<float> node_features;  // [num_nodes * kNodeFeatureDim]
  std::vector<float> edge_features;  // [num_edges * kEdgeFeatureDim]
  std::vector<float> globals;        // [num_graphs * kGlobalFeatureDim]
  std::vector<int64_t> senders;      // [num_edges], global node index
  std::vector<int64_t> receivers;    // [num_edges]
  std::vector<int64_t> node_graph;   // [num_nodes]
  std::vector<int64_t> edge_graph;   // [num_edges]
  std::vector<int64_t> node_offset;  // [num_graphs + 1]: graph g's nodes are node_offset[g] ..
  std::vector<uint8_t> xfer_mask;    // [num_graphs * (num_xfers + 1)]
  // When every observation carries location rewards (GraphEnvOptions::
  // location_rewards), their xfer_reward rows: per graph and xfer the
  // largest reward among the xfer's allowed locations, 0 for NO-OP and for
  // xfers with none: [num_graphs * (num_xfers + 1)]. Empty otherwise.
  std::vector<float> xfer_best_reward;
};

// True when `o` carries a location reward for each of its allowed locations
// and a reward per xfer.
bool has_location_rewards(const Observation& o);

// Throws UsageError if the observations disagree on the number of xfers.
ObservationBatch batch_observations(const std::vector<const Observation*>& observations);

// The candidate locations of one chosen xfer per observation, for the
// location head: candidate c belongs to observation candidate_graph[c], is
// location candidate_location[c] of that xfer, and matched the nodes
// member_node[k] for every k with member_candidate[k] == c (global indices
// into the batch's nodes). An observation whose xfer is NO-OP has none.
struct LocationCandidates {
  int64_t num_candidates = 0;
  std::vector<int64_t> candidate_graph;
  std::vector<int32_t> candidate_location;
  std::vector<int64_t> member_node;
  std::vector<int64_t> member_candidate;
  // Each candidate's location reward, when the observations carry them
  // (ObservationBatch::xfer_best_reward is filled); empty otherwise.
  std::vector<float> candidate_reward;
};

// `xfers[g]` is the xfer chosen for observation g (NO-OP allowed). Throws
// UsageError if a chosen xfer is masked out.
LocationCandidates location_candidates(const std::vector<const Observation*>& observations,
                                       const ObservationBatch& batch, const std::vector<int32_t>& xfers);

// Per candidate, 1 where it is the location its observation's action took
// (actions[g] for observation g), else 0: the selector of the taken
// location's log-probability.
std::vector<float> taken_candidates(const LocationCandidates& candidates, const std::vector<Action>& actions);

}  // namespace graphworld
