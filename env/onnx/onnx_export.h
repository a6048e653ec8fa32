// ONNX export: a Graph becomes a valid SSA ONNX model (opset 17).
//
// Weights become initializers; weight-only subgraphs (for example the kernel
// enlargement a rewrite introduced) are folded into initializers first.
// Only constants that a written node or a graph output reads are written,
// each once: a constant a rewrite folded through (a conv kernel before its
// BatchNorm was folded in) is not shipped, and constants with equal contents
// share one initializer. Patterns that runtimes fuse are written so they
// still can (export_spelling.h): a merged conv read through a channel Split
// becomes one conv per piece, for example.
// Graph input and output names and shapes are those of the Graph, so a model
// imported and exported again keeps its signature. Fused activations become
// a separate activation node; Gelu becomes its erf formula (which import
// reads back as one Gelu, import_gelu.h). On request, a
// grouped conv with groups narrower than onnxruntime's channel block is
// written with fewer, wider groups (grouped_conv_spelling.h).
#pragma once

#include <string>

#include "env/graph/graph.h"

namespace graphworld {

struct ExportOptions {
  std::string producer_version = "0.1.0";
  // Spell merged convs, moved activations and 2-D MatMuls the way runtimes
  // that fuse (onnxruntime) want them (export_spelling.h). Off writes the
  // graph as it is, merges included: for runtimes built on oneDNN, like
  // graphworld's executor, where a merged conv can pay.
  bool spell_for_fusing_runtimes = true;
  // Above 1: write grouped convs whose groups are narrower than this channel
  // block (onnxruntime's: 16 with AVX-512, 8 with AVX2) with fewer, wider
  // groups (grouped_conv_spelling.h). It adds FLOPs that only blocked CPU
  // kernels repay, so only optimize sets it, for a candidate it checks and
  // times; originals and round trips keep their groups (0).
  int64_t regroup_channel_block = 0;
};

inline constexpr int64_t kExportOpset = 17;

// What the spelling changed beyond the graph itself.
struct ExportReport {
  // Grouped convs written with fewer, wider groups (grouped_conv_spelling.h).
  int64_t regrouped_convs = 0;
};

// Serialized ModelProto bytes; `report`, when given, says what the spelling changed.
std::string export_onnx_bytes(const Graph& graph, const ExportOptions& options = {}, ExportReport* report = nullptr);
// Writes the model atomically (temp file + rename). Throws Error on I/O failure.
void export_onnx_file(const Graph& graph, const std::string& path, const ExportOptions& options = {});
// Writes serialized model bytes the same way.
void write_onnx_bytes(const std::string& bytes, const std::string& path);

// The ONNX checker with the full check (type and shape inference in strict
// mode, as onnx.checker.check_model(model, full_check=True)). Throws
// ImportError with the checker's message if the model is invalid.
void check_onnx_model_bytes(const std::string& bytes, const std::string& source);

}  // namespace graphworld
