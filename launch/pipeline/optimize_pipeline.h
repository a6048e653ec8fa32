// The optimisation pipeline as one call: a model's graph optimised by a
// search or a trained policy, the result checked for equivalence in the
// executor (as searched, then as exported and read back:
// checked_candidate.h), timed against the original end to end
// (end_to_end_check.h), and OUT written: the optimised file when it is
// faster by the noise margin, else the original (byte for byte for a file,
// its export for a zoo graph). A result that is not equivalent is an Error
// and nothing is written. `graphworld optimize` parses its options into an
// OptimizeRequest, calls this and prints the outcome.
#pragma once

#include <functional>
#include <string>

#include "env/cost/cost_model.h"
#include "env/onnx/onnx_export.h"
#include "env/rules/rule_matcher.h"
#include "env/search/greedy_finish.h"
#include "env/search/search.h"
#include "launch/pipeline/checked_candidate.h"
#include "launch/pipeline/end_to_end_check.h"
#include "launch/pipeline/model_source.h"
#include "learner/policy_network.h"
#include "learner/policy_rollouts.h"

namespace graphworld {

struct OptimizeRequest {
  const LoadedModel* model = nullptr;
  const RuleMatcher* matcher = nullptr;
  CostModel* cost = nullptr;
  // The optimiser: a trained policy's rollouts when `policy` is set, else
  // the search `algorithm` (taso, greedy or random).
  PolicyNetwork* policy = nullptr;
  PolicyRolloutOptions rollouts;
  int64_t finish_steps = 0;  // with a policy: its result finished greedily (env/search/greedy_finish.h); 0: not
  std::string algorithm = "taso";
  SearchOptions search;  // its seed also seeds the equivalence check's inputs (seed + 1)
  std::string out;       // where the file goes
  double tolerance = 1e-3;
  ExportOptions export_options;
  EndToEndCheckOptions check;
  std::function<void(const std::string&)> say;  // progress lines; none when empty
};

struct OptimizeOutcome {
  SearchResult result;         // the optimiser's
  CheckedCandidate candidate;  // the checked file
  EndToEndCheck check;         // the end-to-end verdict: which file was written
  double check_s = 0;          // equivalence
  double write_s = 0;          // writing OUT
};

OptimizeOutcome optimize_model(const OptimizeRequest& request);

}  // namespace graphworld
