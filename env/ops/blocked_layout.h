// Where the executor keeps values in oneDNN's blocked layout, decided from the
// graph alone (no ATen here).
//
// The executor (onednn_kernels.h) decides at run time, by looking at the
// tensors it has; this is the same decision made ahead of time, so that a
// cost model can time each op with its inputs in the layout it will meet them
// in: a Concat of two conv outputs pays for converting both to plain NCHW,
// and a MaxPool after that Concat runs on plain NCHW, several times slower.
// tests/cost/blocked_layout_test.cc checks it against what the executor does.
#pragma once

#include <cstdint>
#include <vector>

#include "env/graph/graph.h"

namespace graphworld {

// oneDNN is compiled into this LibTorch and enabled.
bool onednn_available();

// True when ONNX 2-D pads [top,left,bottom,right] are symmetric.
bool symmetric_pads(const std::vector<int64_t>& pads);
// True when 2-D pads are symmetric and at most half the kernel, the only
// padding ATen's pool kernels take directly.
bool pool_pads_supported(const std::vector<int64_t>& pads, const std::vector<int64_t>& kernel);

// True when the executor runs this MaxPool or AvgPool in oneDNN (given a
// blocked input): pads ATen takes directly, no dilation.
bool pool_runs_in_onednn(const Op& pool);

// True when the executor runs this Conv in oneDNN on weights packed once:
// constant weights (and bias), symmetric pads, oneDNN available.
bool conv_runs_in_onednn(const Op& conv, uint64_t constant_inputs);

// True when op `op` leaves its output in the blocked layout, given which of
// its inputs are constants (bit k) and which arrive blocked (bit k). Only
// conv-family ops produce or keep it: a oneDNN conv always; relu, sigmoid,
// tanh, batch norm, pools and global average pool when their input is
// blocked; add and mul when either input is and the two shapes are equal.
bool output_is_blocked(const Graph& graph, const Op& op, uint64_t constant_inputs, uint64_t blocked_inputs);

// Bit k set when input k of `op` comes from an op whose entry in `blocked`
// (indexed by OpId) is set. One flag per op suffices: only single-output ops
// produce a blocked value.
uint64_t blocked_input_mask(const Op& op, const std::vector<uint8_t>& blocked);

}  // namespace graphworld
