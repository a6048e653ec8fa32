// Times one operator configuration on a device. MeasuredCostModel owns a timer
// and caches what it measures; the timers only know how to run ops.
#pragma once

#include <string>
#include <vector>

#include "env/cost/op_cost_key.h"

namespace graphworld {

// How long to time each configuration: `warmup` untimed runs, then at least
// `min_repeats` timed runs, more until `min_total_ms` has passed (at most
// `max_repeats`). The median is the cost.
struct TimingPolicy {
  int warmup = 2;
  int min_repeats = 7;
  int max_repeats = 60;
  double min_total_ms = 15.0;
};

class OpTimer {
 public:
  virtual ~OpTimer() = default;
  // Identifies the device and software the numbers are valid for; caches are
  // keyed by it. One line.
  virtual std::string fingerprint() const = 0;
  // Median milliseconds of one run of the configuration.
  virtual double time_ms(const OpCostKey& key) = 0;
};

}  // namespace graphworld
