// A distributed run's cost model is fixed in its folder at start: an
// analytic run's rates are copied there and actors read the copy; a table
// run's learner keeps the first proposal for a configuration, forever (a
// resumed learner reads it back), and answers everyone with it.
#include "learner/run_cost_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/gpu_cost_model.h"
#include "env/cost/graph_cost.h"
#include "tests/learner/training_fixture.h"

namespace graphworld {
namespace {

TEST(RunCostTable, TheFirstProposalIsTheRunsPriceAndSurvivesARestart) {
  const std::string run = testing::fresh_dir("run_cost_table");
  std::filesystem::create_directories(run);
  write_cost_table(run_cost_table_path(run), CostTable{"a test device", {{"Relu f32[8]", 0.5}}});
  {
    RunCostTable table(run);
    ASSERT_TRUE(table.present());
    EXPECT_EQ(table.find("Relu f32[8]"), 0.5);
    EXPECT_FALSE(table.find("Relu f32[16]"));
    EXPECT_EQ(table.settle("Relu f32[16]", 0.75), 0.75);
    EXPECT_EQ(table.settle("Relu f32[16]", 0.25), 0.75) << "a later proposal does not change the run's price";
    EXPECT_EQ(table.settle("Relu f32[8]", 9.0), 0.5);
    EXPECT_EQ(table.added(), 1);
  }
  RunCostTable reopened(run);
  EXPECT_EQ(reopened.find("Relu f32[16]"), 0.75);
  EXPECT_EQ(read_cost_table(run_cost_table_path(run)).fingerprint, "a test device");
}

TEST(RunCostTable, AnAnalyticRunPricesFromItsOwnCopyOfTheRates) {
  const std::string run = testing::fresh_dir("run_cost_rates");
  std::filesystem::create_directories(run);
  const std::string rates = run + "-rates.yaml";
  std::filesystem::copy_file(testing::gpu_rates_path(), rates, std::filesystem::copy_options::overwrite_existing);
  TrainingOptions options;
  options.cost_model = "analytic";
  options.rates = rates;
  prepare_run_cost_model(run, options, {});
  std::ofstream(rates) << "not: rates\n";  // edited after the start: the run does not see it
  auto no_settle = [](const std::string&, const std::function<double()>&) -> double { throw Error("no table"); };
  std::unique_ptr<CostModel> actor = actor_cost_model(run, options, no_settle);
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1"});
  const auto gpu_like = testing::gpu_like_cost();
  EXPECT_EQ(graph_cost(graphs[0].graph, *actor).total_ms, graph_cost(graphs[0].graph, *gpu_like).total_ms);
  EXPECT_FALSE(RunCostTable(run).present());
  EXPECT_THROW(RunCostTable(run).settle("Relu f32[8]", 1.0), UsageError);
}

TEST(RunCostTable, AGpuRunPricesFromItsOwnCopiesOfTheProfileAndTable) {
  const std::string run = testing::fresh_dir("run_gpu_cost");
  std::filesystem::create_directories(run);
  const std::vector<TrainingGraph> graphs = testing::zoo_graphs({"squeezenet1.1"});
  // A profile and a one-entry table of the test's own, edited after the start.
  const std::string profile = run + "-a100.yaml", table = run + "-a100.table";
  save_gpu_device(load_gpu_device("a100-sxm"), profile, "the run's GPU");
  const std::vector<OpCostKey> keys = priced_op_keys(graphs[0].graph, false);
  std::filesystem::remove(table);
  write_cost_table(table, CostTable{"gpu=NVIDIA A100-SXM4-80GB; timer=cudnn-1", {{keys.front().canonical(), 2.0}}});
  TrainingOptions options;
  options.cost_model = "gpu";
  options.gpu = profile;
  options.gpu_table = table;
  prepare_run_cost_model(run, options, graphs);
  EXPECT_TRUE(std::filesystem::exists(run_gpu_profile_path(run)));
  EXPECT_TRUE(std::filesystem::exists(run_gpu_table_path(run)));
  std::ofstream(profile) << "not: a profile\n";
  std::filesystem::remove(table);
  auto no_settle = [](const std::string&, const std::function<double()>&) -> double { throw Error("no settling"); };
  std::unique_ptr<CostModel> actor = actor_cost_model(run, options, no_settle);
  EXPECT_EQ(actor->name(), "gpu");
  GpuCostModel expected(load_gpu_device("a100-sxm"), CostTable{"gpu=NVIDIA A100-SXM4-80GB; timer=cudnn-1", {{keys.front().canonical(), 2.0}}});
  EXPECT_EQ(graph_cost(graphs[0].graph, *actor).total_ms, graph_cost(graphs[0].graph, expected).total_ms);
  EXPECT_EQ(actor->stats().table_hits, 1);
  EXPECT_FALSE(RunCostTable(run).present()) << "the gpu model settles nothing: it is deterministic";
}

TEST(RunCostTable, AGpuRunWithAnUnknownGpuFailsAtStart) {
  const std::string run = testing::fresh_dir("run_gpu_unknown");
  std::filesystem::create_directories(run);
  TrainingOptions options;
  options.cost_model = "gpu";
  options.gpu = "tpu-v9";
  options.gpu_table = "auto";
  EXPECT_THROW(prepare_run_cost_model(run, options, {}), UsageError);
}

}  // namespace
}  // namespace graphworld
