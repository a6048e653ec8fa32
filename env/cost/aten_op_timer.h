// Times op configurations with ATen on this CPU, the way the executor runs
// them: convolutions on weights packed once for oneDNN, each input in the
// layout the key names (oneDNN's blocked layout or plain), conversions paid
// where the executor makes them, views that move data materialised, unary
// activations in place (their input usually has no other reader).
#pragma once

#include <memory>

#include "env/cost/op_timer.h"

namespace graphworld {

class AtenOpTimer : public OpTimer {
 public:
  // `threads`: intra-op threads, fixed for every measurement (0 = all cores).
  explicit AtenOpTimer(int threads, TimingPolicy policy = {});
  std::string fingerprint() const override;
  double time_ms(const OpCostKey& key) override;
  bool times_ratios() const override { return true; }
  double time_ratio(const OpCostKey& key, const OpCostKey& anchor) override;
  bool times_layouts() const override { return true; }
  int threads() const { return threads_; }

 private:
  int threads_;
  TimingPolicy policy_;
};

// "cpu=<model>; cores=N; threads=T; libtorch=X; onednn=0|1; timer=aten-3".
std::string cpu_fingerprint(int threads);

}  // namespace graphworld
