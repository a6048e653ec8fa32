// A run's one cost table: what is exported reads back and prices every
// configuration exactly as the model that measured it; a configuration the
// table lacks goes to the settle callback once and its answer is kept; a
// damaged table is refused, naming the file.
#include "env/cost/cost_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/graph_cost.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::string table_path(const std::string& name) {
  const std::string dir = testing::scratch_dir() + "/cost_table";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir + "/" + name);
  return dir + "/" + name;
}

TEST(CostTable, AnExportedTablePricesLikeTheModelThatMadeIt) {
  const Graph squeezenet = build_zoo_model("squeezenet1.1");
  AnalyticCostModel made_by;
  const CostTable exported = export_cost_table({&squeezenet}, made_by);
  EXPECT_GT(exported.entries.size(), 10u);
  const std::string path = table_path("squeezenet.table");
  write_cost_table(path, exported);
  const CostTable read = read_cost_table(path);
  EXPECT_EQ(read.fingerprint, exported.fingerprint);
  EXPECT_EQ(read.entries, exported.entries);

  int asked = 0;
  CostTableModel from_table("measured", read, false, [&](const OpCostKey&) {
    ++asked;
    return 0.0;
  });
  const GraphCost want = graph_cost(squeezenet, made_by), got = graph_cost(squeezenet, from_table);
  EXPECT_NEAR(got.total_ms, want.total_ms, 1e-6 * want.total_ms);
  EXPECT_EQ(asked, 0) << "every configuration of the exported graph is in its table";
}

TEST(CostTable, WhatTheTableLacksIsSettledOnceAndKept) {
  const Graph squeezenet = build_zoo_model("squeezenet1.1"), resnet = build_zoo_model("resnet18");
  AnalyticCostModel analytic;
  const CostTable table = export_cost_table({&squeezenet}, analytic);
  std::vector<std::string> asked;
  CostTableModel model("measured", table, false, [&](const OpCostKey& key) {
    asked.push_back(key.canonical());
    return 0.25;
  });
  graph_cost(resnet, model);
  ASSERT_FALSE(asked.empty()) << "resnet18 has convolutions squeezenet does not";
  EXPECT_EQ(model.settled(), static_cast<int64_t>(asked.size()));
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(std::adjacent_find(asked.begin(), asked.end()), asked.end()) << "a configuration was settled twice";
  // The settled price is the one used, and it is asked no more.
  for (const OpCostKey& key : priced_op_keys(resnet, false))
    if (std::binary_search(asked.begin(), asked.end(), key.canonical())) {
      EXPECT_EQ(model.key_cost_ms(key), 0.25);
    }
  const size_t asked_then = asked.size();
  graph_cost(resnet, model);
  EXPECT_EQ(asked.size(), asked_then);
}

TEST(CostTable, ADamagedOrForeignFileIsRefusedNamingIt) {
  const std::string missing = table_path("missing.table");
  EXPECT_THROW(read_cost_table(missing), FormatError);
  const std::string foreign = table_path("foreign.table");
  std::ofstream(foreign) << "name: not a table\n";
  try {
    read_cost_table(foreign);
    FAIL() << "a YAML file was read as a cost table";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find(foreign), std::string::npos) << e.what();
  }
  // A table whose body was edited fails its checksum.
  const Graph squeezenet = build_zoo_model("squeezenet1.1");
  AnalyticCostModel analytic;
  const std::string edited = table_path("edited.table");
  write_cost_table(edited, export_cost_table({&squeezenet}, analytic));
  std::string text;
  {
    std::ifstream in(edited);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t tab = text.find('\t');
  ASSERT_NE(tab, std::string::npos);
  text[tab - 1] = text[tab - 1] == '1' ? '2' : '1';
  std::ofstream(edited) << text;
  std::filesystem::remove(edited + ".lock");  // left by the writer
  EXPECT_THROW(read_cost_table(edited), FormatError);
  // A table is an input: reading it, damaged or not, neither moves it aside
  // nor leaves a lock file beside it (a shipped table may be read-only).
  EXPECT_TRUE(std::filesystem::exists(edited));
  EXPECT_FALSE(std::filesystem::exists(edited + ".corrupt"));
  EXPECT_FALSE(std::filesystem::exists(edited + ".lock"));
}

}  // namespace
}  // namespace graphworld
