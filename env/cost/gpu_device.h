// A GPU as the `gpu` cost model sees it: datasheet figures (SMs, clock,
// FP32 and TF32 peaks, memory bandwidth) and the efficiency parameters that
// say what cuBLAS/cuDNN kernels sustain of them. Profiles live in
// configs/gpu/<name>.yaml, each figure with its source in a comment; the
// efficiencies are priors until fitted to a measured table (gpu_fit.h).
#pragma once

#include <string>
#include <vector>

namespace graphworld {

struct GpuDevice {
  std::string name;       // "h100-sxm"
  std::string cuda_name;  // what cudaGetDeviceProperties calls it contains ("H100"): a table must match
  std::string source;  // the file it was read from
  // Datasheet figures.
  int sm_count = 0;
  double boost_clock_mhz = 0;
  double fp32_tflops = 0;
  double tf32_tflops = 0;  // dense tensor-core TF32; 0 where the GPU has none
  double memory_bandwidth_gbs = 0;
  // Efficiency parameters (fitted where a measured table exists).
  double launch_overhead_us = 0;
  double cta_overhead_cycles = 0;
  double gemm_efficiency = 0;
  double conv_efficiency = 0;
  double memory_efficiency = 0;
  double uncoalesced_read_factor = 1;

  bool has_tf32() const { return tf32_tflops > 0; }
};

// The directory of shipped profiles and tables: $GRAPHWORLD_GPU_DIR, else
// configs/gpu in the source tree graphworld was built from.
std::string gpu_profile_dir();
// The profile names found there ("a100-sxm", "h100-sxm", ...), sorted.
std::vector<std::string> known_gpu_names();
// Where `--gpu NAME_OR_FILE` points: a file path (anything with a '/' or
// ending in .yaml) as given, else <gpu_profile_dir>/NAME.yaml.
std::string gpu_profile_path(const std::string& name_or_file);
// The measured cuda table shipped for the profile, if there is one:
// <gpu_profile_dir>/NAME.table ("" when none).
std::string shipped_gpu_table_path(const GpuDevice& device);

// Reads a profile. UsageError naming the file and key for a missing file,
// bad YAML, a missing key, or a value out of range; an unknown NAME lists the
// known ones.
GpuDevice load_gpu_device(const std::string& name_or_file);
// Writes a profile (atomically), with `comment` lines at the top.
void save_gpu_device(const GpuDevice& device, const std::string& path, const std::string& comment);

// The efficiency parameters, in a fixed order, for fitting.
std::vector<double*> gpu_efficiency_parameters(GpuDevice& device);
std::vector<std::string> gpu_efficiency_parameter_names();

}  // namespace graphworld
