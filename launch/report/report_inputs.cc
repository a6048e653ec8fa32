#include "launch/report/report_inputs.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"

namespace graphworld {
namespace {

using nlohmann::json;

std::string stem_of(const std::string& path) {
  std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();  // "runs/mb/"
  std::string name = normal.filename().string();
  for (const char* suffix : {".onnx", ".gwpolicy", ".json"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0)
      return name.substr(0, name.size() - s.size());
  }
  return name;
}

void read_config_keys(const YAML::Node& config, RunData& run);

void read_config(const std::string& path, RunData& run) {
  try {
    read_config_keys(YAML::LoadFile(path), run);
  } catch (const YAML::Exception& e) {
    throw FormatError(path + ": not a training run's config (" + std::string(e.what()) +
                      "); 'graphworld train' writes it with every key");
  }
}

void read_config_keys(const YAML::Node& config, RunData& run) {
  if (const YAML::Node graphs = config["train"]["graphs"]; graphs && graphs.IsSequence())
    for (const YAML::Node& g : graphs) run.graphs.push_back(g.as<std::string>());
  if (const YAML::Node seed = config["train"]["seed"]) run.seed = seed.as<int64_t>();
  if (const YAML::Node enabled = config["model_based"]["enabled"]) run.model_based = enabled.as<bool>();
  if (const YAML::Node tau = config["model_based"]["tau"]) run.tau = tau.as<double>();
  if (const YAML::Node cost = config["env"]["cost_model"]) run.cost_model = cost.as<std::string>();
  if (const YAML::Node rates = config["env"]["rates"]) run.rates = rates.as<std::string>();
  if (const YAML::Node gpu = config["env"]["gpu"]) run.gpu = gpu.as<std::string>();
}

const json& require(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw FormatError(where + ": no '" + key + "'; is it the output of 'graphworld evaluate --json'?");
  return object.at(key);
}

std::optional<double> optional_number(const json& object, const char* key) {
  if (!object.contains(key) || !object.at(key).is_number()) return std::nullopt;
  return object.at(key).get<double>();
}

void read_evaluation_body(const json& root, const std::string& spec, size_t eq, EvaluationData& data) {
  data.policy = require(root, "policy", data.file).get<std::string>();
  data.cost_model = require(root, "cost_model", data.file).get<std::string>();
  data.label = eq == std::string::npos ? stem_of(data.policy) : spec.substr(0, eq);
  for (const json& m : require(root, "models", data.file)) {
    EvaluatedModel model;
    model.model = require(m, "model", data.file).get<std::string>();
    const std::string where = data.file + " (model " + model.model + ")";
    model.original_cost_ms = require(m, "original_cost_ms", where).get<double>();
    for (const auto& [name, method] : require(m, "methods", where).items()) {
      EvaluatedMethod e;
      e.optimized_cost_ms = require(method, "optimized_cost_ms", where).get<double>();
      e.reduction_pct = require(method, "reduction_pct", where).get<double>();
      for (const auto& [rule, n] : require(method, "applied", where).items()) e.applied[rule] = n.get<int64_t>();
      e.opt_on_original_ms = optional_number(method, "onnxruntime_opt_on_original_ms");
      e.opt_on_optimized_ms = optional_number(method, "onnxruntime_opt_on_optimized_ms");
      e.opt_off_original_ms = optional_number(method, "onnxruntime_opt_off_original_ms");
      e.opt_off_optimized_ms = optional_number(method, "onnxruntime_opt_off_optimized_ms");
      if (method.contains("finish") && method["finish"].is_object())
        e.agent_alone_pct = optional_number(method["finish"], "agent_reduction_pct");
      model.methods[name] = std::move(e);
    }
    data.models.push_back(std::move(model));
  }
}

}  // namespace

double MetricsRow::get(const std::string& key, double missing) const {
  auto it = values.find(key);
  return it == values.end() ? missing : it->second;
}

std::string EvaluatedModel::short_name() const {
  if (model.rfind("zoo:", 0) == 0) return model.substr(4);
  return stem_of(model);
}

RunData read_run(const std::string& dir) {
  RunData run;
  run.dir = dir;
  run.name = std::filesystem::path(dir).lexically_normal().filename().string();
  if (run.name.empty()) run.name = std::filesystem::path(dir).lexically_normal().parent_path().filename().string();
  const std::string config = dir + "/config.yaml", metrics = dir + "/metrics.jsonl";
  if (!std::filesystem::is_directory(dir)) throw Error(dir + ": no such run folder");
  if (!std::filesystem::exists(config) || !std::filesystem::exists(metrics))
    throw Error(dir + ": not a training run (it needs config.yaml and metrics.jsonl, which 'graphworld train' writes)");
  read_config(config, run);
  std::ifstream in(metrics);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line))
    if (!line.empty()) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    json row;
    try {
      row = json::parse(lines[i]);
    } catch (const json::exception& e) {
      if (i + 1 == lines.size()) break;  // cut short by a crash mid-write
      throw FormatError(metrics + ":" + std::to_string(i + 1) + ": not a JSON row (" + e.what() + ")");
    }
    if (!row.is_object()) throw FormatError(metrics + ":" + std::to_string(i + 1) + ": not a JSON object");
    MetricsRow parsed;
    for (const auto& [key, value] : row.items()) {
      if (value.is_number()) parsed.values[key] = value.get<double>();
      if (key == "best_reduction_pct" && value.is_object())
        for (const auto& [graph, pct] : value.items())
          if (pct.is_number()) parsed.best_reduction_pct[graph] = pct.get<double>();
    }
    run.rows.push_back(std::move(parsed));
  }
  return run;
}

EvaluationData read_evaluation(const std::string& spec) {
  EvaluationData data;
  const size_t eq = spec.find('=');
  data.file = eq == std::string::npos ? spec : spec.substr(eq + 1);
  if (!std::filesystem::exists(data.file)) throw Error(data.file + ": no such evaluation file");
  json root;
  try {
    std::ifstream in(data.file);
    root = json::parse(in);
  } catch (const json::exception& e) {
    throw FormatError(data.file + ": not JSON (" + e.what() + "); write it with 'graphworld evaluate ... --json > FILE'");
  }
  try {
    read_evaluation_body(root, spec, eq, data);
  } catch (const json::exception& e) {
    throw FormatError(data.file + ": a value of the wrong type (" + e.what() +
                      "); is it the output of 'graphworld evaluate --json'?");
  }
  return data;
}

}  // namespace graphworld
