// graphworld run MODEL [--iters N] [--threads T] [--json]
#include <cstdio>

#include "common/error.h"
#include "common/json_writer.h"
#include "env/ops/executor.h"
#include "launch/commands.h"
#include "common/latency.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {

int run_run(const CliArgs& args) {
  const std::string& spec = args.positional(0, "a MODEL (an .onnx file or a zoo name)");
  args.expect_at_most(1);
  int64_t iters = args.int_value("--iters", 20);
  int64_t warmup = args.int_value("--warmup", 3);
  int64_t threads = args.int_value("--threads", 0);
  if (iters < 1 || warmup < 0 || threads < 0) throw UsageError("--iters must be >= 1, --warmup and --threads >= 0");
  LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
  ExecutorOptions options;
  options.threads = static_cast<int>(threads);
  Executor executor(model.graph, options);
  executor.run(random_inputs(model.graph, static_cast<uint64_t>(args.int_value("--seed", 1))));
  LatencyStats stats = measure_latency([&] { executor.run_for_timing(); }, static_cast<int>(warmup),
                                       static_cast<int>(iters));
  if (args.flag("--profile")) {
    executor.set_profiling(true);
    for (int i = 0; i < iters; ++i) executor.run_for_timing();
    std::printf("time per op type (%lld runs, ms per run):\n", static_cast<long long>(iters));
    for (const auto& [type, time] : executor.profile())
      std::printf("  %-14s %9.3f ms  %5lld calls\n", type.c_str(), time.total_ms / static_cast<double>(iters),
                  static_cast<long long>(time.calls / iters));
  }
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object()
        .key("model").value(model.source)
        .key("median_ms").value(stats.median_ms)
        .key("p10_ms").value(stats.p10_ms)
        .key("p90_ms").value(stats.p90_ms)
        .key("iters").value(stats.iters)
        .key("threads").value(executor.threads())
        .end_object();
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("%s: median %.3f ms  p10 %.3f ms  p90 %.3f ms  (%d iters, %d threads, ATen CPU)\n", model.source.c_str(),
                stats.median_ms, stats.p10_ms, stats.p90_ms, stats.iters, executor.threads());
  }
  return 0;
}

}  // namespace

Subcommand run_command() {
  return {{"run",
           "MODEL",
           "Measure end-to-end latency of a model with the ATen CPU executor on seeded random inputs.",
           "JSON keys: model, median_ms, p10_ms, p90_ms, iters, threads.",
           {{"--iters", "", "N", "timed runs (default 20)"},
            {"--warmup", "", "N", "untimed runs first (default 3)"},
            {"--threads", "", "T", "intra-op threads (default: all cores)"},
            {"--seed", "", "S", "seed of the random inputs (default 1)"},
            {"--batch", "", "N", "batch size for zoo models (default 1)"},
            input_shape_option(),
            {"--profile", "", "", "also time each op type and print the breakdown"},
            {"--json", "", "", "print one JSON object"}}},
          run_run};
}

}  // namespace graphworld
