// Tensor collectives of a DataParallelGroup, for learner .cc files that
// already include LibTorch (keep this header out of public ones).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "learner/data_parallel.h"

namespace graphworld {

// Sums each parameter's gradient over the ranks, in place, in one
// collective over a flattened buffer. A missing gradient counts as zeros.
void all_reduce_gradients(DataParallelGroup& group, const std::vector<torch::Tensor>& parameters);

}  // namespace graphworld
