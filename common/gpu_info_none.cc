#include "common/gpu_info.h"

namespace graphworld {

GpuInfo probe_gpus() {
  GpuInfo info;
  info.cuda_built = false;
  info.runtime_error =
      "this graphworld was built without CUDA (configure with GRAPHWORLD_CUDA=ON on a machine with "
      "/usr/local/cuda)";
  return info;
}

}  // namespace graphworld
