// graphworld bench io|cost|fidelity: benchmarks that print numbers.
// 'io' (here): import and export times of a model file. Executor latency:
// `graphworld run`; against onnxruntime: tests/bench/executor_vs_ort.
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "launch/bench_commands.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"
#include "launch/pipeline/model_source.h"
#include "common/latency.h"

namespace graphworld {
namespace {

int run_bench(const CliArgs& args) {
  const std::string& what = args.positional(0, "a benchmark name: io, cost or fidelity");
  if (what == "cost") return run_bench_cost(args);
  if (what == "fidelity") return run_bench_fidelity(args);
  if (what == "rules") return run_bench_rules(args);
  if (what == "policy") return run_bench_policy(args);
  if (what == "wire") return run_bench_wire(args);
  if (what != "io")
    throw UsageError("unknown benchmark '" + what + "'; available: io, cost, fidelity, rules, policy, wire");
  return run_bench_io(args);
}

}  // namespace

int run_bench_io(const CliArgs& args) {
  const std::string& path = args.positional(1, "an .onnx MODEL file");
  args.expect_at_most(2);
  int repeats = static_cast<int>(args.int_value("--repeats", 5));
  if (repeats < 1) throw UsageError("--repeats must be >= 1");
  std::string out_path = args.value_or("--output", (std::filesystem::temp_directory_path() / "graphworld_bench_io.onnx").string());

  Graph graph;
  const ImportOptions import = import_options_from(args);
  LatencyStats import_stats = measure_latency([&] { graph = import_onnx_file(path, nullptr, import); }, 1, repeats);
  LatencyStats export_stats = measure_latency([&] { export_onnx_file(graph, out_path); }, 1, repeats);
  double size_mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  if (!args.value("--output")) std::filesystem::remove(out_path);
  if (args.flag("--json")) {
    JsonWriter json;
    json.begin_object()
        .key("model").value(path)
        .key("size_mb").value(size_mb)
        .key("import_median_ms").value(import_stats.median_ms)
        .key("export_median_ms").value(export_stats.median_ms)
        .key("repeats").value(repeats)
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    std::printf("%s\n", json.str().c_str());
  } else {
    std::printf("%s (%.1f MB): import median %.1f ms, export median %.1f ms (%d repeats), peak RSS %.0f MiB\n",
                path.c_str(), size_mb, import_stats.median_ms, export_stats.median_ms, repeats, peak_rss_mib());
  }
  return 0;
}

Subcommand bench_command() {
  return {{"bench",
           "io MODEL.onnx | cost [MODEL] | fidelity | rules [MODELS] | policy [MODELS] | wire [MODEL]",
           "Benchmarks that print numbers: ONNX I/O, cost-model speed and fidelity, rule matching, the policy\n"
           "network, trajectory messages and the rollout store.",
           "io MODEL.onnx  import and export time of a model file (reading, parsing, folding, validation;\n"
           "               serialisation, writing). JSON keys: model, size_mb, import_median_ms,\n"
           "               export_median_ms, repeats, peak_rss_mib.\n"
           "cost [MODEL]   (default resnet50) measured cost model: first-time measurement of every distinct op\n"
           "               configuration (fresh cache), cost of the fully cached graph, and the incremental\n"
           "               update after one rewrite. JSON keys: model, configurations, first_measure_s,\n"
           "               cached_from_disk_us, cached_us, incremental_us, incremental_max_error_ms, peak_rss_mib.\n"
           "fidelity       Spearman rank correlation between cost-model totals and the executor's end-to-end\n"
           "               latency over zoo graphs at several batch sizes plus the ONNX files in --onnx-dir.\n"
           "rules [MODELS] (default resnet50,bert) all matches of all default rules from scratch, and the\n"
           "               incremental re-match after each of --steps random rewrites. JSON keys: rules, models\n"
           "               [{model, ops, matches, scratch_median_ms, scratch_p90_ms, incremental_mean_ms,\n"
           "               incremental_max_ms, rewrites}], peak_rss_mib.\n"
           "policy [MODELS] (default resnet50,bert) policy-network parameters, inference, and PPO samples/s as the\n"
           "               learner trains and as it trained before (ATen row ops, one network), measured in the\n"
           "               same run, with the step's matrix-product GFLOP/s beside this machine's sgemm rate.\n"
           "               JSON keys: hidden, rounds, minibatch, device, threads, gemm_gflops, models (each:\n"
           "               model, nodes, parameters, inference_median_ms, inference_p90_ms,\n"
           "               batched_ms_per_observation, workers, ppo_step_ms, ppo_samples_per_s,\n"
           "               reference_ppo_samples_per_s, speedup, ppo_gflop_per_step, ppo_gflops), peak_rss_mib.\n"
           "wire [MODEL]   (default resnet50) trajectory-message bytes per step, encode and decode-with-validation\n"
           "               steps/s, and the HDF5 rollout store's bytes per step and write steps/s. JSON keys:\n"
           "               model, nodes, message_bytes_per_step, encode_steps_per_s, decode_steps_per_s,\n"
           "               store_bytes_per_step, store_write_steps_per_s, actors, ingest_steps_per_s,\n"
           "               parameter_bytes, broadcast_s, broadcast_gb_per_s, peak_rss_mib.",
           {{"--repeats", "", "N", "io, rules: timed repetitions after one warm-up (default 5; rules 10)"},
            {"--steps", "", "N", "rules: random rewrites timed incrementally (default 50)"},
            {"--output", "-o", "FILE", "io: keep the exported model here (default: a temp file, removed)"},
            {"--threads", "", "T", "cost, fidelity, policy: intra-op threads (default: all cores)"},
            {"--hidden", "", "H", "policy: embedding width (default 32)"},
            {"--rounds", "", "R", "policy: message-passing rounds (default 3)"},
            {"--batch", "", "B", "policy: PPO minibatch and batched-inference size (default 64)"},
            {"--workers", "", "W", "policy: threads sharing each PPO minibatch (default: one per thread; 1 on a GPU)"},
            {"--device", "", "D", "policy: cpu or cuda[:N] (default cpu)"},
            {"--no-reference", "", "", "policy: skip timing the previous learner"},
            {"--cuda-graph", "", "", "policy: replay each PPO step from a CUDA graph (with --device cuda)"},
            {"--cache-dir", "", "DIR", "fidelity: measured-cost cache directory (default: the user cache)"},
            {"--onnx-dir", "", "DIR", "fidelity: also every .onnx file in DIR (e.g. torchvision exports)"},
            {"--models", "", "LIST", "fidelity: comma-separated zoo models (default: all)"},
            {"--batches", "", "LIST", "fidelity: batch sizes for the zoo models (default 1,2)"},
            {"--seconds", "", "S", "wire: time spent on each of encode and decode (default 3)"},
            {"--store-steps", "", "N", "wire: steps written to the store (default 2000000)"},
            {"--actors", "", "N", "wire: synthetic actors for the ingest and broadcast measurements (default 2)"},
            {"--json", "", "", "print one JSON object"},
            {"--input-shape", "", "NAME=DIMS", "io, cost: fix a graph input's symbolic dimensions (repeatable)"}}},
          run_bench};
}

}  // namespace graphworld
