// optimize's end-to-end decision, apart from any timing, and the
// comparison of the graphs onnxruntime runs that decides its ties.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/error.h"
#include "env/onnx/onnx_export.h"
#include "env/ops/graph_builder.h"
#include "launch/pipeline/end_to_end_check.h"
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
  EXPECT_NE(differs.verdict.find("other ops than the original's (MatMul 48→32, Split 0→16), so the tie may be a loss"),
            std::string::npos)
      << differs.verdict;
  // A long difference is kept whole in the verdict (no fixed-size buffer).
  const std::string long_difference(2000, 'x');
  EXPECT_NE(decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.08, 0.995, 0.01, long_difference)
                .verdict.find(long_difference + "), so the tie may be a loss"),
            std::string::npos);
  const EndToEndDecision same = decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.08, 0.995, 0.01, std::string());
  EXPECT_TRUE(same.optimized_is_faster);
  EXPECT_NE(same.verdict.find("same ops"), std::string::npos) << same.verdict;
  // Outside the tie band the graphs do not matter.
  EXPECT_TRUE(decide_end_to_end(VerifyRuntime::OnnxRuntime, 1.0, 1.05, 0.01, std::string("Conv 46→53"))
                  .optimized_is_faster);
  EXPECT_TRUE(onnxruntime_tie(0.995, 0.01));
  EXPECT_TRUE(onnxruntime_tie(0.99, 0.01));
  EXPECT_FALSE(onnxruntime_tie(1.01, 0.01));
  EXPECT_FALSE(onnxruntime_tie(0.98, 0.01));
  // onnxruntime's graphs are compared only for a tie the executor would take.
  EXPECT_TRUE(needs_onnxruntime_graphs(0.995, 1.08, 0.01));
  EXPECT_FALSE(needs_onnxruntime_graphs(0.995, 1.005, 0.01)) << "the executor does not take it anyway";
  EXPECT_FALSE(needs_onnxruntime_graphs(1.05, 1.08, 0.01)) << "faster in onnxruntime: no tie";
  EXPECT_FALSE(needs_onnxruntime_graphs(0.95, 1.08, 0.01)) << "slower in onnxruntime: no tie";
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

// A conv with its BatchNorm and Relu, against the same conv with the
// BatchNorm folded: onnxruntime folds and fuses the first itself, so it runs
// the same ops for both, the tie optimize takes. A missing file is an Error.
TEST(OnnxRuntimeGraphs, AFoldOnnxRuntimeMakesItselfGivesTheSameOps) {
  using Ints = std::vector<int64_t>;
  GraphBuilder b(9);
  TensorRef x = b.input("x", {1, 8, 10, 10});
  TensorRef conv = b.add1(OpType::Conv, {x, b.random_weight({16, 8, 3, 3}, -1, 1)}, {{AttrKey::Pads, Ints{1, 1, 1, 1}}});
  TensorRef bn = b.add1(OpType::BatchNorm,
                        {conv, b.random_weight({16}, 0.5f, 1.5f), b.random_weight({16}, -1, 1),
                         b.random_weight({16}, -1, 1), b.random_weight({16}, 0.5f, 1.5f)},
                        {{AttrKey::Epsilon, 1e-5}});
  b.output(b.add1(OpType::Relu, {bn}), "y");
  const Graph with_bn = b.finish();
  GraphBuilder f(9);
  TensorRef fx = f.input("x", {1, 8, 10, 10});
  f.output(f.add1(OpType::Relu, {f.add1(OpType::Conv,
                                        {fx, f.random_weight({16, 8, 3, 3}, -1, 1), f.random_weight({16}, -1, 1)},
                                        {{AttrKey::Pads, Ints{1, 1, 1, 1}}})}),
           "y");
  const std::string bn_file = testing::scratch_dir() + "/conv-bn-relu.onnx";
  const std::string folded_file = testing::scratch_dir() + "/conv-relu.onnx";
  export_onnx_file(with_bn, bn_file);
  export_onnx_file(f.finish(), folded_file);
  EXPECT_EQ(compare_onnxruntime_graphs(bn_file, folded_file), "");
  EXPECT_THROW(compare_onnxruntime_graphs(bn_file, testing::scratch_dir() + "/no-such-model.onnx"), Error);
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
