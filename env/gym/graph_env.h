// GraphEnv: graph rewriting as a Gym environment.
//
// An episode starts from one graph. Each step applies one substitution: the
// action names a rule (the xfer) and one of the places it matches (the
// location). The reward is the cost it saved, and the episode ends on NO-OP,
// when no rule applies any more, or after `max_steps` steps.
//
//   GraphEnv env(graph, matcher, cost_model, {});
//   Observation obs = env.reset(seed);
//   StepResult r = env.step({xfer, location});  // r.observation, r.reward, r.done, r.info
//
// Actions: xfer in [0, N] where N = num_xfers() (the matcher's rules) and N
// is NO-OP; location in [0, L) with L = max_locations. Locations of a rule
// are its first L matches in the matcher's deterministic order. An action
// that is out of range or masked throws UsageError and changes nothing; so
// does stepping a finished episode.
//
// Rewards (RewardKind):
//   Incremental  100 * (C[t-1] - C[t]) / C[0] each step; they sum to the total
//                relative reduction in percent.
//   Final        0 until the episode ends, then 100 * (C[0] - C[T]) / C[0].
//   Measured     0 until the episode ends, then the same with the executor's
//                real end-to-end latency in place of the cost model.
//
// Stepping is incremental: the rewriter re-matches only the touched region,
// the cost tracker re-prices only new and rewired ops, and only the mask rows
// of rules whose match count changed are rewritten. Behaviour is a function
// of the graph, the options, the seed and the actions: replay() of a saved
// EpisodeRecord reproduces an episode exactly. Copying the environment
// (clone()) gives an independent one, for search. The cost model and matcher
// are shared and must outlive every copy.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "env/cost/graph_cost.h"
#include "env/gym/episode_record.h"
#include "env/gym/observation.h"
#include "env/rules/graph_rewriter.h"

namespace graphworld {

enum class RewardKind { Incremental, Final, Measured };
RewardKind reward_kind_from_name(const std::string& name);  // "incremental" | "final" | "measured"
std::string reward_kind_name(RewardKind kind);

struct GraphEnvOptions {
  int32_t max_locations = 200;
  int32_t max_steps = 100;
  RewardKind reward = RewardKind::Incremental;
  // Measured reward: timed runs of the executor (after one warm-up).
  int32_t latency_repeats = 5;
  int32_t latency_threads = 0;  // 0: all cores
  // Fill Observation::location_reward: every allowed location is priced at
  // every step (env/search/rewrite_price.h, without building its graph).
  bool location_rewards = false;
};

struct Action {
  int32_t xfer = 0;
  int32_t location = 0;
  bool operator==(const Action& other) const = default;
};

struct StepInfo {
  double cost_ms = 0;          // C[t]
  double initial_cost_ms = 0;  // C[0]
  int32_t step = 0;            // steps taken so far
  std::string rule;            // the rule applied ("" for NO-OP)
  std::string end_reason;      // "no-op", "no-match", "max-steps" once done
  double initial_latency_ms = 0, latency_ms = 0;  // Measured reward only, at the end
};

struct StepResult {
  const Observation* observation = nullptr;  // owned by the env, valid until the next reset() or step()
  double reward = 0;
  bool done = false;
  StepInfo info;
};

class GraphEnv {
 public:
  // Validates the options (UsageError naming the bad one).
  GraphEnv(Graph graph, const RuleMatcher& matcher, CostModel& cost_model, GraphEnvOptions options = {});

  int32_t num_xfers() const { return static_cast<int32_t>(matcher_->num_rules()); }
  int32_t noop() const { return num_xfers(); }
  const GraphEnvOptions& options() const { return options_; }

  const Observation& reset(uint64_t seed = 0);
  StepResult step(Action action);
  // Throws UsageError (what is wrong with it) if `action` is not allowed now.
  void check_action(Action action) const;

  // An independent copy of the current state.
  std::unique_ptr<GraphEnv> clone() const { return std::make_unique<GraphEnv>(*this); }

  const Observation& observation() const { return observation_; }
  const Graph& graph() const { return rewriter_.graph(); }
  const GraphRewriter& rewriter() const { return rewriter_; }
  double cost_ms() const { return cost_.total_ms(); }
  double initial_cost_ms() const { return initial_cost_ms_; }
  int32_t steps() const { return static_cast<int32_t>(record_.actions.size()); }
  bool done() const { return done_; }
  // The seed and actions since reset(), with the initial graph's hash.
  const EpisodeRecord& record() const { return record_; }
  // reset(record.seed) and every action again; throws UsageError if the
  // record was made on another graph or an action is not allowed.
  void replay(const EpisodeRecord& record);

  // The match behind (xfer, location).
  const RuleMatch& match_at(Action action) const;

 private:
  void refresh_masks(bool all_rows);
  void refresh_graph_tuple();
  double measure_latency_ms(const Graph& graph) const;

  // The state reset() returns to, shared by copies (matching from scratch
  // once, not on every reset); initial_rewriter_->graph() is the input graph.
  uint64_t initial_hash_ = 0;
  std::shared_ptr<const GraphRewriter> initial_rewriter_;
  std::shared_ptr<const CostTracker> initial_cost_;
  const RuleMatcher* matcher_;
  GraphEnvOptions options_;
  GraphRewriter rewriter_;
  CostTracker cost_;
  double initial_cost_ms_ = 0;
  double initial_latency_ms_ = -1;  // measured lazily, once
  bool done_ = true;
  EpisodeRecord record_;
  // Per rule: where its matches start in rewriter_.matches() and how many.
  std::vector<int32_t> match_begin_, match_count_;
  size_t allowed_xfers_ = 0;
  std::vector<int32_t> op_to_node_;
  Observation observation_;
};

// A uniformly random allowed rule, then a uniformly random location of it;
// NO-OP only when no rule applies. For baselines, benchmarks and tests.
Action random_allowed_action(const Observation& observation, std::mt19937_64& rng);

}  // namespace graphworld
