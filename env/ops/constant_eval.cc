#include "env/ops/constant_eval.h"

#include <c10/core/InferenceMode.h>

#include "env/ops/aten_kernels.h"

namespace graphworld {

std::vector<std::shared_ptr<TensorData>> evaluate_op(const Op& op,
                                                     const std::vector<std::shared_ptr<const TensorData>>& inputs) {
  c10::InferenceMode guard;
  std::vector<at::Tensor> args;
  for (const auto& in : inputs) args.push_back(to_aten(in));
  std::vector<std::shared_ptr<TensorData>> out;
  for (const at::Tensor& t : run_aten_op(op, args)) out.push_back(from_aten(t));
  return out;
}

}  // namespace graphworld
