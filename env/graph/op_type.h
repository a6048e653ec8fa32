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
  // What detection, recognition and mobile networks add (appended, so the
  // indices above keep their meaning in rule files and feature layouts).
  HardSigmoid,    // max(0, min(1, alpha * x + beta))
  HardSwish,      // x * HardSigmoid(x) with alpha 1/6, beta 1/2
  LeakyRelu,      // x < 0 ? alpha * x : x
  PRelu,          // x < 0 ? slope * x : x; slope broadcasts to x
  Softplus,       // log(1 + exp(x))
  Mish,           // x * tanh(softplus(x))
  Resize,         // nearest or linear; output shape resolved at import
  ConvTranspose,  // weight [C, O/group, kH, kW]
  ReduceMax,
  ReduceMin,
  Max,            // elementwise over 1+ inputs, broadcasting
  Min,
  Mean,
  Gather,         // data, int64 indices; axis
  Tile,           // repeats
  kCount
};

inline constexpr int kNumOpTypes = static_cast<int>(OpType::kCount);

std::string_view op_type_name(OpType type);
std::optional<OpType> op_type_from_name(std::string_view name);

// Ops whose output is only a view of their input's memory when the layout
// allows it (cost models treat those as free).
bool is_shape_only_op(OpType type);

// The elementwise ops, one row each: the one place that says how many inputs
// an elementwise op takes, how its output's shape and type follow from them
// and how much arithmetic it does per output element. Shape inference and
// work counts (env/ops/op_schema.cc) read it; the ATen kernels, ONNX import
// and export, and the CUDA timer dispatch per op as each backend must.
enum class ElementwiseShape : uint8_t {
  Same,        // one input; the output has its shape and type
  Broadcast,   // numpy broadcast over every input, all of one type
  FirstInput,  // the output is shaped as the first input; the second broadcasts to it (PRelu's slope)
};
struct ElementwiseOp {
  OpType type;
  int min_inputs;
  int max_inputs;  // -1: any number
  ElementwiseShape shape;
  bool float_only;          // refuses inputs other than float32
  double flops_per_output;  // per output element (per output element and input for variadic ops)
};

// The row of `type`, or nullptr when `type` is not elementwise.
const ElementwiseOp* elementwise_op(OpType type);
// Elementwise ops of two broadcast inputs (Add, Sub, Mul, Div, Pow) and of one
// input (activations, Sqrt, Identity, Dropout).
bool is_elementwise_binary(OpType type);
bool is_elementwise_unary(OpType type);

}  // namespace graphworld
