// Costs measured on a device, once per distinct configuration, and kept in
// a persistent on-disk cache keyed by the device fingerprint (see
// cost_cache_file.h). `measured` uses AtenOpTimer on the CPU; `cuda` uses the
// cuDNN/cuBLAS timer.
//
// A configuration is timed against its nearest relative already priced in
// this process, when it has one (timing_anchor.h), so that configurations a
// search compares are priced consistently with each other even on a machine
// whose speed drifts.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/stopwatch.h"
#include "env/cost/cost_cache_file.h"
#include "env/cost/cost_model.h"
#include "env/cost/op_timer.h"

namespace graphworld {

class MeasuredCostModel : public CostModel {
 public:
  // Loads the cache for `timer`'s fingerprint from `cache_dir` (created if
  // missing). `name` is "measured" or "cuda".
  MeasuredCostModel(std::string name, std::unique_ptr<OpTimer> timer, const std::string& cache_dir);
  ~MeasuredCostModel() override;  // flushes; never throws

  std::string name() const override { return name_; }
  std::string description() const override;
  void flush() override;
  bool prices_layouts() const override { return timer_->times_layouts(); }

  const std::string& cache_path() const { return cache_.path(); }
  const std::string& cache_problem() const { return cache_.problem(); }
  double measuring_s() const { return measuring_ms_ / 1000.0; }  // time spent timing ops
  // Of the configurations measured now, how many were timed against an anchor.
  int64_t anchored_measurements() const { return anchored_; }
  // Called after each new measurement with the count so far (for progress).
  void set_progress(std::function<void(int64_t measured, const OpCostKey&)> callback) { progress_ = std::move(callback); }

 protected:
  double compute_ms(const OpCostKey& key) override;

 private:
  std::string name_;
  std::unique_ptr<OpTimer> timer_;
  CostCacheFile cache_;
  CostEntries known_;    // loaded from disk plus measured
  CostEntries pending_;  // measured, not yet written
  Stopwatch since_flush_;
  double measuring_ms_ = 0;
  int64_t anchored_ = 0;
  // Every configuration priced by this process, by op type: the anchors
  // (kept only for timers that time ratios).
  struct Priced {
    std::vector<OpCostKey> keys;
    std::vector<double> ms;
    void add(const OpCostKey& key, double cost) {
      keys.push_back(key);
      ms.push_back(cost);
    }
  };
  std::unordered_map<OpType, Priced> priced_by_type_;
  std::function<void(int64_t, const OpCostKey&)> progress_;
};

// Cache file name for a fingerprint: "<prefix>-<16 hex digits>.cache".
std::string cost_cache_path(const std::string& cache_dir, const std::string& prefix, const std::string& fingerprint);

}  // namespace graphworld
