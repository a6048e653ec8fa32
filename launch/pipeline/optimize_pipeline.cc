#include "launch/pipeline/optimize_pipeline.h"

#include <deque>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/stopwatch.h"

namespace graphworld {
namespace {

// Files removed when the scope ends, whatever happens in it.
class TemporaryFiles {
 public:
  TemporaryFiles() = default;
  TemporaryFiles(const TemporaryFiles&) = delete;
  TemporaryFiles& operator=(const TemporaryFiles&) = delete;
  ~TemporaryFiles() {
    std::error_code ignored;
    for (const std::string& path : paths_) std::filesystem::remove(path, ignored);
  }
  const std::string& add(std::string path) { return paths_.emplace_back(std::move(path)); }

 private:
  std::deque<std::string> paths_;  // stable references for add()'s callers
};

// The original kept byte for byte: temporary copy, then rename, so OUT is
// never half written. Copying a file onto itself leaves it alone.
void keep_original_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (std::filesystem::exists(to) && std::filesystem::equivalent(from, to, ec)) return;
  copy_file_atomically(from, to);
}

CandidateContext refusal_context(const OptimizeRequest& r) {
  CandidateContext context;
  context.made = "the optimised graph";
  context.original = r.model->source;
  context.instead = "not writing " + r.out;
  context.graph_advice = "A rule applied here is wrong for this model: rerun with --search greedy or --budget 0 "
                         "to narrow it down, and report the applied rules (--json)";
  context.export_advice = "The search's graph was equivalent; its ONNX export is not, which is a bug in graphworld's "
                          "exporter: please report it with the model and the applied rules (--json)";
  context.respelling_advice = "No rewrite applied, and the ONNX export with its grouped convs respelled is not "
                              "equivalent, which is a bug in graphworld's exporter: please report it with the model "
                              "(--spelling as-searched avoids it)";
  return context;
}

}  // namespace

OptimizeOutcome optimize_model(const OptimizeRequest& r) {
  if (!r.model || !r.matcher || !r.cost) throw UsageError("optimize_model needs a model, rules and a cost model");
  if (r.out.empty()) throw UsageError("optimize_model needs an output file");
  const LoadedModel& model = *r.model;
  OptimizeOutcome outcome;
  outcome.result = r.policy ? optimize_with_policy(model.graph, *r.matcher, *r.cost, *r.policy, r.rollouts)
                            : run_search(r.algorithm, model.graph, *r.matcher, *r.cost, r.search);
  if (r.policy && r.finish_steps > 0) {
    if (r.say) r.say("finishing the policy's best graph with greedy search");
    finish_greedily(outcome.result, *r.matcher, *r.cost, r.finish_steps);
  }
  r.cost->flush();

  // Equivalence on seeded random inputs, before anything is written: of
  // the optimiser's graph, then of that graph as exported (spelled for
  // runtimes that fuse, env/onnx/export_spelling.h) and read back, which is
  // what is timed and written.
  Stopwatch check_clock;
  const ReferenceOutputs reference = reference_outputs(model.graph, r.search.seed + 1);
  CandidateOptions candidate_options;
  candidate_options.tolerance = r.tolerance;
  candidate_options.export_options = r.export_options;
  outcome.candidate = check_candidate(reference, outcome.result.graph, !outcome.result.applied.empty(),
                                      candidate_options, refusal_context(r));
  outcome.check_s = check_clock.elapsed_s();

  // onnxruntime reads files: the candidate beside OUT, and the original as
  // the user gave it (a zoo graph is exported first).
  TemporaryFiles temporaries;
  const std::string candidate_file = temporaries.add(r.out + ".candidate.tmp");
  const std::string original_file = model.from_zoo ? temporaries.add(r.out + ".original.tmp") : model.source;
  const CheckedCandidate& candidate = outcome.candidate;
  if (!candidate.changed) {
    outcome.check.optimized_is_faster = false;
    outcome.check.verdict = "no rewrite lowered the cost and the spelling changed nothing";
  } else {
    if (r.check.runtime == VerifyRuntime::OnnxRuntime) {
      write_onnx_bytes(candidate.onnx_bytes, candidate_file);
      if (model.from_zoo) export_onnx_file(model.graph, original_file);
    }
    if (r.say && r.check.runtime != VerifyRuntime::None)
      r.say(std::string("timing the original against the optimised graph end to end (") +
            verify_runtime_name(r.check.runtime) + ", " + std::to_string(r.check.rounds) + " alternating rounds)");
    outcome.check = check_end_to_end(model.graph, *candidate.shipped, original_file, candidate_file, r.check);
  }
  Stopwatch write_clock;
  if (outcome.check.optimized_is_faster)
    write_onnx_bytes(candidate.onnx_bytes, r.out);
  else if (model.from_zoo)
    export_onnx_file(model.graph, r.out);
  else
    keep_original_file(model.source, r.out);
  outcome.write_s = write_clock.elapsed_s();
  return outcome;
}

}  // namespace graphworld
