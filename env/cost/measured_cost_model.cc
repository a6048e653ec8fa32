#include "env/cost/measured_cost_model.h"

#include <algorithm>
#include <cstdio>

#include "env/cost/timing_anchor.h"
#include "env/graph/hashing.h"

namespace graphworld {

std::string cost_cache_path(const std::string& cache_dir, const std::string& prefix, const std::string& fingerprint) {
  uint64_t h = 0;
  for (char c : fingerprint) h = hash_combine(h, static_cast<unsigned char>(c));
  char name[64];
  std::snprintf(name, sizeof(name), "%s-%016llx.cache", prefix.c_str(), static_cast<unsigned long long>(h));
  return cache_dir + "/" + name;
}

MeasuredCostModel::MeasuredCostModel(std::string name, std::unique_ptr<OpTimer> timer, const std::string& cache_dir)
    : name_(std::move(name)),
      timer_(std::move(timer)),
      cache_(cost_cache_path(cache_dir, name_, timer_->fingerprint()), timer_->fingerprint()) {
  known_ = cache_.load();
}

MeasuredCostModel::~MeasuredCostModel() {
  try {
    flush();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: could not save measured op costs to %s: %s\n", cache_.path().c_str(), e.what());
  }
}

std::string MeasuredCostModel::description() const {
  return name_ + ": " + timer_->fingerprint() + "; cache " + cache_.path();
}

void MeasuredCostModel::flush() {
  if (pending_.empty()) return;
  cache_.merge_and_save(pending_);
  pending_.clear();
  since_flush_.restart();
}

double MeasuredCostModel::compute_ms(const OpCostKey& key) {
  const bool anchors = timer_->times_ratios();
  Priced& relatives = priced_by_type_[key.type];
  std::string canonical = key.canonical();
  auto found = known_.find(canonical);
  if (found != known_.end()) {
    ++stats_.cache_hits;
    if (anchors) relatives.add(key, found->second);
    return found->second;
  }
  Stopwatch watch;
  double ms = 0;
  int anchor = anchors ? nearest_anchor(key, relatives.keys) : -1;
  if (anchor >= 0) {
    auto a = static_cast<size_t>(anchor);
    ms = relatives.ms[a] * timer_->time_ratio(key, relatives.keys[a]);
    ++anchored_;
  } else {
    ms = timer_->time_ms(key);
  }
  measuring_ms_ += watch.elapsed_ms();
  ms = round_to_cache_precision(ms);
  known_[canonical] = ms;
  pending_[canonical] = ms;
  if (anchors) relatives.add(key, ms);
  ++stats_.measured_now;
  if (progress_) progress_(stats_.measured_now, key);
  // Long measurement runs save as they go, so an interrupted run keeps its work.
  if (since_flush_.elapsed_s() > 10) flush();
  return ms;
}

}  // namespace graphworld
