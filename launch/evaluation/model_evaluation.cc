#include "launch/evaluation/model_evaluation.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/onnx/onnx_export.h"
#include "env/search/search.h"
#include "launch/pipeline/checked_candidate.h"
#include "launch/pipeline/output_compare.h"

namespace graphworld {
namespace {

std::string applied_list(const std::map<std::string, int>& applied) {
  std::string out;
  for (const auto& [rule, n] : applied) out += (out.empty() ? "" : ", ") + rule + " x" + std::to_string(n);
  return out.empty() ? "none" : out;
}

// A private folder (mkdtemp) for the exported files, removed with what it holds.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& parent) : path_(parent + "/graphworld-evaluate-XXXXXX") {
    if (!::mkdtemp(path_.data())) throw Error("cannot make a scratch folder in " + parent);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name + ".onnx"; }

 private:
  std::string path_;
};

}  // namespace

ModelEvaluation evaluate_model(const LoadedModel& model, const RuleMatcher& matcher, CostModel& cost,
                               const AgentOptimizer& agent, const EvaluationOptions& options,
                               const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  ModelEvaluation evaluation;
  evaluation.model = model.source;
  evaluation.ops = static_cast<int64_t>(model.graph.num_ops());
  const std::string dir = options.scratch_dir.empty() ? std::filesystem::temp_directory_path().string()
                                                      : options.scratch_dir;
  const ScratchFolder scratch(dir);
  // onnxruntime reads files: the original as the user gave it (a zoo graph
  // is exported first).
  std::string original_file = model.source;
  if (model.from_zoo && options.onnxruntime) {
    original_file = scratch.file("original");
    export_onnx_file(model.graph, original_file);
  }
  const ReferenceOutputs reference = reference_outputs(model.graph, options.seed + 1);
  CandidateOptions candidate_options;
  candidate_options.tolerance = options.tolerance;
  candidate_options.always_export = true;

  for (const char* method : {"policy", "greedy", "taso"}) {
    MethodEvaluation row;
    row.method = method;
    say(std::string(method) + ": optimising " + model.source);
    SearchResult result;
    if (row.method == "policy") {
      result = agent(model.graph, cost);
    } else {
      SearchOptions search;
      search.budget = row.method == "greedy" ? options.greedy_budget : options.taso_budget;
      search.alpha = options.alpha;
      search.seed = options.seed;
      result = run_search(row.method, model.graph, matcher, cost, search);
    }
    evaluation.original_cost_ms = result.original_cost_ms;
    row.optimized_cost_ms = result.best_cost_ms;
    row.reduction_pct = result.reduction_pct();
    row.applied = result.applied_counts();
    row.steps = result.explored;
    row.optimize_s = result.search_s;
    row.finish = result.finish;
    row.agent_reduction_pct = result.agent_reduction_pct();

    // Equivalence: the search's graph, then its ONNX export as read back
    // (what a user deploys), in the executor; then the exported file in
    // onnxruntime, an independent runtime.
    Stopwatch check_clock;
    const std::string what = "the graph " + row.method + " made from " + model.source;
    CandidateContext context;
    context.made = what;
    context.original = "the original";
    context.instead = "refusing to report it";
    context.graph_advice = "Rules applied: " + applied_list(row.applied) +
                           ". One of them is wrong for this model: check the rule library";
    context.export_advice = context.respelling_advice = context.graph_advice;
    const CheckedCandidate candidate =
        check_candidate(reference, result.graph, !result.applied.empty(), candidate_options, context);
    const std::string& bytes = candidate.onnx_bytes;
    row.executor_max_rel_err = candidate.max_rel_err;
    if (options.onnxruntime) {
      const std::string optimized_file = scratch.file(row.method);
      write_onnx_bytes(bytes, optimized_file);
      const std::string input_shapes = onnxruntime_input_shapes(model.graph);
      row.onnxruntime_difference =
          compare_onnxruntime_outputs(original_file, optimized_file, options.seed + 1, input_shapes);
      if (!(row.onnxruntime_difference->max_rel_err <= options.tolerance))
        throw Error(what + " does not compute what the original computes in onnxruntime (max relative error " +
                    error_text(row.onnxruntime_difference->max_rel_err) + " > tolerance " +
                    error_text(options.tolerance) + "); refusing to report it. Rules applied: " +
                    applied_list(row.applied));
      row.check_s = check_clock.elapsed_s();
      for (const char* level : {"disabled", "all"}) {
        say(std::string(method) + ": timing original against optimised in onnxruntime, optimisations " +
            (std::string(level) == "all" ? "on" : "off"));
        OnnxRuntimeComparisonOptions timing;
        timing.rounds = options.latency_rounds;
        timing.threads = options.threads;
        timing.opt_level = level;
        timing.input_shapes = input_shapes;
        (std::string(level) == "all" ? row.onnxruntime_all : row.onnxruntime_disabled) =
            compare_onnxruntime_latency(original_file, optimized_file, timing);
      }
    } else {
      row.check_s = check_clock.elapsed_s();
    }
    evaluation.methods.push_back(std::move(row));
  }
  return evaluation;
}

}  // namespace graphworld
