// graphworld calibrate [-o FILE]: fits the analytic cost model's rates to
// this machine from measured op costs.
#include <unistd.h>

#include <cstdio>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/calibration.h"
#include "env/cost/graph_cost.h"
#include "env/cost/measured_cost_model.h"
#include "env/zoo/zoo.h"
#include "launch/bench_commands.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"

namespace graphworld {
namespace {

int run_calibrate(const CliArgs& args) {
  args.expect_at_most(0);
  CostModelOptions options = cost_options_from(args, "measured");
  std::string out_path = args.value_or("--output", calibrated_rates_path(options.cache_dir));
  std::string models = args.value_or("--models", "resnet50,bert,squeezenet1.1,inceptionv3,resnext50,nasrnn");
  std::vector<std::string> names = split_comma_list(models);
  int64_t batch = args.int_value("--batch", 1);
  std::unique_ptr<CostModel> measured = make_cost_model_with_progress(options);

  std::vector<CostSample> samples;
  std::vector<std::pair<std::string, Graph>> graphs;
  for (const std::string& name : names) {
    ZooOptions zoo;
    zoo.batch = batch;
    graphs.emplace_back(name, build_zoo_model(name, zoo));
    for (OpCostKey& key : priced_op_keys(graphs.back().second)) {
      bool seen = false;
      for (const CostSample& s : samples) seen = seen || s.key == key;
      if (!seen) samples.push_back({key, measured->key_cost_ms(key)});
    }
  }
  measured->flush();
  if (measured->stats().measured_now > 0 && isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  CalibrationResult fit = fit_analytic_rates(samples);
  std::string comment = "Analytic cost model rates fitted by `graphworld calibrate` to " + std::to_string(fit.samples) +
                         " measured op configurations\n(zoo models " + models +
                        ", batch " + std::to_string(batch) + ").\n" + measured->description();
  save_analytic_rates(fit.rates, out_path, comment);

  AnalyticRates saved = load_analytic_rates(out_path);
  AnalyticCostModel analytic(saved);
  std::printf("fitted to %zu op configurations (%lld measured now): median relative error per op %.1f%%\n", fit.samples,
              static_cast<long long>(measured->stats().measured_now), 100 * fit.median_relative_error);
  std::printf("  dense %.4g GFLOP/s, other %.4g GFLOP/s, bandwidth %.4g GB/s, overhead %.4g us/op\n", saved.dense_gflops,
              saved.other_gflops, saved.bandwidth_gbs, saved.overhead_us);
  std::printf("  %-14s %12s %12s\n", "model", "measured ms", "analytic ms");
  for (const auto& [name, g] : graphs)
    std::printf("  %-14s %12.3f %12.3f\n", name.c_str(), graph_cost(g, *measured).total_ms, graph_cost(g, analytic).total_ms);
  std::printf("wrote %s (the analytic cost model uses it by default from now on)\n", out_path.c_str());
  return 0;
}

}  // namespace

Subcommand calibrate_command() {
  std::vector<CliOption> options;
  for (const CliOption& option : cost_cli_options())
    if (option.name == "--threads" || option.name == "--cache-dir") options.push_back(option);
  options.push_back({"--output", "-o", "FILE", "where to write the rates (default: analytic_rates.yaml in the cache dir)"});
  options.push_back({"--models", "", "LIST", "comma-separated zoo models to take ops from"});
  options.push_back({"--batch", "", "N", "batch size of those models (default 1)"});
  return {{"calibrate",
           "",
           "Fit the analytic cost model's rates (FLOP/s, bandwidth, per-op overhead) to this machine.",
           "Every distinct op configuration of the chosen zoo models is measured with the measured cost model\n"
           "(cached), then the rates are fitted by least squares on relative error and written as YAML.",
           options},
          run_calibrate};
}

}  // namespace graphworld
