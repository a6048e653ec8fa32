// An optimiser's graph made ready to write or evaluate: checked against the
// original in the executor on seeded random inputs, exported as ONNX
// (spelled as asked), read back, and checked again, so that what a user
// deploys is what was checked. A difference beyond the tolerance is an
// Error that says who made the graph, what happens instead and what to do;
// nothing is written before it.
//
//   const ReferenceOutputs reference = reference_outputs(model.graph, seed);
//   const CheckedCandidate c = check_candidate(reference, result.graph, !result.applied.empty(), options, context);
//   if (c.changed) write_onnx_bytes(c.onnx_bytes, out);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "env/graph/graph.h"
#include "env/onnx/onnx_export.h"

namespace graphworld {

// The original's outputs on seeded random inputs, computed once per model.
struct ReferenceOutputs {
  std::vector<std::shared_ptr<const TensorData>> inputs;
  std::vector<std::shared_ptr<TensorData>> outputs;
};
ReferenceOutputs reference_outputs(const Graph& original, uint64_t seed);

struct CandidateOptions {
  double tolerance = 1e-3;  // largest relative output difference accepted as equal
  ExportOptions export_options;
  // Export and check the file even when nothing was rewritten and the
  // spelling changes nothing (evaluate reports every method's file).
  bool always_export = false;
};

// What a refusal says.
struct CandidateContext {
  std::string made;      // who made the graph: "the optimised graph", "the graph greedy made from bert"
  std::string original;  // what it must compute the same as: "resnet18.onnx", "the original"
  std::string instead;   // what happens instead: "not writing out.onnx", "refusing to report it"
  std::string graph_advice;      // when the optimiser's graph differs
  std::string export_advice;     // when only its ONNX export differs
  std::string respelling_advice; // when nothing was rewritten and the respelled export differs
};

struct CheckedCandidate {
  bool changed = false;   // the file differs from the original's: a rewrite, or grouped convs respelled
  std::string onnx_bytes; // the checked file; empty when neither changed nor always_export
  std::optional<Graph> shipped;  // onnx_bytes read back
  ExportReport export_report;
  double max_rel_err = 0;  // the last check's (the file's when there is one)
};

CheckedCandidate check_candidate(const ReferenceOutputs& reference, const Graph& candidate, bool rewritten,
                                 const CandidateOptions& options, const CandidateContext& context);

}  // namespace graphworld
