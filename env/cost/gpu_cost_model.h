// The `gpu` cost model: prices a named GPU on any machine. A configuration
// found in the GPU's measured table (a `cuda` cost table, as shipped in
// configs/gpu/NAME.table) costs what was measured; any other is priced by
// the utilization-aware model (gpu_kernel_model.h) with the GPU's profile.
// Deterministic: every machine prices a graph identically.
#pragma once

#include <optional>
#include <string>

#include "env/cost/cost_model.h"
#include "env/cost/cost_table.h"
#include "env/cost/gpu_device.h"

namespace graphworld {

// The model's price of one configuration, in milliseconds, without a table.
// Ops the cuda timer cannot describe are priced as a streaming kernel over
// their FLOPs and bytes; a Split is free (its outputs are strided views).
double gpu_model_cost_ms(const GpuDevice& device, const OpCostKey& key);

class GpuCostModel : public CostModel {
 public:
  // `table`: a measured cuda table for this GPU, or none (the model alone).
  GpuCostModel(GpuDevice device, std::optional<CostTable> table, std::string table_path = "");

  std::string name() const override { return "gpu"; }
  std::string description() const override;
  const GpuDevice& device() const { return device_; }
  bool has_table() const { return table_.has_value(); }

 protected:
  double compute_ms(const OpCostKey& key) override;

 private:
  GpuDevice device_;
  std::optional<CostTable> table_;
  std::string table_path_;
};

// Reads a table for the gpu model, refusing one that no `cuda` timer made
// (a CPU table would silently mix devices) or that another GPU measured
// (its fingerprint's gpu= name must contain the profile's cuda_name).
CostTable read_gpu_table(const std::string& path, const GpuDevice& device);

}  // namespace graphworld
