// Typed operator parameters.
//
// Parameters are keyed by an enum (no string typos, cheap to hash) and hold an
// integer, a float or an integer list. They are kept sorted by key, so two ops
// with the same parameters compare and hash equal regardless of insertion order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace graphworld {

enum class AttrKey : uint8_t {
  Activation,       // int: Activation enum, fused after Conv/MatMul/Gemm
  Alpha,            // float: Gemm
  Axes,             // ints: Reduce*, Squeeze, Unsqueeze, Slice
  Axis,             // int: Concat, Split, Softmax, Flatten, LayerNorm
  Beta,             // float: Gemm
  CeilMode,         // int: pools
  CountIncludePad,  // int: AvgPool
  Dilations,        // ints: Conv
  Ends,             // ints: Slice
  Epsilon,          // float: BatchNorm, LayerNorm
  Group,            // int: Conv
  KeepDims,         // int: Reduce*
  KernelShape,      // ints: pools, EnlargeKernel (target kernel)
  Max,              // float: Clip
  Min,              // float: Clip
  Pads,             // ints: Conv/pools [begin..., end...]; Pad [begin..., end...] per axis
  Perm,             // ints: Transpose
  Shape,            // ints: Reshape target (fully resolved, no -1 or 0)
  Split,            // ints: Split sizes
  Starts,           // ints: Slice
  Steps,            // ints: Slice
  Strides,          // ints: Conv, pools
  TransA,           // int: Gemm
  TransB,           // int: Gemm
  Value,            // float: Pad constant; value of a rule-made constant
  Fill,             // int: how a rule-made constant is filled (env/rules/rule_constant.h)
  OutputPadding,    // ints: ConvTranspose, extra rows/cols at the end of each spatial dim
  Repeats,          // ints: Tile, one per input dim
  ResizeMode,       // int: ResizeMode enum
  CoordinateMode,   // int: ResizeCoordinateMode enum
  NearestMode,      // int: ResizeNearestMode enum
  ActivationAlpha,  // float: parameter of a fused HardSigmoid or LeakyRelu
  ActivationBeta,   // float: parameter of a fused HardSigmoid
  kCount
};

std::string_view attr_key_name(AttrKey key);
std::optional<AttrKey> attr_key_from_name(std::string_view name);

// Activation fused into Conv, MatMul and Gemm. The parametric ones (hard
// sigmoid, leaky relu) read ActivationAlpha/ActivationBeta and are fused into
// Conv only.
enum class Activation : int64_t { None = 0, Relu = 1, Sigmoid = 2, Tanh = 3, HardSigmoid = 4, HardSwish = 5, LeakyRelu = 6 };
std::string_view activation_name(Activation act);

// Resize's ONNX string attributes, as integers (mode, coordinate_transformation_mode, nearest_mode).
enum class ResizeMode : int64_t { Nearest = 0, Linear = 1 };
enum class ResizeCoordinateMode : int64_t { HalfPixel = 0, PytorchHalfPixel = 1, Asymmetric = 2, AlignCorners = 3, TfHalfPixelForNearest = 4 };
enum class ResizeNearestMode : int64_t { RoundPreferFloor = 0, RoundPreferCeil = 1, Floor = 2, Ceil = 3 };
std::string_view resize_mode_name(ResizeMode mode);
std::string_view resize_coordinate_mode_name(ResizeCoordinateMode mode);
std::string_view resize_nearest_mode_name(ResizeNearestMode mode);

using AttrValue = std::variant<int64_t, double, std::vector<int64_t>>;
// "3", "0.001", "[1,1]"; activations by name ("relu") when `key` is Activation.
std::string attr_value_to_string(AttrKey key, const AttrValue& value);

class Attributes {
 public:
  Attributes() = default;
  Attributes(std::initializer_list<std::pair<AttrKey, AttrValue>> items);

  void set(AttrKey key, AttrValue value);
  bool has(AttrKey key) const { return find(key) != nullptr; }
  const AttrValue* find(AttrKey key) const;

  // Typed getters; the fallback is returned when the key is absent. A key
  // present with the wrong type is a programming error and throws GraphError.
  int64_t get_int(AttrKey key, int64_t fallback) const;
  double get_float(AttrKey key, double fallback) const;
  std::vector<int64_t> get_ints(AttrKey key, std::vector<int64_t> fallback = {}) const;
  // Throws GraphError naming the key when it is absent.
  int64_t require_int(AttrKey key) const;
  const std::vector<int64_t>& require_ints(AttrKey key) const;

  const std::vector<std::pair<AttrKey, AttrValue>>& items() const { return items_; }
  bool operator==(const Attributes& other) const { return items_ == other.items_; }
  uint64_t hash() const;
  std::string to_string() const;  // "strides=[1,1] group=1"

 private:
  std::vector<std::pair<AttrKey, AttrValue>> items_;  // sorted by key
};

}  // namespace graphworld
