// The gpu cost model: the tile-and-wave maths against hand-computed values,
// the shapes that make merges pay (and only those), the shipped profiles,
// table-first pricing with its counts, and clear errors for bad profiles.
#include "env/cost/gpu_cost_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "env/cost/cost_model_factory.h"
#include "env/cost/cuda_op_timer.h"
#include "env/cost/gpu_kernel_model.h"
#include "env/cost/graph_cost.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

// Round numbers for hand computation: 2 SMs of 1 TFLOP/s (1e6 FLOP per
// microsecond each), nothing but arithmetic costs anything.
GpuDevice hand_device() {
  GpuDevice d;
  d.name = "hand";
  d.sm_count = 2;
  d.boost_clock_mhz = 1000;
  d.fp32_tflops = 2;
  d.tf32_tflops = 0;
  d.memory_bandwidth_gbs = 1e9;
  d.launch_overhead_us = 0;
  d.cta_overhead_cycles = 0;
  d.gemm_efficiency = 1;
  d.conv_efficiency = 1;
  d.memory_efficiency = 1;
  d.uncoalesced_read_factor = 1;
  return d;
}

GemmProblem gemm(int64_t m, int64_t n, int64_t k, const GpuDevice& d) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.efficiency = d.gemm_efficiency;
  p.bytes = 4.0 * static_cast<double>(m * k + k * n + m * n);
  return p;
}

CudaOpSpec gemm_spec(int64_t m, int64_t n, int64_t k) {
  CudaOpSpec s;
  s.kind = CudaOpKind::Gemm;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

TEST(GpuKernelModel, TileEfficiencyByHand) {
  EXPECT_DOUBLE_EQ(tile_efficiency(128, 128, 16), 1.0);
  // 64x64: 4096 / (4096 + 16 * 128) = 2/3, against 16384 / (16384 + 16 * 256) = 0.8.
  EXPECT_NEAR(tile_efficiency(64, 64, 16), (2.0 / 3.0) / 0.8, 1e-12);
  // With loads at 64: 4096 / (4096 + 64 * 128) = 1/3, against 16384 / (16384 + 64 * 256) = 1/2.
  EXPECT_NEAR(tile_efficiency(64, 64, 64), (1.0 / 3.0) / 0.5, 1e-12);
  EXPECT_LT(tile_efficiency(32, 32, 16), tile_efficiency(64, 32, 16));
  EXPECT_GT(tile_efficiency(256, 128, 16), 1.0);
}

TEST(GpuKernelModel, GemmPlanByHand) {
  // 128 x 128 x 64 on two SMs of 1e6 FLOP/us. One 128x128 tile: one SM
  // works, 2*128*128*64 / 1e6 = 2.097 us. Two 128x64 tiles, one per SM, at
  // efficiency (8192 / (8192 + 16 * 192)) / 0.8 = 0.90909: 1.1534336 us, the
  // fastest shape (four 64x64 tiles take two waves: 1.258 us). K = 64 is too
  // short to split.
  const GpuDevice d = hand_device();
  const GemmPlan plan = plan_gemm(d, gemm(128, 128, 64, d));
  EXPECT_EQ(plan.tile_m, 128);
  EXPECT_EQ(plan.tile_n, 64);
  EXPECT_EQ(plan.split_k, 1);
  EXPECT_EQ(plan.ctas, 2);
  EXPECT_EQ(plan.waves, 1);
  EXPECT_NEAR(plan.us, 2.0 * 128 * 64 * 64 / (1e6 * (8192.0 / (8192 + 16 * 192)) / 0.8), 1e-9);
  EXPECT_NEAR(plan.us, 1.1534336, 1e-9);
}

TEST(GpuKernelModel, SplitKFillsIdleSmsForLongK) {
  // 32 x 32 x 4096: one tile, so without a split one SM of two works.
  // Split in two, each SM takes half of K: 2*32*32*2048 / (1e6 * 0.625) =
  // 6.7108864 us, against 13.4217728 us unsplit (reduction is free here).
  const GpuDevice d = hand_device();
  const GemmPlan plan = plan_gemm(d, gemm(32, 32, 4096, d));
  EXPECT_EQ(plan.split_k, 2);
  EXPECT_EQ(plan.ctas, 2);
  EXPECT_EQ(plan.waves, 1);
  EXPECT_NEAR(plan.compute_us, 6.7108864, 1e-9);
  // Plus the reduction kernel: 32*32 sums at 2e6 FLOP/us (its bytes move at
  // nearly infinite bandwidth here).
  EXPECT_NEAR(plan.reduction_us, 1024 / 2e6, 1e-9);
  EXPECT_NEAR(plan.us, 6.7108864 + 1024 / 2e6, 1e-9);
}

TEST(GpuKernelModel, OneMoreCtaThanSmsCostsAWave) {
  // On the H100 profile: 132 tiles of 128x128 fill one wave, 133 need two.
  const GpuDevice h100 = load_gpu_device("h100-sxm");
  GemmProblem full = gemm(128 * 132, 128, 1024, h100), over = gemm(128 * 133, 128, 1024, h100);
  full.bytes = over.bytes = 0;
  const GemmPlan a = plan_gemm(h100, full), b = plan_gemm(h100, over);
  EXPECT_GT(b.us, 1.3 * a.us) << "132 tiles " << a.us << " us, 133 tiles " << b.us << " us";
}

TEST(GpuKernelModel, MergingSmallProductsPaysAndMergingLargeOnesDoesNot) {
  // Three products that each fill a few SMs cost far more than one that
  // fills the chip; three large ones cost what their merge costs.
  for (const char* gpu : {"h100-sxm", "a100-sxm", "v100-sxm"}) {
    const GpuDevice d = load_gpu_device(gpu);
    auto merge_gain = [&](int64_t m, int64_t n, int64_t k) {
      return 3 * gpu_spec_time_us(d, gemm_spec(m, n, k)) / gpu_spec_time_us(d, gemm_spec(m, 3 * n, k));
    };
    EXPECT_GT(merge_gain(64, 256, 256), 2.5) << gpu;    // launch-bound
    EXPECT_GT(merge_gain(64, 1024, 1024), 1.4) << gpu;  // BERT's q, k and v at batch 1 and 64 tokens
    EXPECT_NEAR(merge_gain(4096, 4096, 4096), 1.0, 0.1) << gpu;  // priced by its FLOPs
  }
}

TEST(GpuKernelModel, LaunchesFollowTheTimersKernels) {
  const GpuDevice d = load_gpu_device("h100-sxm");
  CudaOpSpec split;
  split.kind = CudaOpKind::Concat;
  split.outer = 64;
  split.piece_inner = {1024, 1024, 1024};
  // The timer copies each piece with a cudaMemcpy2D, which pays the copy
  // overhead, not a kernel launch.
  EXPECT_EQ(gpu_spec_kernels(split), 0);
  GpuDevice dearer_copies = d;
  dearer_copies.copy_overhead_us += 1;
  EXPECT_NEAR(gpu_spec_time_us(dearer_copies, split) - gpu_spec_time_us(d, split), 3.0, 1e-9);
  split.piece_inner.clear();
  EXPECT_EQ(gpu_spec_time_us(d, split), 0.0);
  CudaOpSpec activated = gemm_spec(64, 64, 64);
  activated.activation = 1;
  EXPECT_EQ(gpu_spec_kernels(activated), 2);
  CudaOpSpec conv;
  conv.kind = CudaOpKind::Conv;
  conv.in = {1, 64, 56, 56};
  conv.in2 = {64, 64, 1, 1};
  conv.out = {1, 64, 56, 56};
  conv.has_bias = true;
  conv.activation = 1;
  // One launch outside the body: the bias and activation kernels after the
  // conv, or the fused conv-bias-relu, are priced in the body, which takes
  // the quicker.
  EXPECT_EQ(gpu_spec_kernels(conv), 1);
  GpuDevice no_fusion = d;
  no_fusion.fused_conv_efficiency = 1e-3;
  CudaOpSpec bare = conv;
  bare.has_bias = false;
  bare.activation = 0;
  const double separate = gpu_spec_time_us(no_fusion, conv);
  EXPECT_NEAR(separate - gpu_spec_time_us(d, bare), 2 * d.launch_overhead_us, d.launch_overhead_us)
      << "a bias and a relu after a 1x1 conv are two kernels";
  GpuDevice free_fusion = d;
  free_fusion.fused_conv_efficiency = 1;
  EXPECT_NEAR(gpu_spec_time_us(free_fusion, conv), gpu_spec_time_us(free_fusion, bare), 1e-9)
      << "fused at the conv's own efficiency, the bias and relu cost nothing";
  conv.activation = 2;
  EXPECT_NEAR(gpu_spec_time_us(free_fusion, conv), gpu_spec_time_us(no_fusion, conv), 1e-9)
      << "sigmoid is not fused";
  // A 3x3 conv takes its bias and relu in the implicit GEMM's epilogue, at
  // no cost, whatever the fused efficiency; a sigmoid is still a kernel.
  CudaOpSpec window = conv, bare_window = bare;
  window.in2 = bare_window.in2 = {64, 64, 3, 3};
  window.pads = bare_window.pads = {1, 1};
  window.activation = 1;
  EXPECT_EQ(gpu_spec_time_us(no_fusion, window), gpu_spec_time_us(no_fusion, bare_window));
  window.activation = 2;
  EXPECT_GT(gpu_spec_time_us(no_fusion, window), gpu_spec_time_us(no_fusion, bare_window) + d.launch_overhead_us);
  // cuDNN's conv thread blocks cost more than cuBLAS's, except an
  // ungrouped 1x1 conv's, which is a plain GEMM.
  GpuDevice dearer_conv_blocks = d;
  dearer_conv_blocks.conv_cta_overhead_cycles += 10000;
  EXPECT_GT(gpu_spec_time_us(dearer_conv_blocks, bare_window), gpu_spec_time_us(d, bare_window) + 4);
  EXPECT_EQ(gpu_spec_time_us(dearer_conv_blocks, bare), gpu_spec_time_us(d, bare));
  // A strided 1x1 conv is an implicit GEMM like the 3x3: its bias is free.
  CudaOpSpec strided = bare;
  strided.strides = {2, 2};
  strided.out = {1, 64, 28, 28};
  CudaOpSpec strided_bias = strided;
  strided_bias.has_bias = true;
  EXPECT_EQ(gpu_spec_time_us(d, strided_bias), gpu_spec_time_us(d, strided));
  EXPECT_GT(gpu_spec_time_us(dearer_conv_blocks, strided), gpu_spec_time_us(d, strided) + 4);
  // A grouped conv pays for its bias with a kernel.
  CudaOpSpec grouped = bare_window;
  grouped.groups = 2;
  grouped.in2 = {64, 32, 3, 3};
  CudaOpSpec grouped_bias = grouped;
  grouped_bias.has_bias = true;
  EXPECT_GT(gpu_spec_time_us(d, grouped_bias), gpu_spec_time_us(d, grouped) + d.launch_overhead_us);
  // A depthwise conv's direct kernel pays no conv thread-block overhead.
  CudaOpSpec depthwise = bare_window;
  depthwise.groups = 64;
  depthwise.in2 = {64, 1, 3, 3};
  EXPECT_EQ(gpu_spec_time_us(dearer_conv_blocks, depthwise), gpu_spec_time_us(d, depthwise));
}

// A grouped conv with narrow groups has a direct kernel and a batched
// implicit GEMM to choose from; the model, as the timer, keeps the quicker:
// the direct kernel for groups of 8 on a 7x7 map, the GEMM for
// groups of 32 on a 56x56 one (measured 64 us, where the direct rate says
// several hundred).
TEST(GpuKernelModel, NarrowGroupedConvsTakeTheQuickerOfDirectAndGemm) {
  const GpuDevice d = load_gpu_device("h100-sxm");
  auto grouped = [](int64_t channels, int64_t per_group, int64_t size) {
    CudaOpSpec s;
    s.kind = CudaOpKind::Conv;
    s.in = {1, channels, size, size};
    s.in2 = {channels, per_group, 3, 3};
    s.pads = {1, 1};
    s.strides = {1, 1};
    s.dilations = {1, 1};
    s.groups = channels / per_group;
    s.out = {1, channels, size, size};
    return s;
  };
  GpuDevice slower_direct = d, slower_gemm = d;
  slower_direct.direct_conv_efficiency /= 100;
  slower_gemm.conv_efficiency /= 100;
  auto quicker = [&](const CudaOpSpec& s) {
    const double both = gpu_spec_time_us(d, s);
    const double direct_only = gpu_spec_time_us(slower_gemm, s), gemm_only = gpu_spec_time_us(slower_direct, s);
    EXPECT_NEAR(both, std::min(direct_only, gemm_only), 1e-9);
    return direct_only < gemm_only ? "direct" : "gemm";
  };
  EXPECT_STREQ(quicker(grouped(256, 8, 7)), "direct");
  EXPECT_STREQ(quicker(grouped(1024, 32, 56)), "gemm");
  // Groups of fewer than 8 channels have only the direct kernel.
  const CudaOpSpec narrow = grouped(128, 4, 56);
  EXPECT_EQ(gpu_spec_time_us(slower_gemm, narrow), gpu_spec_time_us(d, narrow));
}

// Generic windows, groups and depthwise convs are priced by their own
// efficiencies: each makes its convs slower and no other.
TEST(GpuKernelModel, OddWindowsGroupsAndDepthwiseConvsHaveTheirOwnEfficiencies) {
  const GpuDevice d = load_gpu_device("h100-sxm");
  auto conv = [](int64_t channels, int64_t groups, int64_t kh, int64_t kw) {
    CudaOpSpec s;
    s.kind = CudaOpKind::Conv;
    s.in = {1, channels, 56, 56};
    s.in2 = {channels, channels / groups, kh, kw};
    s.pads = {kh / 2, kw / 2};
    s.strides = {1, 1};
    s.dilations = {1, 1};
    s.groups = groups;
    s.out = {1, channels, 56, 56};
    return s;
  };
  const CudaOpSpec square = conv(256, 1, 3, 3), odd = conv(256, 1, 1, 7), grouped = conv(256, 4, 3, 3),
                   depthwise = conv(256, 256, 3, 3);
  GpuDevice slower_odd = d, slower_groups = d, slower_direct = d;
  slower_odd.conv_odd_kernel_efficiency /= 4;
  slower_groups.conv_grouped_efficiency /= 4;
  slower_direct.direct_conv_efficiency /= 4;
  EXPECT_GT(gpu_spec_time_us(slower_odd, odd), gpu_spec_time_us(d, odd));
  EXPECT_EQ(gpu_spec_time_us(slower_odd, square), gpu_spec_time_us(d, square));
  EXPECT_GT(gpu_spec_time_us(slower_groups, grouped), gpu_spec_time_us(d, grouped));
  EXPECT_EQ(gpu_spec_time_us(slower_groups, square), gpu_spec_time_us(d, square));
  EXPECT_GT(gpu_spec_time_us(slower_direct, depthwise), gpu_spec_time_us(d, depthwise));
  EXPECT_EQ(gpu_spec_time_us(slower_direct, grouped), gpu_spec_time_us(d, grouped));
}

// A kernel whose bytes fit in L2 streams at l2_bandwidth_factor times HBM's
// rate; one past it at HBM's.
TEST(GpuKernelModel, BytesThatFitInL2StreamFaster) {
  GpuDevice d = load_gpu_device("h100-sxm");
  d.l2_bandwidth_factor = 2;
  const double hbm_bytes_per_us = d.memory_bandwidth_gbs * 1e3 * d.memory_efficiency;
  const double small = 1e6, large = 2 * d.l2_cache_mb * 1e6;
  EXPECT_NEAR(memory_kernel_us(d, small, 0), small / hbm_bytes_per_us / 2, 1e-12);
  EXPECT_NEAR(memory_kernel_us(d, large, 0), large / hbm_bytes_per_us, 1e-9);
  d.l2_cache_mb = 0;  // not modelled
  EXPECT_NEAR(memory_kernel_us(d, small, 0), small / hbm_bytes_per_us, 1e-12);
}

TEST(GpuKernelModel, TransposesThatMoveTheInnermostAxisReadScattered) {
  const GpuDevice d = load_gpu_device("h100-sxm");
  auto transpose = [](std::vector<int64_t> in, std::vector<int64_t> perm) {
    CudaOpSpec s;
    s.kind = CudaOpKind::Transpose;
    s.in = std::move(in);
    s.perm = std::move(perm);
    return s;
  };
  const double in_order = gpu_spec_time_us(d, transpose({64, 256, 128}, {1, 0, 2}));
  const double scattered = gpu_spec_time_us(d, transpose({64, 256, 128}, {0, 2, 1}));
  EXPECT_GT(scattered, in_order);
  // Size-1 axes do not count: [64,128,1] by [2,1,0] reads across rows.
  EXPECT_GT(gpu_spec_time_us(d, transpose({64, 1024, 1}, {2, 1, 0})), gpu_spec_time_us(d, transpose({64, 1024, 1}, {0, 2, 1})));
}

TEST(GpuCostModel, SplitsAreViewsAndCostNothing) {
  const GpuDevice d = load_gpu_device("h100-sxm");
  OpCostKey split;
  split.type = OpType::Split;
  split.attrs.set(AttrKey::Axis, int64_t{2});
  split.attrs.set(AttrKey::Split, std::vector<int64_t>{1024, 2048});
  split.inputs = {TensorInfo{DType::Float32, {1, 64, 3072}}};
  split.outputs = {TensorInfo{DType::Float32, {1, 64, 1024}}, TensorInfo{DType::Float32, {1, 64, 2048}}};
  EXPECT_EQ(gpu_model_cost_ms(d, split), 0.0);
}

TEST(GpuDeviceProfile, ShippedProfilesLoadWithTheirDatasheetFigures) {
  const GpuDevice h100 = load_gpu_device("h100-sxm");
  EXPECT_EQ(h100.sm_count, 132);
  EXPECT_NEAR(h100.fp32_tflops, 132 * 128 * 2 * 1.98e-3, 0.1);  // lanes x 2 x clock
  EXPECT_TRUE(h100.has_tf32());
  const GpuDevice a100 = load_gpu_device("a100-sxm");
  EXPECT_EQ(a100.sm_count, 108);
  EXPECT_NEAR(a100.fp32_tflops, 108 * 64 * 2 * 1.41e-3, 0.1);
  const GpuDevice v100 = load_gpu_device("v100-sxm");
  EXPECT_EQ(v100.sm_count, 80);
  EXPECT_FALSE(v100.has_tf32());
  const std::vector<std::string> known = known_gpu_names();
  for (const char* name : {"a100-sxm", "h100-sxm", "v100-sxm"})
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
}

// A profile written before conv_cta_overhead_cycles existed (a run folder's
// copy) loads with 0, which prices as before; a bad value is still refused.
TEST(GpuDeviceProfile, AProfileWithoutTheConvBlockOverheadLoadsWithZero) {
  const std::string dir = testing::scratch_dir() + "/gpu_profiles_old";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/old.yaml";
  save_gpu_device(load_gpu_device("h100-sxm"), path, "a profile of before");
  std::string text;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("conv_cta_overhead_cycles:", 0) != 0) text += line + "\n";
  }
  std::ofstream(path) << text;
  EXPECT_EQ(load_gpu_device(path).conv_cta_overhead_cycles, 0.0);
  std::ofstream(path) << text << "conv_cta_overhead_cycles: -5\n";
  EXPECT_THROW(load_gpu_device(path), UsageError);
}

TEST(GpuDeviceProfile, BadProfilesAreClearErrors) {
  const std::string dir = testing::scratch_dir() + "/gpu_profiles";
  std::filesystem::create_directories(dir);
  try {
    load_gpu_device("h200-nvl");
    FAIL() << "an unknown GPU was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("known GPUs: a100-sxm, h100-sxm, v100-sxm"), std::string::npos) << e.what();
  }
  const GpuDevice h100 = load_gpu_device("h100-sxm");
  const std::string path = dir + "/broken.yaml";
  GpuDevice broken = h100;
  broken.memory_efficiency = 1.5;
  save_gpu_device(broken, path, "a profile with an impossible efficiency");
  try {
    load_gpu_device(path);
    FAIL() << "an efficiency above 1 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("memory_efficiency"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    out << "name: partial\ncuda_name: X\nsm_count: 10\n";
  }
  try {
    load_gpu_device(path);
    FAIL() << "a profile without its clock was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("no key 'boost_clock_mhz'"), std::string::npos) << e.what();
  }
  // What save writes, load reads back.
  save_gpu_device(h100, path, "round trip");
  const GpuDevice again = load_gpu_device(path);
  EXPECT_EQ(again.sm_count, h100.sm_count);
  EXPECT_DOUBLE_EQ(again.gemm_efficiency, h100.gemm_efficiency);
  EXPECT_DOUBLE_EQ(again.tf32_tflops, h100.tf32_tflops);
}

TEST(GpuCostModel, PricesFromTheTableFirstAndCountsBoth) {
  const Graph bert = build_zoo_model("bert");
  const GpuDevice h100 = load_gpu_device("h100-sxm");
  GpuCostModel alone(h100, std::nullopt);
  const GraphCost model_cost = graph_cost(bert, alone);
  EXPECT_GT(model_cost.total_ms, 0);
  EXPECT_EQ(alone.stats().table_hits, 0);
  EXPECT_EQ(alone.stats().model_fallbacks, static_cast<int64_t>(alone.distinct_configurations()));

  // A table with one configuration, priced at 1 ms: that one comes from it.
  const std::vector<OpCostKey> keys = priced_op_keys(bert, false);
  ASSERT_FALSE(keys.empty());
  CostTable table;
  table.fingerprint = "gpu=test; timer=cudnn-1";
  table.entries[keys.front().canonical()] = 1.0;
  GpuCostModel with_table(h100, table, "in memory");
  EXPECT_DOUBLE_EQ(with_table.key_cost_ms(keys.front()), 1.0);
  EXPECT_NEAR(with_table.key_cost_ms(keys.back()), gpu_model_cost_ms(h100, keys.back()), 1e-15);
  EXPECT_EQ(with_table.stats().table_hits, 1);
  EXPECT_EQ(with_table.stats().model_fallbacks, keys.size() > 1 ? 1 : 0);
  EXPECT_NE(with_table.description().find("measured table"), std::string::npos);
}

TEST(GpuCostModel, FactoryAndDeterminism) {
  CostModelOptions options;
  options.kind = "gpu";
  options.gpu = "a100-sxm";
  options.gpu_table = "none";
  std::unique_ptr<CostModel> a = make_cost_model(options), b = make_cost_model(options);
  EXPECT_EQ(a->name(), "gpu");
  const Graph resnet = build_zoo_model("resnet18");
  EXPECT_EQ(graph_cost(resnet, *a).total_ms, graph_cost(resnet, *b).total_ms);
  options.gpu = "h100-sxm";
  EXPECT_LT(graph_cost(resnet, *make_cost_model(options)).total_ms, graph_cost(resnet, *a).total_ms);
  options.gpu = "nope";
  EXPECT_THROW(make_cost_model(options), UsageError);
  options.gpu = "h100-sxm";
  options.gpu_table = testing::scratch_dir() + "/no-such.table";
  EXPECT_THROW(make_cost_model(options), Error);
}

TEST(GpuCostModel, RefusesATableNoGpuMeasured) {
  const std::string path = testing::scratch_dir() + "/cpu.table";
  std::filesystem::remove(path);
  CostTable cpu;
  cpu.fingerprint = "cpu=AMD EPYC; threads=2";
  cpu.entries["Relu f32[1,8]"] = 0.01;
  write_cost_table(path, cpu);
  EXPECT_THROW(read_gpu_table(path, load_gpu_device("h100-sxm")), UsageError);

  // A table another GPU measured is refused for this profile, naming both.
  const std::string a100 = testing::scratch_dir() + "/a100.table";
  std::filesystem::remove(a100);
  write_cost_table(a100, CostTable{"gpu=NVIDIA A100-SXM4-80GB; sm=8.0; timer=cudnn-1", {{"Relu f32[1,8]", 0.01}}});
  EXPECT_EQ(read_gpu_table(a100, load_gpu_device("a100-sxm")).entries.size(), 1u);
  try {
    read_gpu_table(a100, load_gpu_device("h100-sxm"));
    FAIL() << "an A100 table was accepted for the H100 profile";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("NVIDIA A100-SXM4-80GB"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("H100"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace graphworld
