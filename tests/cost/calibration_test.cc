#include "env/cost/calibration.h"

#include <gtest/gtest.h>

#include <fstream>

#include "common/error.h"
#include "env/cost/graph_cost.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::vector<OpCostKey> zoo_keys() {
  std::vector<OpCostKey> keys;
  for (const char* name : {"resnet50", "bert", "squeezenet1.1"}) {
    std::vector<OpCostKey> priced = priced_op_keys(build_zoo_model(name));
    keys.insert(keys.end(), priced.begin(), priced.end());
  }
  return keys;
}

TEST(Calibration, RecoversTheRatesThatGeneratedTheSamples) {
  AnalyticRates truth;
  truth.dense_gflops = 73;
  truth.other_gflops = 3.5;
  truth.bandwidth_gbs = 11;
  truth.overhead_us = 6;
  std::vector<CostSample> samples;
  for (const OpCostKey& key : zoo_keys()) samples.push_back({key, analytic_cost_ms(truth, key)});
  CalibrationResult fit = fit_analytic_rates(samples);
  EXPECT_NEAR(fit.rates.dense_gflops, truth.dense_gflops, 1e-6 * truth.dense_gflops);
  EXPECT_NEAR(fit.rates.other_gflops, truth.other_gflops, 1e-6 * truth.other_gflops);
  EXPECT_NEAR(fit.rates.bandwidth_gbs, truth.bandwidth_gbs, 1e-6 * truth.bandwidth_gbs);
  EXPECT_NEAR(fit.rates.overhead_us, truth.overhead_us, 1e-6 * truth.overhead_us);
  EXPECT_LT(fit.median_relative_error, 1e-9);
}

TEST(Calibration, TooFewSamplesIsAClearError) {
  std::vector<OpCostKey> keys = zoo_keys();
  std::vector<CostSample> samples = {{keys[0], 1.0}, {keys[1], 2.0}};
  EXPECT_THROW(fit_analytic_rates(samples), UsageError);
}

TEST(Calibration, RatesFilesRoundTripAndBadFilesAreRejected) {
  std::string dir = testing::scratch_dir();
  AnalyticRates rates;
  rates.dense_gflops = 12.5;
  rates.other_gflops = 1.25;
  rates.bandwidth_gbs = 6;
  rates.overhead_us = 4;
  save_analytic_rates(rates, dir + "/rates.yaml", "test rates");
  AnalyticRates back = load_analytic_rates(dir + "/rates.yaml");
  EXPECT_TRUE(back == rates);
  EXPECT_THROW(load_analytic_rates(dir + "/missing.yaml"), UsageError);
  std::ofstream(dir + "/bad.yaml") << "dense_gflops: -1\nother_gflops: 1\nbandwidth_gbs: 1\noverhead_us: 1\n";
  try {
    load_analytic_rates(dir + "/bad.yaml");
    FAIL() << "a negative rate was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("dense_gflops"), std::string::npos) << e.what();
  }
  std::ofstream(dir + "/partial.yaml") << "dense_gflops: 3\n";
  EXPECT_THROW(load_analytic_rates(dir + "/partial.yaml"), UsageError);
}

TEST(Calibration, TheShippedConfigHoldsTheBuiltInDefaults) {
  AnalyticRates shipped = load_analytic_rates(testing::source_dir() + "/configs/analytic_cost.yaml");
  EXPECT_TRUE(shipped == AnalyticRates{}) << "configs/analytic_cost.yaml and AnalyticRates' defaults differ";
}

TEST(Spearman, KnownValues) {
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Rank differences 0,0,1,-1,0 over n=5: 1 - 6*2/(5*24) = 0.9.
  EXPECT_NEAR(spearman_correlation({1, 2, 3, 4, 5}, {1, 2, 4, 3, 5}), 0.9, 1e-12);
  EXPECT_THROW(spearman_correlation({1}, {1}), UsageError);
}

}  // namespace
}  // namespace graphworld
