// What a cost model prices: one operator configuration.
//
// Two ops cost the same when they have the same type, parameters, input
// shapes and dtypes, the same inputs are constants (a convolution whose
// weights are constant runs on weights packed once, ahead of time), and the
// same inputs arrive in oneDNN's blocked layout (env/ops/blocked_layout.h: an
// op reading a conv's output either keeps that layout or pays to convert it).
// Op names and the rest of the graph do not matter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct OpCostKey {
  OpType type = OpType::Identity;
  Attributes attrs;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> outputs;  // implied by the rest; kept so cost models need no shape inference
  uint64_t constant_inputs = 0;     // bit k: input k is a constant (weight or weight-only subgraph)
  uint64_t blocked_inputs = 0;      // bit k: input k arrives in oneDNN's blocked layout
  uint64_t hash = 0;

  bool input_is_constant(size_t k) const { return k < 64 && ((constant_inputs >> k) & 1u) != 0; }
  bool input_is_blocked(size_t k) const { return k < 64 && ((blocked_inputs >> k) & 1u) != 0; }
  // Stable, readable text form, used as the key of the on-disk cache:
  // "Conv(group=1) b:f32[1,64,56,56] c:f32[64,64,3,3]" (c: constant, b: blocked).
  std::string canonical() const;
  bool operator==(const OpCostKey& other) const {
    return hash == other.hash && type == other.type && constant_inputs == other.constant_inputs &&
           blocked_inputs == other.blocked_inputs && inputs == other.inputs && attrs == other.attrs;
  }
};

// Bit mask of op `id`'s inputs that are constant, given per-op constness.
uint64_t constant_input_mask(const Graph& graph, OpId id, const std::vector<uint8_t>& constant);

// Hash of the key op `id` would have, computed without building the key.
uint64_t op_cost_hash(const Graph& graph, const Op& op, uint64_t constant_inputs, uint64_t blocked_inputs);
// True when `key` describes op `op` with the given constant and blocked inputs.
bool key_matches(const OpCostKey& key, const Graph& graph, const Op& op, uint64_t constant_inputs,
                 uint64_t blocked_inputs);

OpCostKey make_op_cost_key(const Graph& graph, OpId id, uint64_t constant_inputs, uint64_t blocked_inputs);

}  // namespace graphworld
