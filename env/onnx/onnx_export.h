// ONNX export: a Graph becomes a valid SSA ONNX model (opset 17).
//
// Weights become initializers; weight-only subgraphs (for example the kernel
// enlargement a rewrite introduced) are folded into initializers first.
// Graph input and output names and shapes are those of the Graph, so a model
// imported and exported again keeps its signature. Fused activations become
// a separate activation node; Gelu becomes its erf formula.
#pragma once

#include <string>

#include "env/graph/graph.h"

namespace graphworld {

struct ExportOptions {
  std::string producer_version = "0.1.0";
};

inline constexpr int64_t kExportOpset = 17;

// Serialized ModelProto bytes.
std::string export_onnx_bytes(const Graph& graph, const ExportOptions& options = {});
// Writes the model atomically (temp file + rename). Throws Error on I/O failure.
void export_onnx_file(const Graph& graph, const std::string& path, const ExportOptions& options = {});

// The ONNX checker with the full check (type and shape inference in strict
// mode, as onnx.checker.check_model(model, full_check=True)). Throws
// ImportError with the checker's message if the model is invalid.
void check_onnx_model_bytes(const std::string& bytes, const std::string& source);

}  // namespace graphworld
