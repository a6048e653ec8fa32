// End-to-end A/B timing of two graphs with the executor: does a rewritten
// graph really run faster than the original? The two are timed in
// alternating rounds on the same inputs (A then B, then B then A, ...), so a
// drift in the machine's speed, 20-40% from second to second on a shared
// VM, hits both alike; the speedup is the median over rounds of
// (A's median / B's median). Header free of ATen.
#pragma once

#include <memory>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct LatencyComparisonOptions {
  int rounds = 7;
  // Timed runs per graph per round: at least min_iters, more for small
  // graphs so that each block lasts about min_block_ms.
  int min_iters = 3;
  int max_iters = 50;
  double min_block_ms = 100;
  int warmup = 2;
  int threads = 0;  // executor threads; 0 = every core
};

struct LatencyComparison {
  double original_ms = 0;   // median over rounds of the original's per-round median
  double candidate_ms = 0;  // the same for the candidate
  double speedup = 1;       // median over rounds of original / candidate; > 1: candidate faster
  std::vector<double> ratios;  // one per round
  int iters = 0;               // timed runs per graph per round
};

// Runs both graphs on `inputs` (one value per graph input, in input_ops()
// order; both graphs must take the same inputs).
LatencyComparison compare_executor_latency(const Graph& original, const Graph& candidate,
                                           const std::vector<std::shared_ptr<const TensorData>>& inputs,
                                           const LatencyComparisonOptions& options = {});

// Median of a non-empty list.
double median_of(std::vector<double> values);

}  // namespace graphworld
