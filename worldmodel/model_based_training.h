// The model-based agent trained in one process, round by round:
//   1. real episodes (first round: random ones that never stop by
//      themselves, so they reach the depths a trained controller goes to;
//      later: the controller's own, sampled with some exploration);
//   2. the world model learns from every real episode so far (the encoder
//      only in the first round: z must keep its meaning under a trained
//      controller);
//   3. the controller trains with PPO in the dream, from the real initial
//      states;
//   4. the controller runs greedily in each real graph, which measures it
//      and feeds the world model too. In the last round the final
//      controller first plays calibration_episodes sampled episodes per
//      graph and the world model learns from them, so the dream's
//      prediction, which the greedy episode is measured against, knows how
//      far that controller goes.
// Every real step is counted, evaluation included. This is what the
// sample-efficiency and dream-versus-real benchmarks run; the distributed
// system runs the same pieces in actors and the learner.
//
// Torch-free header.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "env/gym/graph_env.h"
#include "learner/ppo_learner.h"
#include "learner/training_config.h"
#include "worldmodel/world_model.h"

namespace graphworld {

struct ModelBasedOptions {
  // The schedule and sizes: the model_based.* keys of a run config, at the
  // key table's defaults unless set (learner/training_config.h says what
  // each means). Among them: random episodes before the first model, and
  // how far they go; the controller's sampled episodes per round and their
  // exploration; whether the dream's greedy plan is also played in the real
  // graph each round but the last (the world model then sees where its
  // dream was wrong); the last round's calibration episodes, learned from
  // before the final controller's greedy episode is predicted, and whether
  // that retraining keeps the controller's memory; the world model's sizes
  // and epochs; the dream's rows, horizon, temperature and step cost.
  ModelBasedSettings settings = default_model_based_settings();
  PpoOptions ppo;
  uint64_t seed = 0;
};

// The world model's shape from the settings.
WorldModelConfig world_model_config(const ModelBasedSettings& settings);

// The schedule's rules that this agent and the distributed learner
// (model_based_learner.h) share; each drives the rounds its own way.
//
// How the world model trains in `round` (1-based): the encoder only in
// round 1's first training, since z must keep its meaning under a trained
// controller; later rounds and the last round's calibration retraining
// train only the MDN-RNN, for later_epochs. Seeded per round.
WorldModelTrainOptions world_model_training_for(const ModelBasedOptions& options, int32_t round, bool calibration);
// Whether `round` ends, after its dream training, with calibration
// episodes and a world model trained once more on them.
bool calibrates_after(const ModelBasedOptions& options, int32_t round);

struct GraphOutcome {
  std::string graph;
  double real_reduction = 0;   // greedy controller in the real env, percent, at the episode's end
  // The cheapest graph that episode passed through, percent: the agent's
  // result, as `graphworld evaluate` takes it (a controller that goes one
  // rewrite too far still found the graph before it). Rounds are kept by it.
  double real_best_reduction = 0;
  double dream_reduction = 0;  // what the dream predicts for the same controller from the same start
  std::vector<int32_t> real_xfers, dream_xfers;  // the rules each chose, in order (N: NO-OP)
};

// What a round's greedy controller did in the real graphs, percent: the
// cheapest graph on its way and where its episode ended (one graph's, or
// means over the graphs).
struct GreedyOutcome {
  double best_reduction = 0;
  double end_reduction = 0;
};

struct ModelBasedRound {
  int32_t round = 0;
  int64_t real_steps = 0;   // cumulative
  int64_t dream_steps = 0;  // cumulative
  double wall_s = 0;        // cumulative
  WorldModelAccuracy held_out;
  double dream_return = 0;  // mean predicted reduction of the last dream update's episodes
  std::vector<GraphOutcome> graphs;
};

struct ModelBasedResult {
  std::vector<ModelBasedRound> rounds;
  std::unique_ptr<WorldModel> model;  // the last round's, which the reported dream gaps are of
  // The agent kept: the world model and controller of the round whose
  // greedy controller reached the most in the real graphs (the cheapest
  // graph on its way; mean over them). Of rounds that reached as much, the
  // one whose episodes end the highest (a controller that stops at the
  // graph it found, not one that goes past it), then the later. Later
  // rounds can do worse than an earlier one (a dream that overfits the
  // controller's own episodes), and those real episodes were played and
  // counted anyway, so the best one seen is kept.
  std::unique_ptr<WorldModel> kept_model;
  int32_t kept_round = 0;
  GreedyOutcome kept_real;  // its greedy controller's, means over the graphs
  std::string controller_path;  // where the kept controller was saved ("" if not asked)
};

// The mean over its graphs of a round's real greedy episodes' best
// reductions (GraphOutcome::real_best_reduction): what decides which
// round's agent is kept.
double mean_real_reduction(const ModelBasedRound& round);
// The same for where those episodes end (GraphOutcome::real_reduction): what
// decides between rounds that reached as much.
double mean_real_end_reduction(const ModelBasedRound& round);
// Whether a round whose greedy controller did `round` is kept over the
// agent kept so far, which did `kept`: more on the way, or as much and an
// end at least as high (the later of equal rounds).
bool replaces_kept_round(const GreedyOutcome& round, const GreedyOutcome& kept);

// What a distributed run's learner measures a round by: from its greedy
// episodes' outcomes by graph name, the means over the run's `graphs` (each
// name once). Nothing when some graph has no greedy episode: a mean over
// fewer graphs is not comparable.
std::optional<GreedyOutcome> mean_greedy_outcome(const std::map<std::string, GreedyOutcome>& by_graph,
                                                 const std::vector<std::string>& graphs);

// `envs[i]` plays graph `names[i]`; all share one matcher and cost model.
// `on_round` reports progress. If `controller_path` is not empty the kept
// round's controller is saved there.
ModelBasedResult train_model_based(const std::vector<GraphEnv*>& envs, const std::vector<std::string>& names,
                                   int32_t num_xfers, const ModelBasedOptions& options,
                                   const std::function<void(const ModelBasedRound&)>& on_round,
                                   const std::string& controller_path = "");

}  // namespace graphworld
