// optimize's end-to-end decision, apart from any timing.
#include <gtest/gtest.h>

#include "common/error.h"
#include "launch/end_to_end_check.h"

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

TEST(EndToEndDecision, RuntimeNamesParseAndBadOnesAreErrors) {
  EXPECT_EQ(parse_verify_runtime("executor"), VerifyRuntime::Executor);
  EXPECT_EQ(parse_verify_runtime("onnxruntime"), VerifyRuntime::OnnxRuntime);
  EXPECT_EQ(parse_verify_runtime("none"), VerifyRuntime::None);
  EXPECT_THROW(parse_verify_runtime("tensorrt"), UsageError);
  EXPECT_STREQ(verify_runtime_name(VerifyRuntime::OnnxRuntime), "onnxruntime");
}

}  // namespace
}  // namespace graphworld
