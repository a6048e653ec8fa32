// graphworld optimize and env-bench, run as a user runs them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/graph_builder.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_writer.h"
#include "tests/launch/cli_test_support.h"

namespace graphworld {
namespace {

using testing::gw;
using testing::expect_keys;

// torchvision exports, optimised and written; onnxruntime must agree.
TEST(OptimizeCli, WritesAnEquivalentFasterModel) {
  for (const char* model : {"squeezenet1_1", "resnet18_bn"}) {
    const std::string in = testing::model_path(std::string(model) + ".onnx");
    const std::string out_file = testing::scratch_dir() + "/optimized-" + model + ".onnx";
    std::string out;
    ASSERT_EQ(gw("optimize " + in + " -o " + out_file + " --budget 15 --json", &out), 0) << out;
    expect_keys(out, {"original_cost", "optimized_cost", "reduction_pct", "applied", "search_s"});
    ASSERT_TRUE(std::filesystem::exists(out_file)) << out;
    const testing::OrtComparison cmp = testing::ort_compare(in, out_file);
    EXPECT_GE(cmp.outputs, 1);
    EXPECT_LE(cmp.max_rel_err, 1e-4) << model;
  }
}

TEST(OptimizeCli, HumanSummaryNamesTheSubstitutions) {
  const std::string out_file = testing::scratch_dir() + "/optimized-bert.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize bert -o " + out_file + " --search greedy --budget 10", &out), 0) << out;
  for (const char* words : {"original cost", "optimised cost", "substitutions", "equivalence", "wrote"})
    EXPECT_NE(out.find(words), std::string::npos) << words << " missing in " << out;
  EXPECT_NE(out.find("graphs explored"), std::string::npos) << "no progress line in " << out;
}

// A library holding an unsound rule (Relu dropped) makes a cheaper graph
// that computes something else: optimize must refuse to write it.
TEST(OptimizeCli, RefusesToWriteAGraphThatIsNotEquivalent) {
  RuleWriter w("drop-relu", "planted");
  PatternRef x = w.var("x", {w.dim("n"), w.dim("s"), w.dim("h")});
  w.output(w.source(OpType::Relu, {x}), x);
  RuleLibrary library;
  library.description = "an unsound rule, for a test";
  library.rules.push_back(w.finish());
  const std::string rules = testing::scratch_dir() + "/unsound.rules";
  save_rule_library(library, rules);
  const std::string out_file = testing::scratch_dir() + "/must-not-exist.onnx";
  std::string out;
  EXPECT_EQ(gw("optimize bert -o " + out_file + " --rules " + rules + " --search greedy --budget 5", &out), 2)
      << out;
  EXPECT_NE(out.find("does not compute what"), std::string::npos) << out;
  EXPECT_NE(out.find("not writing"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(out_file));
}

// The end-to-end gate: with a noise margin no rewrite can clear (it would
// need to be twice as fast), optimize keeps the original, byte for byte,
// and says so.
TEST(OptimizeCli, KeepsTheOriginalWhenTheResultIsNotFasterEndToEnd) {
  const std::string in = testing::model_path("resnet18_bn.onnx");
  const std::string out_file = testing::scratch_dir() + "/kept-resnet18.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize " + in + " -o " + out_file + " --budget 10 --noise-margin 0.99 --verify-rounds 5 --json", &out), 0)
      << out;
  expect_keys(out, {"verify_runtime", "noise_margin", "executor_speedup", "executor_original_ms",
                    "executor_optimized_ms", "onnxruntime_speedup", "written", "verdict"});
  EXPECT_NE(out.find("\"written\":\"original\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"onnxruntime_speedup\":null"), std::string::npos) << out;
  EXPECT_NE(out.find("not faster"), std::string::npos) << out;
  EXPECT_EQ(testing::file_difference(out_file, in), "") << "the original must be kept byte for byte";
  // The human summary says it too.
  ASSERT_EQ(gw("optimize " + in + " -o " + out_file + " --budget 10 --noise-margin 0.99 --verify-rounds 5", &out), 0);
  EXPECT_NE(out.find("kept original"), std::string::npos) << out;
  EXPECT_NE(out.find("end to end"), std::string::npos) << out;
}

// With onnxruntime deciding, both speedups are reported and what is written
// still computes what the input computes, in onnxruntime.
TEST(OptimizeCli, VerifiesInOnnxRuntimeWhenAsked) {
  const std::string in = testing::model_path("resnet18_bn.onnx");
  const std::string out_file = testing::scratch_dir() + "/verified-resnet18.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize " + in + " -o " + out_file + " --budget 10 --verify-runtime onnxruntime --verify-rounds 2 --json",
               &out),
            0)
      << out;
  EXPECT_NE(out.find("\"verify_runtime\":\"onnxruntime\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"onnxruntime_speedup\":null"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"executor_speedup\":null"), std::string::npos) << out;
  const bool optimized = out.find("\"written\":\"optimized\"") != std::string::npos;
  EXPECT_TRUE(optimized || out.find("\"written\":\"original\"") != std::string::npos) << out;
  const testing::OrtComparison cmp = testing::ort_compare(in, out_file);
  EXPECT_LE(cmp.max_rel_err, 1e-4);
  for (const auto& entry : std::filesystem::directory_iterator(testing::scratch_dir()))
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << "temporary file left: " << entry.path();
}

// --verify-runtime none writes the search's result without timing it.
TEST(OptimizeCli, VerifyRuntimeNoneWritesTheResultUntimed) {
  const std::string out_file = testing::scratch_dir() + "/untimed-nasrnn.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize nasrnn -o " + out_file + " --budget 5 --verify-runtime none --json", &out), 0) << out;
  EXPECT_NE(out.find("\"written\":\"optimized\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"executor_speedup\":null"), std::string::npos) << out;
  const std::string reference = testing::scratch_dir() + "/nasrnn-untimed-reference.onnx";
  ASSERT_EQ(gw("zoo nasrnn -o " + reference, &out), 0) << out;
  EXPECT_NE(testing::file_difference(out_file, reference), "");
  EXPECT_LE(testing::ort_compare(reference, out_file).max_rel_err, 1e-4);
}

// A grouped conv of narrow groups (ResNeXt's 4 channels per group) with no
// rewrite to apply: the spelling alone changes the file, which is then
// checked and written like a search's result; as searched, nothing changes
// and the original is kept.
TEST(OptimizeCli, RespellsNarrowGroupedConvsWithoutARewrite) {
  GraphBuilder b(21);
  TensorRef x = b.input("x", {1, 32, 8, 8});
  b.output(b.add1(OpType::Conv, {x, b.random_weight({32, 4, 3, 3}, -1, 1), b.random_weight({32}, -1, 1)},
                  {{AttrKey::Group, int64_t{8}}, {AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}}),
           "y");
  ExportOptions as_searched;
  as_searched.spell_for_fusing_runtimes = false;
  const std::string in = testing::scratch_dir() + "/narrow-groups.onnx";
  export_onnx_file(b.finish(), in, as_searched);
  const std::string out_file = testing::scratch_dir() + "/narrow-groups-respelled.onnx";
  std::string out;
  // The groups a written conv has, for each channel block aimed at.
  auto written_groups = [&](const std::string& block) -> std::vector<int64_t> {
    if (gw("optimize " + in + " -o " + out_file + " --budget 0 --verify-runtime none --channel-block " + block +
               " --json",
           &out) != 0) {
      ADD_FAILURE() << "--channel-block " << block << ": " << out;
      return {};
    }
    EXPECT_NE(out.find("\"applied\":{}"), std::string::npos) << out;
    EXPECT_NE(out.find("\"regrouped_convs\":1"), std::string::npos) << out;
    EXPECT_NE(out.find("\"channel_block\":" + block), std::string::npos) << out;
    EXPECT_NE(out.find("\"written\":\"optimized\""), std::string::npos) << out;
    const Graph written = import_onnx_file(out_file);
    std::vector<int64_t> groups;
    for (OpId id = 0; id < static_cast<OpId>(written.num_ops()); ++id)
      if (written.op(id).type == OpType::Conv) groups.push_back(written.op(id).attrs.get_int(AttrKey::Group, 1));
    EXPECT_LE(testing::ort_compare(in, out_file).max_rel_err, 1e-4);
    return groups;
  };
  EXPECT_EQ(written_groups("16"), std::vector<int64_t>{2}) << "8 groups of 4 written as 2 groups of 16 (AVX-512)";
  EXPECT_EQ(written_groups("8"), std::vector<int64_t>{4}) << "8 groups of 4 written as 4 groups of 8 (AVX2)";
  ASSERT_EQ(gw("optimize " + in + " -o " + out_file + " --budget 0 --channel-block none --json", &out), 0) << out;
  EXPECT_NE(out.find("\"channel_block\":0"), std::string::npos) << out;
  EXPECT_NE(out.find("the spelling changed nothing"), std::string::npos) << out;
  EXPECT_EQ(testing::file_difference(out_file, in), "");
  EXPECT_EQ(gw("optimize " + in + " -o " + out_file + " --spelling as-searched --channel-block 8", &out), 2);
  EXPECT_NE(out.find("give one of them"), std::string::npos) << out;
  ASSERT_EQ(gw("optimize " + in + " -o " + out_file + " --budget 0 --spelling as-searched --json", &out), 0) << out;
  EXPECT_NE(out.find("\"regrouped_convs\":0"), std::string::npos) << out;
  EXPECT_NE(out.find("the spelling changed nothing"), std::string::npos) << out;
  EXPECT_EQ(testing::file_difference(out_file, in), "");
  // Other exports keep the graph's groups: the zoo's ResNeXt-50 is 32 groups throughout.
  const std::string zoo_file = testing::scratch_dir() + "/resnext50-zoo.onnx";
  ASSERT_EQ(gw("zoo resnext50 -o " + zoo_file, &out), 0) << out;
  const Graph zoo = import_onnx_file(zoo_file);
  int grouped = 0;
  for (OpId id = 0; id < static_cast<OpId>(zoo.num_ops()); ++id) {
    const int64_t groups = zoo.op(id).attrs.get_int(AttrKey::Group, 1);
    if (zoo.op(id).type != OpType::Conv || groups == 1) continue;
    ++grouped;
    EXPECT_EQ(groups, 32);
  }
  EXPECT_EQ(grouped, 16);
}

// A zoo graph has no input file: keeping the original writes its export.
TEST(OptimizeCli, KeepsAZooOriginalAsItsExport) {
  const std::string out_file = testing::scratch_dir() + "/kept-nasrnn.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize nasrnn -o " + out_file + " --budget 5 --noise-margin 0.99 --verify-rounds 5 --json", &out), 0)
      << out;
  EXPECT_NE(out.find("\"written\":\"original\""), std::string::npos) << out;
  EXPECT_NE(out.find("not faster:"), std::string::npos) << "the search must have found rewrites: " << out;
  EXPECT_EQ(out.find("\"executor_speedup\":null"), std::string::npos) << out;
  const std::string reference = testing::scratch_dir() + "/nasrnn-reference.onnx";
  ASSERT_EQ(gw("zoo nasrnn -o " + reference, &out), 0) << out;
  EXPECT_EQ(testing::file_difference(out_file, reference), "");
}

TEST(OptimizeCli, BadArgumentsAreClearErrors) {
  std::string out;
  EXPECT_EQ(gw("optimize squeezenet1.1 -o " + testing::scratch_dir() + "/never.onnx --channel-block 12", &out), 2);
  EXPECT_NE(out.find("--channel-block must be auto, 16 (AVX-512), 8 (AVX2) or none, got '12'"), std::string::npos)
      << out;
  EXPECT_EQ(gw("optimize bert", &out), 2);
  EXPECT_NE(out.find("-o OUT.onnx"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize bert -o /tmp/x.onnx --search anneal", &out), 2);
  EXPECT_NE(out.find("unknown search 'anneal'"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize bert -o /tmp/x.onnx --alpha 0.5", &out), 2);
  EXPECT_NE(out.find("alpha"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize no_such_model.onnx -o /tmp/x.onnx", &out), 2);
  EXPECT_EQ(gw("optimize bert -o /tmp/x.onnx --verify-runtime tensorrt", &out), 2);
  EXPECT_NE(out.find("--verify-runtime must be executor, onnxruntime or none"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize bert -o /tmp/x.onnx --noise-margin 1.5", &out), 2);
  EXPECT_NE(out.find("--noise-margin"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize bert -o /tmp/x.onnx --spelling tensorrt", &out), 2);
  EXPECT_NE(out.find("--spelling must be"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize bert -o /tmp/x.onnx --verify-rounds 0", &out), 2);
  EXPECT_NE(out.find("--verify-rounds"), std::string::npos) << out;
}

// With --cost gpu the file is judged on the GPU's terms: written as
// searched, no CPU timing, the equivalence check kept.
TEST(OptimizeCli, ForAGpuTheFileIsWrittenAsSearchedAndNotTimedOnThisCpu) {
  const std::string out_file = testing::scratch_dir() + "/bert-gpu.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize bert -o " + out_file + " --cost gpu --gpu-table none --budget 50 --json", &out), 0) << out;
  EXPECT_NE(out.find("\"cost_model\":\"gpu\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"spelling\":\"as-searched\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"verify_runtime\":\"none\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"channel_block\":0"), std::string::npos) << out;
  EXPECT_NE(out.find("\"max_rel_err\":"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::exists(out_file));
  EXPECT_EQ(gw("optimize bert -o " + out_file + " --cost gpu --channel-block 8", &out), 2);
  EXPECT_NE(out.find("the default with --cost gpu"), std::string::npos) << out;
}

// The shipped GPU policy is priced for the GPU it was trained for, as a
// file optimised for that GPU, unless --cost says otherwise; a missing one
// says how to rebuild it. Acting with it prints no LibTorch warnings.
TEST(OptimizeCli, TheDefaultGpuPolicyIsPricedForItsGpu) {
  const std::string out_file = testing::scratch_dir() + "/squeezenet-default-gpu.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize squeezenet1.1 -o " + out_file + " --policy default-gpu --json", &out), 0) << out;
  EXPECT_NE(out.find("\"cost_model\":\"gpu\""), std::string::npos) << out;
  // Its location-reward heads print nothing of LibTorch's (a beta op's
  // warning went to stderr on every run).
  EXPECT_EQ(out.find("Warning"), std::string::npos) << out;
  EXPECT_NE(out.find("\"spelling\":\"as-searched\""), std::string::npos) << out;
  EXPECT_NE(out.find("\"verify_runtime\":\"none\""), std::string::npos) << out;
  EXPECT_NE(out.find("default-gpu.gwpolicy"), std::string::npos) << out;
  ASSERT_EQ(gw("optimize squeezenet1.1 -o " + out_file + " --policy default-gpu --cost analytic --verify-runtime none --json",
               &out),
            0)
      << out;
  EXPECT_NE(out.find("\"cost_model\":\"analytic\""), std::string::npos) << out;
  ASSERT_EQ(gw("optimize squeezenet1.1 -o " + out_file + " --policy default --verify-runtime none --json", &out), 0) << out;
  EXPECT_NE(out.find("\"cost_model\":\"analytic\""), std::string::npos) << "the CPU default policy stays analytic: " << out;
  const std::string empty = testing::scratch_dir() + "/no-policies";
  std::filesystem::create_directories(empty);
  EXPECT_EQ(testing::run_command("GRAPHWORLD_POLICY_DIR=" + empty + " " + testing::graphworld_binary() +
                                     " optimize squeezenet1.1 -o " + out_file + " --policy default-gpu",
                                 &out),
            2);
  EXPECT_NE(out.find("policies/train-default gpu"), std::string::npos) << out;
}

// A policy's result is finished greedily unless --finish none; the JSON
// keeps what the policy alone reached. --finish belongs to --policy.
TEST(OptimizeCli, APolicyIsFinishedGreedilyUnlessToldNot) {
  const std::string out_file = testing::scratch_dir() + "/resnet18-finish.onnx";
  std::string out;
  ASSERT_EQ(gw("optimize resnet18 -o " + out_file + " --policy default --verify-runtime none --rollout-time 0 --json",
               &out),
            0)
      << out;
  EXPECT_NE(out.find("\"finish\":{\"steps\":"), std::string::npos) << out;
  expect_keys(out, {"agent_cost", "agent_reduction_pct"});
  ASSERT_EQ(gw("optimize resnet18 -o " + out_file + " --policy default --verify-runtime none --rollout-time 0 "
               "--finish none --json",
               &out),
            0)
      << out;
  EXPECT_NE(out.find("\"finish\":null"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize resnet18 -o " + out_file + " --policy default --finish later", &out), 2);
  EXPECT_NE(out.find("--finish must be greedy"), std::string::npos) << out;
  EXPECT_EQ(gw("optimize resnet18 -o " + out_file + " --search greedy --finish none", &out), 2);
  EXPECT_NE(out.find("apply to --policy"), std::string::npos) << out;
}

TEST(EnvBenchCli, PrintsStepAndResetTimes) {
  std::string out;
  ASSERT_EQ(gw("env-bench resnet18 --steps 20 --json", &out), 0) << out;
  expect_keys(out, {"step_median_ms", "step_p99_ms", "reset_ms", "steps"});
  EXPECT_NE(out.find("\"steps\":20"), std::string::npos) << out;
  EXPECT_EQ(gw("env-bench resnet18 --steps 0", &out), 2);
}

// --envs: environments stepped together on threads, as Python's VectorEnv
// steps them; steps of every environment counted.
TEST(EnvBenchCli, StepsEnvironmentsTogetherOnThreads) {
  std::string out;
  ASSERT_EQ(gw("env-bench squeezenet1.1 --envs 4 --threads 2 --steps 40 --max-steps 5 --json", &out), 0) << out;
  expect_keys(out, {"steps_per_s", "envs", "threads", "episodes", "seconds"});
  EXPECT_NE(out.find("\"steps\":40"), std::string::npos) << out;
  EXPECT_NE(out.find("\"envs\":4"), std::string::npos) << out;
  EXPECT_EQ(out.find("\"episodes\":0,"), std::string::npos) << "5-step episodes over 10 steps each end\n" << out;
  EXPECT_EQ(gw("env-bench squeezenet1.1 --envs 0", &out), 2) << out;
  EXPECT_NE(out.find("--envs must be in [1, 4096]"), std::string::npos) << out;
  EXPECT_EQ(gw("env-bench squeezenet1.1 --envs 2 --threads 0", &out), 2) << out;
  EXPECT_NE(out.find("--threads must be in [1, 256]"), std::string::npos) << out;
}

}  // namespace
}  // namespace graphworld
