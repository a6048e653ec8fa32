// graphworld cost MODEL [--cost analytic|measured|cuda|gpu] [--json]
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/cost/graph_cost.h"
#include "launch/cmd_cost_export.h"
#include "launch/cmd_cost_gpu.h"
#include "launch/command_json.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {

// A model's cost, printed; as one JSON object with --json, or handed back
// in `json_out` (a caller in this process: command_json.h).
int cost_with(const CliArgs& args, std::string* json_out) {
  const std::string& spec = args.positional(0, "a MODEL (an .onnx file or a zoo name)");
  args.expect_at_most(1);
  int64_t top = args.int_value("--top", 10);
  if (top < 0) throw UsageError("--top must be >= 0");
  LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
  std::unique_ptr<CostModel> cost_model = make_cost_model_with_progress(cost_options_from(args));
  Stopwatch watch;
  GraphCost cost = graph_cost(model.graph, *cost_model);
  double seconds = watch.elapsed_s();
  cost_model->flush();
  if (cost_model->stats().measured_now > 0 && isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");

  const Graph& g = model.graph;
  std::vector<OpId> priced;
  for (size_t i = 0; i < g.num_ops(); ++i)
    if (!g.op(static_cast<OpId>(i)).is_leaf()) priced.push_back(static_cast<OpId>(i));
  if (args.flag("--json") || json_out) {
    JsonWriter json;
    json.begin_object()
        .key("model").value(model.source)
        .key("cost_model").value(cost_model->name())
        .key("total_ms").value(cost.total_ms)
        .key("per_op").begin_array();
    for (OpId id : priced)
      json.begin_object()
          .key("name").value(g.op(id).name)
          .key("type").value(std::string(op_type_name(g.op(id).type)))
          .key("ms").value(cost.op_ms[id])
          .end_object();
    json.end_array()
        .key("cache_hits").value(cost_model->stats().cache_hits)
        .key("measured_now").value(cost_model->stats().measured_now)
        .key("table_hits").value(cost_model->stats().table_hits)
        .key("model_fallbacks").value(cost_model->stats().model_fallbacks)
        .key("distinct_configurations").value(static_cast<int64_t>(cost_model->distinct_configurations()))
        .key("seconds").value(seconds)
        .key("source").value(cost_model->description())
        .end_object();
    if (json_out)
      *json_out = json.str();
    else
      std::printf("%s\n", json.str().c_str());
    return 0;
  }
  int64_t free_ops = 0;
  for (OpId id : priced) free_ops += cost.op_ms[id] == 0;
  std::printf("%s: %.3f ms (%s cost model)\n", model.source.c_str(), cost.total_ms, cost_model->name().c_str());
  std::printf("  %zu ops, %lld free (constant, dead or metadata-only), %zu distinct priced configurations\n",
              priced.size(), static_cast<long long>(free_ops), cost_model->distinct_configurations());
  if (cost_model->name() == "gpu")
    std::printf("  %lld from the measured table, %lld from the model, %.2f s\n",
                static_cast<long long>(cost_model->stats().table_hits),
                static_cast<long long>(cost_model->stats().model_fallbacks), seconds);
  else
    std::printf("  %lld from cache, %lld measured now, %.2f s\n", static_cast<long long>(cost_model->stats().cache_hits),
                static_cast<long long>(cost_model->stats().measured_now), seconds);
  std::printf("  %s\n", cost_model->description().c_str());
  std::sort(priced.begin(), priced.end(), [&](OpId a, OpId b) { return cost.op_ms[a] > cost.op_ms[b]; });
  if (top > 0 && !priced.empty()) {
    std::printf("  costliest ops:\n");
    for (size_t k = 0; k < priced.size() && k < static_cast<size_t>(top); ++k) {
      OpId id = priced[k];
      std::printf("    %9.4f ms  %5.1f%%  %-12s %s\n", cost.op_ms[id],
                  cost.total_ms > 0 ? 100 * cost.op_ms[id] / cost.total_ms : 0.0,
                  std::string(op_type_name(g.op(id).type)).c_str(), g.op(id).name.c_str());
    }
  }
  return 0;
}

int run_cost(const CliArgs& args) {
  if (args.positional_count() > 0 && args.positional(0, "") == "export-table") return run_cost_export_table(args);
  if (args.positional_count() > 0 && args.positional(0, "") == "export-gpu-configs") return run_cost_export_gpu_configs(args);
  if (args.positional_count() > 0 && args.positional(0, "") == "import-gpu-times") return run_cost_import_gpu_times(args);
  if (args.positional_count() > 0 && args.positional(0, "") == "fit-gpu") return run_cost_fit_gpu(args);
  return cost_with(args, nullptr);
}

}  // namespace

std::string cost_json(const std::vector<std::string>& args) {
  const Subcommand command = cost_command();
  const CliArgs parsed(command.spec, args);
  std::string json;
  cost_with(parsed, &json);
  return json;
}

Subcommand cost_command() {
  std::vector<CliOption> options = cost_cli_options();
  options.push_back({"--batch", "", "N", "batch size for zoo models (default 1)"});
  options.push_back(input_shape_option());
  options.push_back({"--top", "", "K", "list the K costliest ops (default 10)"});
  options.push_back({"--json", "", "", "print one JSON object"});
  options.push_back({"--output", "-o", "FILE", "export-table, import-gpu-times: the cost table to write;\n"
                                                "export-gpu-configs: the configuration list"});
  options.push_back({"--budget", "", "N", "export-gpu-configs: TASO's and greedy search's budget (default 1000)"});
  options.push_back({"--rollouts", "", "R", "export-gpu-configs: random rollouts of 50 steps per model (default 32)"});
  options.push_back({"--list", "", "LIST", "fit-gpu: the configuration list the table was timed from"});
  options.push_back({"--residuals", "", "FILE", "fit-gpu: write each configuration's measured and fitted time (TSV)"});
  return {{"cost",
           "MODEL | export-table MODEL... -o FILE [--cost measured|cuda] | export-gpu-configs MODEL... -o LIST |\n"
           "import-gpu-times TIMINGS -o TABLE | fit-gpu TABLE --list LIST --gpu NAME [-o PROFILE] [--residuals FILE]",
           "Predict a model's runtime with a cost model: the sum of its ops' costs.",
           "Constant (weight-only) ops, dead ops and metadata-only reshapes cost 0; transposes that move data\n"
           "do not. 'measured' times each distinct op configuration once and keeps it in an on-disk cache\n"
           "keyed by the device fingerprint. JSON keys: total_ms, per_op (list of {name, type, ms}),\n"
           "cache_hits, measured_now, table_hits and model_fallbacks (gpu: configurations priced from the measured\n"
           "table and by the model), model, cost_model, distinct_configurations, seconds, source.\n"
           "export-table: prices every op configuration of the MODELs (measured by default) into one table\n"
           "file; a distributed run given it as env.cost_table prices from it on every actor.\n"
           "export-gpu-configs: the op configurations TASO's search, greedy search and random rollouts reach on\n"
           "the MODELs under --cost gpu, as the list tests/bench/gpu_cost_table times on a GPU machine;\n"
           "import-gpu-times turns what it measured into a cuda cost table (configs/gpu/NAME.table); fit-gpu fits\n"
           "the GPU profile's efficiency parameters to it and reports the model's fidelity on a held-out fifth.",
           options},
          run_cost};
}

}  // namespace graphworld
