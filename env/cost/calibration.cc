#include "env/cost/calibration.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/error.h"
#include "env/ops/op_schema.h"

namespace graphworld {
namespace {

constexpr int kTerms = 4;  // overhead, dense FLOPs, other FLOPs, bytes
using Row = std::array<double, kTerms>;

Row features(const OpCostKey& key) {
  OpWork work = op_work(key.type, key.attrs, key.inputs, key.outputs);
  bool dense = key.type == OpType::Conv || key.type == OpType::ConvTranspose || key.type == OpType::MatMul ||
               key.type == OpType::Gemm;
  return {1.0, dense ? work.flops : 0.0, dense ? 0.0 : work.flops, work.bytes};
}

// Solves the weighted normal equations over the active terms; inactive
// coefficients are 0. Returns false if the system is singular.
bool solve(const std::vector<Row>& x, const std::vector<double>& y, const std::array<bool, kTerms>& active,
           Row& coef) {
  std::vector<int> idx;
  for (int t = 0; t < kTerms; ++t)
    if (active[t]) idx.push_back(t);
  size_t n = idx.size();
  // Columns are scaled to unit size first: FLOPs (1e9) and the constant (1)
  // differ by many orders of magnitude.
  std::array<double, kTerms> scale{};
  for (size_t s = 0; s < x.size(); ++s)
    for (size_t i = 0; i < n; ++i) scale[i] = std::max(scale[i], std::abs(x[s][idx[i]] / y[s]));
  for (double& v : scale)
    if (v == 0) v = 1;
  std::array<std::array<double, kTerms + 1>, kTerms> a{};
  for (size_t s = 0; s < x.size(); ++s) {
    double w = 1.0 / y[s];  // relative error: divide the row by the target
    for (size_t i = 0; i < n; ++i) {
      double xi = x[s][idx[i]] * w / scale[i];
      for (size_t j = 0; j < n; ++j) a[i][j] += xi * x[s][idx[j]] * w / scale[j];
      a[i][kTerms] += xi * y[s] * w;
    }
  }
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[col], a[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      a[r][kTerms] -= f * a[col][kTerms];
    }
  }
  coef.fill(0.0);
  for (size_t i = 0; i < n; ++i) coef[idx[i]] = a[i][kTerms] / a[i][i] / scale[i];
  return true;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    double mean_rank = 0.5 * static_cast<double>(i + j) + 1.0;
    for (size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

}  // namespace

CalibrationResult fit_analytic_rates(const std::vector<CostSample>& samples) {
  std::vector<Row> x;
  std::vector<double> y;
  for (const CostSample& s : samples) {
    if (!(s.measured_ms > 0)) continue;
    x.push_back(features(s.key));
    y.push_back(s.measured_ms);
  }
  if (x.size() < kTerms) throw UsageError("calibration needs at least 4 measured ops, got " + std::to_string(x.size()));
  std::array<bool, kTerms> active{true, true, true, true};
  Row coef{};
  for (int round = 0; round < kTerms; ++round) {
    if (!solve(x, y, active, coef)) throw UsageError("calibration failed: the measured ops do not determine the rates");
    bool dropped = false;
    for (int t = 0; t < kTerms; ++t)
      if (active[t] && coef[t] <= 0) {
        active[t] = false;
        dropped = true;
      }
    if (!dropped) break;
  }
  // A dropped term gets a rate so high it contributes nothing measurable.
  auto rate = [](double ms_per_unit, double units_per_ms_scale) {
    return ms_per_unit > 0 ? 1.0 / (ms_per_unit * units_per_ms_scale) : 1e6;
  };
  CalibrationResult result;
  result.rates.overhead_us = coef[0] > 0 ? coef[0] * 1e3 : 0.001;
  result.rates.dense_gflops = rate(coef[1], 1e6);
  result.rates.other_gflops = rate(coef[2], 1e6);
  result.rates.bandwidth_gbs = rate(coef[3], 1e6);
  result.rates.source = "calibrated";
  std::vector<double> errors;
  for (size_t s = 0; s < x.size(); ++s) {
    double predicted = 0;
    for (int t = 0; t < kTerms; ++t) predicted += coef[t] * x[s][t];
    errors.push_back(std::abs(predicted - y[s]) / y[s]);
  }
  std::nth_element(errors.begin(), errors.begin() + static_cast<ptrdiff_t>(errors.size() / 2), errors.end());
  result.median_relative_error = errors[errors.size() / 2];
  result.samples = x.size();
  return result;
}

double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) throw UsageError("spearman_correlation needs two series of equal length >= 2");
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size()), mean = (n + 1) / 2;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    va += (ra[i] - mean) * (ra[i] - mean);
    vb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (va == 0 || vb == 0) return 0;
  return cov / std::sqrt(va * vb);
}

}  // namespace graphworld
