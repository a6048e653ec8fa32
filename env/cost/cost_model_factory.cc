#include "env/cost/cost_model_factory.h"

#include <filesystem>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/aten_op_timer.h"
#include "env/cost/cost_cache_file.h"
#include "env/cost/cuda_op_timer.h"
#include "env/cost/gpu_cost_model.h"
#include "env/cost/measured_cost_model.h"

namespace graphworld {

std::string calibrated_rates_path(const std::string& cache_dir) {
  return (cache_dir.empty() ? default_cache_dir() : cache_dir) + "/analytic_rates.yaml";
}

std::unique_ptr<CostModel> make_cost_model(const CostModelOptions& options) {
  std::string cache_dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  if (options.kind == "analytic") {
    // "builtin": the built-in rates even where a calibrated file exists (what
    // training's env.rates: builtin means, so a policy is priced as it learned).
    if (options.rates_path == "builtin") return std::make_unique<AnalyticCostModel>();
    if (!options.rates_path.empty()) return std::make_unique<AnalyticCostModel>(load_analytic_rates(options.rates_path));
    std::string calibrated = calibrated_rates_path(cache_dir);
    if (std::filesystem::is_regular_file(calibrated))
      return std::make_unique<AnalyticCostModel>(load_analytic_rates(calibrated));
    return std::make_unique<AnalyticCostModel>();
  }
  if (options.kind == "measured")
    return std::make_unique<MeasuredCostModel>("measured", std::make_unique<AtenOpTimer>(options.threads), cache_dir);
  if (options.kind == "cuda") return std::make_unique<MeasuredCostModel>("cuda", make_cuda_op_timer(), cache_dir);
  if (options.kind == "gpu") {
    GpuDevice device = load_gpu_device(options.gpu);
    const std::string table = options.gpu_table == "auto" ? shipped_gpu_table_path(device)
                              : options.gpu_table == "none" ? ""
                                                            : options.gpu_table;
    if (table.empty()) return std::make_unique<GpuCostModel>(std::move(device), std::nullopt);
    CostTable measured = read_gpu_table(table, device);
    return std::make_unique<GpuCostModel>(std::move(device), std::move(measured), table);
  }
  throw UsageError("unknown cost model '" + options.kind + "'; choose analytic, measured, cuda or gpu");
}

bool cost_kind_prices_layouts(const std::string& kind) { return kind == "measured"; }

}  // namespace graphworld
