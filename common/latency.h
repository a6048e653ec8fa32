// Latency statistics over repeated timed runs.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

#include "common/stopwatch.h"

namespace graphworld {

struct LatencyStats {
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
  int iters = 0;
};

inline double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  double pos = q * static_cast<double>(samples.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, samples.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return samples[lo] * (1 - frac) + samples[hi] * frac;
}

// Calls `body` `warmup` times untimed, then `iters` times timed.
inline LatencyStats measure_latency(const std::function<void()>& body, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) body();
  std::vector<double> samples;
  for (int i = 0; i < iters; ++i) {
    Stopwatch watch;
    body();
    samples.push_back(watch.elapsed_ms());
  }
  return {percentile(samples, 0.5), percentile(samples, 0.1), percentile(samples, 0.9), iters};
}

}  // namespace graphworld
