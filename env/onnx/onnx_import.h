// ONNX import: a model file becomes a Graph with every shape known.
//
// Supported: opsets 7 to 21 of the default domain; operators whose attributes
// became inputs between opsets (Clip, Pad, Slice, Split, Squeeze, ReduceX,
// Upsample/Resize) are read in the form their opset defines. Graph inputs may
// have symbolic dimensions when ImportOptions fixes them. Initializers become
// weights; shape-computation subgraphs (Shape, Gather, ConstantOfShape,
// Expand, Where, Cast... over constants) are folded; Constant nodes become
// weights. Anything that cannot be imported faithfully is an ImportError that
// names the file, the node and the op type: nothing is skipped silently.
#pragma once

#include <map>
#include <string>

#include "env/graph/graph.h"

namespace graphworld {

// The opsets import reads (default domain).
inline constexpr int64_t kMinImportOpset = 7;
inline constexpr int64_t kMaxImportOpset = 21;

struct ImportOptions {
  // Shapes for graph inputs by name (`--input-shape NAME=1x3x640x640`). They
  // fix symbolic dimensions; a dimension the model fixes must agree.
  std::map<std::string, Shape> input_shapes;
};

// Parses "NAME=1x3x640x640" into options.input_shapes; throws UsageError
// naming the flag and what is wrong.
void add_input_shape_spec(ImportOptions& options, const std::string& spec);

struct ImportInfo {
  int64_t opset = 0;
  std::string producer;  // "pytorch 1.13.0"
  int64_t folded_nodes = 0;  // ONNX nodes evaluated at import because their inputs were constant
};

// Reads and imports `path`. Throws ImportError with a message naming the file.
Graph import_onnx_file(const std::string& path, ImportInfo* info = nullptr, const ImportOptions& options = {});

// Imports serialized ModelProto bytes; `source` names them in error messages.
Graph import_onnx_bytes(const std::string& bytes, const std::string& source, ImportInfo* info = nullptr,
                        const ImportOptions& options = {});

// Reads a whole file into memory, with a clear error if it cannot be read.
std::string read_file_bytes(const std::string& path);

}  // namespace graphworld
