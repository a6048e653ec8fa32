// ONNX import: a model file becomes a Graph with every shape known.
//
// Supported: opsets 11 to 17 of the default domain. Initializers become
// weights; shape-computation subgraphs (Shape, Gather, ConstantOfShape,
// Expand, Where, Cast... over constants) are folded; Constant nodes become
// weights. Anything that cannot be imported faithfully is an ImportError that
// names the file, the node and the op type: nothing is skipped silently.
#pragma once

#include <string>

#include "env/graph/graph.h"

namespace graphworld {

struct ImportInfo {
  int64_t opset = 0;
  std::string producer;  // "pytorch 1.13.0"
  int64_t folded_nodes = 0;  // ONNX nodes evaluated at import because their inputs were constant
};

// Reads and imports `path`. Throws ImportError with a message naming the file.
Graph import_onnx_file(const std::string& path, ImportInfo* info = nullptr);

// Imports serialized ModelProto bytes; `source` names them in error messages.
Graph import_onnx_bytes(const std::string& bytes, const std::string& source, ImportInfo* info = nullptr);

// Reads a whole file into memory, with a clear error if it cannot be read.
std::string read_file_bytes(const std::string& path);

}  // namespace graphworld
