#include "env/cost/cuda_op_timer.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "common/gpu_info.h"
#include "env/cost/cost_model_factory.h"
#include "env/cost/graph_cost.h"
#include "env/zoo/zoo.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

// Every priced op of every zoo model has a cuDNN/cuBLAS description.
TEST(CudaCost, EveryZooOpTranslatesToACudaCall) {
  for (const ZooModel& entry : zoo_models()) {
    for (const OpCostKey& key : priced_op_keys(build_zoo_model(entry.name), /*with_layouts=*/false)) {
      CudaOpSpec spec;
      ASSERT_NO_THROW(spec = cuda_spec_for(key)) << entry.name << ": " << key.canonical();
      if (key.type == OpType::Conv) {
        EXPECT_EQ(spec.kind, CudaOpKind::Conv);
        EXPECT_EQ(spec.in2, key.inputs[1].shape);
      }
      if (key.type == OpType::MatMul) {
        EXPECT_EQ(spec.kind, CudaOpKind::Gemm);
        EXPECT_EQ(spec.batch * spec.m * spec.n, key.outputs[0].numel()) << key.canonical();
      }
    }
  }
}

TEST(CudaCost, WithoutAGpuItFailsWithAClearMessage) {
  GpuInfo gpu = probe_gpus();
  if (!gpu.devices.empty()) {
    CostModelOptions options;
    options.kind = "cuda";
    options.cache_dir = testing::scratch_dir();
    auto model = make_cost_model(options);
    Graph g = build_zoo_model("squeezenet1.1");
    EXPECT_GT(graph_cost(g, *model).total_ms, 0);
    return;
  }
  CostModelOptions options;
  options.kind = "cuda";
  options.cache_dir = testing::scratch_dir();
  try {
    make_cost_model(options);
    FAIL() << "the cuda cost model started without a GPU";
  } catch (const UnavailableError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cuda cost model"), std::string::npos) << message;
    EXPECT_NE(message.find("--cost measured"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace graphworld
