// What the matcher needs to know about a graph, kept current across rewrites:
// who consumes each tensor, which ops are live, which compute from weights
// alone, each op's depth, and the live ops of each type.
//
// Rewrites never renumber ops: new ops are appended and removed ones stay in
// the graph, dead. The index follows the same rule, so op ids stay valid.
#pragma once

#include <cstdint>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct TensorConsumer {
  OpId op;
  int32_t slot;    // input slot of `op`
  int32_t output;  // which output of the producer it reads
};

class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);

  bool live(OpId id) const { return live_[static_cast<size_t>(id)] != 0; }
  // True when the op's value depends on weights only (it is constant-folded).
  bool constant(OpId id) const { return constant_[static_cast<size_t>(id)] != 0; }
  bool is_graph_output(OpId id) const { return graph_output_[static_cast<size_t>(id)] != 0; }
  // 0 for leaves; otherwise more than the depth of every input.
  int32_t depth(OpId id) const { return depth_[static_cast<size_t>(id)]; }
  const std::vector<TensorConsumer>& consumers(OpId id) const { return consumers_[static_cast<size_t>(id)]; }
  // Live ops of a type, in id order (dead ones are dropped lazily: check live()).
  const std::vector<OpId>& ops_of_type(OpType type) const { return by_type_[static_cast<size_t>(type)]; }
  size_t live_count(OpType type) const { return live_count_[static_cast<size_t>(type)]; }

  // Bookkeeping for a rewrite, in this order: ops appended to the graph, uses
  // moved from one tensor to another, ops that died. `graph` is the rewritten graph.
  void add_ops(const Graph& graph, OpId first_new);
  void move_uses(TensorRef from, TensorRef to, bool was_graph_output);
  void kill(const Graph& graph, OpId id);
  // Restores depth() > depth(inputs) downstream of `ops` after rewiring.
  void repair_depths(const Graph& graph, const std::vector<OpId>& ops);

 private:
  void append(const Graph& graph, OpId id);
  // Sets constant() and depth() of `id` from its inputs, and records its uses.
  void link(const Graph& graph, OpId id, bool record_uses);
  std::vector<uint8_t> live_, constant_, graph_output_;
  std::vector<int32_t> depth_;
  std::vector<std::vector<TensorConsumer>> consumers_;
  std::vector<std::vector<OpId>> by_type_;
  std::vector<size_t> live_count_;
};

}  // namespace graphworld
