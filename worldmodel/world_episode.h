// The world model's view of real episodes: per step a small, fixed-size
// summary of the observation, the xfers it allowed (with their location
// counts), the action taken, the reward and whether the step ended the
// episode. Episodes come from the rollout store (replayed, see
// learner/observation_replay.h) or from playing a real environment; either
// way a world model never needs the graphs again once it has these.
//
// Torch-free: commands and tests include it without LibTorch's compile time.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/rollout_store.h"
#include "env/gym/graph_env.h"
#include "worldmodel/stored_episode_grouper.h"

namespace graphworld {

// Summary layout (kSummaryDim floats, each roughly in [0, 1]):
//   [0, 6)      the observation's globals (cost / initial cost first)
//   [6, 58)     each op type's share of the graph's nodes
//   [58, 110)   log2(1 + count of each op type) / 10
//   [110, 122)  mean over nodes of node features 52..63 (constant, output,
//               size, kernel, stride, group, fused activations, cost share)
inline constexpr int kSummaryOpTypes = 52;
inline constexpr int kSummaryNodeScalars = 12;
inline constexpr int kSummaryDim = 6 + 2 * kSummaryOpTypes + kSummaryNodeScalars;
static_assert(kSummaryOpTypes + kSummaryNodeScalars == kNodeFeatureDim, "the summary reads every node feature");
std::vector<float> summarize_observation(const Observation& observation);

struct WorldStep {
  std::vector<float> summary;       // [kSummaryDim]
  std::vector<int32_t> allowed;     // xfers allowed before the step, ascending, NO-OP excluded
  std::vector<int32_t> locations;   // matches of each allowed xfer (all, not capped at max_locations)
  int32_t xfer = 0, location = 0;   // the action (xfer == num_xfers: NO-OP)
  float reward = 0;
  bool done = false;
};

struct WorldEpisode {
  int32_t graph_index = 0;  // into the run's training graphs
  std::vector<WorldStep> steps;
  // The episode's last step ended it (false: the data stopped mid-episode).
  bool complete() const { return !steps.empty() && steps.back().done; }
};

WorldStep world_step_from(const Observation& observation, Action action, double reward, bool done);

// How many of an episode's first steps show how often a rule can usefully
// be applied: all of them, unless the episode ran into the horizon
// (`max_steps`, 0: none); then only up to its best step, the first with its
// highest reduction so far (0 if it never gained), because what follows is
// mostly a controller caught in a loop.
size_t useful_steps(const WorldEpisode& episode, int32_t max_steps);

// Groups stored steps into episodes: each (actor, env slot) in store order,
// an episode from its step 0 to its done. Observations are rebuilt by
// replaying (`replay_visit` is ObservationReplay::replay's shape); steps
// that cannot be rebuilt start no episode. Episodes the data leaves
// unfinished are kept (they still teach transitions).
using ReplayFunction = std::function<void(const std::vector<StoredStep>&,
                                          const std::function<void(size_t, const Observation&)>&)>;
std::vector<WorldEpisode> episodes_from_stored_steps(const std::vector<StoredStep>& steps, const ReplayFunction& replay);

// The same over a store read in consecutive slices (a store larger than
// memory): episodes still open at the end of a slice carry over to the
// next, and `emit` receives each one as it ends, in the order the whole
// store at once would give them. `replay` must carry its environments
// between calls, as ObservationReplay does.
class StoredEpisodeAssembler {
 public:
  using Emit = std::function<void(WorldEpisode&&)>;
  void add(const std::vector<StoredStep>& slice, const ReplayFunction& replay, const Emit& emit);
  // The episodes the data leaves unfinished, by (actor id, env slot).
  void finish(const Emit& emit);
  // Steps held in episodes not yet emitted.
  int64_t open_steps() const;

 private:
  StoredEpisodeGrouper<WorldEpisode> grouper_;
};

// Plays `count` episodes of `env`: `choose` picks each action from the
// environment's state (its observation(), and a copy of it to try steps on)
// and the number of steps already taken in the episode (location must be
// valid). Returns them with the graph index.
using ActionChooser = std::function<Action(const GraphEnv&, int32_t step, std::mt19937_64&)>;
std::vector<WorldEpisode> play_episodes(GraphEnv& env, int32_t graph_index, int32_t count, const ActionChooser& choose,
                                        uint64_t seed);

// Where the model-based agent applies an allowed `xfer` it chose: its
// first location in the matcher's order, or, when the observation prices
// every location (GraphEnvOptions::location_rewards), the one that pays
// most now (the first of equals) among its first max_locations matches. The
// dream's controller picks rules only; this picks their places.
int32_t chosen_location(const Observation& observation, int32_t xfer);

// The location of `xfer` that pays most within two rewrites: its own saving
// now plus the most any rewrite then saves (nothing when none pays, since
// the episode can stop there), each location tried on a copy of `env`; the
// first of equals. Where paying now is not the whole story: on
// ResNet-50-full the BatchNorm fold that costs least now has no Relu after
// it, while a fold that costs a little more lets its conv fuse the Relu that
// follows. Among places worth the same, the one that opens places for the
// most rules (rules_opened), then the first: the controller picks rules, so
// a place that gives one of them more to do keeps that choice open. On
// BERT merging a layer's q with k or with v saves the same within two
// rewrites, but only q with v lets their head transposes merge
// (merge-parallel-head-transposes), in every layer. `env` must price every location
// (GraphEnvOptions::location_rewards; UsageError otherwise). Costs one step
// of a copy of `env` per location.
int32_t look_ahead_location(const GraphEnv& env, int32_t xfer);

// How many rules have more matches in `after` than in `before`
// (Observation::match_count; for compact copies, which lack it, how many
// rules `after` allows that `before` does not). NO-OP aside.
int32_t rules_opened(const Observation& before, const Observation& after);

// Where the model-based agent puts `xfer` in `env`'s current state:
// look_ahead_location with `look_ahead` (model_based.look_ahead_locations),
// chosen_location otherwise.
int32_t place_rule(const GraphEnv& env, int32_t xfer, bool look_ahead);

// An exploring chooser: a uniformly random allowed xfer at its place_rule,
// NO-OP with probability `noop_probability`, when nothing else is allowed,
// and once `max_rewrites` steps are taken (0: no limit). With
// `random_locations`, at a uniformly random one of its locations instead:
// always taking a rule's first (or best-paying) match walks through the
// graph in one order, and states off that order (say, both of two parallel
// convs folded before either is merged) are never seen, nor the rules only
// they allow.
ActionChooser random_rule_chooser(double noop_probability, int32_t max_rewrites = 0, bool random_locations = false,
                                  bool look_ahead = false);

// Follows `plan` (xfer ids, as a dream chose them) at their place_rule for
// as long as the real environment allows each; NO-OP at the first step it
// does not (or when the plan runs out), which ends the episode there.
ActionChooser plan_chooser(std::vector<int32_t> plan, bool look_ahead = false);

// The xfers a world model knows: those allowed somewhere in its training
// data, ascending. Index i < size() is xfer xfers[i]; index size() is NO-OP.
// Rules never seen applicable cannot be predicted, so they are left out and
// the heads stay small (a few dozen of the 1,307 rules apply to any graph).
class XferVocabulary {
 public:
  static constexpr int32_t kMaxRules = 1'000'000;
  XferVocabulary() = default;
  XferVocabulary(std::vector<int32_t> xfers, int32_t num_xfers);
  static XferVocabulary from_episodes(const std::vector<WorldEpisode>& episodes, int32_t num_xfers);

  int32_t size() const { return static_cast<int32_t>(xfers_.size()); }
  int32_t noop() const { return size(); }
  int32_t num_xfers() const { return num_xfers_; }  // N of the rule library
  int32_t xfer(int32_t index) const;                 // index == size(): N (NO-OP)
  int32_t index_of(int32_t xfer) const;              // -1 when not in the vocabulary; N -> noop()
  const std::vector<int32_t>& xfers() const { return xfers_; }

 private:
  std::vector<int32_t> xfers_;
  std::vector<int32_t> index_;  // [N + 1]
  int32_t num_xfers_ = 0;
};

// Deterministic split: a seeded shuffle holds out round(fraction * count)
// episodes, at least one and not all when there are two or more.
void split_episodes(const std::vector<WorldEpisode>& all, double holdout_fraction, uint64_t seed,
                    std::vector<WorldEpisode>& train, std::vector<WorldEpisode>& held_out);

// The split of a model-based run, which learns while episodes arrive: the
// k-th episode to arrive (k = 1, 2, ...) is held out when k is a multiple
// of round(1 / fraction) (at least 2), for good. Offline training with the
// same rule over a store (in store order, counting whole episodes only)
// holds out the same episodes.
bool held_out_on_arrival(int64_t arrival, double holdout_fraction);
void split_episodes_by_arrival(const std::vector<WorldEpisode>& all, double holdout_fraction,
                               std::vector<WorldEpisode>& train, std::vector<WorldEpisode>& held_out);

// Both splits as flags over episode indices (true: held out), for episodes
// not held in memory (worldmodel/episode_source.h); `complete[i]` says
// whether episode i ended. The functions above are these.
std::vector<bool> held_out_by_shuffle(size_t count, double holdout_fraction, uint64_t seed);
std::vector<bool> held_out_by_arrival(const std::vector<bool>& complete, double holdout_fraction);

int64_t count_steps(const std::vector<WorldEpisode>& episodes);

}  // namespace graphworld
