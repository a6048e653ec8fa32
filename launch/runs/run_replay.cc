#include "launch/runs/run_replay.h"

#include "launch/runs/training_setup.h"
#include "learner/policy_file.h"
#include "learner/run_cost_table.h"

namespace graphworld {

RunReplay::RunReplay(const std::string& run_dir, const TrainingOptions& options,
                     const std::vector<std::string>& graph_names)
    : library_(options.rules.empty() ? default_rule_library() : load_rule_library(options.rules)) {
  matcher_ = std::make_unique<RuleMatcher>(library_.rules);
  hash_ = graphworld::rule_library_hash(library_);
  graphs_ = load_training_graphs(graph_names);
  // A configuration the run's table lacks is measured here, not asked for:
  // replay only re-prices what the run already priced.
  cost_ = actor_cost_model(run_dir.empty() ? "." : run_dir, options,
                           [](const std::string&, const std::function<double()>& measure) { return measure(); });
  replay_ = std::make_unique<ObservationReplay>(graphs_, *matcher_, *cost_, options.collector.env);
}

}  // namespace graphworld
