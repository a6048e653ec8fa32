// Times op configurations on an NVIDIA GPU with cuDNN and cuBLAS (the `cuda`
// cost model). Built wherever CUDA is found; constructing the timer fails
// with UnavailableError, saying why, when this build has no CUDA or this
// machine has no usable GPU.
#pragma once

#include <memory>

#include "env/cost/cuda_op_spec.h"
#include "env/cost/op_timer.h"

namespace graphworld {

// The cuDNN/cuBLAS call that prices `key` (pure translation, no GPU needed).
// Throws GraphError for shapes the CUDA timer cannot describe.
CudaOpSpec cuda_spec_for(const OpCostKey& key);

std::unique_ptr<OpTimer> make_cuda_op_timer(TimingPolicy policy = {});

// True when this build includes the CUDA code paths.
bool cuda_cost_model_compiled();

}  // namespace graphworld
