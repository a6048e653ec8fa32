// Constants a rule's target creates (pattern ops of type Weight).
//
// A target may need a tensor that is in neither the source nor the graph: a
// BatchNorm epsilon as a tensor, or an identity, so that `conv(x, w) + x`
// becomes `conv(x, w + I)`. Such an op carries `Shape` (dims) and `Fill`:
//   - ConstantFill::Value fills every element with the float `Value`;
//   - ConstantFill::Identity is 1 on the diagonal and 0 elsewhere: for a
//     square matrix [n, n] the identity matrix; for a conv kernel
//     [c, c, kh, kw] with odd kh and kw, 1 at [i, i, kh/2, kw/2], so a
//     stride-1 conv with "same" pads returns its input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

enum class ConstantFill : int64_t { Value = 0, Identity = 1 };

// The most elements a constant a rewrite creates may have (64 MiB of
// float32; an identity up to [4096, 4096]). An identity grows as the square
// of its width: for a [1, 16777216] tensor it would be 2^48 elements, so the
// matcher offers no match that needs a larger constant (rule_matcher.h).
constexpr int64_t kMaxRuleConstantElements = int64_t{1} << 24;

// The constant's shape, after checking that its fill suits it; throws
// GraphError naming `where` otherwise (an identity of shape [2, 3]).
Shape rule_constant_shape(const Attributes& attrs, const std::string& where);

// Flat row-major indices of the ones of an identity of `shape` (checked).
std::vector<int64_t> identity_positions(const Shape& shape);

// The constant's float32 data.
std::shared_ptr<TensorData> make_rule_constant(const Attributes& attrs, const std::string& where);

}  // namespace graphworld
