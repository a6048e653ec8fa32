// How the exporter spells a graph so that other runtimes can fuse it.
//
// A graph that prices lowest in graphworld's executor is not always the
// fastest file for onnxruntime (and runtimes like it) with its graph
// optimisations on, because such runtimes fuse patterns of their own:
// Conv + BatchNorm / activation / residual Add, MatMul + Add + activation
// into one Gemm, and convolutions kept in a blocked channel layout (NCHWc)
// from one conv to the next. Evidence (onnxruntime's optimised-graph dumps,
// docs/benchmarks/results.md): a merged conv read through a channel Split cannot fuse
// the BatchNorm or activation that follows each piece, and the Split forces
// a layout conversion out of and back into NCHWc; a MatMul whose Add a
// rewrite removed can no longer become a Gemm with its activation fused; an
// activation moved behind a Concat cannot fuse into the convs that feed it.
// The exporter therefore writes, without changing what the model computes:
//   - a Conv read only by a channel Split as one Conv per piece (kernels
//     enlarged with zero borders are trimmed back; a grouped conv over a
//     Concat becomes one conv per Concat input);
//   - a Conv whose kernel is such a merge with no Split after it (a rewrite
//     cancelled the Split against a Concat) as its pieces and a Concat;
//   - an activation that reads a Concat of plain Conv outputs inside each Conv;
//   - a 2-D MatMul not followed by an Add as Gemm.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

struct ExportSpelling {
  // A conv read only by a channel Split (and Splits of its pieces, as
  // repeated merges leave them) is written as one conv per leaf piece:
  // output channels [begin, end) written as tensor `out`. The Splits are
  // not written.
  struct ConvPiece {
    int64_t begin = 0;
    int64_t end = 0;
    TensorRef out;
    // Set for a grouped conv's piece: the Concat input it reads, and its groups.
    std::optional<TensorRef> input;
    int64_t groups = 1;
    Activation activation = Activation::None;  // moved in from a following Concat
  };
  std::unordered_map<OpId, std::vector<ConvPiece>> conv_pieces;
  std::unordered_set<OpId> split_written_as_pieces;
  // Concats that only fed a grouped conv now written as pieces.
  std::unordered_set<OpId> concat_not_written;
  // Conv op -> activation written inside it, and the activation op that
  // becomes an alias of its Concat.
  std::unordered_map<OpId, Activation> conv_activation;
  std::unordered_set<OpId> activation_into_concat_inputs;
  std::unordered_set<OpId> matmul_as_gemm;
};

// `live` and `constant` per OpId, as the exporter computed them.
ExportSpelling plan_export_spelling(const Graph& graph, const std::vector<bool>& live,
                                    const std::vector<bool>& constant);

// Output channels [begin, end) of a conv kernel [O, I, kH, kW], with rows and
// columns that are zero in the whole slice trimmed from its borders while
// the padding on that side can absorb them (pads: top, left, bottom, right;
// updated in place). A kernel a rewrite enlarged from 1x1 to 3x3 comes back
// as 1x1 with the original padding.
std::shared_ptr<TensorData> conv_kernel_piece(const TensorData& kernel, int64_t begin, int64_t end,
                                              std::vector<int64_t>& pads, const std::vector<int64_t>& dilations);

// Output channels of a conv kernel grouped into runs whose kernels trim to
// the same window, when there are a few runs of several channels each: what
// merging a 1x1 conv (enlarged to 3x3) with a 3x3 conv and cancelling the
// Split/Concat around them leaves. Otherwise one run over every channel.
std::vector<std::pair<int64_t, int64_t>> kernel_channel_runs(const TensorData& kernel, const std::vector<int64_t>& pads,
                                                             const std::vector<int64_t>& dilations);

}  // namespace graphworld
