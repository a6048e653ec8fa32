// optimize's last gate: is the optimised graph faster than the original end
// to end, where it will run? A cost model prices ops one at a time; this
// times whole models, original against optimised in alternating rounds,
// with the executor and, on request, in onnxruntime with its own graph
// optimisations on (how people deploy). The optimised graph is written only
// when the deciding runtime finds it faster by more than a noise margin;
// otherwise optimize keeps the original and says so. With onnxruntime
// deciding, a result within the noise band there is a tie. When onnxruntime
// runs the same ops for both files (it made the same rewrites itself:
// BatchNorm folding, activation fusion), the tie is noise and the file is
// written if the executor finds it faster; when its ops differ, or cannot
// be compared, the tie is a bet on noise and the original is kept.
#pragma once

#include <optional>
#include <string>

#include "env/graph/graph.h"
#include "env/ops/latency_comparison.h"
#include "launch/pipeline/onnxruntime_comparison.h"

namespace graphworld {

enum class VerifyRuntime { None, Executor, OnnxRuntime };

// "none", "executor" or "onnxruntime"; throws UsageError otherwise.
VerifyRuntime parse_verify_runtime(const std::string& text);
const char* verify_runtime_name(VerifyRuntime runtime);

struct EndToEndCheckOptions {
  VerifyRuntime runtime = VerifyRuntime::Executor;
  // The optimised graph must be at least (1 + noise_margin) times faster.
  double noise_margin = 0.01;
  int rounds = 7;
  int threads = 0;  // 0 = every core
  uint64_t seed = 1;
};

struct EndToEndCheck {
  std::optional<LatencyComparison> executor;
  std::optional<OnnxRuntimeComparison> onnxruntime;
  // In a tie in onnxruntime that the executor would take: how onnxruntime's
  // optimised graphs of the two files differ by op counts ("" for the same
  // ops); unset when not compared or when they could not be compared.
  std::optional<std::string> onnxruntime_graph_difference;
  bool optimized_is_faster = true;
  std::string verdict;  // one line: why the optimised graph was kept or not
};

struct EndToEndDecision {
  bool optimized_is_faster = false;
  std::string verdict;
};

// The rule, apart from the timing: with the executor deciding, faster means
// a speedup of at least 1 + noise_margin. With onnxruntime deciding, faster
// there wins, slower there by more than the margin loses, and a tie within
// the margin loses when `onnxruntime_graph_difference` is non-empty (its
// graphs differ) and otherwise goes to the executor's verdict.
EndToEndDecision decide_end_to_end(VerifyRuntime runtime, double executor_speedup,
                                   std::optional<double> onnxruntime_speedup, double noise_margin,
                                   const std::optional<std::string>& onnxruntime_graph_difference = std::nullopt);

// True when onnxruntime's timing is a tie within the margin.
bool onnxruntime_tie(double onnxruntime_speedup, double noise_margin);

// True when the decision turns on onnxruntime's optimised graphs: a tie
// there that the executor would take.
bool needs_onnxruntime_graphs(double onnxruntime_speedup, double executor_speedup, double noise_margin);

// `original_onnx` is the original model as an ONNX file (the user's input, or
// an export of it) and `optimized_onnx` the optimised graph written to a
// temporary file; both are needed only for onnxruntime.
EndToEndCheck check_end_to_end(const Graph& original, const Graph& optimized, const std::string& original_onnx,
                               const std::string& optimized_onnx, const EndToEndCheckOptions& options);

}  // namespace graphworld
