// What a GraphEnv shows an agent: plain arrays, no tensor library types.
//
// The graph tuple follows graph_nets: one node per live op of the current
// graph (in op id order, graph inputs and weights included), one edge per
// tensor use between nodes, and a globals vector. Feature layouts are fixed
// (the k*Dim constants) and documented in graph_features.cc.
//
// Masks and locations: xfer x (a rule) has locations 0..count(x)-1, its first
// `max_locations` matches in the matcher's deterministic order. xfer N is
// NO-OP and is always allowed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace graphworld {

// Bumped whenever the meaning or layout of any feature changes: a policy
// trained on one version reads garbage from another, so policy files record
// it and loading refuses a mismatch.
inline constexpr int kObservationFeatureVersion = 2;

inline constexpr int kNodeFeatureDim = 64;
inline constexpr int kEdgeFeatureDim = 8;
inline constexpr int kGlobalFeatureDim = 6;

struct GraphTuple {
  int32_t num_nodes = 0;
  int32_t num_edges = 0;
  std::vector<float> node_features;  // [num_nodes * kNodeFeatureDim]
  std::vector<int32_t> senders;      // [num_edges]: producing node
  std::vector<int32_t> receivers;    // [num_edges]: consuming node
  std::vector<float> edge_features;  // [num_edges * kEdgeFeatureDim]
  std::vector<float> globals;        // [kGlobalFeatureDim]
  std::vector<int32_t> node_op;      // [num_nodes]: the graph op id of each node
};

struct Observation {
  GraphTuple graph;
  int32_t num_xfers = 0;      // N; xfer N is NO-OP
  int32_t max_locations = 0;  // L
  std::vector<uint8_t> xfer_mask;      // [N + 1]
  std::vector<uint8_t> location_mask;  // [N * L], row-major by xfer
  // Matched nodes of each allowed (xfer, location), compressed: the
  // locations of xfer x are entries location_begin[x] .. location_begin[x+1]-1
  // of node_begin, and entry e's nodes are match_nodes[node_begin[e] ..
  // node_begin[e+1]-1] (node indices into `graph`, one per source pattern op).
  std::vector<int32_t> location_begin;  // [N + 1]
  std::vector<int32_t> node_begin;      // [locations + 1]
  std::vector<int32_t> match_nodes;
  // How many matches each xfer has in all [N]: location_count caps it at
  // max_locations, which hides how a rule with more matches than that is
  // used up (a world model predicting when it runs out needs it). Empty in
  // compact copies.
  std::vector<int32_t> match_count;
  // With GraphEnvOptions::location_rewards, one entry per allowed (xfer,
  // location) in node_begin's order: the incremental reward taking it now
  // would earn, 100 * (C[t] - C[t+1]) / C[0] (positive when it saves), a
  // one-step look-ahead such as greedy search takes. Empty otherwise.
  std::vector<float> location_reward;
  // With location rewards, per xfer the largest location_reward among its
  // allowed locations (0 for NO-OP and for xfers with none): [N + 1]. Kept
  // in full in compact copies, which drop the other xfers' locations.
  std::vector<float> xfer_reward;

  int32_t location_count(int32_t xfer) const { return location_begin[xfer + 1] - location_begin[xfer]; }
  // The nodes matched by (xfer, location); empty if it is not allowed.
  std::span<const int32_t> matched_nodes(int32_t xfer, int32_t location) const;
};

}  // namespace graphworld
