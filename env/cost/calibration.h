// Fits the analytic model's rates to measured op costs (`graphworld calibrate`).
#pragma once

#include <vector>

#include "env/cost/analytic_cost_model.h"

namespace graphworld {

struct CostSample {
  OpCostKey key;
  double measured_ms;
};

struct CalibrationResult {
  AnalyticRates rates;
  double median_relative_error = 0;  // |predicted - measured| / measured, over the samples
  size_t samples = 0;
};

// Least squares on relative error (each sample weighted by 1/measured), so
// small and large ops count alike; a term that comes out negative is dropped
// and the rest refitted. Needs at least 4 samples.
CalibrationResult fit_analytic_rates(const std::vector<CostSample>& samples);

// Spearman rank correlation of two equally long series (ties get mean ranks).
double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace graphworld
