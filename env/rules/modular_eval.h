// Evaluates the generator's menu ops on integers modulo the prime 2^31 - 1.
//
// Fingerprints need exact arithmetic: two graphs computing the same function
// must give bit-identical results whatever order they add in, which floats
// do not. Values wrap around modulo p; Relu and MaxPool read a value above
// p/2 as negative; AvgPool multiplies by the inverse of its window count.
// The verifier, in float64, has the last word on every pair found this way.
#pragma once

#include <cstdint>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

inline constexpr int64_t kFingerprintPrime = 2147483647;

struct ModTensor {
  Shape shape;
  std::vector<int64_t> values;  // row-major, each in [0, p)
};

// Outputs of one op, given its inputs and already-inferred output infos.
// Throws GraphError for ops outside the menu.
std::vector<ModTensor> evaluate_mod(OpType type, const Attributes& attrs, const std::vector<const ModTensor*>& inputs,
                                    const std::vector<TensorInfo>& outputs);

// A hash of shape and values.
uint64_t mod_tensor_hash(const ModTensor& t);

}  // namespace graphworld
