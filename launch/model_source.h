// Resolves the MODEL argument of the CLI: an ONNX file path or a zoo name.
#pragma once

#include <string>

#include "env/graph/graph.h"
#include "env/onnx/onnx_import.h"

namespace graphworld {

struct LoadedModel {
  Graph graph;
  std::string source;      // the path, or "zoo:<name>"
  bool from_zoo = false;
  ImportInfo import_info;  // for ONNX files
};

// A path ending in .onnx, or any existing file, is imported; otherwise the
// name must be a zoo model (built with `batch`). Errors say which was tried.
LoadedModel load_model(const std::string& spec, int64_t batch = 1);

}  // namespace graphworld
