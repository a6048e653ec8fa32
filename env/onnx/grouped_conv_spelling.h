// Grouped convolutions with narrow groups, written with fewer, wider groups.
//
// onnxruntime runs a convolution in its fast blocked-channel kernels (NCHWc,
// a block of 8 channels with AVX2 and 16 with AVX-512) only when a grouped
// conv's input and output channels per group are multiples of the block;
// otherwise it falls back to one small im2col GEMM per group and converts
// the layout on both sides. ResNeXt's 32x4d convs (4 and 8 channels per
// group) run 5-6x fewer FLOP/s that way than the dense convs around them
// (onnxruntime's profile, docs/benchmarks/results.md). The same conv with `factor`
// neighbouring groups merged into one, its kernel block-diagonal within the
// merged group (zeros where a channel did not read another group), computes
// the same outputs: each output channel still sums the same products, and
// the added terms are exact zeros. It costs `factor` times the FLOPs, which
// the blocked kernel repays for factors up to 4 (docs/benchmarks/results.md: the
// measurements, and where it does not pay: onnxruntime with its graph
// optimisations off, cuDNN).
//
// Only `optimize` writes this spelling (ExportOptions::regroup_channel_block),
// for its candidate file, which it checks and times before writing; other
// exports keep the graph's groups.
#pragma once

#include <cstdint>
#include <memory>

#include "env/graph/graph.h"
#include "env/graph/tensor.h"

namespace graphworld {

// onnxruntime's channel blocks: 16 floats with AVX-512, 8 on other x86-64
// CPUs (AVX2 and older). Its default builds have blocked kernels on x86-64
// only; elsewhere there is nothing to aim at.
inline constexpr int64_t kAvx512ChannelBlock = 16;
inline constexpr int64_t kAvx2ChannelBlock = 8;
// More merged groups than this cost more FLOPs than the blocked kernel saves.
inline constexpr int64_t kMaxRegroupFactor = 4;

// The channel block of onnxruntime's blocked conv kernels on this CPU: 16
// with AVX-512, 8 on other x86-64 CPUs, 0 (no blocked kernels) on other
// architectures. optimize aims at it unless told which machine will run
// the file.
int64_t this_cpu_channel_block();

// How many neighbouring groups to merge into one: the smallest factor that
// makes the input and output channels per group multiples of
// `channel_block` (a power of two) and divides `groups`, or 1 (write the
// conv as it is) when the groups already fit, the conv is not grouped, the
// block is 0, or the factor would exceed kMaxRegroupFactor (depthwise
// convs, which onnxruntime runs blocked as they are, always give 1).
int64_t regroup_factor(int64_t groups, int64_t in_per_group, int64_t out_per_group, int64_t channel_block);

// regroup_factor for one op: 1 unless it is a 2-D float Conv whose kernel
// shape fits its groups.
int64_t regroup_factor_of(const Graph& graph, const Op& op, int64_t channel_block);

// True when some op of `graph` has a regroup factor above 1 (a cheap scan,
// so that optimize exports a graph no rewrite changed only when the
// spelling can change it).
bool has_regroupable_conv(const Graph& graph, int64_t channel_block);

// The kernel [O, I/groups, kH, kW] of a conv with `groups` groups as the
// kernel of the same conv with groups / factor groups:
// [O, factor * I/groups, kH, kW], zero outside each output channel's own
// original group.
std::shared_ptr<TensorData> regrouped_kernel(const TensorData& kernel, int64_t groups, int64_t factor);

}  // namespace graphworld
