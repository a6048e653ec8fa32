#include "launch/pipeline/end_to_end_check.h"

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

bool needs_onnxruntime_graphs(double onnxruntime_speedup, double executor_speedup, double noise_margin) {
  return onnxruntime_tie(onnxruntime_speedup, noise_margin) && executor_speedup >= 1.0 + noise_margin;
}

namespace {

std::string format(const char* pattern, double a, double b, double c = 0) {
  char line[256];
  std::snprintf(line, sizeof(line), pattern, a, b, c);
  return line;
}

std::string tie_text(double onnxruntime_speedup, double noise_margin) {
  return format("%.3fx in onnxruntime with its optimisations on is a tie within the %.1f%% noise margin",
                onnxruntime_speedup, 100.0 * noise_margin);
}

}  // namespace

EndToEndDecision decide_end_to_end(VerifyRuntime runtime, double executor_speedup,
                                   std::optional<double> onnxruntime_speedup, double noise_margin,
                                   const std::optional<std::string>& onnxruntime_graph_difference) {
  const double faster = 1.0 + noise_margin, margin_pct = 100.0 * noise_margin;
  if (runtime != VerifyRuntime::OnnxRuntime || !onnxruntime_speedup) {
    const bool yes = executor_speedup >= faster;
    return {yes, std::string(yes ? "faster: " : "not faster: ") +
                     format("%.3fx in the executor (needs %.3fx: noise margin %.1f%%)", executor_speedup, faster,
                            margin_pct)};
  }
  // onnxruntime decides. Within the noise band it is a tie. Where
  // onnxruntime runs the same ops for both files (it folds BatchNorm and
  // fuses activations itself), the tie is its noise, and the optimised file
  // is written only if the executor, which does not fold or fuse, finds it
  // faster, since runtimes that fuse less (onnxruntime with its
  // optimisations off among them) gain. Where its ops differ, a tie could
  // be a small loss as well as a small gain, so the original is kept.
  const double ort = *onnxruntime_speedup;
  if (ort >= faster)
    return {true, "faster: " + format("%.3fx in onnxruntime with its optimisations on (needs %.3fx: noise margin "
                                      "%.1f%%)",
                                      ort, faster, margin_pct)};
  if (!onnxruntime_tie(ort, noise_margin))
    return {false, "not faster: " + format("%.3fx in onnxruntime with its optimisations on (slower beyond the %.1f%% "
                                           "noise margin)",
                                           ort, margin_pct)};
  const std::string tie = tie_text(ort, noise_margin);
  if (onnxruntime_graph_difference && !onnxruntime_graph_difference->empty())
    return {false, "not faster: " + tie + ", and onnxruntime's optimised graph has other ops than the original's (" +
                       *onnxruntime_graph_difference + "), so the tie may be a loss"};
  const bool yes = executor_speedup >= faster;
  return {yes, std::string(yes ? "faster: " : "not faster: ") + tie +
                   (onnxruntime_graph_difference ? " (onnxruntime runs the same ops for both)" : "") +
                   format(", and the executor finds it %.3fx", executor_speedup, 0) +
                   (yes ? "" : " (not faster either)")};
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
    if (needs_onnxruntime_graphs(*ort, check.executor->speedup, options.noise_margin)) {
      try {
        check.onnxruntime_graph_difference = compare_onnxruntime_graphs(original_onnx, optimized_onnx, ort_options);
      } catch (const Error& e) {
        // Without the graphs the tie cannot be shown to be noise: keep the
        // original rather than lose the run.
        check.optimized_is_faster = false;
        check.verdict = "not faster: " + tie_text(*ort, options.noise_margin) +
                        ", and onnxruntime's optimised graphs could not be compared (" + e.what() +
                        "), so the tie is not taken";
        return check;
      }
    }
  }
  const EndToEndDecision decision = decide_end_to_end(options.runtime, check.executor->speedup, ort,
                                                      options.noise_margin, check.onnxruntime_graph_difference);
  check.optimized_is_faster = decision.optimized_is_faster;
  check.verdict = decision.verdict;
  return check;
}

}  // namespace graphworld
