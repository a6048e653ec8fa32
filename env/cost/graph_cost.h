// A graph's cost: the sum of its ops' costs, where some ops are free.
//
// Free ops (cost 0, the cost model is not asked):
// - graph leaves (inputs, weights);
// - constant ops: every input is a constant, so the executor folds them once
//   before the first run (weight-only subgraphs that rules create);
// - dead ops: no graph output depends on them, so they never run;
// - metadata-only ops: reshapes, identities, and transposes, slices and splits
//   whose result is the input's memory read in order (see is_metadata_only),
//   unless their input is in oneDNN's blocked layout: the executor converts
//   it to plain NCHW first, and that conversion is priced. A transpose or
//   slice that moves data is priced like any other op.
#pragma once

#include <span>
#include <vector>

#include "env/cost/cost_model.h"

namespace graphworld {

// Per-op flags, indexed by OpId.
struct OpClasses {
  std::vector<uint8_t> constant;  // weight, or every input constant
  std::vector<uint8_t> live;      // some graph output depends on it
  std::vector<uint8_t> blocked;   // the executor leaves its output in oneDNN's blocked layout
};
OpClasses classify_ops(const Graph& graph);

// True when `op` only reinterprets its input's memory (no data moves).
bool is_metadata_only(const Graph& graph, const Op& op);

// True when op `id` costs nothing: a leaf, constant, dead, or metadata-only
// on plain inputs (`blocked`: per OpId, the output is in the blocked layout).
bool is_free_op(const Graph& graph, OpId id, const std::vector<uint8_t>& constant, const std::vector<uint8_t>& live,
                const std::vector<uint8_t>& blocked);

// The keys of the ops a cost model is asked to price, in op id order
// (repeated configurations appear once per op). `with_layouts`: as a model
// that prices layouts sees them (CostModel::prices_layouts), else with every
// value taken as plain.
std::vector<OpCostKey> priced_op_keys(const Graph& graph, bool with_layouts = true);

struct GraphCost {
  double total_ms = 0;
  std::vector<double> op_ms;  // per OpId; 0 for free ops
};
GraphCost graph_cost(const Graph& graph, CostModel& model);

// The cost of a graph that is rewritten step by step, kept up to date without
// re-summing the whole graph.
//
// Contract with the rewriter: op ids are stable. A rewrite removes ops (their
// ids are no longer used by any live op) and appends new ops; ops whose inputs
// were rewired are "changed" too. update() subtracts what removed and changed
// ops cost before and adds what changed ops cost now. New ops are live;
// existing ops keep their liveness (removed ops are dead for good). When a
// rewired op's output layout changes (env/ops/blocked_layout.h), its readers
// are re-priced too, and theirs in turn while layouts keep changing.
class CostTracker {
 public:
  explicit CostTracker(CostModel& model) : model_(&model), layouts_(model.prices_layouts()) {}

  // Full evaluation; returns the total.
  double reset(const Graph& graph);
  // After a rewrite of the tracked graph into `graph`: `removed` are ids that
  // no longer contribute, `changed` are new or rewired ops. Returns the total.
  double update(const Graph& graph, std::span<const OpId> removed, std::span<const OpId> changed);

  double total_ms() const { return total_ms_; }
  double op_ms(OpId id) const { return op_ms_.at(static_cast<size_t>(id)); }
  CostModel& model() const { return *model_; }

 private:
  double price(const Graph& graph, OpId id);
  bool settle_blocked(const Graph& graph, OpId id);  // recomputes blocked_[id]; true when it changed
  CostModel* model_;
  bool layouts_;  // the model prices layouts; otherwise every value counts as plain
  std::vector<double> op_ms_;
  std::vector<uint8_t> constant_;
  std::vector<uint8_t> live_;
  std::vector<uint8_t> blocked_;
  double total_ms_ = 0;
};

}  // namespace graphworld
