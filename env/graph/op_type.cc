#include "env/graph/op_type.h"

#include <array>

namespace graphworld {
namespace {

constexpr std::array<std::string_view, kNumOpTypes> kNames = {
    "Input",     "Weight",    "Conv",        "MatMul",        "Gemm",       "Add",
    "Sub",       "Mul",       "Div",         "Pow",           "Sqrt",       "Relu",
    "Sigmoid",   "Tanh",      "Clip",        "Erf",           "Gelu",       "Softmax",
    "LayerNorm", "BatchNorm", "MaxPool",     "AvgPool",       "GlobalAvgPool",
    "ReduceMean", "ReduceSum", "Concat",     "Split",         "Slice",      "Reshape",
    "Flatten",   "Transpose", "Squeeze",     "Unsqueeze",     "Pad",        "Identity",
    "Dropout",   "EnlargeKernel", "HardSigmoid", "HardSwish",     "LeakyRelu",  "PRelu",
    "Softplus",  "Mish",      "Resize",      "ConvTranspose", "ReduceMax",  "ReduceMin",
    "Max",       "Min",       "Mean",        "Gather",        "Tile"};

}  // namespace

std::string_view op_type_name(OpType type) {
  auto index = static_cast<size_t>(type);
  return index < kNames.size() ? kNames[index] : std::string_view("?");
}

std::optional<OpType> op_type_from_name(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<OpType>(i);
  return std::nullopt;
}

bool is_shape_only_op(OpType type) {
  switch (type) {
    case OpType::Reshape:
    case OpType::Flatten:
    case OpType::Squeeze:
    case OpType::Unsqueeze:
    case OpType::Identity:
    case OpType::Dropout:
      return true;
    default:
      return false;
  }
}

namespace {

using Shape_ = ElementwiseShape;

// FLOPs per output element are those of the analytic cost model: one per
// add, multiply or compare; more for ops computed by series (Erf, Gelu,
// Pow's exp/log, Softplus, Mish).
constexpr ElementwiseOp kElementwiseOps[] = {
    // type                 inputs   shape               float  flops
    {OpType::Add,           2, 2,    Shape_::Broadcast,  false, 1},
    {OpType::Sub,           2, 2,    Shape_::Broadcast,  false, 1},
    {OpType::Mul,           2, 2,    Shape_::Broadcast,  false, 1},
    {OpType::Div,           2, 2,    Shape_::Broadcast,  false, 1},
    {OpType::Pow,           2, 2,    Shape_::Broadcast,  false, 8},
    {OpType::Max,           1, -1,   Shape_::Broadcast,  false, 1},
    {OpType::Min,           1, -1,   Shape_::Broadcast,  false, 1},
    {OpType::Mean,          1, -1,   Shape_::Broadcast,  true,  1},
    {OpType::Sqrt,          1, 1,    Shape_::Same,       true,  2},
    {OpType::Relu,          1, 1,    Shape_::Same,       true,  1},
    {OpType::Sigmoid,       1, 1,    Shape_::Same,       true,  4},
    {OpType::Tanh,          1, 1,    Shape_::Same,       true,  4},
    {OpType::Clip,          1, 1,    Shape_::Same,       true,  1},
    {OpType::Erf,           1, 1,    Shape_::Same,       true,  8},
    {OpType::Gelu,          1, 1,    Shape_::Same,       true,  10},
    {OpType::HardSigmoid,   1, 1,    Shape_::Same,       true,  2},
    {OpType::HardSwish,     1, 1,    Shape_::Same,       true,  3},
    {OpType::LeakyRelu,     1, 1,    Shape_::Same,       true,  2},
    {OpType::Softplus,      1, 1,    Shape_::Same,       true,  8},
    {OpType::Mish,          1, 1,    Shape_::Same,       true,  14},
    {OpType::Identity,      1, 1,    Shape_::Same,       false, 0},
    {OpType::Dropout,       1, 1,    Shape_::Same,       false, 0},
    {OpType::PRelu,         2, 2,    Shape_::FirstInput, true,  2},
};

// Indexed by OpType, built once from the list above.
struct ElementwiseIndex {
  std::array<const ElementwiseOp*, kNumOpTypes> row{};
  ElementwiseIndex() {
    for (const ElementwiseOp& op : kElementwiseOps) row[static_cast<size_t>(op.type)] = &op;
  }
};

}  // namespace

const ElementwiseOp* elementwise_op(OpType type) {
  static const ElementwiseIndex index;
  auto i = static_cast<size_t>(type);
  return i < index.row.size() ? index.row[i] : nullptr;
}

bool is_elementwise_binary(OpType type) {
  const ElementwiseOp* op = elementwise_op(type);
  return op != nullptr && op->shape == ElementwiseShape::Broadcast && op->max_inputs == 2;
}

bool is_elementwise_unary(OpType type) {
  const ElementwiseOp* op = elementwise_op(type);
  return op != nullptr && op->max_inputs == 1;
}

}  // namespace graphworld
