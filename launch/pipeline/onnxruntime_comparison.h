// A/B latency of two ONNX files in onnxruntime, the runtime most users deploy
// with: runs tests/tools/ort_ab.mjs (onnxruntime-node) in a child process.
// The scripts are found in $GRAPHWORLD_ORT_TOOLS, else in the source tree
// this binary was built from; onnxruntime-node where those scripts look for
// it ($GRAPHWORLD_NODE_MODULES, else <repo>/build/node/node_modules, where
// launch/install-deps puts it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/graph/graph.h"
#include "env/ops/latency_comparison.h"

namespace graphworld {

struct OnnxRuntimeComparisonOptions {
  int rounds = 7;
  int iters = 10;            // runs of each model per round, at least
  double min_round_ms = 200;  // more runs per round for small models, up to this long
  int threads = 1;
  std::string opt_level = "all";  // onnxruntime's graph optimisation level
  // The graph inputs' shapes ("images=1x3x640x640;ids=1x16"), for models
  // whose files leave dimensions symbolic; see onnxruntime_input_shapes().
  std::string input_shapes;
};

// The input shapes of an imported graph in the scripts' --input-shapes form.
std::string onnxruntime_input_shapes(const Graph& graph);

// The result has the executor comparison's form (iters: the minimum asked for).
using OnnxRuntimeComparison = LatencyComparison;

// Throws Error naming what is missing (node, onnxruntime-node, the script)
// and how to install it, or onnxruntime's own message when a model fails.
OnnxRuntimeComparison compare_onnxruntime_latency(const std::string& original_path, const std::string& candidate_path,
                                                  const OnnxRuntimeComparisonOptions& options = {});

// How the graphs onnxruntime runs for two models differ after its own graph
// optimisations (`options.opt_level`): each model's optimised form is saved
// (tests/tools/ort_run.mjs --save-optimized) to a temporary file beside
// `candidate_path`, and their node counts compared (env/onnx/node_counts.h).
// "" when onnxruntime runs the same ops for both, else "MatMul 48→32, ...".
// Throws Error when onnxruntime cannot save one of them.
std::string compare_onnxruntime_graphs(const std::string& original_path, const std::string& candidate_path,
                                       const OnnxRuntimeComparisonOptions& options = {});

// How far two models' outputs are apart in onnxruntime (its graph
// optimisations off), on the same seeded random inputs (tests/tools/
// ort_compare.mjs): rel = max |a - b| / max |a| over each output, the largest.
struct OnnxRuntimeOutputDifference {
  double max_abs_err = 0, max_rel_err = 0;
  int outputs = 0;
};
OnnxRuntimeOutputDifference compare_onnxruntime_outputs(const std::string& original_path,
                                                        const std::string& candidate_path, uint64_t seed = 0,
                                                        const std::string& input_shapes = "");

// Throws Error saying what to install when node, onnxruntime-node or the
// script is missing: called before a long search, not after it.
void require_onnxruntime();

// The directory holding ort_ab.mjs and its siblings.
std::string onnxruntime_tools_dir();

}  // namespace graphworld
