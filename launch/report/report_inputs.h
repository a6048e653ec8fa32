// What `graphworld report` reads: run folders (config.yaml and metrics.jsonl,
// as both trainers write them) and `graphworld evaluate --json` files.
// Plain structs, so the figure and page code needs no JSON or YAML library.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace graphworld {

// One metrics.jsonl row: every number in it by key, and the per-graph best
// reductions so far.
struct MetricsRow {
  std::map<std::string, double> values;
  std::map<std::string, double> best_reduction_pct;
  double get(const std::string& key, double missing = 0) const;
  bool has(const std::string& key) const { return values.count(key) > 0; }
};

struct RunData {
  std::string dir, name;  // name: the folder's last component
  bool model_based = false;
  double tau = 1;         // model_based.tau
  int64_t seed = 0;
  std::vector<std::string> graphs;  // train.graphs as configured
  std::string cost_model, rates;
  std::string gpu;  // env.gpu: the GPU a gpu cost model priced
  std::vector<MetricsRow> rows;     // in order
  std::string kind() const { return model_based ? "model-based" : "model-free"; }
};

// Error naming the folder when it holds no config.yaml or metrics.jsonl;
// FormatError naming file and line for a row that is not JSON (a last row
// cut short by a crash is skipped).
RunData read_run(const std::string& dir);

struct EvaluatedMethod {
  double optimized_cost_ms = 0, reduction_pct = 0;
  std::map<std::string, int64_t> applied;
  std::optional<double> opt_on_original_ms, opt_on_optimized_ms, opt_off_original_ms, opt_off_optimized_ms;
  std::optional<double> agent_alone_pct;  // the agent before its greedy finish (evaluate's "finish"); none without one
};

struct EvaluatedModel {
  std::string model;  // as evaluate printed it: a path or "zoo:NAME"
  double original_cost_ms = 0;
  std::map<std::string, EvaluatedMethod> methods;  // "policy", "greedy", "taso"
  std::string short_name() const;  // the zoo name, or the file's stem
};

struct EvaluationData {
  std::string label;  // LABEL of LABEL=FILE, else the policy file's stem
  std::string file, policy, cost_model;
  std::vector<EvaluatedModel> models;
};

// SPEC is FILE or LABEL=FILE, FILE the output of `graphworld evaluate --json`.
// FormatError naming the file and the missing key when it is not one.
EvaluationData read_evaluation(const std::string& spec);

}  // namespace graphworld
