#include "worldmodel/world_episode.h"

#include <algorithm>
#include <memory>
#include <cmath>
#include <map>
#include <utility>

#include "common/error.h"

namespace graphworld {

std::vector<float> summarize_observation(const Observation& observation) {
  std::vector<float> summary(kSummaryDim, 0.0f);
  const GraphTuple& g = observation.graph;
  for (size_t i = 0; i < g.globals.size() && i < 6; ++i) summary[i] = g.globals[i];
  std::vector<double> counts(kSummaryOpTypes, 0.0), means(kSummaryNodeScalars, 0.0);
  for (int32_t n = 0; n < g.num_nodes; ++n) {
    const float* f = g.node_features.data() + static_cast<size_t>(n) * kNodeFeatureDim;
    for (int k = 0; k < kSummaryOpTypes; ++k) counts[k] += f[k];
    for (int k = 0; k < kSummaryNodeScalars; ++k) means[k] += f[kSummaryOpTypes + k];
  }
  const double nodes = std::max(1, g.num_nodes);
  for (int k = 0; k < kSummaryOpTypes; ++k) {
    summary[6 + k] = static_cast<float>(counts[k] / nodes);
    summary[6 + kSummaryOpTypes + k] = static_cast<float>(std::log2(1.0 + counts[k]) / 10.0);
  }
  for (int k = 0; k < kSummaryNodeScalars; ++k) summary[6 + 2 * kSummaryOpTypes + k] = static_cast<float>(means[k] / nodes);
  return summary;
}

size_t useful_steps(const WorldEpisode& episode, int32_t max_steps) {
  if (max_steps <= 0 || episode.steps.size() < static_cast<size_t>(max_steps)) return episode.steps.size();
  double total = 0, best = 0;
  size_t through = 0;
  for (size_t t = 0; t < episode.steps.size(); ++t) {
    total += episode.steps[t].reward;
    if (total > best) {
      best = total;
      through = t + 1;
    }
  }
  return through;
}

WorldStep world_step_from(const Observation& observation, Action action, double reward, bool done) {
  WorldStep step;
  step.summary = summarize_observation(observation);
  for (int32_t x = 0; x < observation.num_xfers; ++x) {
    if (!observation.xfer_mask[x]) continue;
    step.allowed.push_back(x);
    // All the matches where the observation has them: a count capped at
    // max_locations would stay flat while a rule is used up.
    step.locations.push_back(observation.match_count.size() == static_cast<size_t>(observation.num_xfers)
                                 ? observation.match_count[static_cast<size_t>(x)]
                                 : observation.location_count(x));
  }
  step.xfer = action.xfer;
  step.location = action.location;
  step.reward = static_cast<float>(reward);
  step.done = done;
  return step;
}

void StoredEpisodeAssembler::add(const std::vector<StoredStep>& slice, const ReplayFunction& replay,
                                 const Emit& emit) {
  const auto ended = [&](WorldEpisode& episode, bool) { emit(std::move(episode)); };
  replay(slice, [&](size_t i, const Observation& observation) {
    const StoredStep& s = slice[i];
    WorldEpisode* episode = grouper_.place(s, ended);
    if (!episode) return;
    if (episode->steps.empty()) episode->graph_index = s.graph_index;
    episode->steps.push_back(world_step_from(observation, {s.xfer, s.location}, s.reward, s.done != 0));
    grouper_.step_added(s, ended);
  });
}

void StoredEpisodeAssembler::finish(const Emit& emit) {
  grouper_.finish([&](WorldEpisode& episode, bool) { emit(std::move(episode)); });
}

int64_t StoredEpisodeAssembler::open_steps() const { return grouper_.open_steps(); }

std::vector<WorldEpisode> episodes_from_stored_steps(const std::vector<StoredStep>& steps,
                                                     const ReplayFunction& replay) {
  std::vector<WorldEpisode> finished;
  const StoredEpisodeAssembler::Emit keep = [&](WorldEpisode&& e) { finished.push_back(std::move(e)); };
  StoredEpisodeAssembler assembler;
  assembler.add(steps, replay, keep);
  assembler.finish(keep);
  return finished;
}

std::vector<WorldEpisode> play_episodes(GraphEnv& env, int32_t graph_index, int32_t count, const ActionChooser& choose,
                                        uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<WorldEpisode> episodes;
  for (int32_t e = 0; e < count; ++e) {
    WorldEpisode episode;
    episode.graph_index = graph_index;
    const Observation* observation = &env.reset(seed + static_cast<uint64_t>(e));
    for (;;) {
      const Action action = choose(env, static_cast<int32_t>(episode.steps.size()), rng);
      WorldStep step = world_step_from(*observation, action, 0, false);
      const StepResult result = env.step(action);
      step.reward = static_cast<float>(result.reward);
      step.done = result.done;
      episode.steps.push_back(std::move(step));
      if (result.done) break;
      observation = result.observation;
    }
    episodes.push_back(std::move(episode));
  }
  return episodes;
}

int32_t chosen_location(const Observation& observation, int32_t xfer) {
  if (xfer < 0 || xfer >= observation.num_xfers || observation.location_reward.empty()) return 0;
  const int32_t begin = observation.location_begin[static_cast<size_t>(xfer)];
  const int32_t end = observation.location_begin[static_cast<size_t>(xfer) + 1];
  int32_t best = 0;
  for (int32_t e = begin + 1; e < end; ++e)
    if (observation.location_reward[static_cast<size_t>(e)] > observation.location_reward[static_cast<size_t>(begin + best)])
      best = e - begin;
  return best;
}

int32_t rules_opened(const Observation& before, const Observation& after) {
  // Full observations count every match; compact copies only whether a rule
  // is allowed.
  const bool counted = !before.match_count.empty() && !after.match_count.empty();
  int32_t opened = 0;
  const int32_t rules = std::min(before.num_xfers, after.num_xfers);
  for (int32_t x = 0; x < rules; ++x) {
    const auto i = static_cast<size_t>(x);
    opened += counted ? after.match_count[i] > before.match_count[i] : after.xfer_mask[i] && !before.xfer_mask[i];
  }
  return opened;
}

int32_t look_ahead_location(const GraphEnv& env, int32_t xfer) {
  const Observation& observation = env.observation();
  if (!env.options().location_rewards)
    throw UsageError("placing rules by what they save within two rewrites needs an environment that prices every "
                     "location (GraphEnvOptions::location_rewards; model_based.best_locations)");
  if (xfer < 0 || xfer >= observation.num_xfers) return 0;
  const int32_t count = observation.location_count(xfer);
  const double before_ms = env.cost_ms(), initial_ms = env.initial_cost_ms();
  // Places whose values differ by less than this (percentage points) are
  // equal: the same rewrite of two identical layers prices alike up to the
  // order of a sum.
  constexpr double kEqualValue = 1e-6;
  int32_t best = 0, best_opened = 0;
  double best_value = 0;
  for (int32_t location = 0; location < count; ++location) {
    std::unique_ptr<GraphEnv> copy = env.clone();
    const StepResult result = copy->step({xfer, location});
    // Percent of the initial cost, as rewards and location_reward are.
    double value = initial_ms > 0 ? 100.0 * (before_ms - result.info.cost_ms) / initial_ms : 0.0;
    const std::vector<float>& next = result.observation->xfer_reward;  // NO-OP's entry is 0
    if (!result.done && !next.empty()) value += std::max(0.0f, *std::max_element(next.begin(), next.end()));
    const int32_t opened = result.done ? 0 : rules_opened(observation, *result.observation);
    const bool better = value > best_value + kEqualValue;
    const bool equal = !better && value >= best_value - kEqualValue;
    if (location == 0 || better || (equal && opened > best_opened)) {
      best = location;
      best_value = value;
      best_opened = opened;
    }
  }
  return best;
}

int32_t place_rule(const GraphEnv& env, int32_t xfer, bool look_ahead) {
  return look_ahead ? look_ahead_location(env, xfer) : chosen_location(env.observation(), xfer);
}

ActionChooser plan_chooser(std::vector<int32_t> plan, bool look_ahead) {
  return [plan = std::move(plan), look_ahead](const GraphEnv& env, int32_t step, std::mt19937_64&) {
    const Observation& observation = env.observation();
    const auto i = static_cast<size_t>(step);
    if (i < plan.size() && plan[i] >= 0 && plan[i] < observation.num_xfers && observation.xfer_mask[static_cast<size_t>(plan[i])])
      return Action{plan[i], place_rule(env, plan[i], look_ahead)};
    return Action{observation.num_xfers, 0};
  };
}

ActionChooser random_rule_chooser(double noop_probability, int32_t max_rewrites, bool random_locations,
                                  bool look_ahead) {
  return [noop_probability, max_rewrites, random_locations, look_ahead](const GraphEnv& env, int32_t step,
                                                                        std::mt19937_64& rng) {
    const Observation& observation = env.observation();
    if (max_rewrites > 0 && step >= max_rewrites) return Action{observation.num_xfers, 0};
    std::vector<int32_t> allowed;
    for (int32_t x = 0; x < observation.num_xfers; ++x)
      if (observation.xfer_mask[x]) allowed.push_back(x);
    if (allowed.empty() || std::uniform_real_distribution<double>(0, 1)(rng) < noop_probability)
      return Action{observation.num_xfers, 0};
    const int32_t xfer = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
    if (random_locations)
      return Action{xfer, std::uniform_int_distribution<int32_t>(0, observation.location_count(xfer) - 1)(rng)};
    return Action{xfer, place_rule(env, xfer, look_ahead)};
  };
}

XferVocabulary::XferVocabulary(std::vector<int32_t> xfers, int32_t num_xfers) : xfers_(std::move(xfers)), num_xfers_(num_xfers) {
  // Checked before anything is sized by it: it may come from a file.
  if (num_xfers < 0 || num_xfers > kMaxRules)
    throw FormatError("a rule count of " + std::to_string(num_xfers) + " is outside [0, " + std::to_string(kMaxRules) + "]");
  index_.assign(static_cast<size_t>(num_xfers) + 1, -1);
  std::sort(xfers_.begin(), xfers_.end());
  xfers_.erase(std::unique(xfers_.begin(), xfers_.end()), xfers_.end());
  for (size_t i = 0; i < xfers_.size(); ++i) {
    if (xfers_[i] < 0 || xfers_[i] >= num_xfers)
      throw FormatError("xfer " + std::to_string(xfers_[i]) + " is outside the rule library's " +
                        std::to_string(num_xfers) + " rules");
    index_[static_cast<size_t>(xfers_[i])] = static_cast<int32_t>(i);
  }
  index_[static_cast<size_t>(num_xfers)] = size();
}

int32_t XferVocabulary::xfer(int32_t index) const {
  if (index < 0 || index > size()) throw UsageError("vocabulary index " + std::to_string(index) + " out of range");
  return index == size() ? num_xfers_ : xfers_[static_cast<size_t>(index)];
}

int32_t XferVocabulary::index_of(int32_t xfer) const {
  if (xfer < 0 || xfer > num_xfers_) return -1;
  return index_[static_cast<size_t>(xfer)];
}

std::vector<bool> held_out_by_shuffle(size_t count, double holdout_fraction, uint64_t seed) {
  if (!(holdout_fraction > 0 && holdout_fraction < 1)) throw UsageError("the held-out fraction must be in (0, 1)");
  std::mt19937_64 rng(seed);
  std::vector<size_t> order(count);
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  size_t hold = static_cast<size_t>(std::llround(holdout_fraction * static_cast<double>(count)));
  if (count >= 2) hold = std::clamp<size_t>(hold, 1, count - 1);
  std::vector<bool> is_held(count, false);
  for (size_t i = 0; i < hold && i < order.size(); ++i) is_held[order[i]] = true;
  return is_held;
}

void split_episodes(const std::vector<WorldEpisode>& all, double holdout_fraction, uint64_t seed,
                    std::vector<WorldEpisode>& train, std::vector<WorldEpisode>& held_out) {
  const std::vector<bool> is_held = held_out_by_shuffle(all.size(), holdout_fraction, seed);
  train.clear();
  held_out.clear();
  for (size_t i = 0; i < all.size(); ++i) (is_held[i] ? held_out : train).push_back(all[i]);
}

bool held_out_on_arrival(int64_t arrival, double holdout_fraction) {
  if (!(holdout_fraction > 0 && holdout_fraction < 1)) throw UsageError("the held-out fraction must be in (0, 1)");
  const int64_t every = std::max<int64_t>(2, std::llround(1.0 / holdout_fraction));
  return arrival % every == 0;
}

std::vector<bool> held_out_by_arrival(const std::vector<bool>& complete, double holdout_fraction) {
  // A run learns from whole episodes only; a store's unfinished ones train.
  std::vector<bool> is_held(complete.size(), false);
  int64_t arrival = 0;
  for (size_t i = 0; i < complete.size(); ++i)
    is_held[i] = complete[i] && held_out_on_arrival(++arrival, holdout_fraction);
  return is_held;
}

void split_episodes_by_arrival(const std::vector<WorldEpisode>& all, double holdout_fraction,
                               std::vector<WorldEpisode>& train, std::vector<WorldEpisode>& held_out) {
  std::vector<bool> complete(all.size());
  for (size_t i = 0; i < all.size(); ++i) complete[i] = all[i].complete();
  const std::vector<bool> is_held = held_out_by_arrival(complete, holdout_fraction);
  train.clear();
  held_out.clear();
  for (size_t i = 0; i < all.size(); ++i) (is_held[i] ? held_out : train).push_back(all[i]);
}

int64_t count_steps(const std::vector<WorldEpisode>& episodes) {
  int64_t n = 0;
  for (const WorldEpisode& e : episodes) n += static_cast<int64_t>(e.steps.size());
  return n;
}

}  // namespace graphworld
