#include "env/ops/constant_eval.h"

#include <c10/core/InferenceMode.h>

#include "common/error.h"
#include "env/ops/aten_kernels.h"

namespace graphworld {

std::vector<std::shared_ptr<TensorData>> evaluate_op(const Op& op,
                                                     const std::vector<std::shared_ptr<const TensorData>>& inputs) {
  c10::InferenceMode guard;
  std::vector<at::Tensor> args;
  for (const auto& in : inputs) args.push_back(to_aten(in));
  std::vector<std::shared_ptr<TensorData>> out;
  try {
    for (const at::Tensor& t : run_aten_op(op, args)) out.push_back(from_aten(t));
  } catch (const c10::Error& e) {
    throw GraphError("evaluating " + std::string(op_type_name(op.type)) + " '" + op.name +
                     "' failed: " + e.what_without_backtrace());
  }
  return out;
}

}  // namespace graphworld
