// The acting half of training: E environments over a set of graphs, stepped
// together with one batched forward pass of the policy per step, producing
// a Rollout of T steps per environment.
//
// It is what an actor process runs (the distributed system puts it behind a
// socket), and what the single-process trainer runs on a second thread
// while it updates (or between updates, without overlap). Each
// reset picks a training graph uniformly and a fresh episode seed from the
// collector's own random stream, so a run is a function of its seed.
//
// Its state at a rollout boundary is small: per environment the graph and
// the episode so far (seed and actions; GraphEnv replays them exactly), the
// random stream, and the best graph found per training graph. A checkpoint
// stores that state, and restore() rebuilds the environments from it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "env/gym/graph_env.h"
#include "learner/policy_network.h"
#include "learner/rollout.h"

namespace graphworld {

struct TrainingGraph {
  std::string name;  // a zoo name or the file's stem: names metrics and best graphs
  Graph graph;
};

struct RolloutCollectorOptions {
  int32_t num_envs = 8;
  int32_t steps_per_env = 32;  // T: each rollout holds num_envs * T steps
  GraphEnvOptions env;
  uint64_t seed = 0;
};

// The best graph reached so far on one training graph.
struct BestGraph {
  double initial_cost_ms = 0;
  double cost_ms = 0;
  std::optional<Graph> graph;  // set once anything beat the initial graph
  double reduction_pct() const { return 100.0 * (initial_cost_ms - cost_ms) / initial_cost_ms; }
};

struct EnvSlotState {
  int32_t graph_index = 0;
  EpisodeRecord episode;  // since the last reset
  double best_cost_ms = 0;  // lowest cost this episode
};

struct RolloutCollectorState {
  std::vector<EnvSlotState> slots;
  std::string rng;               // the random stream, as text
  std::vector<double> best_cost_ms;  // per training graph (graphs are re-derived by replay, not stored)
};

// The state as text, and back; parse throws FormatError naming `what` and
// the line for anything malformed.
std::string serialize_collector_state(const RolloutCollectorState& state);
RolloutCollectorState parse_collector_state(const std::string& text, const std::string& what);

class RolloutCollector {
 public:
  // The matcher and cost model are shared and must outlive the collector.
  // Throws UsageError for an empty graph set or bad options.
  RolloutCollector(std::vector<TrainingGraph> graphs, const RuleMatcher& matcher, CostModel& cost,
                   RolloutCollectorOptions options);
  ~RolloutCollector();

  // T steps in every environment, acting with `policy` (sampled actions).
  // Returns nothing when `should_stop` turns true part way (it is polled
  // once per step), and puts the environments and the random stream back as
  // they were before the call; a better graph met on the way stays in best().
  std::optional<Rollout> collect(PolicyNetwork& policy, int64_t policy_version,
                                 const std::function<bool()>& should_stop = {});

  const std::vector<TrainingGraph>& graphs() const { return graphs_; }
  const std::vector<BestGraph>& best() const { return best_; }
  const RolloutCollectorOptions& options() const { return options_; }
  const CostModel& cost_model() const { return *cost_; }

  RolloutCollectorState state() const;
  // Throws FormatError when the state does not fit this collector's graphs
  // and options (another run's checkpoint).
  void restore(const RolloutCollectorState& state);

 private:
  struct Slot {
    int32_t graph_index = 0;
    std::unique_ptr<GraphEnv> env;
    double best_cost_ms = 0;
  };
  void reset_slot(Slot& slot);
  void note_cost(Slot& slot);

  std::vector<TrainingGraph> graphs_;
  std::vector<std::unique_ptr<GraphEnv>> prototypes_;  // one per graph, matched once, never stepped
  RolloutCollectorOptions options_;
  std::vector<Slot> slots_;
  std::mt19937_64 rng_;
  std::vector<BestGraph> best_;
  CostModel* cost_ = nullptr;
};

}  // namespace graphworld
