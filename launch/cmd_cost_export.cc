// graphworld cost export-table MODEL... -o FILE [--cost measured|cuda]
//
// Prices every op configuration of the given models on this machine (from
// the measured cache where it can) and writes them as one cost table: the
// file a training run names in env.cost_table so that all its actors, on
// whatever machines, price graphs the same way (env/cost/cost_table.h).
#include "launch/cmd_cost_export.h"

#include <cstdio>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/cost/cost_table.h"
#include "launch/pipeline/cost_options.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {

int run_cost_export_table(const CliArgs& args) {
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("cost export-table needs -o FILE (the table to write)");
  if (args.positional_count() < 2) throw UsageError("cost export-table needs one or more MODELs (.onnx files or zoo names)");
  const CostModelOptions options = cost_options_from(args, "measured");
  if (options.kind == "analytic")
    throw UsageError("analytic costs need no table: every machine computes the same prices from the rates "
                     "(name them in env.rates); export-table is for --cost measured or --cost cuda");
  std::vector<LoadedModel> models;
  for (size_t i = 1; i < args.positional_count(); ++i)
    models.push_back(load_model(args.positional(i, "a MODEL"), args.int_value("--batch", 1), import_options_from(args)));
  std::vector<const Graph*> graphs;
  for (const LoadedModel& m : models) graphs.push_back(&m.graph);
  std::unique_ptr<CostModel> model = make_cost_model_with_progress(options);
  Stopwatch clock;
  const CostTable table = export_cost_table(graphs, *model);
  model->flush();
  write_cost_table(out, table);
  std::printf("wrote %s: %zu op configurations of %zu models (%lld measured now, %lld from the cache) in %.1f s\n",
              out.c_str(), table.entries.size(), models.size(), static_cast<long long>(model->stats().measured_now),
              static_cast<long long>(model->stats().cache_hits), clock.elapsed_s());
  std::printf("measured by  %s\n", table.fingerprint.c_str());
  std::printf("train with   env.cost_model=%s env.cost_table=%s\n", options.kind.c_str(), out.c_str());
  return 0;
}

}  // namespace graphworld
