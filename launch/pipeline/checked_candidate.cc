#include "launch/pipeline/checked_candidate.h"

#include "common/error.h"
#include "env/onnx/grouped_conv_spelling.h"
#include "env/onnx/onnx_import.h"
#include "env/ops/executor.h"
#include "launch/pipeline/output_compare.h"

namespace graphworld {
namespace {

// The executor's verdict on `graph` against the original's outputs.
double check_outputs(const ReferenceOutputs& reference, const Graph& graph, const std::string& made,
                     const CandidateContext& context, double tolerance, const std::string& advice) {
  const OutputDifference diff = compare_outputs(reference.outputs, Executor(graph).run(reference.inputs));
  if (diff.nonfinite_expected > 0)
    throw Error(context.original + " gives " + std::to_string(diff.nonfinite_expected) +
                " NaN or infinite output values on random inputs in [-1, 1), so the equivalence of " + made +
                " cannot be checked; " + context.instead + ". Check the model in 'graphworld run' first");
  if (!(diff.max_rel_err <= tolerance))
    throw Error(made + " does not compute what " + context.original + " computes (max relative error " +
                error_text(diff.max_rel_err) + " > tolerance " + error_text(tolerance) + "); " +
                context.instead + ". " + advice);
  return diff.max_rel_err;
}

}  // namespace

ReferenceOutputs reference_outputs(const Graph& original, uint64_t seed) {
  ReferenceOutputs reference;
  reference.inputs = random_inputs(original, seed);
  reference.outputs = Executor(original).run(reference.inputs);
  return reference;
}

CheckedCandidate check_candidate(const ReferenceOutputs& reference, const Graph& candidate, bool rewritten,
                                 const CandidateOptions& options, const CandidateContext& context) {
  CheckedCandidate checked;
  // First the optimiser's graph (a wrong rule shows here), then its export
  // as read back (a wrong export shows there).
  if (rewritten)
    checked.max_rel_err = check_outputs(reference, candidate, context.made, context, options.tolerance,
                                        context.graph_advice);
  // With no rewrite the spelling alone can still change the file (grouped
  // convs with narrow groups, env/onnx/grouped_conv_spelling.h); such a file
  // is checked like any other candidate.
  if (rewritten || options.always_export ||
      has_regroupable_conv(candidate, options.export_options.regroup_channel_block))
    checked.onnx_bytes = export_onnx_bytes(candidate, options.export_options, &checked.export_report);
  checked.changed = rewritten || checked.export_report.regrouped_convs > 0;
  if (!checked.changed && !options.always_export) std::string().swap(checked.onnx_bytes);
  if (checked.onnx_bytes.empty()) return checked;
  const std::string exported = context.made + " as exported to ONNX";
  checked.shipped = import_onnx_bytes(checked.onnx_bytes, exported + " (not yet written)");
  checked.max_rel_err = check_outputs(reference, *checked.shipped, exported, context, options.tolerance,
                                      rewritten ? context.export_advice : context.respelling_advice);
  return checked;
}

}  // namespace graphworld
