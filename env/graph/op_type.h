// The operator vocabulary of the graph IR.
//
// The set covers TASO's operators plus what real ONNX exporters emit, plus the
// internal weight-transform ops that substitution rules create (their inputs
// are weights, so they are constant-folded before execution).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace graphworld {

enum class OpType : uint8_t {
  // Graph leaves.
  Input,   // a graph input; has a name and a shape, no inputs
  Weight,  // a constant: ONNX initializer, ONNX Constant, or seeded-random zoo weight
  // Compute.
  Conv,
  MatMul,
  Gemm,
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Sqrt,
  Relu,
  Sigmoid,
  Tanh,
  Clip,
  Erf,
  Gelu,
  Softmax,
  LayerNorm,
  BatchNorm,
  MaxPool,
  AvgPool,
  GlobalAvgPool,
  ReduceMean,
  ReduceSum,
  // Data movement.
  Concat,
  Split,
  Slice,
  Reshape,
  Flatten,
  Transpose,
  Squeeze,
  Unsqueeze,
  Pad,
  Identity,
  Dropout,
  // Internal weight transforms used by rules.
  EnlargeKernel,  // zero-pads a conv weight [O,I,kh,kw] to a larger odd kernel, centred
  kCount
};

inline constexpr int kNumOpTypes = static_cast<int>(OpType::kCount);

std::string_view op_type_name(OpType type);
std::optional<OpType> op_type_from_name(std::string_view name);

// Ops whose output is only a view of their input's memory when the layout
// allows it (cost models treat those as free).
bool is_shape_only_op(OpType type);
bool is_elementwise_binary(OpType type);
bool is_elementwise_unary(OpType type);

}  // namespace graphworld
