// graphworld cost export-gpu-configs MODEL... -o LIST [--budget 1000] [--rollouts 32]
//   The op configurations that TASO's search (budget B), greedy search and R
//   random rollouts reach on each MODEL under the gpu cost model, as the
//   list a GPU machine times (env/cost/gpu_config_list.h).
// graphworld cost import-gpu-times TIMINGS -o TABLE
//   The GPU timer's output as a cuda cost table (configs/gpu/NAME.table).
// graphworld cost fit-gpu TABLE --list LIST --gpu NAME [-o PROFILE] [--json] [--residuals FILE]
//   The profile's efficiency parameters fitted to the table, and the
//   model's fidelity on the held-out fifth and on whole zoo graphs;
//   --residuals writes each configuration's measured and fitted time.
#include "launch/cmd_cost_gpu.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/stopwatch.h"
#include "common/json_writer.h"
#include "env/cost/gpu_config_list.h"
#include "env/cost/gpu_cost_model.h"
#include "env/cost/gpu_fit.h"
#include "env/cost/gpu_kernel_model.h"
#include "env/cost/graph_cost.h"
#include "env/zoo/zoo.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_matcher.h"
#include "env/search/search.h"
#include "launch/pipeline/cost_options.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {

int run_cost_export_gpu_configs(const CliArgs& args) {
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("cost export-gpu-configs needs -o FILE (the list to write)");
  if (args.positional_count() < 2)
    throw UsageError("cost export-gpu-configs needs one or more MODELs (.onnx files or zoo names)");
  CostModelOptions options = cost_options_from(args, "gpu");
  if (options.kind != "gpu") throw UsageError("export-gpu-configs explores with --cost gpu; leave --cost out");
  // By default explore the model's landscape, the one a table is fitted to;
  // --gpu-table TABLE explores the landscape priced from that table, whose
  // searches reach configurations the model alone does not.
  if (!args.value("--gpu-table")) options.gpu_table = "none";
  const int64_t budget = args.int_value("--budget", 1000);
  const int64_t rollouts = args.int_value("--rollouts", 32);
  if (budget < 1 || rollouts < 0) throw UsageError("--budget must be >= 1 and --rollouts >= 0");
  std::unique_ptr<CostModel> gpu = make_cost_model(options);
  RecordingCostModel recorder(*gpu);
  const RuleLibrary& library = default_rule_library();
  const RuleMatcher matcher(library.rules);
  Stopwatch clock;
  for (size_t i = 1; i < args.positional_count(); ++i) {
    const std::string& spec = args.positional(i, "a MODEL");
    LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
    const size_t before = recorder.keys().size();
    SearchOptions search;
    search.budget = budget;
    const SearchResult taso = taso_search(model.graph, matcher, recorder, search);
    const SearchResult greedy = greedy_search(model.graph, matcher, recorder, search);
    SearchOptions walks;
    walks.walk_length = 50;
    walks.budget = rollouts * walks.walk_length;
    walks.seed = 1;
    if (rollouts > 0) random_search(model.graph, matcher, recorder, walks);
    std::fprintf(stderr, "%-28s taso %6.2f%%  greedy %6.2f%%  %5zu new configurations  %.1f s\n", model.source.c_str(),
                 taso.reduction_pct(), greedy.reduction_pct(), recorder.keys().size() - before, clock.elapsed_s());
  }
  size_t skipped = 0;
  const std::vector<GpuConfig> configs = gpu_configs_for(recorder.keys(), &skipped);
  write_gpu_config_list(out, configs);
  std::printf("wrote %s: %zu op configurations of %zu models (%zu the cuda timer cannot describe left out%s) in %.1f s\n",
              out.c_str(), configs.size(), args.positional_count() - 1, skipped,
              recorder.truncated() ? "; the list was cut at its bound" : "", clock.elapsed_s());
  std::printf("time them on a GPU with tests/bench/gpu_cost_table\n");
  return 0;
}

int run_cost_import_gpu_times(const CliArgs& args) {
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("cost import-gpu-times needs -o TABLE (the cost table to write)");
  const std::string& timings = args.positional(1, "the TIMINGS file the GPU timer wrote");
  args.expect_at_most(2);
  const CostTable table = read_gpu_timings(timings);
  // A new measurement replaces the table: merging would keep configurations
  // timed by another timer or GPU beside the new ones.
  std::error_code ec;
  if (std::filesystem::exists(out, ec)) {
    std::string before = "an unreadable table";
    try {
      before = "the table measured by " + read_cost_table(out).fingerprint;
    } catch (const Error&) {
    }
    std::filesystem::remove(out, ec);
    if (ec) throw UsageError("cannot replace " + out + ": " + ec.message());
    std::printf("replacing %s (%s)\n", out.c_str(), before.c_str());
  }
  write_cost_table(out, table);
  std::printf("wrote %s: %zu configurations measured by %s\n", out.c_str(), table.entries.size(),
              table.fingerprint.c_str());
  return 0;
}

namespace {

struct GraphFidelity {
  std::string graph;
  double table_ms = 0, model_ms = 0;
  int64_t table_hits = 0, configurations = 0;  // how much of the table side the table priced
  double relative_difference() const { return (model_ms - table_ms) / table_ms; }
};

void print_fidelity(const char* title, const GpuFidelity& f) {
  std::printf("%s: %lld configurations, median relative error %.1f%%\n", title, static_cast<long long>(f.count),
              100 * f.median_relative_error);
  std::printf("  %-16s %6s %8s %9s %9s\n", "op type", "count", "span", "spearman", "med. err");
  for (const OpTypeFidelity& t : f.per_type)
    std::printf("  %-16s %6lld %7.1fx %9.3f %8.1f%%%s\n", t.op_type.c_str(), static_cast<long long>(t.count), t.span,
                t.spearman, 100 * t.median_relative_error, t.judged ? "" : "  (too few or too alike to judge)");
}

void write_fidelity(JsonWriter& json, const GpuFidelity& f) {
  json.begin_object()
      .key("count").value(f.count)
      .key("median_relative_error").value(f.median_relative_error)
      .key("per_type").begin_array();
  for (const OpTypeFidelity& t : f.per_type)
    json.begin_object()
        .key("op_type").value(t.op_type)
        .key("count").value(t.count)
        .key("span").value(t.span)
        .key("spearman").value(t.spearman)
        .key("median_relative_error").value(t.median_relative_error)
        .key("judged").value(t.judged)
        .end_object();
  json.end_array().end_object();
}

// One line per sample: where the fitted model is off, to read or plot.
void write_residuals(const std::string& path, const GpuDevice& fitted, const std::vector<GpuSample>& samples) {
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write the residuals to " + path + ": " + std::strerror(errno));
  out << "op_type\theld_out\tmeasured_ms\tpredicted_ms\tkey\n";
  char line[128];
  for (const GpuSample& s : samples) {
    std::snprintf(line, sizeof(line), "%s\t%d\t%.6g\t%.6g\t", s.op_type.c_str(), s.held_out ? 1 : 0, s.measured_ms,
                  gpu_spec_time_us(fitted, s.spec) * 1e-3);
    out << line << s.key << "\n";
  }
  if (!out) throw UsageError("could not finish writing the residuals to " + path);
}

}  // namespace

int run_cost_fit_gpu(const CliArgs& args) {
  const std::string& table_path = args.positional(1, "the measured TABLE (configs/gpu/NAME.table)");
  args.expect_at_most(2);
  const std::string list_path = args.value_or("--list", "");
  if (list_path.empty()) throw UsageError("cost fit-gpu needs --list LIST: the configuration list the table was timed from");
  if (!args.value("--gpu")) throw UsageError("cost fit-gpu needs --gpu NAME: the profile the table's GPU is fitted into");
  const GpuDevice start = load_gpu_device(*args.value("--gpu"));
  const CostTable table = read_gpu_table(table_path, start);
  const std::vector<GpuConfig> list = read_gpu_config_list(list_path);
  const std::vector<GpuSample> samples = gpu_samples(table, list);
  if (samples.size() < 50)
    throw UsageError("the table " + table_path + " (" + std::to_string(table.entries.size()) + " configurations) and the list " +
                     list_path + " (" + std::to_string(list.size()) + ") share only " + std::to_string(samples.size()) +
                     " configurations; give the list the table was timed from");
  const bool json_out = args.flag("--json");
  std::fprintf(stderr, "fitting %s to %zu timed configurations of %s\n", start.name.c_str(), samples.size(),
               table_path.c_str());
  const GpuDevice fitted = fit_gpu_device(start, samples, [](int round, double loss) {
    if (round % 10 == 0) std::fprintf(stderr, "  round %d: mean squared log ratio %.4f\n", round, loss);
  });
  const GpuFidelity before = gpu_fidelity(start, samples, true), after = gpu_fidelity(fitted, samples, true);
  // Whole graphs: the model alone against the table (the model fills in
  // only what the table lacks).
  std::vector<GraphFidelity> graphs;
  for (const ZooModel& zoo : zoo_models()) {
    const Graph g = zoo.build({});
    GpuCostModel with_table(fitted, table, table_path), alone(fitted, std::nullopt);
    const double table_ms = graph_cost(g, with_table).total_ms;
    graphs.push_back({zoo.name, table_ms, graph_cost(g, alone).total_ms, with_table.stats().table_hits,
                      static_cast<int64_t>(with_table.distinct_configurations())});
  }
  const std::string residuals = args.value_or("--residuals", "");
  if (!residuals.empty()) write_residuals(residuals, fitted, samples);
  const std::string out = args.value_or("--output", "");
  if (!out.empty()) {
    char comment[512];
    std::snprintf(comment, sizeof(comment),
                  "%s, efficiency parameters fitted by `graphworld cost fit-gpu` to %s\n(%zu configurations, measured by "
                  "%s);\nheld-out median relative error %.1f%% (%.1f%% with the priors). Datasheet figures as in\n"
                  "the profile it was fitted from, %s.",
                  fitted.name.c_str(), table_path.c_str(), samples.size(), table.fingerprint.c_str(),
                  100 * after.median_relative_error, 100 * before.median_relative_error, start.source.c_str());
    save_gpu_device(fitted, out, comment);
  }
  if (json_out) {
    JsonWriter json;
    json.begin_object().key("gpu").value(fitted.name).key("table").value(table_path)
        .key("samples").value(static_cast<int64_t>(samples.size())).key("parameters").begin_object();
    GpuDevice copy = fitted;
    const std::vector<std::string> names = gpu_efficiency_parameter_names();
    const std::vector<double*> values = gpu_efficiency_parameters(copy);
    for (size_t i = 0; i < names.size(); ++i) json.key(names[i]).value(*values[i]);
    json.end_object().key("held_out_priors");
    write_fidelity(json, before);
    json.key("held_out_fitted");
    write_fidelity(json, after);
    json.key("graphs").begin_array();
    for (const GraphFidelity& g : graphs)
      json.begin_object().key("graph").value(g.graph).key("table_ms").value(g.table_ms).key("model_ms").value(g.model_ms)
          .key("table_hits").value(g.table_hits).key("configurations").value(g.configurations).end_object();
    json.end_array().key("output").value(out).end_object();
    std::printf("%s\n", json.str().c_str());
    return 0;
  }
  std::printf("fitted %s to %s (%zu configurations)\n", fitted.name.c_str(), table_path.c_str(), samples.size());
  GpuDevice copy = fitted, prior = start;
  const std::vector<std::string> names = gpu_efficiency_parameter_names();
  for (size_t i = 0; i < names.size(); ++i)
    std::printf("  %-24s %10.4g   (prior %.4g)\n", names[i].c_str(), *gpu_efficiency_parameters(copy)[i],
                *gpu_efficiency_parameters(prior)[i]);
  print_fidelity("held out, with the priors", before);
  print_fidelity("held out, fitted", after);
  std::printf("whole zoo graphs, the model alone against the table:\n");
  for (const GraphFidelity& g : graphs)
    std::printf("  %-16s table %9.4f ms  model %9.4f ms  %+6.1f%%  (table priced %lld of %lld configurations)\n",
                g.graph.c_str(), g.table_ms, g.model_ms, 100 * g.relative_difference(),
                static_cast<long long>(g.table_hits), static_cast<long long>(g.configurations));
  if (!out.empty()) std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace graphworld
