// Property: random rewrites never change what a model computes. On every zoo
// graph, 20 sequences of 20 random (rule, match) steps; after each sequence
// the executor's outputs equal the original's, and the exported ONNX gives
// the original's outputs in onnxruntime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "env/onnx/onnx_export.h"
#include "env/ops/executor.h"
#include "env/rules/graph_rewriter.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

constexpr int kSequences = 20;
constexpr int kSteps = 20;
// float32 re-association (merged convs, folded BatchNorm) moves results by a
// few ulps per layer; a wrong rewrite moves them by O(1).
constexpr double kTolerance = 1e-4;

class RewriteProperty : public ::testing::TestWithParam<std::string> {};

TEST_P(RewriteProperty, RandomRewritesKeepOutputs) {
  const std::string name = GetParam();
  static const RuleMatcher matcher(default_rule_library().rules);
  Graph original = build_zoo_model(name, {});
  auto inputs = random_inputs(original, 3);
  auto expected = Executor(original).run(inputs);
  const std::string dir = testing::scratch_dir() + "/property-" + name;
  std::filesystem::create_directories(dir);
  const std::string original_onnx = dir + "/original.onnx";
  export_onnx_file(original, original_onnx);

  std::mt19937_64 rng(std::hash<std::string>{}(name));
  int total_steps = 0;
  std::vector<std::string> pending;  // exported rewrites awaiting onnxruntime
  auto check_in_onnxruntime = [&] {
    if (pending.empty()) return;
    auto results = testing::ort_compare_many(original_onnx, pending);
    for (size_t i = 0; i < results.size(); ++i)
      EXPECT_LE(results[i].max_rel_err, kTolerance) << name << ": " << pending[i] << " differs in onnxruntime";
    for (const std::string& f : pending) std::filesystem::remove(f);
    pending.clear();
  };
  for (int sequence = 0; sequence < kSequences; ++sequence) {
    GraphRewriter rewriter(matcher, original);
    for (int step = 0; step < kSteps && !rewriter.matches().empty(); ++step) {
      rewriter.apply(rng() % rewriter.matches().size());
      ++total_steps;
    }
    Graph rewritten = rewriter.graph().pruned();
    auto got = Executor(rewritten).run(inputs);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t k = 0; k < got.size(); ++k)
      EXPECT_LE(testing::relative_error(*expected[k], *got[k]), kTolerance) << name << " sequence " << sequence << " output " << k;
    pending.push_back(dir + "/rewrite" + std::to_string(sequence) + ".onnx");
    export_onnx_file(rewritten, pending.back());
    // Bounded disk: full-size models are compared a few at a time.
    if (pending.size() >= 5) check_in_onnxruntime();
  }
  check_in_onnxruntime();
  EXPECT_GT(total_steps, 0) << name << ": no rule ever matched";
  std::filesystem::remove_all(dir);
}

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  for (const ZooModel& m : zoo_models()) names.push_back(m.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Zoo, RewriteProperty, ::testing::ValuesIn(zoo_names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

}  // namespace
}  // namespace graphworld
