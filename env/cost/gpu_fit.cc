#include "env/cost/gpu_fit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>

#include "common/checksum.h"
#include "common/error.h"
#include "env/cost/calibration.h"
#include "env/cost/cuda_op_spec_text.h"
#include "env/cost/gpu_kernel_model.h"

namespace graphworld {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t mid = v.size() / 2;
  return v.size() % 2 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

double predicted_ms(const GpuDevice& d, const GpuSample& s) { return gpu_spec_time_us(d, s.spec) * 1e-3; }

double loss(const GpuDevice& d, const std::vector<const GpuSample*>& fit) {
  double sum = 0;
  for (const GpuSample* s : fit) {
    const double r = std::log(predicted_ms(d, *s) / s->measured_ms);
    sum += r * r;
  }
  return fit.empty() ? 0 : sum / static_cast<double>(fit.size());
}

// Each fitted parameter's range: where a profile may hold it (gpu_device.cc).
struct Range {
  double min, max;
};
const Range kRanges[] = {{0.05, 1000}, {1, 1e7},   {1, 1e7},   {1, 1024}, {1e-3, 1}, {1e-3, 1}, {1e-3, 1}, {1e-3, 1},
                         {1e-3, 1},    {1e-3, 1}, {1e-3, 1}, {1e-3, 1}, {1, 20}, {0.05, 1000}, {1, 64}};

}  // namespace

bool gpu_sample_held_out(const std::string& key) { return fnv1a_64(key.data(), key.size()) % 5 == 0; }

std::vector<GpuSample> gpu_samples(const CostTable& table, const std::vector<GpuConfig>& list) {
  std::vector<GpuSample> out;
  for (const GpuConfig& c : list) {
    const auto found = table.entries.find(c.key);
    if (found == table.entries.end()) continue;
    GpuSample s;
    s.key = c.key;
    s.op_type = c.key.substr(0, c.key.find_first_of("( "));
    s.spec = cuda_spec_from_text(c.spec);
    s.measured_ms = found->second;
    s.held_out = gpu_sample_held_out(c.key);
    out.push_back(std::move(s));
  }
  return out;
}

GpuFidelity gpu_fidelity(const GpuDevice& device, const std::vector<GpuSample>& samples, bool held_out) {
  GpuFidelity f;
  std::map<std::string, std::vector<const GpuSample*>> by_type;
  std::vector<double> errors;
  double squared = 0;
  for (const GpuSample& s : samples) {
    if (s.held_out != held_out) continue;
    by_type[s.op_type].push_back(&s);
    const double p = predicted_ms(device, s);
    errors.push_back(std::abs(p - s.measured_ms) / s.measured_ms);
    squared += std::pow(std::log(p / s.measured_ms), 2);
  }
  f.count = static_cast<int64_t>(errors.size());
  f.median_relative_error = median(errors);
  f.mean_squared_log_ratio = errors.empty() ? 0 : squared / static_cast<double>(errors.size());
  for (const auto& [type, list] : by_type) {
    OpTypeFidelity t;
    t.op_type = type;
    t.count = static_cast<int64_t>(list.size());
    std::vector<double> measured, predicted, rel;
    for (const GpuSample* s : list) {
      measured.push_back(s->measured_ms);
      predicted.push_back(predicted_ms(device, *s));
      rel.push_back(std::abs(predicted.back() - measured.back()) / measured.back());
    }
    const auto [lo, hi] = std::minmax_element(measured.begin(), measured.end());
    t.span = *hi / *lo;
    t.spearman = list.size() >= 2 ? spearman_correlation(predicted, measured) : 1.0;
    t.median_relative_error = median(rel);
    t.judged = t.count >= 20 && t.span >= 3;
    f.per_type.push_back(t);
  }
  return f;
}

GpuDevice fit_gpu_device(const GpuDevice& start, const std::vector<GpuSample>& samples,
                         const std::function<void(int, double)>& progress) {
  std::vector<const GpuSample*> fit;
  for (const GpuSample& s : samples)
    if (!s.held_out) fit.push_back(&s);
  if (fit.size() < 10)
    throw UsageError("fitting a GPU profile needs at least 10 timed configurations outside the held-out fifth, got " +
                     std::to_string(fit.size()));
  GpuDevice best = start;
  if (gpu_efficiency_parameters(best).size() != std::size(kRanges))
    throw std::logic_error("gpu_fit.cc: kRanges does not list every efficiency parameter of gpu_device.cc");
  double best_loss = loss(best, fit);
  double step = 2.0;
  for (int round = 1; round <= 200 && step > 1.002; ++round) {
    bool improved = false;
    for (size_t p = 0; p < gpu_efficiency_parameters(best).size(); ++p) {
      for (double factor : {step, 1.0 / step}) {
        // Keep moving the same way while it pays.
        for (;;) {
          GpuDevice trial = best;
          double* value = gpu_efficiency_parameters(trial)[p];
          const double moved = std::clamp(std::max(*value, 1e-3) * factor, kRanges[p].min, kRanges[p].max);
          if (moved == *value) break;
          *value = moved;
          const double l = loss(trial, fit);
          if (!(l < best_loss - 1e-12)) break;
          best = trial;
          best_loss = l;
          improved = true;
        }
      }
    }
    if (progress) progress(round, best_loss);
    if (!improved) step = std::sqrt(step);
  }
  return best;
}

}  // namespace graphworld
