// graphworld evaluate's work on one model: the model optimised by a trained
// agent (a model-free policy or a model-based run's controller), by greedy
// search and by TASO-style search, each result checked for
// equivalence (graphworld's executor, then onnxruntime on the exported file)
// and timed against the original in onnxruntime with its graph
// optimisations off and on. A result that is not equivalent is an Error,
// never a row.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "env/cost/cost_model.h"
#include "env/ops/latency_comparison.h"
#include "env/rules/rule_matcher.h"
#include "env/search/search.h"
#include "launch/pipeline/model_source.h"
#include "launch/pipeline/onnxruntime_comparison.h"

namespace graphworld {

// The trained agent: optimises a graph (cost model and rules as given to
// evaluate_model), deterministically for a given seed.
using AgentOptimizer = std::function<SearchResult(const Graph& graph, CostModel& cost)>;

struct EvaluationOptions {
  int32_t rollouts = 8;  // the agent's: one greedy and rollouts-1 sampled (what AgentOptimizer is built with)
  // The searches.
  int64_t greedy_budget = 1000, taso_budget = 1000;
  double alpha = 1.05;
  uint64_t seed = 0;
  double tolerance = 1e-3;  // largest relative output difference accepted as equal
  bool onnxruntime = true;  // equivalence and latency in onnxruntime too
  int latency_rounds = 5;
  int threads = 1;          // onnxruntime's intra-op threads while timing
  std::string scratch_dir;  // where the exported files are written while they are checked
};

struct MethodEvaluation {
  std::string method;  // "policy" (the agent), "greedy" or "taso"
  double optimized_cost_ms = 0, reduction_pct = 0;
  std::map<std::string, int> applied;  // rule name to times applied
  int64_t steps = 0;                   // rewrites tried (policy) or graphs explored (search)
  double optimize_s = 0, check_s = 0;
  SearchResult::Finish finish;       // the agent's greedy finish (not run for searches)
  double agent_reduction_pct = 0;    // the agent before its finish; reduction_pct without one
  double executor_max_rel_err = 0;
  std::optional<OnnxRuntimeOutputDifference> onnxruntime_difference;
  std::optional<LatencyComparison> onnxruntime_disabled, onnxruntime_all;  // original against optimised
};

struct ModelEvaluation {
  std::string model;
  int64_t ops = 0;
  double original_cost_ms = 0;
  std::vector<MethodEvaluation> methods;  // policy, greedy, taso
};

// Progress lines ("greedy: searching", ...) go to `progress` when set.
ModelEvaluation evaluate_model(const LoadedModel& model, const RuleMatcher& matcher, CostModel& cost,
                               const AgentOptimizer& agent, const EvaluationOptions& options,
                               const std::function<void(const std::string&)>& progress = nullptr);

}  // namespace graphworld
