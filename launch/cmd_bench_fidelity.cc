// graphworld bench fidelity: does the cost model predict real runtime?
//
// For each graph (zoo models at several batch sizes, plus ONNX files such as
// the torchvision exports), compares the measured and analytic cost models'
// totals with the executor's real end-to-end latency, and prints the Spearman
// rank correlation of each model with the latency.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/cost/calibration.h"
#include "env/cost/graph_cost.h"
#include "env/ops/executor.h"
#include "env/zoo/zoo.h"
#include "launch/bench_commands.h"
#include "launch/pipeline/cost_options.h"
#include "common/latency.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {

struct FidelityRow {
  std::string name;
  double measured_ms = 0;
  double analytic_ms = 0;
  double latency_ms = 0;
};

// Median latency: at least 3 timed runs and about a second of running.
double executor_latency_ms(const Graph& graph, int threads) {
  ExecutorOptions options;
  options.threads = threads;
  Executor executor(graph, options);
  executor.run(random_inputs(graph, 1));
  std::vector<double> samples;
  Stopwatch total;
  while (samples.size() < 3 || (total.elapsed_ms() < 1000 && samples.size() < 30)) {
    Stopwatch watch;
    executor.run_for_timing();
    samples.push_back(watch.elapsed_ms());
  }
  return percentile(samples, 0.5);
}

}  // namespace

int run_bench_fidelity(const CliArgs& args) {
  args.expect_at_most(1);
  CostModelOptions options = cost_options_from(args, "measured");
  options.kind = "measured";
  std::unique_ptr<CostModel> measured = make_cost_model_with_progress(options);
  options.kind = "analytic";
  std::unique_ptr<CostModel> analytic = make_cost_model(options);

  std::vector<std::pair<std::string, std::function<Graph()>>> sources;
  std::vector<std::string> names;
  if (auto list = args.value("--models")) {
    names = split_comma_list(*list);
  } else {
    for (const ZooModel& entry : zoo_models()) names.push_back(entry.name);
  }
  std::vector<int64_t> batches;
  for (const std::string& b : split_comma_list(args.value_or("--batches", "1,2"))) {
    try {
      batches.push_back(std::stoll(b));
    } catch (const std::exception&) {
      throw UsageError("--batches must be a comma-separated list of positive integers, got '" + b + "'");
    }
    if (batches.back() < 1) throw UsageError("--batches must be positive, got " + b);
  }
  for (int64_t batch : batches)
    for (const std::string& name : names)
      sources.emplace_back("zoo:" + name + " b" + std::to_string(batch), [name, batch] {
        ZooOptions zoo;
        zoo.batch = batch;
        return build_zoo_model(name, zoo);
      });
  if (auto dir = args.value("--onnx-dir")) {
    if (!std::filesystem::is_directory(*dir)) throw UsageError("--onnx-dir " + *dir + " is not a directory");
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(*dir))
      if (entry.path().extension() == ".onnx") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& file : files)
      sources.emplace_back(std::filesystem::path(file).filename().string(), [file] { return load_model(file).graph; });
  }
  if (sources.size() < 2) throw UsageError("fidelity needs at least 2 graphs");

  int threads = set_compute_threads(options.threads);
  std::vector<FidelityRow> rows;
  bool json = args.flag("--json");
  if (!json) std::printf("%-34s %12s %12s %12s %9s\n", "graph", "latency ms", "measured ms", "analytic ms", "meas/lat");
  for (auto& [name, build] : sources) {
    Graph graph = build();
    FidelityRow row{name};
    row.measured_ms = graph_cost(graph, *measured).total_ms;
    measured->flush();
    row.analytic_ms = graph_cost(graph, *analytic).total_ms;
    row.latency_ms = executor_latency_ms(graph, threads);
    if (!json) {
      if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
      std::printf("%-34s %12.3f %12.3f %12.3f %9.2f\n", name.c_str(), row.latency_ms, row.measured_ms, row.analytic_ms,
                  row.measured_ms / row.latency_ms);
      std::fflush(stdout);
    }
    rows.push_back(row);
  }
  std::vector<double> latency, meas, anal;
  for (const FidelityRow& r : rows) {
    latency.push_back(r.latency_ms);
    meas.push_back(r.measured_ms);
    anal.push_back(r.analytic_ms);
  }
  double rho_measured = spearman_correlation(meas, latency);
  double rho_analytic = spearman_correlation(anal, latency);
  if (json) {
    JsonWriter out;
    out.begin_object().key("graphs").begin_array();
    for (const FidelityRow& r : rows)
      out.begin_object()
          .key("name").value(r.name)
          .key("latency_ms").value(r.latency_ms)
          .key("measured_ms").value(r.measured_ms)
          .key("analytic_ms").value(r.analytic_ms)
          .end_object();
    out.end_array()
        .key("spearman_measured").value(rho_measured)
        .key("spearman_analytic").value(rho_analytic)
        .key("threads").value(threads)
        .key("analytic_source").value(analytic->description())
        .end_object();
    std::printf("%s\n", out.str().c_str());
    return 0;
  }
  std::printf("%zu graphs, %d threads\n", rows.size(), threads);
  std::printf("Spearman(measured cost, latency) = %.4f\n", rho_measured);
  std::printf("Spearman(analytic cost, latency) = %.4f   [%s]\n", rho_analytic, analytic->description().c_str());
  return 0;
}

}  // namespace graphworld
