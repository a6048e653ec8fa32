// The CostModel interface: the price, in milliseconds, of one operator
// configuration (see op_cost_key.h). Graph-level sums, free ops and the
// incremental tracker are in graph_cost.h.
//
// Implementations: AnalyticCostModel (FLOPs and bytes against fitted rates),
// MeasuredCostModel (each configuration timed once with ATen on this CPU,
// cached on disk), the CUDA backend (cuDNN/cuBLAS timing, same cache) and
// GpuCostModel (a named GPU priced without one: its measured table, else a
// model of tiles and waves over its SMs).
// Every model memoises its answers in memory, so a configuration is priced
// once per process however many graphs contain it.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "env/cost/op_cost_key.h"

namespace graphworld {

class CostModel {
 public:
  struct Stats {
    int64_t cache_hits = 0;    // distinct configurations found in a persistent cache
    int64_t measured_now = 0;  // distinct configurations timed by this process
    int64_t table_hits = 0;       // gpu: distinct configurations priced from the measured table
    int64_t model_fallbacks = 0;  // gpu: distinct configurations the table lacked, priced by the model
  };

  virtual ~CostModel();
  virtual std::string name() const = 0;  // "analytic", "measured", "cuda", "gpu"
  // One line on where the numbers come from (rates file, device, cache path).
  virtual std::string description() const = 0;
  // Persists new measurements (measured models); a no-op for the others.
  virtual void flush() {}
  // True when the price depends on which inputs arrive in oneDNN's blocked
  // layout (the CPU timer). For other models the layout is left out of the
  // key, so one configuration is not priced twice, and views are free
  // whatever their input's layout (CostTracker).
  virtual bool prices_layouts() const { return false; }

  // Cost of op `op` of `graph` whose constant inputs are `constant_inputs`
  // and whose inputs in oneDNN's blocked layout are `blocked_inputs` (bit masks).
  double op_cost_ms(const Graph& graph, OpId op, uint64_t constant_inputs, uint64_t blocked_inputs);
  double key_cost_ms(const OpCostKey& key);
  const Stats& stats() const { return stats_; }
  size_t distinct_configurations() const { return memo_size_; }

 protected:
  // Prices a configuration not seen before by this instance.
  virtual double compute_ms(const OpCostKey& key) = 0;
  Stats stats_;

 private:
  struct Entry {
    OpCostKey key;
    double ms;
  };
  std::unordered_map<uint64_t, std::vector<Entry>> memo_;
  size_t memo_size_ = 0;
};

}  // namespace graphworld
