// The CostModel interface: the price, in milliseconds, of one operator
// configuration (see op_cost_key.h). Graph-level sums, free ops and the
// incremental tracker are in graph_cost.h.
//
// Implementations: AnalyticCostModel (FLOPs and bytes against fitted rates),
// MeasuredCostModel (each configuration timed once with ATen on this CPU,
// cached on disk) and the CUDA backend (cuDNN/cuBLAS timing, same cache).
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
  };

  virtual ~CostModel();
  virtual std::string name() const = 0;  // "analytic", "measured", "cuda"
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
