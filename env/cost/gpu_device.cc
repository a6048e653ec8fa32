#include "env/cost/gpu_device.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"

#ifndef GRAPHWORLD_GPU_PROFILE_DIR
#define GRAPHWORLD_GPU_PROFILE_DIR "configs/gpu"
#endif

namespace graphworld {
namespace fs = std::filesystem;
namespace {

struct Field {
  const char* key;
  double GpuDevice::*member;
  double min, max;
  const char* what;
  // A key added after profiles were first written (and copied into run
  // folders): a profile without it loads with this value, the one that
  // prices as before the key existed. Keys without one are required.
  std::optional<double> absent_means = std::nullopt;
};

// Every number of a profile but sm_count, with the range a real GPU lies in.
const std::vector<Field>& fields() {
  static const std::vector<Field> list = {
      {"boost_clock_mhz", &GpuDevice::boost_clock_mhz, 100, 10000, "SM boost clock in MHz"},
      {"fp32_tflops", &GpuDevice::fp32_tflops, 0.1, 10000, "FP32 peak in TFLOP/s"},
      {"tf32_tflops", &GpuDevice::tf32_tflops, 0, 100000, "dense TF32 tensor-core peak in TFLOP/s (0: none)"},
      {"memory_bandwidth_gbs", &GpuDevice::memory_bandwidth_gbs, 10, 1e6, "memory bandwidth in GB/s"},
      {"l2_cache_mb", &GpuDevice::l2_cache_mb, 0, 1e5, "L2 cache in MB (0: not modelled)"},
      {"launch_overhead_us", &GpuDevice::launch_overhead_us, 0, 1000, "per-kernel overhead in microseconds"},
      {"cta_overhead_cycles", &GpuDevice::cta_overhead_cycles, 0, 1e7, "per-thread-block overhead in cycles"},
      {"conv_cta_overhead_cycles", &GpuDevice::conv_cta_overhead_cycles, 0, 1e7,
       "per-thread-block overhead of a conv beyond cta_overhead_cycles, in cycles", 0.0},
      {"gemm_efficiency", &GpuDevice::gemm_efficiency, 1e-3, 1, "fraction of the FP32 peak"},
      {"tile_load_cost", &GpuDevice::tile_load_cost, 1, 1024, "FMAs' time per operand element a tile loads"},
      {"conv_efficiency", &GpuDevice::conv_efficiency, 1e-3, 1, "fraction of the convolution peak"},
      {"conv_odd_kernel_efficiency", &GpuDevice::conv_odd_kernel_efficiency, 1e-3, 1,
       "factor on conv_efficiency for kernels other than 1x1 and 3x3"},
      {"conv_grouped_efficiency", &GpuDevice::conv_grouped_efficiency, 1e-3, 1, "factor on conv_efficiency for grouped convs"},
      {"conv_unaligned_efficiency", &GpuDevice::conv_unaligned_efficiency, 1e-3, 1,
       "factor on conv_efficiency for 1x1 convs whose H*W is not a multiple of 4"},
      {"direct_conv_efficiency", &GpuDevice::direct_conv_efficiency, 1e-3, 1,
       "fraction of the FP32 peak of depthwise and narrow grouped convs"},
      {"fused_conv_efficiency", &GpuDevice::fused_conv_efficiency, 1e-3, 1,
       "factor on a conv's efficiency when its bias and relu are fused into it"},
      {"memory_efficiency", &GpuDevice::memory_efficiency, 1e-3, 1, "fraction of the memory bandwidth"},
      {"l2_bandwidth_factor", &GpuDevice::l2_bandwidth_factor, 1, 20, "streaming speed-up when the bytes fit in L2"},
      {"copy_overhead_us", &GpuDevice::copy_overhead_us, 0, 1000, "per-copy overhead in microseconds"},
      {"uncoalesced_read_factor", &GpuDevice::uncoalesced_read_factor, 1, 64, "cost multiplier of scattered reads"},
  };
  return list;
}

const char* kEfficiencyKeys[] = {"launch_overhead_us",         "cta_overhead_cycles",     "conv_cta_overhead_cycles",
                                 "tile_load_cost",
                                 "gemm_efficiency",
                                 "conv_efficiency",            "conv_odd_kernel_efficiency", "conv_grouped_efficiency",
                                 "conv_unaligned_efficiency",
                                 "direct_conv_efficiency",     "fused_conv_efficiency",   "memory_efficiency",
                                 "l2_bandwidth_factor",        "copy_overhead_us",        "uncoalesced_read_factor"};

double number(const YAML::Node& root, const std::string& key, const std::string& path, double min, double max,
              const char* what) {
  YAML::Node node = root[key];
  if (!node) throw UsageError("GPU profile " + path + " has no key '" + key + "' (" + what + ")");
  double value = 0;
  try {
    value = node.as<double>();
  } catch (const YAML::Exception&) {
    throw UsageError("GPU profile " + path + ": key '" + key + "' must be a number (" + what + ")");
  }
  if (!(value >= min && value <= max)) {
    std::ostringstream range;
    range << "GPU profile " << path << ": key '" << key << "' is " << value << ", outside [" << min << ", " << max
          << "] (" << what << ")";
    throw UsageError(range.str());
  }
  return value;
}

}  // namespace

std::string gpu_profile_dir() {
  const char* dir = std::getenv("GRAPHWORLD_GPU_DIR");
  return dir && *dir ? dir : GRAPHWORLD_GPU_PROFILE_DIR;
}

std::vector<std::string> known_gpu_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(gpu_profile_dir(), ec))
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string gpu_profile_path(const std::string& name_or_file) {
  const bool is_file = name_or_file.find('/') != std::string::npos ||
                       (name_or_file.size() > 5 && name_or_file.substr(name_or_file.size() - 5) == ".yaml");
  return is_file ? name_or_file : gpu_profile_dir() + "/" + name_or_file + ".yaml";
}

std::string shipped_gpu_table_path(const GpuDevice& device) {
  const std::string path = gpu_profile_dir() + "/" + device.name + ".table";
  return fs::is_regular_file(path) ? path : "";
}

GpuDevice load_gpu_device(const std::string& name_or_file) {
  if (name_or_file.empty()) throw UsageError("no GPU named: give --gpu NAME (e.g. h100-sxm) or a profile file");
  const std::string path = gpu_profile_path(name_or_file);
  if (!fs::is_regular_file(path)) {
    std::string known;
    for (const std::string& name : known_gpu_names()) known += (known.empty() ? "" : ", ") + name;
    throw UsageError("unknown GPU '" + name_or_file + "': no profile " + path + "; known GPUs: " +
                     (known.empty() ? "none found in " + gpu_profile_dir() : known) +
                     ", or give a profile YAML file (configs/gpu/h100-sxm.yaml shows the keys)");
  }
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw UsageError("GPU profile " + path + " is not valid YAML: " + e.what());
  }
  if (!root.IsMap()) throw UsageError("GPU profile " + path + " must be a YAML map (configs/gpu/h100-sxm.yaml shows the keys)");
  GpuDevice device;
  device.source = path;
  YAML::Node name = root["name"];
  if (!name) throw UsageError("GPU profile " + path + " has no key 'name' (the GPU's short name, e.g. h100-sxm)");
  if (!name.IsScalar() || name.as<std::string>().empty())
    throw UsageError("GPU profile " + path + ": key 'name' must be a short name such as h100-sxm");
  device.name = name.as<std::string>();
  YAML::Node cuda_name = root["cuda_name"];
  if (!cuda_name || !cuda_name.IsScalar() || cuda_name.as<std::string>().empty())
    throw UsageError("GPU profile " + path + " has no key 'cuda_name' (what the CUDA device name of the GPU contains, "
                     "e.g. H100), which a measured table's GPU must match");
  device.cuda_name = cuda_name.as<std::string>();
  device.sm_count = static_cast<int>(number(root, "sm_count", path, 1, 10000, "streaming multiprocessors"));
  if (root["sm_count"].as<double>() != device.sm_count)
    throw UsageError("GPU profile " + path + ": key 'sm_count' must be a whole number");
  for (const Field& f : fields())
    device.*f.member =
        !root[f.key] && f.absent_means ? *f.absent_means : number(root, f.key, path, f.min, f.max, f.what);
  return device;
}

void save_gpu_device(const GpuDevice& device, const std::string& path, const std::string& comment) {
  std::ostringstream text;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) text << "# " << line << "\n";
  text << "name: " << device.name << "\n";
  text << "cuda_name: " << device.cuda_name << "\n";
  text << "sm_count: " << device.sm_count << "\n";
  char buf[128];
  for (const Field& f : fields()) {
    std::snprintf(buf, sizeof(buf), "%s: %.6g\n", f.key, device.*f.member);
    text << buf;
  }
  fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  write_file_atomically(path, text.str());
}

std::vector<double*> gpu_efficiency_parameters(GpuDevice& device) {
  std::vector<double*> out;
  for (const char* key : kEfficiencyKeys)
    for (const Field& f : fields())
      if (std::string(f.key) == key) out.push_back(&(device.*f.member));
  return out;
}

std::vector<std::string> gpu_efficiency_parameter_names() {
  return std::vector<std::string>(std::begin(kEfficiencyKeys), std::end(kEfficiencyKeys));
}

}  // namespace graphworld
