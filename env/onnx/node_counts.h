// How many nodes of each op type an ONNX model has, and how two models
// differ by that count: what tells whether onnxruntime runs the same graph
// for two files, read from the optimised models it saves (its own fusions
// applied, e.g. Conv+BatchNorm+Relu as one FusedConv).
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace graphworld {

// Node counts by op type, domain-qualified outside the default domain
// ("com.microsoft.nchwc:Conv"), a grouped node keyed with its group count
// ("Conv[group=8]": the same count of convs with other groups runs other
// kernels), subgraphs included, a Flatten counted as a Reshape (graphworld
// writes Flatten as the Reshape it is; both are views). Equal counts mean
// the same ops, not necessarily the same graph. Throws ImportError naming
// `source` when `bytes` is not an ONNX model.
std::map<std::string, int64_t> onnx_node_counts(const std::string& bytes, const std::string& source);

// "" when the counts are equal, else the op types whose counts differ,
// "MatMul 48→32, Split 0→16", in op-type order; past `max_entries`, the
// rest as "and N more".
std::string node_count_difference(const std::map<std::string, int64_t>& before,
                                  const std::map<std::string, int64_t>& after, size_t max_entries = 8);

}  // namespace graphworld
