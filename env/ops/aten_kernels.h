// ATen reference kernels: the values of every IR op, following ONNX semantics.
//
// This header includes ATen, which is slow to compile: include it only from
// .cc files that run tensors (the executor, the constant folder, cost models).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "env/graph/graph.h"
#include "env/ops/blocked_layout.h"  // symmetric_pads, pool_pads_supported

namespace graphworld {

// Computes the outputs of `op` (a non-leaf op) from its input values.
std::vector<at::Tensor> run_aten_op(const Op& op, const std::vector<at::Tensor>& inputs);

// Applies an op's fused activation (AttrKey::Activation) to `t` in place.
at::Tensor apply_activation(at::Tensor t, const Op& op);

// The value of a Weight op: its data wrapped without copying, or its
// seeded-random values.
at::Tensor weight_tensor(const Op& weight_op);

// Wraps host data without copying; the tensor keeps `data` alive.
at::Tensor to_aten(std::shared_ptr<const TensorData> data);
// Copies a tensor (any layout, float32 or int64) into new host data.
std::shared_ptr<TensorData> from_aten(const at::Tensor& tensor);

at::ScalarType scalar_type_of(DType dtype);

}  // namespace graphworld
