// Every zoo graph executes, exports to valid ONNX, and onnxruntime computes
// the same outputs from the export as the executor does from the graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/executor.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

class ZooExecution : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooExecution, ExecutesExportsAndMatchesOnnxRuntime) {
  Graph g = build_zoo_model(GetParam());
  auto inputs = random_inputs(g, 3);
  auto ours = Executor(g, {.threads = 2}).run(inputs);
  ASSERT_EQ(ours.size(), g.outputs().size());
  // Finite and not all zero: otherwise every equivalence check on this
  // graph would pass whatever a rewrite did.
  for (const auto& out : ours) {
    int64_t nonzero = 0;
    for (int64_t i = 0; i < out->numel(); ++i) {
      ASSERT_TRUE(std::isfinite(out->floats()[i])) << "element " << i;
      nonzero += out->floats()[i] != 0;
    }
    EXPECT_GT(nonzero, out->numel() / 2) << GetParam() << ": the outputs are mostly zero";
  }

  std::string path = testing::scratch_dir() + "/zoo_" + GetParam() + ".onnx";
  export_onnx_file(g, path);
  EXPECT_NO_THROW(check_onnx_model_bytes(read_file_bytes(path), path));
  auto ort = testing::run_onnxruntime(path, g, inputs);
  ASSERT_EQ(ort.size(), ours.size());
  for (size_t k = 0; k < ort.size(); ++k) {
    ASSERT_EQ(ort[k]->shape(), ours[k]->shape());
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < ort[k]->numel(); ++i) {
      diff = std::max(diff, static_cast<double>(std::fabs(ort[k]->floats()[i] - ours[k]->floats()[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(ort[k]->floats()[i])));
    }
    EXPECT_LE(diff / std::max(scale, 1e-6), 1e-4) << GetParam() << " output " << k;
  }
}

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  for (const ZooModel& m : zoo_models()) names.push_back(m.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, ZooExecution, ::testing::ValuesIn(zoo_names()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

}  // namespace
}  // namespace graphworld
