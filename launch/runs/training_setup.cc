#include "launch/runs/training_setup.h"

#include <ctime>
#include <filesystem>
#include <set>

#include <yaml-cpp/yaml.h>

#include "common/error.h"
#include "env/cost/analytic_cost_model.h"
#include "env/cost/cost_model_factory.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {
namespace fs = std::filesystem;

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", std::localtime(&now));
  return text;
}

// A file named in a config, as an absolute path: found from the working
// directory or, failing that, beside the config file. Anything else (a zoo
// name, "builtin", a missing file for the loader to report) is kept as is.
std::string resolve_config_file(const std::string& item, const std::string& config_path) {
  if (item.empty() || fs::path(item).is_absolute()) return item;
  if (fs::exists(item)) return fs::absolute(item).lexically_normal().string();
  if (!config_path.empty()) {
    const fs::path beside = fs::absolute(fs::path(config_path).parent_path() / item).lexically_normal();
    if (fs::exists(beside)) return beside.string();
  }
  return item;
}

// Rewrites the file-valued keys of a new run's config as absolute paths, so
// the run folder's config.yaml finds them from anywhere on resume.
Config with_absolute_paths(Config config, const std::string& config_path) {
  std::string graphs = "[";
  for (const std::string& spec : config.get_string_list("train.graphs")) {
    YAML::Emitter item;
    ModelEntry entry = parse_model_entry(spec);
    item << YAML::DoubleQuoted << resolve_config_file(entry.spec, config_path) + entry.flags;
    graphs += (graphs.size() > 1 ? ", " : "") + std::string(item.c_str());
  }
  config.set("train.graphs", graphs + "]", config_path);
  for (const char* key : {"env.rates", "env.rules"})  // plain strings: set takes the text as the value
    config.set(key, resolve_config_file(config.get_string(key), config_path), config_path);
  return config;
}

}  // namespace

std::vector<TrainingGraph> load_training_graphs(const std::vector<std::string>& specs) {
  std::vector<TrainingGraph> graphs;
  std::set<std::string> taken;
  for (const std::string& spec : specs) {
    LoadedModel model;
    std::string path;
    try {
      ModelEntry entry = parse_model_entry(spec);
      path = entry.spec;
      model = load_model(entry.spec, 1, entry.import);
    } catch (const Error& e) {
      throw UsageError("train.graphs: " + std::string(e.what()));
    }
    const std::string stem = model.from_zoo ? path : fs::path(path).stem().string();
    std::string name = stem;
    for (int k = 2; !taken.insert(name).second; ++k) name = stem + "-" + std::to_string(k);
    graphs.push_back({name, std::move(model.graph)});
  }
  return graphs;
}

std::unique_ptr<CostModel> training_cost_model(const TrainingOptions& o) {
  if (o.cost_model == "analytic" && o.rates == "builtin") return std::make_unique<AnalyticCostModel>();
  CostModelOptions options;
  options.kind = o.cost_model;
  if (o.rates != "builtin") options.rates_path = o.rates;
  options.gpu = o.gpu;
  options.gpu_table = o.gpu_table;
  return make_cost_model(options);
}

Config load_training_config(const std::string& config_path, const std::vector<std::string>& overrides) {
  return with_absolute_paths(load_config(training_config_schema(), config_path, overrides), config_path);
}

TrainingRun prepare_training_run(const CliArgs& args, const std::string& command) {
  const std::optional<std::string> resume = args.value("--resume");
  std::string config_path;
  std::vector<std::string> overrides;
  for (size_t i = 0; i < args.positional_count(); ++i) {
    const std::string& item = args.positional(i, "");
    if (item.find('=') != std::string::npos) overrides.push_back(item);
    else if (config_path.empty() && !resume) config_path = item;
    else throw UsageError("unexpected argument '" + item + "': give one CONFIG file (or --resume RUN) and key=value overrides");
  }
  std::string run_dir;
  if (resume) {
    run_dir = *resume;
    if (args.value("--run")) throw UsageError("--resume RUN continues RUN; --run does not apply");
    if (!fs::is_regular_file(run_dir + "/config.yaml"))
      throw UsageError(run_dir + " is not a training run folder (no config.yaml in it)");
    config_path = run_dir + "/config.yaml";
  } else if (config_path.empty()) {
    throw UsageError("'graphworld " + command + "' needs a CONFIG file (configs/train.yaml lists every key), or --resume RUN");
  }
  Config config = resume ? load_config(training_config_schema(), config_path, overrides)
                         : load_training_config(config_path, overrides);
  if (!resume) {
    const std::string stem = fs::path(config_path).stem().string();
    run_dir = args.value_or("--run", "runs/" + stem + "-" + timestamp());
  }
  TrainingRun run;
  run.options = training_options_from(config);
  run.config = std::move(config);
  run.run_dir = run_dir;
  run.resume = resume.has_value();
  return run;
}

}  // namespace graphworld
