// graphworld evaluate, run as a user runs it: a real (tiny) trained policy
// evaluated against the searches, and a result that is not equivalent
// refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "env/rules/rule_library.h"
#include "env/rules/rule_writer.h"
#include "tests/launch/trained_run_support.h"

namespace graphworld::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(EvaluateCli, ARealPolicyAgainstTheSearchesGivesEveryKey) {
  const TrainedRun& t = model_free_run();
  std::string out;
  const std::string command = "evaluate " + t.policy + " squeezenet1.1 resnet18 --rates " + gpu_rates() +
                              " --budget 30 --greedy-budget 30 --latency-rounds 1 --json --quiet";
  ASSERT_EQ(run_command(graphworld_binary() + " " + command + " 2>/dev/null", &out), 0) << out;
  const json result = json::parse(out);
  for (const char* key : {"policy", "cost_model", "rollouts", "max_steps", "greedy_budget", "taso_budget", "alpha",
                          "seed", "tolerance", "onnxruntime_threads", "peak_rss_mib", "models"})
    EXPECT_TRUE(result.contains(key)) << key << " missing in " << out;
  ASSERT_EQ(result["models"].size(), 2u);
  for (const json& model : result["models"]) {
    for (const char* key : {"model", "ops", "original_cost_ms", "methods"})
      EXPECT_TRUE(model.contains(key)) << key << " missing in " << model.dump();
    for (const char* method : {"policy", "greedy", "taso"}) {
      ASSERT_TRUE(model["methods"].contains(method)) << method;
      const json& m = model["methods"][method];
      for (const char* key : {"optimized_cost_ms", "reduction_pct", "applied", "steps", "optimize_s", "check_s",
                              "equivalent", "executor_max_rel_err", "onnxruntime_max_rel_err",
                              "onnxruntime_opt_off_original_ms", "onnxruntime_opt_off_optimized_ms",
                              "onnxruntime_opt_off_speedup", "onnxruntime_opt_on_original_ms",
                              "onnxruntime_opt_on_optimized_ms", "onnxruntime_opt_on_speedup"})
        ASSERT_TRUE(m.contains(key)) << method << "." << key << " missing in " << m.dump();
      EXPECT_TRUE(m["equivalent"].get<bool>());
      EXPECT_LE(m["onnxruntime_max_rel_err"].get<double>(), 1e-3) << method;
      EXPECT_GT(m["onnxruntime_opt_on_original_ms"].get<double>(), 0) << method;
      EXPECT_GT(m["onnxruntime_opt_off_optimized_ms"].get<double>(), 0) << method;
      // The cost is the cost model's: the reduction follows from the two costs.
      const double original = model["original_cost_ms"].get<double>(), optimized = m["optimized_cost_ms"].get<double>();
      EXPECT_NEAR(m["reduction_pct"].get<double>(), 100.0 * (original - optimized) / original, 1e-6);
      EXPECT_LE(optimized, original * (1 + 1e-9)) << method;
    }
    // Under the GPU-like rates TASO's search finds something on both.
    EXPECT_GT(model["methods"]["taso"]["reduction_pct"].get<double>(), 1.0) << model["model"];
    EXPECT_FALSE(model["methods"]["taso"]["applied"].empty());
  }
}

// A library with an unsound rule (Relu dropped): a policy trained with it
// and the searches make graphs that compute something else, and evaluate
// must refuse to report them.
TEST(EvaluateCli, RefusesAResultThatIsNotEquivalent) {
  RuleWriter w("drop-relu", "planted");
  PatternRef x = w.var("x", {w.dim("n"), w.dim("s"), w.dim("h")});  // BERT's feed-forward Relu
  w.output(w.source(OpType::Relu, {x}), x);
  RuleLibrary library;
  library.description = "an unsound rule, for a test";
  library.rules.push_back(w.finish());
  const std::string rules = scratch_dir() + "/evaluate-unsound.rules";
  save_rule_library(library, rules);
  const std::string run = scratch_dir() + "/evaluate-unsound-run", policy = scratch_dir() + "/evaluate-unsound.gwpolicy";
  fs::remove_all(run);
  std::string out;
  ASSERT_EQ(gw("train --inline " + source_dir() + "/configs/train.yaml --run " + run + kSmall +
                   " train.graphs=[bert] train.total_env_steps=64 env.rules=" + rules,
               &out),
            0)
      << out;
  ASSERT_EQ(gw("policy export " + run + " -o " + policy, &out), 0) << out;
  std::string stdout_only;
  EXPECT_EQ(run_command(graphworld_binary() + " evaluate " + policy + " bert --rules " + rules +
                            " --no-onnxruntime --budget 5 --greedy-budget 5 --json --quiet 2>/dev/null",
                        &stdout_only),
            2);
  EXPECT_EQ(stdout_only.find("\"models\""), std::string::npos) << "a result was reported: " << stdout_only;
  EXPECT_EQ(gw("evaluate " + policy + " bert --rules " + rules + " --no-onnxruntime --json --quiet", &out), 2);
  EXPECT_NE(out.find("does not compute what the original computes"), std::string::npos) << out;
  EXPECT_NE(out.find("drop-relu"), std::string::npos) << "the rule is not named: " << out;
}

TEST(EvaluateCli, BadArgumentsAreClearErrors) {
  std::string out;
  EXPECT_EQ(gw("evaluate", &out), 2);
  EXPECT_NE(out.find("POLICY"), std::string::npos) << out;
  EXPECT_EQ(gw("evaluate " + model_free_run().policy, &out), 2);
  EXPECT_NE(out.find("at least one MODEL"), std::string::npos) << out;
  EXPECT_EQ(gw("evaluate " + model_free_run().policy + " no-such-model", &out), 2);
  EXPECT_NE(out.find("no-such-model"), std::string::npos) << out;
}

}  // namespace
}  // namespace graphworld::testing
