#include "learner/observation_replay.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"

namespace graphworld {

ObservationReplay::ObservationReplay(const std::vector<TrainingGraph>& graphs, const RuleMatcher& matcher,
                                     CostModel& cost, const GraphEnvOptions& options) {
  prototypes_.reserve(graphs.size());
  for (const TrainingGraph& g : graphs) prototypes_.emplace_back(g.graph, matcher, cost, options);
}

ReplayReport ObservationReplay::replay(const std::vector<StoredStep>& steps,
                                       const std::function<void(size_t, const Observation&)>& visit) {
  ReplayReport report;
  for (size_t i = 0; i < steps.size(); ++i) {
    const StoredStep& s = steps[i];
    if (s.graph_index < 0 || s.graph_index >= static_cast<int32_t>(prototypes_.size()))
      throw FormatError("stored step " + std::to_string(i) + ": graph index " + std::to_string(s.graph_index) +
                        " is not one of the run's " + std::to_string(prototypes_.size()) + " graphs");
    Live& live = live_[{s.actor_id, s.env_slot}];
    const bool continues = live.env && live.graph_index == s.graph_index && live.seed == s.episode_seed &&
                           live.next_step == s.episode_step;
    if (!continues) {
      if (s.episode_step != 0) {  // an episode whose start we did not see
        live.env.reset();
        ++report.missed;
        continue;
      }
      live.env = prototypes_[static_cast<size_t>(s.graph_index)].clone();
      live.env->reset(s.episode_seed);
      live.graph_index = s.graph_index;
      live.seed = s.episode_seed;
      live.next_step = 0;
    }
    visit(i, live.env->observation());
    const Action action{s.xfer, s.location};
    try {
      live.env->check_action(action);
    } catch (const UsageError& e) {
      throw FormatError("stored step " + std::to_string(i) + " (actor " + std::to_string(s.actor_id) + ", episode seed " +
                        std::to_string(s.episode_seed) + ", step " + std::to_string(s.episode_step) + "): action (" +
                        std::to_string(s.xfer) + ", " + std::to_string(s.location) +
                        ") is not allowed there (" + e.what() +
                        "); the store was not written with this graph, rule library or env settings");
    }
    live.env->step(action);
    ++report.rebuilt;
    if (std::abs(live.env->cost_ms() - s.cost_ms) > 1e-9 * std::max(1.0, std::abs(s.cost_ms))) ++report.cost_mismatches;
    ++live.next_step;
    if (s.done) live.env.reset();
  }
  return report;
}

}  // namespace graphworld
