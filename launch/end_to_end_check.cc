#include "launch/end_to_end_check.h"

#include <cstdio>
#include <thread>

#include "common/error.h"
#include "env/ops/executor.h"

namespace graphworld {

VerifyRuntime parse_verify_runtime(const std::string& text) {
  if (text == "none") return VerifyRuntime::None;
  if (text == "executor") return VerifyRuntime::Executor;
  if (text == "onnxruntime") return VerifyRuntime::OnnxRuntime;
  throw UsageError("--verify-runtime must be executor, onnxruntime or none, got '" + text + "'");
}

const char* verify_runtime_name(VerifyRuntime runtime) {
  switch (runtime) {
    case VerifyRuntime::None: return "none";
    case VerifyRuntime::Executor: return "executor";
    case VerifyRuntime::OnnxRuntime: return "onnxruntime";
  }
  return "?";
}

bool onnxruntime_tie(double onnxruntime_speedup, double noise_margin) {
  return onnxruntime_speedup < 1.0 + noise_margin && onnxruntime_speedup >= 1.0 - noise_margin;
}

EndToEndDecision decide_end_to_end(VerifyRuntime runtime, double executor_speedup,
                                   std::optional<double> onnxruntime_speedup, double noise_margin,
                                   const std::optional<std::string>& onnxruntime_graph_difference) {
  const double faster = 1.0 + noise_margin, slower = 1.0 - noise_margin;
  char line[640];
  if (runtime != VerifyRuntime::OnnxRuntime || !onnxruntime_speedup) {
    const bool yes = executor_speedup >= faster;
    std::snprintf(line, sizeof(line), "%s %.3fx in the executor (needs %.3fx: noise margin %.1f%%)",
                  yes ? "faster:" : "not faster:", executor_speedup, faster, 100.0 * noise_margin);
    return {yes, line};
  }
  // onnxruntime decides. Within the noise band it is a tie. Where
  // onnxruntime runs the same graph for both files (it folds BatchNorm and
  // fuses activations itself), the tie is its noise, and the optimised file
  // is written only if the executor, which does not fold or fuse, finds it
  // faster, since runtimes that fuse less (onnxruntime with its
  // optimisations off among them) gain. Where its graphs differ, a tie could
  // be a small loss as well as a small gain, so the original is kept.
  const double ort = *onnxruntime_speedup;
  if (ort >= faster) {
    std::snprintf(line, sizeof(line),
                  "faster: %.3fx in onnxruntime with its optimisations on (needs %.3fx: noise margin %.1f%%)", ort,
                  faster, 100.0 * noise_margin);
    return {true, line};
  }
  if (ort < slower) {
    std::snprintf(line, sizeof(line),
                  "not faster: %.3fx in onnxruntime with its optimisations on (slower beyond the %.1f%% noise margin)",
                  ort, 100.0 * noise_margin);
    return {false, line};
  }
  if (onnxruntime_graph_difference && !onnxruntime_graph_difference->empty()) {
    std::snprintf(line, sizeof(line),
                  "not faster: %.3fx in onnxruntime with its optimisations on is a tie within the %.1f%% noise margin, "
                  "and onnxruntime's optimised graph differs from the original's (%s), so the tie may be a loss",
                  ort, 100.0 * noise_margin, onnxruntime_graph_difference->c_str());
    return {false, line};
  }
  const bool yes = executor_speedup >= faster;
  std::snprintf(line, sizeof(line),
                "%s: %.3fx in onnxruntime with its optimisations on is a tie within the %.1f%% noise margin%s, and the "
                "executor finds it %.3fx%s",
                yes ? "faster" : "not faster", ort, 100.0 * noise_margin,
                onnxruntime_graph_difference ? " (onnxruntime runs the same graph for both)" : "", executor_speedup,
                yes ? "" : " (not faster either)");
  return {yes, line};
}

EndToEndCheck check_end_to_end(const Graph& original, const Graph& optimized, const std::string& original_onnx,
                               const std::string& optimized_onnx, const EndToEndCheckOptions& options) {
  EndToEndCheck check;
  if (options.runtime == VerifyRuntime::None) {
    check.verdict = "not timed end to end (--verify-runtime none)";
    return check;
  }
  LatencyComparisonOptions exec_options;
  exec_options.rounds = options.rounds;
  exec_options.threads = options.threads;
  check.executor = compare_executor_latency(original, optimized, random_inputs(original, options.seed), exec_options);
  std::optional<double> ort;
  if (options.runtime == VerifyRuntime::OnnxRuntime) {
    OnnxRuntimeComparisonOptions ort_options;
    ort_options.rounds = options.rounds;
    ort_options.threads = options.threads > 0 ? options.threads
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    ort_options.input_shapes = onnxruntime_input_shapes(original);
    check.onnxruntime = compare_onnxruntime_latency(original_onnx, optimized_onnx, ort_options);
    ort = check.onnxruntime->speedup;
    // Only a tie the executor would take needs onnxruntime's graphs.
    if (onnxruntime_tie(*ort, options.noise_margin) && check.executor->speedup >= 1.0 + options.noise_margin)
      check.onnxruntime_graph_difference = compare_onnxruntime_graphs(original_onnx, optimized_onnx, ort_options);
  }
  const EndToEndDecision decision = decide_end_to_end(options.runtime, check.executor->speedup, ort,
                                                      options.noise_margin, check.onnxruntime_graph_difference);
  check.optimized_is_faster = decision.optimized_is_faster;
  check.verdict = decision.verdict;
  return check;
}

}  // namespace graphworld
