#include "launch/pipeline/model_source.h"

#include <filesystem>
#include <sstream>

#include "common/error.h"
#include "env/zoo/zoo.h"
#include "launch/cli_args.h"

namespace graphworld {

LoadedModel load_model(const std::string& spec, int64_t batch, const ImportOptions& import) {
  LoadedModel model;
  bool looks_like_file = spec.size() > 5 && spec.substr(spec.size() - 5) == ".onnx";
  if (looks_like_file || std::filesystem::exists(spec)) {
    model.graph = import_onnx_file(spec, &model.import_info, import);
    model.source = spec;
    return model;
  }
  for (const ZooModel& entry : zoo_models()) {
    if (entry.name == spec) {
      if (!import.input_shapes.empty())
        throw UsageError("--input-shape applies to ONNX files; zoo model '" + spec + "' takes --batch instead");
      ZooOptions options;
      options.batch = batch;
      model.graph = build_zoo_model(spec, options);
      model.source = "zoo:" + spec;
      model.from_zoo = true;
      return model;
    }
  }
  std::string names;
  for (const ZooModel& entry : zoo_models()) names += (names.empty() ? "" : ", ") + entry.name;
  throw UsageError("'" + spec + "' is neither an ONNX file nor a zoo model name (zoo models: " + names + ")");
}

CliOption input_shape_option() {
  return {"--input-shape", "", "NAME=DIMS",
          "fix a graph input's symbolic dimensions, e.g. images=1x3x640x640 (repeat for each input)"};
}

ImportOptions import_options_from(const CliArgs& args) {
  ImportOptions options;
  for (const std::string& spec : args.values("--input-shape")) add_input_shape_spec(options, spec);
  return options;
}

ModelEntry parse_model_entry(const std::string& entry) {
  static const std::string kFlag = " --input-shape ";
  ModelEntry parsed;
  size_t first = entry.find(kFlag);
  parsed.spec = entry.substr(0, first);
  if (first == std::string::npos) return parsed;
  parsed.flags = entry.substr(first);
  std::istringstream words(parsed.flags);
  std::string word;
  while (words >> word) {
    if (word != "--input-shape")
      throw UsageError("'" + entry + "': '" + word + "' is not understood; a model entry is a path or zoo name, then "
                       "optionally --input-shape NAME=DIMS (repeatable)");
    if (!(words >> word)) throw UsageError("'" + entry + "': --input-shape needs NAME=DIMS after it");
    add_input_shape_spec(parsed.import, word);
  }
  return parsed;
}

}  // namespace graphworld
