// Fits a GPU profile's efficiency parameters (gpu_device.h) to a measured
// cuda table, and says how well the model then predicts configurations it
// was not fitted on: Spearman rank correlation per op type and the median
// relative error, over a fixed fifth of the table held out of the fit (the
// configurations whose key hashes to 0 mod 5). The datasheet figures are
// never fitted.
//
// The fit minimises the mean squared log ratio of predicted to measured
// time (small and large ops count alike) by coordinate descent in log space
// within each parameter's range: deterministic, no randomness.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "env/cost/cost_table.h"
#include "env/cost/cuda_op_spec.h"
#include "env/cost/gpu_config_list.h"
#include "env/cost/gpu_device.h"

namespace graphworld {

struct GpuSample {
  std::string key;      // canonical OpCostKey
  std::string op_type;  // "Conv", "MatMul", ... (the key's first word)
  CudaOpSpec spec;
  double measured_ms = 0;
  bool held_out = false;
};

// The table's timings joined with the list's specs (what the timer ran);
// configurations in only one of them are left out.
std::vector<GpuSample> gpu_samples(const CostTable& table, const std::vector<GpuConfig>& list);
// Whether a configuration is in the held-out fifth.
bool gpu_sample_held_out(const std::string& key);

struct OpTypeFidelity {
  std::string op_type;
  int64_t count = 0;
  double span = 0;      // largest over smallest measured cost
  double spearman = 0;  // of predicted against measured
  double median_relative_error = 0;
  bool judged = false;  // count >= 20 and span >= 3: the bar applies
};

struct GpuFidelity {
  int64_t count = 0;
  double median_relative_error = 0;
  double mean_squared_log_ratio = 0;
  std::vector<OpTypeFidelity> per_type;  // sorted by op type
};

// Fidelity over the held-out samples (or over the fitted ones).
GpuFidelity gpu_fidelity(const GpuDevice& device, const std::vector<GpuSample>& samples, bool held_out);

// `start` with its efficiency parameters fitted to the samples not held out.
// `progress(round, loss)` after each pass, if given.
GpuDevice fit_gpu_device(const GpuDevice& start, const std::vector<GpuSample>& samples,
                         const std::function<void(int, double)>& progress = {});

}  // namespace graphworld
