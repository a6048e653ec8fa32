// Evaluates one op on concrete host values, for constant folding. ATen-free
// header so the importer's widely included parts stay light.
#pragma once

#include <memory>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

std::vector<std::shared_ptr<TensorData>> evaluate_op(const Op& op,
                                                     const std::vector<std::shared_ptr<const TensorData>>& inputs);

}  // namespace graphworld
