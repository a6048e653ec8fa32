// Fitting a GPU profile to a table, and the files a GPU measurement travels
// in. The fit is checked on a table whose answer is known: one priced by
// the model itself under other efficiency parameters, which the fit must
// find again from the shipped priors (a fit that does not move, or moves
// the wrong way, fails).
#include "env/cost/gpu_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "env/cost/cuda_op_spec_text.h"
#include "env/cost/cuda_op_timer.h"
#include "env/cost/gpu_config_list.h"
#include "env/cost/gpu_cost_model.h"
#include "env/cost/gpu_kernel_model.h"
#include "env/cost/graph_cost.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::vector<OpCostKey> zoo_keys() {
  std::vector<OpCostKey> keys;
  for (const char* name : {"bert", "resnet18", "squeezenet1.1", "inceptionv3", "nasrnn"})
    for (OpCostKey& k : priced_op_keys(build_zoo_model(name), false)) keys.push_back(std::move(k));
  return keys;
}

TEST(GpuSpecText, EveryZooConfigurationRoundTrips) {
  size_t skipped = 0;
  const std::vector<GpuConfig> configs = gpu_configs_for(zoo_keys(), &skipped);
  ASSERT_GT(configs.size(), 100u);
  for (const GpuConfig& c : configs) EXPECT_EQ(cuda_spec_to_text(cuda_spec_from_text(c.spec)), c.spec) << c.key;
  EXPECT_THROW(cuda_spec_from_text("kind=3;in=1,x"), std::invalid_argument);
  EXPECT_THROW(cuda_spec_from_text("kind=99"), std::invalid_argument);
  EXPECT_THROW(cuda_spec_from_text("colour=blue"), std::invalid_argument);
  EXPECT_THROW(cuda_spec_from_text("kind=4;m=12abc"), std::invalid_argument);
  EXPECT_THROW(cuda_spec_from_text("kind=0;in=1,3,8"), std::invalid_argument);  // a conv needs 4-D shapes
}

TEST(GpuConfigList, WritesAndReadsBackAndRefusesDamage) {
  const std::string dir = testing::scratch_dir() + "/gpu_list";
  std::filesystem::create_directories(dir);
  const std::vector<GpuConfig> configs = gpu_configs_for(priced_op_keys(build_zoo_model("resnet18"), false));
  write_gpu_config_list(dir + "/configs.list", configs);
  const std::vector<GpuConfig> back = read_gpu_config_list(dir + "/configs.list");
  ASSERT_EQ(back.size(), configs.size());
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].key, configs[i].key);
  {
    std::ofstream out(dir + "/bad.list");
    out << "graphworld-gpu-configs 1\nRelu f32[1,8]\tkind=3;in=1,eight\n";
  }
  try {
    read_gpu_config_list(dir + "/bad.list");
    FAIL() << "a malformed spec was read";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.list:2"), std::string::npos) << e.what();
  }
}

TEST(GpuTimings, ReadAsACudaTableWithClearErrors) {
  const std::string dir = testing::scratch_dir() + "/gpu_timings";
  std::filesystem::create_directories(dir);
  {
    std::ofstream out(dir + "/good.tsv");
    out << "fingerprint gpu=NVIDIA H100 80GB HBM3; sm=9.0; timer=cudnn-1\n0.0123\tRelu f32[1,8]\n0.5\tConv(group=1) f32[1,3,8,8] c:f32[4,3,3,3]\n";
  }
  const CostTable table = read_gpu_timings(dir + "/good.tsv");
  EXPECT_EQ(table.entries.size(), 2u);
  EXPECT_DOUBLE_EQ(table.entries.at("Relu f32[1,8]"), 0.0123);
  {
    std::ofstream out(dir + "/cpu.tsv");
    out << "fingerprint cpu=AMD\n0.1\tRelu f32[1,8]\n";
  }
  EXPECT_THROW(read_gpu_timings(dir + "/cpu.tsv"), FormatError);
  {
    std::ofstream out(dir + "/infinite.tsv");
    out << "fingerprint gpu=X\ninf\tRelu f32[1,8]\n";
  }
  EXPECT_THROW(read_gpu_timings(dir + "/infinite.tsv"), FormatError);
  {
    std::ofstream out(dir + "/twice.tsv");
    out << "fingerprint gpu=X\n0.1\tRelu f32[1,8]\n0.2\tRelu f32[1,8]\n";
  }
  EXPECT_THROW(read_gpu_timings(dir + "/twice.tsv"), FormatError);
  {
    std::ofstream out(dir + "/negative.tsv");
    out << "fingerprint gpu=X\n-1\tRelu f32[1,8]\n";
  }
  try {
    read_gpu_timings(dir + "/negative.tsv");
    FAIL() << "a negative time was read";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("negative.tsv:2"), std::string::npos) << e.what();
  }
}

TEST(GpuFit, FindsTheParametersThatMadeATable) {
  GpuDevice prior = load_gpu_device("h100-sxm");
  // Nearly every zoo configuration fits in L2, where memory_efficiency and
  // l2_bandwidth_factor act as one: leave L2 out so that each is identifiable.
  prior.l2_cache_mb = 0;
  GpuDevice truth = prior;
  truth.launch_overhead_us = 4.2;
  truth.gemm_efficiency = 0.55;
  truth.conv_efficiency = 0.3;
  truth.memory_efficiency = 0.65;
  const std::vector<GpuConfig> configs = gpu_configs_for(zoo_keys());
  CostTable table;
  table.fingerprint = "gpu=synthetic";
  for (const GpuConfig& c : configs) table.entries[c.key] = gpu_spec_time_us(truth, cuda_spec_from_text(c.spec)) * 1e-3;
  const std::vector<GpuSample> samples = gpu_samples(table, configs);
  ASSERT_EQ(samples.size(), configs.size());
  int64_t held_out = 0;
  for (const GpuSample& s : samples) held_out += s.held_out;
  EXPECT_GT(held_out, static_cast<int64_t>(samples.size() / 10));
  EXPECT_LT(held_out, static_cast<int64_t>(samples.size() * 3 / 10));

  const GpuFidelity before = gpu_fidelity(prior, samples, true);
  const GpuDevice fitted = fit_gpu_device(prior, samples);
  const GpuFidelity after = gpu_fidelity(fitted, samples, true);
  EXPECT_GT(before.median_relative_error, 0.1);
  EXPECT_LT(after.median_relative_error, 0.02) << "before " << before.median_relative_error;
  EXPECT_NEAR(fitted.launch_overhead_us, truth.launch_overhead_us, 0.1 * truth.launch_overhead_us);
  EXPECT_NEAR(fitted.gemm_efficiency, truth.gemm_efficiency, 0.15 * truth.gemm_efficiency);
  EXPECT_NEAR(fitted.memory_efficiency, truth.memory_efficiency, 0.15 * truth.memory_efficiency);
  for (const OpTypeFidelity& t : after.per_type) {
    if (t.judged) {
      EXPECT_GT(t.spearman, 0.95) << t.op_type;
    }
  }
  // Datasheet figures are never fitted.
  EXPECT_EQ(fitted.sm_count, prior.sm_count);
  EXPECT_EQ(fitted.fp32_tflops, prior.fp32_tflops);
  EXPECT_EQ(fitted.memory_bandwidth_gbs, prior.memory_bandwidth_gbs);
}

TEST(GpuFit, RefusesTooFewSamples) {
  std::vector<GpuSample> few(3);
  EXPECT_THROW(fit_gpu_device(load_gpu_device("h100-sxm"), few), UsageError);
}

}  // namespace
}  // namespace graphworld
