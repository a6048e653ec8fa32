#include "env/cost/gpu_cost_model.h"

#include <cctype>
#include <cstdio>

#include "common/error.h"
#include "env/cost/cuda_op_spec_text.h"
#include "env/cost/cuda_op_timer.h"
#include "env/cost/gpu_kernel_model.h"
#include "env/ops/op_schema.h"

namespace graphworld {

double gpu_model_cost_ms(const GpuDevice& device, const OpCostKey& key) {
  // A Split is views of its input: each output starts at an offset and keeps
  // the input's strides, and its readers (cuBLAS's leading dimensions,
  // cuDNN's strided descriptors) take it as it is. TASO prices it at zero
  // for the same reason.
  if (key.type == OpType::Split) return 0;
  try {
    const CudaOpSpec spec = cuda_spec_for(key);
    validate_cuda_spec(spec);
    return gpu_spec_time_us(device, spec) * 1e-3;
  } catch (const std::exception&) {
    // 3-D windows, rank > 8 transposes: one streaming kernel over the op's work.
    const OpWork work = op_work(key.type, key.attrs, key.inputs, key.outputs);
    return (device.launch_overhead_us + memory_kernel_us(device, work.bytes, work.flops)) * 1e-3;
  }
}

CostTable read_gpu_table(const std::string& path, const GpuDevice& device) {
  CostTable table = read_cost_table(path);
  const size_t at = table.fingerprint.find("gpu=");
  if (at == std::string::npos)
    throw UsageError(path + " is not a GPU cost table: it was measured by '" + table.fingerprint +
                     "', not the cuda timer; measure one with tests/bench/gpu_cost_table on the GPU, or use --gpu-table none");
  std::string gpu = table.fingerprint.substr(at + 4, table.fingerprint.find(';', at) - at - 4);
  auto upper = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  };
  if (upper(gpu).find(upper(device.cuda_name)) == std::string::npos)
    throw UsageError(path + " was measured on '" + gpu + "', not on a " + device.cuda_name + " (profile " + device.name +
                     ", " + device.source + "); give the profile of that GPU with --gpu, or this GPU's table");
  return table;
}

GpuCostModel::GpuCostModel(GpuDevice device, std::optional<CostTable> table, std::string table_path)
    : device_(std::move(device)), table_(std::move(table)), table_path_(std::move(table_path)) {}

std::string GpuCostModel::description() const {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "gpu: %s (%d SMs, %.4g TFLOP/s FP32, %.4g TF32, %.4g GB/s; %s)%s%s",
                device_.name.c_str(), device_.sm_count, device_.fp32_tflops, device_.tf32_tflops,
                device_.memory_bandwidth_gbs, device_.source.c_str(),
                table_ ? ", measured table " : ", model alone (no measured table)",
                table_ ? (table_path_ + " [" + table_->fingerprint + "]").c_str() : "");
  return buf;
}

double GpuCostModel::compute_ms(const OpCostKey& key) {
  if (table_ && key.type != OpType::Split) {
    const auto found = table_->entries.find(key.canonical());
    if (found != table_->entries.end()) {
      ++stats_.table_hits;
      return found->second;
    }
  }
  ++stats_.model_fallbacks;
  return gpu_model_cost_ms(device_, key);
}

}  // namespace graphworld
