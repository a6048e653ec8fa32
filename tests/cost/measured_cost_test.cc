#include "env/cost/measured_cost_model.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <fstream>
#include <sstream>

#include "env/cost/aten_op_timer.h"
#include "env/cost/graph_cost.h"
#include "env/ops/graph_builder.h"
#include "env/zoo/zoo.h"
#include "tests/cost/cost_test_graphs.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

// Times fast: the cache behaviour is under test, not the numbers.
TimingPolicy quick_policy() {
  TimingPolicy policy;
  policy.warmup = 1;
  policy.min_repeats = 3;
  policy.max_repeats = 3;
  policy.min_total_ms = 0;
  policy.ratio_min_repeats = 3;
  policy.ratio_max_repeats = 3;
  policy.ratio_min_total_ms = 0;
  return policy;
}

std::unique_ptr<MeasuredCostModel> measured_model(const std::string& dir) {
  return std::make_unique<MeasuredCostModel>("measured", std::make_unique<AtenOpTimer>(1, quick_policy()), dir);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

TEST(MeasuredCost, MissesMeasureThenHitsComeFromTheDiskCache) {
  std::string dir = testing::scratch_dir() + "/hits";
  Graph g = build_zoo_model("squeezenet1.1");
  double first_total = 0;
  std::string path;
  int64_t configurations = 0;
  {
    auto model = measured_model(dir);
    first_total = graph_cost(g, *model).total_ms;
    configurations = model->stats().measured_now;
    EXPECT_GT(configurations, 5);
    EXPECT_EQ(model->stats().cache_hits, 0);
    EXPECT_GT(first_total, 0);
    path = model->cache_path();
  }  // the destructor flushes
  ASSERT_TRUE(std::filesystem::exists(path));
  auto again = measured_model(dir);
  double second_total = graph_cost(g, *again).total_ms;
  EXPECT_EQ(again->stats().measured_now, 0);
  EXPECT_EQ(again->stats().cache_hits, configurations);
  EXPECT_DOUBLE_EQ(second_total, first_total);  // %.9g round trip of every entry is exact enough
  // A configuration not in the cache is a miss, measured now.
  Graph other = testing::small_conv_graph();
  graph_cost(other, *again);
  EXPECT_GT(again->stats().measured_now, 0);
}

// small_conv_graph's conv with a bias and no Relu after it: the shape of a
// conv after a BatchNorm fold.
Graph small_conv_with_bias_graph() {
  GraphBuilder b(7);
  TensorRef x = b.input("x", {1, 8, 16, 16});
  TensorRef w = b.random_weight({16, 8, 3, 3}, -1, 1, "w");
  TensorRef bias = b.random_weight({16}, -1, 1, "bias");
  TensorRef y = b.add1(OpType::Conv, {x, w, bias}, {{AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  b.output(y, "y");
  return b.finish();
}

TEST(MeasuredCost, ARelativeOfAPricedConfigurationIsTimedAgainstIt) {
  std::string dir = testing::scratch_dir() + "/anchored";
  auto model = measured_model(dir);
  graph_cost(testing::small_conv_graph(), *model);  // the conv and the Relu: nothing to anchor on yet
  EXPECT_EQ(model->anchored_measurements(), 0);
  GraphCost with_bias = graph_cost(small_conv_with_bias_graph(), *model);
  EXPECT_EQ(model->stats().measured_now, 3);
  EXPECT_EQ(model->anchored_measurements(), 1);  // the biased conv, against the plain one
  EXPECT_TRUE(std::isfinite(with_bias.total_ms));
  EXPECT_GT(with_bias.total_ms, 0);
}

// The measured model prices layouts (a rewired Relu that now reads a plain
// value costs differently, and so do its readers), so incremental updates must
// follow layout changes past the rewired ops.
TEST(MeasuredCost, IncrementalPricesFollowLayoutChanges) {
  std::string dir = testing::scratch_dir() + "/incremental";
  auto model = measured_model(dir);
  std::mt19937_64 rng(11);
  for (const char* name : {"resnet18", "squeezenet1.1"}) {
    Graph g = build_zoo_model(name);
    CostTracker tracker(*model);
    tracker.reset(g);
    int applied = 0;
    for (int attempt = 0; attempt < 400 && applied < 40; ++attempt) {
      testing::TestRewrite rewrite;
      if (!testing::random_rewrite(g, rng, rewrite)) continue;
      ++applied;
      double incremental = tracker.update(g, rewrite.removed, rewrite.changed);
      double full = CostTracker(*model).reset(g);
      ASSERT_NEAR(incremental, full, 1e-9 * full) << name << " after " << applied << " rewrites";
    }
    EXPECT_GE(applied, 20) << name;
  }
}

TEST(MeasuredCost, AThreadCountChangeIsADifferentCache) {
  std::string dir = testing::scratch_dir() + "/fingerprints";
  EXPECT_NE(cpu_fingerprint(1), cpu_fingerprint(2));
  EXPECT_NE(cost_cache_path(dir, "measured", cpu_fingerprint(1)), cost_cache_path(dir, "measured", cpu_fingerprint(2)));
  EXPECT_NE(cpu_fingerprint(1).find("libtorch="), std::string::npos);
}

TEST(MeasuredCost, CorruptCachesAreReportedMovedAsideAndRebuilt) {
  std::string dir = testing::scratch_dir() + "/corrupt";
  Graph g = testing::small_conv_graph();
  std::string path;
  {
    auto model = measured_model(dir);
    graph_cost(g, *model);
    path = model->cache_path();
  }
  std::string good = read_file(path);
  ASSERT_NE(good.find("\nend "), std::string::npos);
  std::string flipped = good;
  flipped[flipped.find('\t') - 1] = flipped[flipped.find('\t') - 1] == '1' ? '2' : '1';  // alter one cost digit
  std::vector<std::pair<std::string, std::string>> cases = {
      {"altered cost", flipped},
      {"truncated", good.substr(0, good.size() / 2)},
      {"garbage", std::string("\x01\x02 not a cache at all\n")},
      {"empty", ""},
      {"old version", "graphworld-cost-cache 0" + good.substr(good.find('\n'))},
  };
  for (const auto& [what, text] : cases) {
    write_file(path, text);
    auto model = measured_model(dir);
    EXPECT_FALSE(model->cache_problem().empty()) << what;
    EXPECT_TRUE(std::filesystem::exists(path + ".corrupt")) << what;
    graph_cost(g, *model);
    EXPECT_GT(model->stats().measured_now, 0) << what << ": a corrupt cache must not be trusted";
    model->flush();
    std::filesystem::remove(path + ".corrupt");
    auto reread = measured_model(dir);
    EXPECT_TRUE(reread->cache_problem().empty()) << what << ": the rebuilt cache must be valid";
  }
}

TEST(CostCacheFile, TwoProcessesWritingOneCacheLoseNothing) {
  std::string dir = testing::scratch_dir() + "/concurrent";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/shared.cache";
  constexpr int kRounds = 40;
  constexpr int kPerRound = 5;
  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // Child: many small merges, each with new keys, racing the other child.
      int status = 0;
      try {
        CostCacheFile file(path, "test-device");
        for (int round = 0; round < kRounds; ++round) {
          CostEntries entries;
          for (int k = 0; k < kPerRound; ++k)
            entries["w" + std::to_string(writer) + "-r" + std::to_string(round) + "-k" + std::to_string(k)] = round + k * 0.5;
          file.merge_and_save(entries);
        }
      } catch (...) {
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CostCacheFile file(path, "test-device");
  CostEntries entries = file.load();
  EXPECT_TRUE(file.problem().empty()) << file.problem();
  EXPECT_EQ(entries.size(), static_cast<size_t>(2 * kRounds * kPerRound));
  EXPECT_DOUBLE_EQ(entries.at("w1-r39-k4"), 39 + 2.0);
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
}

TEST(CostCacheFile, AFileForAnotherDeviceIsNotTrusted) {
  std::string dir = testing::scratch_dir() + "/other-device";
  CostCacheFile writer(dir + "/c.cache", "device-a");
  writer.merge_and_save({{"Relu() f32[4]", 0.01}});
  CostCacheFile reader(dir + "/c.cache", "device-b");
  EXPECT_TRUE(reader.load().empty());
  EXPECT_NE(reader.problem().find("fingerprint"), std::string::npos) << reader.problem();
}

}  // namespace
}  // namespace graphworld
