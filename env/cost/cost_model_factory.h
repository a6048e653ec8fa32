// Builds a cost model by name, as the CLI and configs name them.
#pragma once

#include <memory>
#include <string>

#include "env/cost/cost_model.h"

namespace graphworld {

struct CostModelOptions {
  std::string kind = "analytic";  // analytic | measured | cuda | gpu
  int threads = 0;                // measured: intra-op threads (0 = all cores)
  std::string cache_dir;          // "" = default_cache_dir()
  std::string rates_path;         // analytic: "" = calibrated file in the cache dir, else built-in defaults;
                                  // "builtin" = the built-in defaults always
  std::string gpu = "h100-sxm";   // gpu: a profile name (configs/gpu/NAME.yaml) or a profile file
  std::string gpu_table = "auto"; // gpu: "auto" = the table shipped for the GPU if any, "none" = the
                                  // model alone, else a measured cuda table file
};

// Whether models of this kind price oneDNN's blocked layouts (the CPU
// timer does; analytic and cuda do not): a table made by one is read so.
bool cost_kind_prices_layouts(const std::string& kind);

// Throws UsageError for an unknown kind, GPU or table, and UnavailableError when `cuda` cannot run here.
std::unique_ptr<CostModel> make_cost_model(const CostModelOptions& options);

// Where `graphworld calibrate` writes by default and analytic looks first.
std::string calibrated_rates_path(const std::string& cache_dir);

}  // namespace graphworld
