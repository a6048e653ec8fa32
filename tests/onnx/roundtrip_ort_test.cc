// Import, export, and check both the exported model and the executor against
// onnxruntime, the independent runtime.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "env/onnx/onnx_export.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/executor.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

constexpr double kRelTol = 1e-4;

double max_rel_error(const std::vector<std::shared_ptr<TensorData>>& expected,
                     const std::vector<std::shared_ptr<TensorData>>& actual) {
  EXPECT_EQ(expected.size(), actual.size());
  double worst = 0;
  for (size_t k = 0; k < std::min(expected.size(), actual.size()); ++k) {
    EXPECT_EQ(expected[k]->shape(), actual[k]->shape());
    if (expected[k]->shape() != actual[k]->shape()) return INFINITY;
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < expected[k]->numel(); ++i) {
      diff = std::max(diff, static_cast<double>(std::fabs(expected[k]->floats()[i] - actual[k]->floats()[i])));
      scale = std::max(scale, static_cast<double>(std::fabs(expected[k]->floats()[i])));
    }
    worst = std::max(worst, diff / std::max(scale, 1e-6));
  }
  return worst;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, ExportedModelAndExecutorMatchOnnxRuntime) {
  const std::string original = testing::model_path(GetParam());
  Graph g = import_onnx_file(original);
  const std::string exported = testing::scratch_dir() + "/roundtrip_" + GetParam();
  export_onnx_file(g, exported);
  EXPECT_NO_THROW(check_onnx_model_bytes(read_file_bytes(exported), exported));

  testing::OrtComparison cmp = testing::ort_compare(original, exported);
  EXPECT_EQ(cmp.outputs, 1);
  EXPECT_LE(cmp.max_rel_err, kRelTol) << "exported model differs from the original in onnxruntime";

  auto inputs = random_inputs(g, 11);
  auto ort = testing::run_onnxruntime(original, g, inputs);
  auto ours = Executor(g, {.threads = 2}).run(inputs);
  ASSERT_FALSE(ort.empty());
  EXPECT_LE(max_rel_error(ort, ours), kRelTol) << "executor differs from onnxruntime";
}

INSTANTIATE_TEST_SUITE_P(Models, RoundTrip,
                         ::testing::Values("mlp.onnx", "resnet18_bn.onnx", "resnet18_folded.onnx", "resnet50_bn.onnx",
                                           "resnet50_folded.onnx", "squeezenet1_1.onnx", "inception_v3_bn.onnx",
                                           "inception_v3_folded.onnx", "transformer_encoder_op13.onnx",
                                           "transformer_encoder_op17.onnx"),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace graphworld
