// optimize's end-to-end decision, apart from any timing, and the
// comparison of the graphs onnxruntime runs that decides its ties.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "env/onnx/onnx_export.h"
#include "env/ops/graph_builder.h"
#include "launch/end_to_end_check.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

TEST(EndToEndDecision, ExecutorDecidesAgainstTheNoiseMargin) {
  EXPECT_TRUE(decide_end_to_end(VerifyRuntime::Executor, 1.02, std::nullopt, 0.01).optimized_is_faster);
  EXPECT_TRUE(decide_end_to_end(VerifyRuntime::Executor, 1.01, std::nullopt, 0.01).optimized_is_faster);
  const EndToEndDecision within_noise = decide_end_to_end(VerifyRuntime::Executor, 1.005, std::nullopt, 0.01);
  EXPECT_FALSE(within_noise.optimized_is_faster);
  EXPECT_NE(within_noise.verdict.find("not faster"), std::string::npos) << within_noise.verdict;
  EXPECT_FALSE(decide_end_to_end(VerifyRuntime::Executor, 0.9, std::nullopt, 0.01).optimized_is_faster);
  EXPECT_TRUE(decide_end_to_end(VerifyRuntime::Executor, 1.0, std::nullopt, 0.0).optimized_is_faster);
}

TEST(EndToEndDecision, OnnxRuntimeDecidesAndATieGoesToTheExecutor) {
  // Faster in onnxruntime wins whatever the executor says.
  EXPECT_TRUE(decide_end_to_end(VerifyRuntime::OnnxRuntime, 0.8, 1.05, 0.01).optimized_is_faster);
  // Slower in onnxruntime beyond the margin loses whatever the executor says.
  const EndToEndDecision slower = decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.5, 0.97, 0.01);
  EXPECT_FALSE(slower.optimized_is_faster);
  EXPECT_NE(slower.verdict.find("slower beyond"), std::string::npos) << slower.verdict;
  // A tie: the executor decides.
  const EndToEndDecision tie_won = decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.08, 0.995, 0.01);
  EXPECT_TRUE(tie_won.optimized_is_faster);
  EXPECT_NE(tie_won.verdict.find("tie"), std::string::npos) << tie_won.verdict;
  EXPECT_FALSE(decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.0, 1.005, 0.01).optimized_is_faster);
}

// A tie whose graphs inside onnxruntime differ may be a loss: the original
// is kept. The same graph there makes the tie noise, and the executor decides.
TEST(EndToEndDecision, ATieIsTakenOnlyWhereOnnxRuntimeRunsTheSameGraph) {
  const EndToEndDecision differs =
      decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.08, 0.995, 0.01, std::string("MatMul 48→32, Split 0→16"));
  EXPECT_FALSE(differs.optimized_is_faster);
  EXPECT_NE(differs.verdict.find("differs from the original's (MatMul 48→32, Split 0→16)"), std::string::npos)
      << differs.verdict;
  const EndToEndDecision same = decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.08, 0.995, 0.01, std::string());
  EXPECT_TRUE(same.optimized_is_faster);
  EXPECT_NE(same.verdict.find("same graph"), std::string::npos) << same.verdict;
  // Outside the tie band the graphs do not matter.
  EXPECT_TRUE(decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.0, 1.05, 0.01, std::string("Conv 46→53"))
                  .optimized_is_faster);
  EXPECT_TRUE(onnxruntime_tie(0.995, 0.01));
  EXPECT_TRUE(onnxruntime_tie(0.99, 0.01));
  EXPECT_FALSE(onnxruntime_tie(1.01, 0.01));
  EXPECT_FALSE(onnxruntime_tie(0.98, 0.01));
}

// Two convs of one input against the same convs merged and split: onnxruntime
// keeps the Split, so its graphs differ; a model against itself does not.
TEST(OnnxRuntimeGraphs, SameModelIsTheSameGraphAndAMergeIsNot) {
  using Ints = std::vector<int64_t>;
  auto build = [](bool merged) {
    GraphBuilder b(5);
    TensorRef x = b.input("x", {1, 8, 10, 10});
    const Attributes pads = {{AttrKey::Pads, Ints{1, 1, 1, 1}}};
    if (merged) {
      auto halves = b.add(OpType::Split, {b.add1(OpType::Conv, {x, b.random_weight({32, 8, 3, 3}, -1, 1)}, pads)},
                          {{AttrKey::Axis, int64_t{1}}, {AttrKey::Split, Ints{16, 16}}});
      b.output(halves[0], "a");
      b.output(halves[1], "b");
    } else {
      b.output(b.add1(OpType::Conv, {x, b.random_weight({16, 8, 3, 3}, -1, 1)}, pads), "a");
      b.output(b.add1(OpType::Conv, {x, b.random_weight({16, 8, 3, 3}, -1, 1)}, pads), "b");
    }
    return b.finish();
  };
  ExportOptions as_searched;
  as_searched.spell_for_fusing_runtimes = false;  // keep the merge and its Split
  const std::string apart = testing::scratch_dir() + "/two-convs.onnx";
  const std::string merged = testing::scratch_dir() + "/merged-convs.onnx";
  export_onnx_file(build(false), apart, as_searched);
  export_onnx_file(build(true), merged, as_searched);
  EXPECT_EQ(compare_onnxruntime_graphs(apart, apart), "");
  const std::string difference = compare_onnxruntime_graphs(apart, merged);
  EXPECT_NE(difference.find("Split 0→1"), std::string::npos) << difference;
  EXPECT_FALSE(std::filesystem::exists(merged + ".ort-original.tmp")) << "temporary files are removed";
  EXPECT_FALSE(std::filesystem::exists(merged + ".ort-optimized.tmp"));
}

TEST(EndToEndDecision, RuntimeNamesParseAndBadOnesAreErrors) {
  EXPECT_EQ(parse_verify_runtime("executor"), VerifyRuntime::Executor);
  EXPECT_EQ(parse_verify_runtime("onnxruntime"), VerifyRuntime::OnnxRuntime);
  EXPECT_EQ(parse_verify_runtime("none"), VerifyRuntime::None);
  EXPECT_THROW(parse_verify_runtime("tensorrt"), UsageError);
  EXPECT_STREQ(verify_runtime_name(VerifyRuntime::OnnxRuntime), "onnxruntime");
}

}  // namespace
}  // namespace graphworld
