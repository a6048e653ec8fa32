// Per-operator semantics that need no tensors: arity, output shape inference
// and work counts (FLOPs and bytes moved). The ATen kernels that give the ops
// their values are in aten_kernels.h; both follow ONNX semantics.
#pragma once

#include <string_view>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct OpArity {
  int min_inputs;
  int max_inputs;  // -1: variadic
};
OpArity op_arity(OpType type);

// Computes the outputs of an op from its inputs and parameters. Throws
// GraphError naming the op (`op_name`), its type and the offending shapes or
// parameter when the inputs cannot be taken (wrong rank, mismatched dims...).
std::vector<TensorInfo> infer_outputs(OpType type, const Attributes& attrs, const std::vector<TensorInfo>& inputs,
                                      std::string_view op_name);

// Work an op does, for the analytic cost model and for `graphworld import`.
struct OpWork {
  double flops = 0;
  double bytes = 0;  // bytes read plus bytes written
};
OpWork op_work(OpType type, const Attributes& attrs, const std::vector<TensorInfo>& inputs,
               const std::vector<TensorInfo>& outputs);
OpWork op_work(const Graph& graph, OpId id);

// Numpy-style broadcast of two shapes; throws GraphError (using `what` for
// context) when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view what);

// Normalises a possibly negative axis against `rank`; throws if out of range.
int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what);

// Output size of one spatial dimension of a conv or pool window.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end,
                           int64_t dilation, bool ceil_mode);

}  // namespace graphworld
