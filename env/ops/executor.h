// Runs a graph with ATen on the CPU.
//
// Construction compiles the graph into a flat plan: weight values are
// materialised once, weight-only subgraphs are folded once, and every
// intermediate is released right after its last use. run() then only
// executes compute ops. The header is free of ATen types.
#pragma once

#include <memory>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct ExecutorOptions {
  // Intra-op threads for ATen; 0 uses every core. LibTorch's OpenMP default
  // on Debian is 1, so the count is always set explicitly.
  int threads = 0;
};

class Executor {
 public:
  explicit Executor(const Graph& graph, ExecutorOptions options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One value per graph input, in graph.input_ops() order; shapes and dtypes
  // must match. Returns one value per graph output.
  std::vector<std::shared_ptr<TensorData>> run(const std::vector<std::shared_ptr<const TensorData>>& inputs);

  // Runs the graph with the last inputs given to run() (or random_inputs(1)),
  // without copying outputs back: for latency measurement.
  void run_for_timing();

  int threads() const;

  // Per OpId: 1 when the last run left the op's first output in oneDNN's
  // blocked layout; 0 for ops that did not run (leaves, folded constants,
  // dead ops). env/ops/blocked_layout.h predicts this from the graph.
  const std::vector<uint8_t>& blocked_outputs() const;

  // Per-op-type time accumulated by runs while profiling is on (each op is
  // timed separately, which adds a little overhead).
  struct OpTypeTime {
    double total_ms = 0;
    int64_t calls = 0;
  };
  void set_profiling(bool on);
  std::vector<std::pair<std::string, OpTypeTime>> profile() const;  // slowest first

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

// Seeded-random values for every graph input: float inputs uniform in [-1,1),
// int64 inputs zero. The same seed gives the same values on every machine.
std::vector<std::shared_ptr<const TensorData>> random_inputs(const Graph& graph, uint64_t seed);

// Applies the thread count to ATen (0 = hardware concurrency) and returns it.
int set_compute_threads(int threads);

}  // namespace graphworld
