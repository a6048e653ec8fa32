// `graphworld report`'s page: from run folders and evaluation files to one
// self-contained HTML file (figures inlined as SVG data URIs, no scripts or
// styles fetched), readable offline. Sections: the runs; real reduction
// against real env steps and wall time per graph, model-free and
// model-based runs on one plot; world-model losses per head; dream-predicted
// against real reduction; the rules the final policies applied per graph;
// cost and onnxruntime latency per graph for the original, greedy, TASO
// search and each evaluated policy; the temperature sweep.
#pragma once

#include <string>
#include <vector>

#include "launch/report/report_charts.h"
#include "launch/report/report_inputs.h"

namespace graphworld {

struct ReportPage {
  std::string html;
  int figures = 0;
};

ReportPage build_report_page(const std::vector<RunData>& runs, const std::vector<EvaluationData>& evaluations,
                             GnuplotRenderer& renderer);

// One point per model-based round: the dream's prediction of the greedy
// controller's reduction, and the reduction the controller's real episodes
// then reached (their mean, weighted by episodes). Exposed for tests.
struct DreamRound {
  double round = 0, predicted_pct = 0, real_pct = 0;
  int64_t real_episodes = 0;
};
std::vector<DreamRound> dream_rounds(const RunData& run);

}  // namespace graphworld
