// Times op configurations with ATen on this CPU, the way the executor runs
// them: convolutions on weights packed once for oneDNN, 4-D activations kept
// in oneDNN's blocked layout through the ops that accept it, views that move
// data materialised.
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
  double time_ratio(const OpCostKey& key, const OpCostKey& anchor) override;
  int threads() const { return threads_; }

 private:
  int threads_;
  TimingPolicy policy_;
};

// "cpu=<model>; cores=N; threads=T; libtorch=X; onednn=0|1; timer=aten-3".
std::string cpu_fingerprint(int threads);

}  // namespace graphworld
