// Resolves the MODEL argument of the CLI: an ONNX file path or a zoo name.
#pragma once

#include <string>

#include "env/graph/graph.h"
#include "env/onnx/onnx_import.h"

namespace graphworld {

class CliArgs;
struct CliOption;

struct LoadedModel {
  Graph graph;
  std::string source;      // the path, or "zoo:<name>"
  bool from_zoo = false;
  ImportInfo import_info;  // for ONNX files
};

// A path ending in .onnx, or any existing file, is imported with `import`
// (which fixes symbolic input dimensions); otherwise the name must be a zoo
// model (built with `batch`). Errors say which was tried.
LoadedModel load_model(const std::string& spec, int64_t batch = 1, const ImportOptions& import = {});

// The --input-shape option every command that reads a model declares, and
// the ImportOptions its values make.
CliOption input_shape_option();
ImportOptions import_options_from(const CliArgs& args);

// A model entry of a config (train.graphs): a path or zoo name, optionally
// followed by the same flags as the CLI: "det.onnx --input-shape x=1x3x640x640".
struct ModelEntry {
  std::string spec;
  ImportOptions import;
  std::string flags;  // the text after the spec, kept to rebuild the entry
};
ModelEntry parse_model_entry(const std::string& entry);

}  // namespace graphworld
