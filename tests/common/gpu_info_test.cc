#include "common/gpu_info.h"

#include <gtest/gtest.h>

namespace graphworld {
namespace {

// The probe must never throw, on machines with or without a GPU, and a build
// with CUDA must report the library versions it linked.
TEST(GpuInfo, ProbeReportsBuildAndNeverThrows) {
  GpuInfo info;
  ASSERT_NO_THROW(info = probe_gpus());
#ifdef GRAPHWORLD_HAVE_CUDA
  EXPECT_TRUE(info.cuda_built);
  EXPECT_GT(info.cudnn_version, 0);
  EXPECT_GT(info.cublas_version, 0);
  EXPECT_GT(info.nccl_version, 0);
  if (!info.devices.empty()) EXPECT_EQ(info.self_test, "ok");
  else EXPECT_FALSE(info.runtime_error.empty());
#else
  EXPECT_FALSE(info.cuda_built);
  EXPECT_FALSE(info.runtime_error.empty());
#endif
}

}  // namespace
}  // namespace graphworld
