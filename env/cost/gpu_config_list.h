// The op configurations to time on a GPU, and the timings that come back.
//
// A GPU machine is lent for minutes at a time, so the measurement is
// prepared here: `graphworld cost export-gpu-configs` runs the searches on
// the graphs (RecordingCostModel notes every configuration they price),
// and writes each as its canonical key and the cuDNN/cuBLAS call that
// times it (cuda_op_spec_text.h). On the GPU, tests/bench/gpu_cost_table
// builds a small timer from cuda_op_timer.cu alone and times the list; its
// output, read back by `graphworld cost import-gpu-times`, is a cuda cost
// table for configs/gpu/.
//
// List file:   graphworld-gpu-configs 1
//              <canonical key>\t<spec text>          one line per configuration
// Timings:     fingerprint <cuda_device_fingerprint()>
//              <ms>\t<canonical key>                  one line per configuration timed
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "env/cost/cost_model.h"
#include "env/cost/cost_table.h"

namespace graphworld {

// Forwards to `inner` and remembers each distinct configuration priced, in
// the order first met. Bounded: past `max_keys` it stops remembering.
class RecordingCostModel : public CostModel {
 public:
  explicit RecordingCostModel(CostModel& inner, size_t max_keys = 1'000'000) : inner_(inner), max_keys_(max_keys) {}
  std::string name() const override { return inner_.name(); }
  std::string description() const override { return inner_.description(); }
  bool prices_layouts() const override { return inner_.prices_layouts(); }
  const std::vector<OpCostKey>& keys() const { return keys_; }
  bool truncated() const { return truncated_; }

 protected:
  double compute_ms(const OpCostKey& key) override;

 private:
  CostModel& inner_;
  size_t max_keys_;
  std::vector<OpCostKey> keys_;
  bool truncated_ = false;
};

struct GpuConfig {
  std::string key;   // canonical OpCostKey
  std::string spec;  // cuda_spec_to_text of its cuda_spec_for
};

// The list of `keys` (duplicates by canonical key dropped; configurations
// the cuda timer cannot describe are left out and counted in `skipped`).
std::vector<GpuConfig> gpu_configs_for(const std::vector<OpCostKey>& keys, size_t* skipped = nullptr);
void write_gpu_config_list(const std::string& path, const std::vector<GpuConfig>& configs);
// FormatError naming the file and line for anything malformed.
std::vector<GpuConfig> read_gpu_config_list(const std::string& path);

// The timer's output as a cuda cost table. FormatError naming the file and
// line for a missing fingerprint, a malformed line or a non-positive time.
CostTable read_gpu_timings(const std::string& path);

}  // namespace graphworld
