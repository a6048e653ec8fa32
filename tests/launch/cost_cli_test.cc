// `graphworld cost`, `calibrate` and the cost benchmarks, run as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "common/atomic_file.h"
#include "tests/launch/cli_test_support.h"

namespace graphworld {
namespace {

using testing::gw;
using testing::json_number;
int64_t json_int(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":(-?[0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

// Only the JSON line: progress goes to stderr, which run_command also captures.
std::string json_line(const std::string& out) {
  size_t start = out.rfind("\n{");
  return start == std::string::npos ? out : out.substr(start + 1);
}

TEST(CostCli, MeasuredJsonAndTheCacheAcrossRuns) {
  std::string cache = testing::scratch_dir() + "/cli-cache";
  std::string model = testing::model_path("squeezenet1_1.onnx");
  std::string out;
  ASSERT_EQ(gw("cost " + model + " --cost measured --threads 1 --cache-dir " + cache + " --json", &out), 0) << out;
  std::string first = json_line(out);
  for (const char* key : {"total_ms", "per_op", "cache_hits", "measured_now"})
    EXPECT_NE(first.find(std::string("\"") + key + "\":"), std::string::npos) << key << " in " << first;
  EXPECT_NE(first.find("\"type\":\"Conv\""), std::string::npos) << first;
  int64_t measured = json_int(first, "measured_now");
  EXPECT_GT(measured, 5);
  EXPECT_EQ(json_int(first, "cache_hits"), 0);
  ASSERT_EQ(gw("cost " + model + " --cost measured --threads 1 --cache-dir " + cache + " --json", &out), 0) << out;
  std::string second = json_line(out);
  EXPECT_EQ(json_int(second, "measured_now"), 0) << second;
  EXPECT_EQ(json_int(second, "cache_hits"), measured) << second;
  EXPECT_DOUBLE_EQ(json_number(second, "total_ms"), json_number(first, "total_ms"));
}

TEST(CostCli, TwoProcessesMeasuringIntoOneCache) {
  std::string cache = testing::scratch_dir() + "/shared-cache";
  std::string a = testing::graphworld_binary() + " cost squeezenet1.1 --cost measured --threads 1 --cache-dir " + cache;
  std::string b = testing::graphworld_binary() + " cost resnet18 --cost measured --threads 1 --cache-dir " + cache;
  std::string out;
  ASSERT_EQ(testing::run_command("(" + a + " > /dev/null & " + b + " > /dev/null & wait)", &out), 0) << out;
  // Everything both measured is in the file now.
  for (const char* model : {"squeezenet1.1", "resnet18"}) {
    ASSERT_EQ(gw(std::string("cost ") + model + " --cost measured --threads 1 --cache-dir " + cache + " --json", &out), 0)
        << out;
    EXPECT_EQ(json_int(json_line(out), "measured_now"), 0) << model << ": " << out;
  }
  EXPECT_EQ(out.find("corrupt"), std::string::npos) << out;
}

TEST(CostCli, ExportTableWritesOneTableForARun) {
  const std::string cache = testing::scratch_dir() + "/export-cache";
  const std::string table = testing::scratch_dir() + "/export.table";
  std::filesystem::remove(table);
  std::string out;
  ASSERT_EQ(gw("cost export-table squeezenet1.1 " + testing::model_path("squeezenet1_1.onnx") +
                   " --cost measured --threads 1 --cache-dir " + cache + " -o " + table, &out), 0) << out;
  EXPECT_NE(out.find("wrote " + table), std::string::npos) << out;
  EXPECT_NE(out.find("env.cost_table=" + table), std::string::npos) << out;
  // The table prices the model exactly as the cache that measured it.
  ASSERT_EQ(gw("cost squeezenet1.1 --cost measured --threads 1 --cache-dir " + cache + " --json", &out), 0) << out;
  EXPECT_EQ(json_int(json_line(out), "measured_now"), 0) << out;
  std::ifstream in(table);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "graphworld-cost-cache 1");
  EXPECT_NE(gw("cost export-table squeezenet1.1 --cost analytic -o " + table, &out), 0);
  EXPECT_NE(out.find("analytic costs need no table"), std::string::npos) << out;
  EXPECT_NE(gw("cost export-table squeezenet1.1", &out), 0);
  EXPECT_NE(out.find("-o FILE"), std::string::npos) << out;
}

TEST(CostCli, AnalyticIsTheDefaultAndIsDeterministic) {
  std::string cache = testing::scratch_dir() + "/analytic-cache";  // empty: built-in rates
  std::string out1, out2;
  ASSERT_EQ(gw("cost bert --cache-dir " + cache + " --json", &out1), 0) << out1;
  ASSERT_EQ(gw("cost bert --cache-dir " + cache + " --json", &out2), 0) << out2;
  EXPECT_NE(out1.find("\"cost_model\":\"analytic\""), std::string::npos) << out1;
  EXPECT_EQ(json_number(out1, "total_ms"), json_number(out2, "total_ms"));
  EXPECT_GT(json_number(out1, "total_ms"), 0);
}

TEST(CostCli, BadCostModelsAreClearErrors) {
  std::string out;
  EXPECT_EQ(gw("cost bert --cost magic", &out), 2);
  EXPECT_NE(out.find("unknown cost model 'magic'"), std::string::npos) << out;
  EXPECT_EQ(gw("cost bert --rates /no/such/rates.yaml", &out), 2);
  EXPECT_NE(out.find("does not exist"), std::string::npos) << out;
  std::string devices;
  ASSERT_EQ(gw("devices --json", &devices), 0);
  if (devices.find("\"gpus\":[]") != std::string::npos) {
    EXPECT_NE(gw("cost bert --cost cuda --cache-dir " + testing::scratch_dir(), &out), 0);
    EXPECT_NE(out.find("cuda cost model"), std::string::npos) << out;
    EXPECT_EQ(out.find("terminate"), std::string::npos) << out;
  }
}

// The gpu cost model on a machine without a GPU: a named GPU, priced by
// the model, by a table given or by the table shipped for it, its counts
// in the JSON, and clear errors.
TEST(CostCli, GpuPricesANamedGpuWithoutOne) {
  std::string out;
  ASSERT_EQ(gw("cost bert --cost gpu --gpu-table none --json", &out), 0) << out;
  const std::string h100 = json_line(out);
  EXPECT_NE(h100.find("\"cost_model\":\"gpu\""), std::string::npos) << h100;
  EXPECT_GT(json_number(h100, "total_ms"), 0);
  EXPECT_EQ(json_int(h100, "table_hits"), 0);
  EXPECT_EQ(json_int(h100, "model_fallbacks"), json_int(h100, "distinct_configurations"));
  ASSERT_EQ(gw("cost bert --cost gpu --gpu v100-sxm --gpu-table none --json", &out), 0) << out;
  EXPECT_GT(json_number(json_line(out), "total_ms"), json_number(h100, "total_ms")) << "a V100 is slower than an H100";

  // A measured table is priced from first.
  const std::string dir = testing::scratch_dir() + "/gpu-cli";
  std::filesystem::create_directories(dir);
  {
    std::ofstream timings(dir + "/timings.tsv");
    timings << "fingerprint gpu=NVIDIA H100 80GB HBM3; sm=9.0; timer=cudnn-1\n"
            << "0.25\tSoftmax(axis=-1) f32[1,16,64,64]\n";
  }
  ASSERT_EQ(gw("cost import-gpu-times " + dir + "/timings.tsv -o " + dir + "/h100.table", &out), 0) << out;
  ASSERT_EQ(gw("cost bert --cost gpu --gpu-table " + dir + "/h100.table --json", &out), 0) << out;
  const std::string tabled = json_line(out);
  EXPECT_EQ(json_int(tabled, "table_hits"), 1) << tabled;
  EXPECT_EQ(json_int(tabled, "model_fallbacks"), json_int(h100, "model_fallbacks") - 1) << tabled;

  // A new measurement replaces the table; it is not merged, nor set aside as corrupt.
  {
    std::ofstream timings(dir + "/timings2.tsv");
    timings << "fingerprint gpu=NVIDIA H100 80GB HBM3; sm=9.0; timer=cudnn-2; method=graph\n"
            << "0.125\tSoftmax(axis=-1) f32[1,16,64,64]\n";
  }
  ASSERT_EQ(gw("cost import-gpu-times " + dir + "/timings2.tsv -o " + dir + "/h100.table", &out), 0) << out;
  EXPECT_NE(out.find("replacing " + dir + "/h100.table (the table measured by gpu=NVIDIA H100 80GB HBM3; sm=9.0; "
                     "timer=cudnn-1)"),
            std::string::npos)
      << out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/h100.table.corrupt"));
  EXPECT_NE(read_file(dir + "/h100.table").find("timer=cudnn-2; method=graph"), std::string::npos);

  // The H100's measured table ships in configs/gpu/ and is priced from by default.
  ASSERT_EQ(gw("cost bert --cost gpu --json", &out), 0) << out;
  const std::string shipped = json_line(out);
  EXPECT_EQ(json_int(shipped, "table_hits"), json_int(shipped, "distinct_configurations")) << shipped;
  EXPECT_EQ(json_int(shipped, "model_fallbacks"), 0) << shipped;

  EXPECT_EQ(gw("cost bert --gpu a100-sxm", &out), 2);
  EXPECT_NE(out.find("add --cost gpu"), std::string::npos) << out;
  EXPECT_EQ(gw("cost bert --cost gpu --gpu b200", &out), 2);
  EXPECT_NE(out.find("known GPUs: a100-sxm, h100-sxm, v100-sxm"), std::string::npos) << out;
  EXPECT_EQ(gw("cost bert --cost gpu --gpu-table " + dir + "/timings.tsv", &out), 2);
  EXPECT_NE(out.find("timings.tsv"), std::string::npos) << out;
}

TEST(CostCli, GpuConfigListAndFitRunAsAUserRunsThem) {
  const std::string dir = testing::scratch_dir() + "/gpu-fit-cli";
  std::filesystem::create_directories(dir);
  std::string out;
  ASSERT_EQ(gw("cost export-gpu-configs squeezenet1.1 --budget 20 --rollouts 2 -o " + dir + "/configs.list", &out), 0)
      << out;
  EXPECT_NE(out.find("op configurations of 1 models"), std::string::npos) << out;
  std::ifstream list(dir + "/configs.list");
  std::string line;
  std::getline(list, line);
  EXPECT_EQ(line, "graphworld-gpu-configs 1");
  size_t lines = 0;
  while (std::getline(list, line)) ++lines;
  EXPECT_GT(lines, 20u);
  EXPECT_EQ(gw("cost fit-gpu " + dir + "/configs.list", &out), 2);
  EXPECT_NE(out.find("--list"), std::string::npos) << out;

  // The shipped H100 table fitted, as configs/gpu/README.md says, with each
  // configuration's measured and fitted time written out.
  const std::string gpu_dir = testing::source_dir() + "/configs/gpu";
  ASSERT_EQ(gw("cost fit-gpu " + gpu_dir + "/h100-sxm.table --list " + gpu_dir +
                   "/measurements/h100-sxm-2026-11-27/configs.list --gpu h100-sxm -o " + dir +
                   "/h100-fitted.yaml --residuals " + dir + "/residuals.tsv --json",
               &out),
            0)
      << out;
  const std::string fit = json_line(out);
  EXPECT_LT(json_number(fit.substr(fit.find("held_out_fitted")), "median_relative_error"), 0.25) << fit;
  std::ifstream residuals(dir + "/residuals.tsv");
  ASSERT_TRUE(std::getline(residuals, line));
  EXPECT_EQ(line, "op_type\theld_out\tmeasured_ms\tpredicted_ms\tkey");
  lines = 0;
  while (std::getline(residuals, line)) ++lines;
  EXPECT_GT(lines, 1000u);
  EXPECT_TRUE(std::filesystem::exists(dir + "/h100-fitted.yaml"));
}

// Where a GPU is seen, the cuda cost model times every op with cuDNN/cuBLAS
// and caches the times.
TEST(CostCli, CudaTimesAModelWhereAGpuIsSeen) {
  std::string devices, out;
  ASSERT_EQ(gw("devices --json", &devices), 0);
  if (devices.find("\"gpus\":[]") != std::string::npos) GTEST_SKIP() << "no GPU";
  const std::string cache = testing::scratch_dir() + "/cuda-cache";
  ASSERT_EQ(gw("cost squeezenet1.1 --cost cuda --json --cache-dir " + cache, &out), 0) << out;
  const std::string first = json_line(out);
  EXPECT_GT(json_number(first, "total_ms"), 0) << out;
  EXPECT_GT(json_int(first, "measured_now"), 0) << out;
  ASSERT_EQ(gw("cost squeezenet1.1 --cost cuda --json --cache-dir " + cache, &out), 0) << out;
  EXPECT_EQ(json_int(json_line(out), "measured_now"), 0) << out;
  EXPECT_DOUBLE_EQ(json_number(json_line(out), "total_ms"), json_number(first, "total_ms"));
}

TEST(CostCli, CalibrateWritesRatesTheAnalyticModelThenUses) {
  std::string cache = testing::scratch_dir() + "/calibrate-cache";
  std::string out;
  ASSERT_EQ(gw("calibrate --models squeezenet1.1,nasrnn --threads 1 --cache-dir " + cache, &out), 0) << out;
  std::string rates = cache + "/analytic_rates.yaml";
  ASSERT_TRUE(std::filesystem::exists(rates)) << out;
  EXPECT_NE(out.find("GFLOP/s"), std::string::npos) << out;
  ASSERT_EQ(gw("cost squeezenet1.1 --cache-dir " + cache + " --json", &out), 0) << out;
  EXPECT_NE(out.find(rates), std::string::npos) << "analytic should use the calibrated rates: " << out;
}

TEST(CostCli, BenchmarksPrintTheirNumbers) {
  std::string out;
  ASSERT_EQ(gw("bench cost squeezenet1.1 --threads 1 --json", &out), 0) << out;
  std::string json = json_line(out);
  for (const char* key : {"first_measure_s", "cached_us", "incremental_us", "incremental_max_error_ms", "peak_rss_mib"})
    EXPECT_NE(json.find(std::string("\"") + key + "\":"), std::string::npos) << key << " in " << json;
  EXPECT_LT(json_number(json, "incremental_max_error_ms"), 1e-9);
  std::string cache = testing::scratch_dir() + "/fidelity-cache";
  ASSERT_EQ(gw("bench fidelity --models squeezenet1.1,nasrnn --batches 1,2 --threads 1 --cache-dir " + cache, &out), 0)
      << out;
  EXPECT_NE(out.find("Spearman(measured cost, latency)"), std::string::npos) << out;
  EXPECT_NE(out.find("Spearman(analytic cost, latency)"), std::string::npos) << out;
  ASSERT_EQ(gw("bench policy nasrnn --batch 4 --repeats 2 --hidden 8 --rounds 1 --json", &out), 0) << out;
  json = json_line(out);
  for (const char* key : {"parameters", "inference_median_ms", "batched_ms_per_observation", "ppo_samples_per_s", "reference_ppo_samples_per_s", "speedup", "ppo_gflops"})
    EXPECT_NE(json.find(std::string("\"") + key + "\":"), std::string::npos) << key << " in " << json;
  EXPECT_GT(json_number(json, "ppo_samples_per_s"), 0.0);
  EXPECT_EQ(gw("bench policy nasrnn --hidden 2", &out), 2) << out;
  // CUDA graphs replay on a GPU only: on a CPU the run says so and stops.
  EXPECT_EQ(gw("bench policy nasrnn --batch 4 --repeats 2 --hidden 8 --rounds 1 --cuda-graph", &out), 2) << out;
  EXPECT_NE(out.find("CUDA"), std::string::npos) << out;
}

}  // namespace
}  // namespace graphworld
