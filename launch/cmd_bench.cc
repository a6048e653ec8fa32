// graphworld bench io MODEL.onnx: import and export times of a model file.
// (Executor latency: `graphworld run`; against onnxruntime: tests/bench/executor_vs_ort.)
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "launch/commands.h"
#include "launch/latency.h"

namespace graphworld {
namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

int run_bench(const CliArgs& args) {
  const std::string& what = args.positional(0, "a benchmark name: io");
  if (what != "io") throw UsageError("unknown benchmark '" + what + "'; available: io");
  const std::string& path = args.positional(1, "an .onnx MODEL file");
  args.expect_at_most(2);
  int repeats = static_cast<int>(args.int_value("--repeats", 5));
  if (repeats < 1) throw UsageError("--repeats must be >= 1");
  std::string out_path = args.value_or("--output", (std::filesystem::temp_directory_path() / "graphworld_bench_io.onnx").string());

  Graph graph;
  LatencyStats import_stats = measure_latency([&] { graph = import_onnx_file(path); }, 1, repeats);
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

}  // namespace

Subcommand bench_command() {
  return {{"bench",
           "io MODEL.onnx",
           "Benchmarks that print numbers. 'io': ONNX import and export time of a model file.",
           "Import time includes reading and parsing the file, folding and validation; export time includes\n"
           "serialisation and writing. JSON keys: model, size_mb, import_median_ms, export_median_ms, repeats,\n"
           "peak_rss_mib.",
           {{"--repeats", "", "N", "timed repetitions after one warm-up (default 5)"},
            {"--output", "-o", "FILE", "keep the exported model here (default: a temp file, removed)"},
            {"--json", "", "", "print one JSON object"}}},
          run_bench};
}

}  // namespace graphworld
