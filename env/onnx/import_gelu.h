// Internal to the importer: Gelu written out as its erf formula.
//
// Opsets before 20 have no Gelu, so exporters (PyTorch's, and graphworld's
// own writer) spell Gelu(x) = x * 0.5 * (1 + erf(x / sqrt(2))) as five
// nodes: Div (or Mul by 1/sqrt(2)), Erf, Add, Mul, Mul. Frameworks and
// onnxruntime run that as one kernel; imported node by node it would be
// priced as five, and a file graphworld optimised and wrote would cost more
// read back than the graph it searched. The importer finds each such group
// here and reads it as one Gelu op.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace graphworld {

struct GeluSpellings {
  // Where a group reads x: input `input` of node `node` (its Div or Mul by
  // 1/sqrt(2)), so errors about x name a node that reads it.
  struct Input {
    int node = 0;
    int input = 0;
  };
  // Each group's x, keyed by the index in the graph's node list of the node
  // that computes its result (the last Mul).
  std::map<int, Input> result_node_input;
  // The group's other nodes, by index: nothing outside the group reads
  // their outputs, so the importer skips them.
  std::set<int> inner_nodes;
};

// Every group of nodes in `graph` that computes exactly x * 0.5 * (1 +
// erf(x / sqrt(2))), in any order of its products and operands, with
// constants (initializers or Constant nodes) within 1e-4 of 0.5, 1 and
// sqrt(2) (or 1/sqrt(2)), and whose intermediate values nothing else reads
// and no graph output names.
GeluSpellings find_gelu_spellings(const onnx::GraphProto& graph);

}  // namespace graphworld
