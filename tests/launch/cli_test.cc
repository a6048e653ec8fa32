// The graphworld binary, run as a user runs it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "tests/launch/cli_test_support.h"

namespace graphworld {
namespace {

using testing::gw;
using testing::expect_keys;

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* command : {"optimize", "train", "policy", "env-bench", "import", "run", "check", "zoo", "cost", "calibrate", "rules", "devices", "bench"}) {
    std::string out;
    EXPECT_EQ(gw(std::string(command) + " --help", &out), 0) << command;
    EXPECT_NE(out.find(std::string("usage: graphworld ") + command), std::string::npos) << out;
  }
  std::string out;
  EXPECT_EQ(gw("--help", &out), 0);
  EXPECT_NE(out.find("import"), std::string::npos);
}

// rules select keeps exactly the named rules, and a search with them
// applies only those; an unknown name is refused with the name.
TEST(Cli, RulesSelectWritesALibraryOfTheNamedRules) {
  const std::string library = testing::scratch_dir() + "/cli_fold.rules";
  std::string out;
  ASSERT_EQ(gw("rules select --rule fold-conv-batchnorm,fuse-conv-bias-relu -o " + library, &out), 0) << out;
  EXPECT_NE(out.find("wrote 2 of "), std::string::npos) << out;
  ASSERT_EQ(gw("rules stats " + library, &out), 0) << out;
  EXPECT_NE(out.find("2 rules: 2 hand-written"), std::string::npos) << out;
  ASSERT_EQ(gw("optimize resnet18 -o " + testing::scratch_dir() + "/cli_fold.onnx --search greedy --rules " + library +
                   " --verify-runtime none --json -q",
               &out),
            0)
      << out;
  EXPECT_NE(out.find("\"fold-conv-batchnorm\":"), std::string::npos) << out;
  for (const char* other : {"merge-parallel-convs", "fuse-conv-relu\""})
    EXPECT_EQ(out.find(other), std::string::npos) << other << " applied with a library that lacks it: " << out;
  EXPECT_NE(gw("rules select --rule no-such-rule -o " + library, &out), 0);
  EXPECT_NE(out.find("no rule named 'no-such-rule'"), std::string::npos) << out;
}

TEST(Cli, ImportJsonAndRoundTrip) {
  std::string out;
  std::string exported = testing::scratch_dir() + "/cli_resnet18.onnx";
  ASSERT_EQ(gw("import " + testing::model_path("resnet18_folded.onnx") + " -o " + exported + " --json", &out), 0) << out;
  expect_keys(out, {"ops", "op_types", "inputs", "outputs", "params", "flops"});
  EXPECT_NE(out.find("\"Conv\":20"), std::string::npos) << out;
  // torchvision's 11,689,512 less the 9,600 BatchNorm parameters, plus the
  // 4,800 conv biases the exporter's BN folding adds.
  EXPECT_NE(out.find("\"params\":11684712"), std::string::npos) << out;
  ASSERT_EQ(gw("check " + testing::model_path("resnet18_folded.onnx") + " " + exported + " --json", &out), 0) << out;
  expect_keys(out, {"max_abs_err", "max_rel_err", "equivalent"});
  EXPECT_NE(out.find("\"equivalent\":true"), std::string::npos) << out;
}

TEST(Cli, RunReportsLatencyPercentiles) {
  std::string out;
  ASSERT_EQ(gw("run " + testing::model_path("mlp.onnx") + " --iters 5 --threads 1 --json", &out), 0) << out;
  expect_keys(out, {"median_ms", "p10_ms", "p90_ms"});
  ASSERT_EQ(gw("run nasrnn --iters 2 --threads 1", &out), 0) << out;
  EXPECT_NE(out.find("median"), std::string::npos);
}

TEST(Cli, CheckSaysNotEquivalentWithExitStatusOne) {
  std::string a = testing::scratch_dir() + "/cli_seed0.onnx", b = testing::scratch_dir() + "/cli_seed1.onnx";
  std::string out;
  ASSERT_EQ(gw("zoo nasrnn -o " + a, &out), 0) << out;
  ASSERT_EQ(gw("zoo nasrnn --seed 1 -o " + b, &out), 0) << out;
  EXPECT_EQ(gw("check " + a + " " + b + " --json", &out), 1) << out;
  EXPECT_NE(out.find("\"equivalent\":false"), std::string::npos) << out;
  EXPECT_EQ(gw("check " + a + " " + a, &out), 0) << out;
}

TEST(Cli, ZooListsModelsAndWritesOnnx) {
  std::string out;
  ASSERT_EQ(gw("zoo --list", &out), 0);
  for (const char* name : {"bert", "resnet50", "squeezenet1.1", "inceptionv3", "resnext50", "nasnet-a", "nasrnn", "vit-base"})
    EXPECT_NE(out.find(name), std::string::npos) << name;
  std::string path = testing::scratch_dir() + "/cli_squeezenet.onnx";
  ASSERT_EQ(gw("zoo squeezenet1.1 -o " + path, &out), 0) << out;
  ASSERT_EQ(gw("import " + path + " --json", &out), 0) << out;
  EXPECT_NE(out.find("\"Concat\":8"), std::string::npos) << out;
}

TEST(Cli, BadInputGivesOneClearLineAndStatusTwo) {
  std::string out;
  EXPECT_EQ(gw("import /no/such/model.onnx", &out), 2);
  EXPECT_NE(out.find("cannot open"), std::string::npos) << out;
  EXPECT_EQ(gw("import not-a-zoo-model", &out), 2);
  EXPECT_NE(out.find("neither an ONNX file nor a zoo model"), std::string::npos) << out;
  EXPECT_EQ(gw("run mlp --iters nope", &out), 2);
  EXPECT_NE(out.find("expects an integer"), std::string::npos) << out;
  EXPECT_EQ(gw("run --bogus", &out), 2);
  EXPECT_NE(out.find("unknown option '--bogus'"), std::string::npos) << out;
  EXPECT_EQ(gw("frobnicate", &out), 2);
  std::string garbage = testing::scratch_dir() + "/garbage.onnx";
  ASSERT_EQ(testing::run_command("head -c 3000 /dev/urandom > " + garbage, nullptr), 0);
  EXPECT_EQ(gw("import " + garbage, &out), 2);
  EXPECT_NE(out.find("not a valid ONNX model"), std::string::npos) << out;
  EXPECT_EQ(out.find("terminate"), std::string::npos) << out;
}

TEST(Cli, DevicesReportsTheBuild) {
  std::string out;
  ASSERT_EQ(gw("devices --json", &out), 0) << out;
  expect_keys(out, {"cuda_built", "cudnn_version", "gpus"});
}

TEST(Cli, BenchIoPrintsImportAndExportTimes) {
  std::string out;
  ASSERT_EQ(gw("bench io " + testing::model_path("squeezenet1_1.onnx") + " --repeats 1 --json", &out), 0) << out;
  expect_keys(out, {"import_median_ms", "export_median_ms", "peak_rss_mib"});
}

}  // namespace
}  // namespace graphworld
