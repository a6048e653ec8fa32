#include "launch/model_source.h"

#include <filesystem>

#include "common/error.h"
#include "env/zoo/zoo.h"

namespace graphworld {

LoadedModel load_model(const std::string& spec, int64_t batch) {
  LoadedModel model;
  bool looks_like_file = spec.size() > 5 && spec.substr(spec.size() - 5) == ".onnx";
  if (looks_like_file || std::filesystem::exists(spec)) {
    model.graph = import_onnx_file(spec, &model.import_info);
    model.source = spec;
    return model;
  }
  for (const ZooModel& entry : zoo_models()) {
    if (entry.name == spec) {
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

}  // namespace graphworld
