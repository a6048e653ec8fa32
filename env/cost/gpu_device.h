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
  double l2_cache_mb = 0;  // operands that fit are served from L2 when warm
  // Efficiency parameters (fitted where a measured table exists).
  double launch_overhead_us = 0;
  double cta_overhead_cycles = 0;
  // What a cuDNN implicit-GEMM conv's thread block costs beyond a cuBLAS
  // one's (index set-up for the im2col walk, filter and bias staging): small
  // convs on the H100 cost a few microseconds more than GEMMs of their size.
  double conv_cta_overhead_cycles = 0;
  double gemm_efficiency = 0;
  // What one operand element loaded per k-step costs, in FMAs' time
  // (shared-memory traffic of a register-tiled kernel): small tiles pay more.
  double tile_load_cost = 16;
  double conv_efficiency = 0;
  // Multiplies conv_efficiency for kernels other than 1x1 and 3x3 (cuDNN's
  // tuned shapes), and again for grouped convs.
  double conv_odd_kernel_efficiency = 1;
  double conv_grouped_efficiency = 1;
  // Multiplies it for 1x1 convs whose H*W is not a multiple of 4 (no vector loads).
  double conv_unaligned_efficiency = 1;
  // Fraction of the FP32 peak a direct (depthwise, narrow grouped) conv sustains.
  double direct_conv_efficiency = 1;
  // Multiplies a conv's efficiency when cuDNN fuses its bias and relu into it.
  double fused_conv_efficiency = 1;
  double memory_efficiency = 0;
  // How much faster than HBM a kernel streams when its bytes fit in L2 (an
  // op timed back to back, or reading what the op before it wrote).
  double l2_bandwidth_factor = 1;
  // A Concat's piece is a cudaMemcpy2D, cheaper to issue than a kernel.
  double copy_overhead_us = 0;
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
