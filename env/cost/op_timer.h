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
//
// A ratio (time_ratio) samples pairs of runs under the `ratio_` fields. It
// takes more samples because it decides closer questions: one pair's ratio
// scatters by about 10% on a busy machine, so the median of 7 pairs still
// moves by 5% while that of 30 moves by about 1.5%, below the few percent
// a fused activation or a folded bias saves.
struct TimingPolicy {
  int warmup = 2;
  int min_repeats = 7;
  int max_repeats = 60;
  double min_total_ms = 15.0;
  int ratio_min_repeats = 30;
  int ratio_max_repeats = 100;
  double ratio_min_total_ms = 60.0;
};

class OpTimer {
 public:
  virtual ~OpTimer() = default;
  // Identifies the device and software the numbers are valid for; caches are
  // keyed by it. One line.
  virtual std::string fingerprint() const = 0;
  // Median milliseconds of one run of the configuration.
  virtual double time_ms(const OpCostKey& key) = 0;
  // Timers of a device whose speed drifts time a new configuration against
  // an anchor (see timing_anchor.h); the others only ever use time_ms.
  virtual bool times_ratios() const { return false; }
  // time(key) / time(anchor), the median over runs of the two interleaved,
  // so that a drift in the machine's speed hits both alike and cancels.
  // Called only when times_ratios().
  virtual double time_ratio(const OpCostKey& key, const OpCostKey& anchor) { return time_ms(key) / time_ms(anchor); }
  // True when the time depends on OpCostKey::blocked_inputs.
  virtual bool times_layouts() const { return false; }
};

}  // namespace graphworld
