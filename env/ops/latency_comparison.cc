#include "env/ops/latency_comparison.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "common/latency.h"
#include "common/stopwatch.h"
#include "env/ops/executor.h"

namespace graphworld {

double median_of(std::vector<double> values) {
  if (values.empty()) throw Error("median of an empty list");
  return percentile(std::move(values), 0.5);
}

LatencyComparison compare_executor_latency(const Graph& original, const Graph& candidate,
                                           const std::vector<std::shared_ptr<const TensorData>>& inputs,
                                           const LatencyComparisonOptions& options) {
  if (options.rounds < 1 || options.min_iters < 1 || options.max_iters < options.min_iters)
    throw UsageError("latency comparison needs at least one round and one timed run per round");
  ExecutorOptions exec_options;
  exec_options.threads = options.threads;
  Executor a(original, exec_options);
  Executor b(candidate, exec_options);
  // run() stores the inputs; run_for_timing() reuses them without copying outputs back.
  a.run(inputs);
  b.run(inputs);
  for (int i = 0; i < options.warmup; ++i) {
    a.run_for_timing();
    b.run_for_timing();
  }
  // Enough runs per block that a block of the faster graph lasts about
  // min_block_ms (one probe run of each; the faster is the smaller).
  auto one_run = [](Executor& e) {
    Stopwatch watch;
    e.run_for_timing();
    return watch.elapsed_ms();
  };
  const double one_run_ms = std::max(std::min(one_run(a), one_run(b)), 1e-3);
  const int iters = std::clamp(static_cast<int>(std::ceil(options.min_block_ms / one_run_ms)), options.min_iters,
                               options.max_iters);

  auto block = [iters](Executor& e) {
    return measure_latency([&e] { e.run_for_timing(); }, 0, iters).median_ms;
  };
  LatencyComparison result;
  result.iters = iters;
  std::vector<double> a_ms, b_ms;
  for (int round = 0; round < options.rounds; ++round) {
    double ta, tb;
    if (round % 2 == 0) {
      ta = block(a);
      tb = block(b);
    } else {
      tb = block(b);
      ta = block(a);
    }
    a_ms.push_back(ta);
    b_ms.push_back(tb);
    result.ratios.push_back(ta / tb);
  }
  result.original_ms = median_of(a_ms);
  result.candidate_ms = median_of(b_ms);
  result.speedup = median_of(result.ratios);
  return result;
}

}  // namespace graphworld
