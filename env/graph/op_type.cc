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

bool is_elementwise_binary(OpType type) {
  switch (type) {
    case OpType::Add:
    case OpType::Sub:
    case OpType::Mul:
    case OpType::Div:
    case OpType::Pow:
      return true;
    default:
      return false;
  }
}

bool is_elementwise_unary(OpType type) {
  switch (type) {
    case OpType::Relu:
    case OpType::Sigmoid:
    case OpType::Tanh:
    case OpType::Clip:
    case OpType::Erf:
    case OpType::Gelu:
    case OpType::Sqrt:
    case OpType::Identity:
    case OpType::Dropout:
    case OpType::HardSigmoid:
    case OpType::HardSwish:
    case OpType::LeakyRelu:
    case OpType::Softplus:
    case OpType::Mish:
      return true;
    default:
      return false;
  }
}

}  // namespace graphworld
