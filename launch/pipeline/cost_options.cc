#include "launch/pipeline/cost_options.h"

#include <unistd.h>

#include <cstdio>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/cost/measured_cost_model.h"

namespace graphworld {

std::vector<CliOption> cost_cli_options() {
  return {{"--cost", "", "MODEL",
           "cost model: analytic (default), measured (ATen on this CPU), cuda (cuDNN/cuBLAS on this GPU) or gpu\n"
           "(a named GPU priced without one: its measured table, else tiles and waves over its SMs)"},
          {"--gpu", "", "NAME", "gpu: h100-sxm (default), a100-sxm, v100-sxm, or a profile YAML (configs/gpu/)"},
          {"--gpu-table", "", "FILE", "gpu: a measured cuda table, 'none' for the model alone (default: the table\n"
                                      "shipped in configs/gpu/ for the GPU, if any)"},
          {"--threads", "", "T", "measured: intra-op threads, fixed for every measurement (default: all cores)"},
          {"--cache-dir", "", "DIR", "measured/cuda cache and calibrated rates (default $GRAPHWORLD_CACHE_DIR or ~/.cache/graphworld)"},
          {"--rates", "", "FILE", "analytic: rates YAML, or 'builtin' (default: the calibrated file in the cache dir, else\n"
                                  "built-in)"}};
}

CostModelOptions cost_options_from(const CliArgs& args, const std::string& default_kind) {
  CostModelOptions options;
  options.kind = args.value_or("--cost", default_kind);
  int64_t threads = args.int_value("--threads", 0);
  if (threads < 0) throw UsageError("--threads must be >= 0");
  options.threads = static_cast<int>(threads);
  options.cache_dir = args.value_or("--cache-dir", "");
  options.rates_path = args.value_or("--rates", "");
  options.gpu = args.value_or("--gpu", options.gpu);
  options.gpu_table = args.value_or("--gpu-table", options.gpu_table);
  if (options.kind != "gpu" && (args.value("--gpu") || args.value("--gpu-table")))
    throw UsageError("--gpu and --gpu-table choose what the gpu cost model prices; add --cost gpu");
  if (options.gpu_table.empty()) throw UsageError("--gpu-table needs a table file, 'auto' or 'none'");
  return options;
}

std::unique_ptr<CostModel> make_cost_model_with_progress(const CostModelOptions& options, bool show_progress) {
  std::unique_ptr<CostModel> model = make_cost_model(options);
  if (!show_progress) return model;
  if (auto* measured = dynamic_cast<MeasuredCostModel*>(model.get())) {
    bool tty = isatty(STDERR_FILENO) != 0;
    auto last = std::make_shared<Stopwatch>();
    auto started = std::make_shared<Stopwatch>();
    measured->set_progress([tty, last, started](int64_t count, const OpCostKey& key) {
      if (count > 1 && last->elapsed_ms() < (tty ? 200 : 2000)) return;
      last->restart();
      std::string what = key.canonical();
      if (what.size() > 70) what = what.substr(0, 67) + "...";
      std::fprintf(stderr, tty ? "\r\033[Kmeasuring op configurations: %lld done, %.1f s  %s" : "measuring op configurations: %lld done, %.1f s  %s\n",
                   static_cast<long long>(count), started->elapsed_s(), what.c_str());
      std::fflush(stderr);
    });
  }
  return model;
}

}  // namespace graphworld
