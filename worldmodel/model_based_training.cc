#include "worldmodel/model_based_training.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "common/error.h"
#include "worldmodel/controller.h"
#include "worldmodel/dream_trainer.h"
#include "worldmodel/world_model_modules.h"

namespace graphworld {

WorldModelTrainOptions world_model_training_for(const ModelBasedOptions& options, int32_t round, bool calibration) {
  WorldModelTrainOptions world;
  world.encoder_epochs = options.settings.encoder_epochs;
  world.epochs = options.settings.epochs;
  world.seed = options.seed + static_cast<uint64_t>(round);
  if (round > 1 || calibration) {
    world.encoder_epochs = 0;
    world.epochs = options.settings.later_epochs;
  }
  world.keep_controller_memory = calibration && options.settings.calibration_keeps_controller_memory;
  return world;
}

WorldModelConfig world_model_config(const ModelBasedSettings& settings) {
  WorldModelConfig config;
  config.latent_dim = settings.latent_dim;
  config.hidden = settings.hidden;
  config.components = settings.components;
  config.separate_controller_memory = settings.separate_controller_memory;
  return config;
}

namespace {

double mean_over_graphs(const ModelBasedRound& round, double GraphOutcome::*figure) {
  if (round.graphs.empty()) return 0.0;
  double sum = 0;
  for (const GraphOutcome& g : round.graphs) sum += g.*figure;
  return sum / static_cast<double>(round.graphs.size());
}

}  // namespace

double mean_real_reduction(const ModelBasedRound& round) {
  return mean_over_graphs(round, &GraphOutcome::real_best_reduction);
}

double mean_real_end_reduction(const ModelBasedRound& round) {
  return mean_over_graphs(round, &GraphOutcome::real_reduction);
}

bool replaces_kept_round(const GreedyOutcome& round, const GreedyOutcome& kept) {
  // Equal graphs give equal figures, but a mean over several graphs can
  // differ in its last bits with the order of the sum; a tolerance far
  // below any rewrite's saving treats those as equal.
  constexpr double kSame = 1e-9;
  if (round.best_reduction > kept.best_reduction + kSame) return true;
  if (round.best_reduction < kept.best_reduction - kSame) return false;
  return round.end_reduction >= kept.end_reduction - kSame;
}

std::optional<GreedyOutcome> mean_greedy_outcome(const std::map<std::string, GreedyOutcome>& by_graph,
                                                 const std::vector<std::string>& graphs) {
  std::vector<std::string> names = graphs;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.empty()) return std::nullopt;
  double best = 0, end = 0;
  for (const std::string& name : names) {
    const auto it = by_graph.find(name);
    if (it == by_graph.end()) return std::nullopt;
    best += it->second.best_reduction;
    end += it->second.end_reduction;
  }
  const auto n = static_cast<double>(names.size());
  return GreedyOutcome{best / n, end / n};
}

bool calibrates_after(const ModelBasedOptions& options, int32_t round) {
  return round >= options.settings.rounds && options.settings.calibration_episodes > 0;  // >=: a run resumed with fewer rounds
}

ModelBasedResult train_model_based(const std::vector<GraphEnv*>& envs, const std::vector<std::string>& names,
                                   int32_t num_xfers, const ModelBasedOptions& options,
                                   const std::function<void(const ModelBasedRound&)>& on_round,
                                   const std::string& controller_path) {
  if (envs.empty() || envs.size() != names.size()) throw UsageError("model-based training needs one name per graph");
  if (options.settings.rounds < 1) throw UsageError("model-based training needs rounds >= 1");
  // Rules go to their best-paying location exactly where the environments
  // price locations (place_rule); the world model records which.
  for (const GraphEnv* env : envs)
    if (env->options().location_rewards != options.settings.best_locations)
      throw UsageError(std::string("model-based training with best locations ") +
                       (options.settings.best_locations ? "on" : "off") + " needs environments that " +
                       (options.settings.best_locations ? "price" : "do not price") +
                       " every location (GraphEnvOptions::location_rewards)");
  if (options.settings.look_ahead_locations && !options.settings.best_locations)
    throw UsageError("placing rules by what they save within two rewrites (look-ahead locations) needs best "
                     "locations on: the environments must price every location");
  const bool look_ahead = options.settings.look_ahead_locations;
  if (!(options.settings.holdout > 0 && options.settings.holdout < 1)) throw UsageError("model-based training needs a held-out share in (0, 1)");
  const auto start = std::chrono::steady_clock::now();
  std::mt19937_64 rng(options.seed);
  // Each episode is put in the training or the held-out part once, when it
  // arrives: the MDN-RNN keeps its weights across rounds, so a reshuffle
  // would hold out episodes it has already learned.
  std::vector<WorldEpisode> data, held_out;
  int64_t arrived = 0;
  auto add = [&](WorldEpisode episode) {
    (held_out_on_arrival(++arrived, options.settings.holdout) ? held_out : data).push_back(std::move(episode));
  };
  ModelBasedResult result;
  int64_t real_steps = 0, dream_steps = 0;
  uint64_t episode_seed = options.seed * 1000003ULL;

  for (size_t g = 0; g < envs.size(); ++g) {
    auto episodes = play_episodes(*envs[g], static_cast<int32_t>(g), options.settings.random_episodes,
                                  random_rule_chooser(0.0, options.settings.random_steps, options.settings.random_locations,
                                                      look_ahead),
                                  episode_seed);
    episode_seed += static_cast<uint64_t>(options.settings.random_episodes);
    real_steps += count_steps(episodes);
    for (WorldEpisode& e : episodes) add(std::move(e));
  }
  WorldModelInfo info;
  info.max_steps = envs.front()->options().max_steps;
  info.best_locations = options.settings.best_locations;
  info.look_ahead_locations = look_ahead;
  info.feature_version = kObservationFeatureVersion;
  info.graphs = names;
  result.model = std::make_unique<WorldModel>(world_model_config(options.settings), XferVocabulary::from_episodes(data, num_xfers), info,
                                              options.seed);
  DreamController controller{nullptr};
  std::unique_ptr<DreamTrainer> trainer;
  // `count` real episodes in graph g by the controller, sampled, learned from.
  auto play_sampled = [&](size_t g, int32_t count, double explore) {
    for (int32_t e = 0; e < count; ++e) {
      RealEpisodeResult sampled = real_controller_episode(*envs[g], static_cast<int32_t>(g), *result.model, controller,
                                                          false, explore, rng, episode_seed++);
      real_steps += sampled.steps;
      add(std::move(sampled.episode));
    }
  };

  // What the world model has learned from so far (its file's trained_steps).
  int64_t learned_steps = 0;
  auto train_world_model = [&](int32_t round, bool calibration) {
    result.model->train(data, held_out, world_model_training_for(options, round, calibration));
    learned_steps = count_steps(data) + count_steps(held_out);
  };
  std::string kept_model_bytes, kept_controller_bytes;
  for (int32_t round = 1; round <= options.settings.rounds; ++round) {
    train_world_model(round, false);

    if (!trainer) {
      controller = make_controller(*result.model, options.seed);
      DreamTrainingOptions dream;
      dream.dream.batch = options.settings.dream_rows;
      dream.dream.tau = options.settings.tau;
      dream.dream.max_steps = info.max_steps;
      dream.dream.seed = options.seed;
      dream.dream.check_each_step = false;  // its actions come from the mask; checked per batch
      dream.horizon = options.settings.dream_horizon;
      dream.ppo = options.ppo;
      dream.step_cost = options.settings.step_cost;
      dream.dream_reward = options.settings.dream_reward;
      trainer = std::make_unique<DreamTrainer>(*result.model, controller, result.model->impl().starts, dream);
    }
    ModelBasedRound report;
    report.round = round;
    for (int32_t u = 0; u < options.settings.dream_updates; ++u) {
      const DreamUpdateReport r = trainer->update();
      dream_steps += r.dream_steps;
      if (r.episodes > 0) report.dream_return = r.mean_return;
    }

    if (calibrates_after(options, round)) {
      // The final controller's own episodes, then the world model once
      // more: the dream below predicts this controller, not the last one.
      // Sampled without added exploration: random rules would break the
      // long runs of one rule the calibration is there to show.
      for (size_t g = 0; g < envs.size(); ++g) play_sampled(g, options.settings.calibration_episodes, 0.0);
      train_world_model(round, true);
    }
    const std::vector<DreamEpisode> predicted =
        dream_greedy_episodes(*result.model, controller, result.model->impl().starts, options.settings.tau, options.seed);
    for (size_t g = 0; g < envs.size(); ++g) {
      RealEpisodeResult greedy = real_controller_episode(*envs[g], static_cast<int32_t>(g), *result.model, controller,
                                                         true, 0.0, rng, episode_seed++);
      real_steps += greedy.steps;
      GraphOutcome outcome;
      outcome.graph = names[g];
      outcome.real_reduction = greedy.reduction_percent;
      outcome.real_best_reduction = greedy.best_reduction_percent;
      for (const WorldStep& s : greedy.episode.steps) outcome.real_xfers.push_back(s.xfer);
      if (g < predicted.size()) {
        outcome.dream_reduction = predicted[g].predicted_reduction;
        outcome.dream_xfers = predicted[g].xfers;
      }
      report.graphs.push_back(std::move(outcome));
      add(std::move(greedy.episode));
      if (round == options.settings.rounds) continue;  // the last round's data would teach nothing more
      if (options.settings.verify_plans && g < predicted.size()) {
        std::vector<WorldEpisode> checked =
            play_episodes(*envs[g], static_cast<int32_t>(g), 1, plan_chooser(predicted[g].xfers, look_ahead), episode_seed++);
        real_steps += count_steps(checked);
        for (WorldEpisode& e : checked) add(std::move(e));
      }
      play_sampled(g, options.settings.episodes_per_round, options.settings.explore);
    }
    report.held_out = result.model->evaluate(held_out);
    report.real_steps = real_steps;
    report.dream_steps = dream_steps;
    report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.model->info().trained_steps = learned_steps;
    const GreedyOutcome round_outcome{mean_real_reduction(report), mean_real_end_reduction(report)};
    if (result.kept_round == 0 || replaces_kept_round(round_outcome, result.kept_real)) {
      result.kept_round = round;
      result.kept_real = round_outcome;
      kept_model_bytes = result.model->to_bytes();
      kept_controller_bytes = controller_to_bytes(controller);
    }
    result.rounds.push_back(report);
    if (on_round) on_round(report);
  }
  result.kept_model = std::make_unique<WorldModel>(WorldModel::from_bytes(kept_model_bytes, "the kept world model"));
  if (!controller_path.empty()) {
    DreamController kept = controller_from_bytes(kept_controller_bytes, *result.kept_model, "the kept controller");
    save_controller(controller_path, kept);
  }
  result.controller_path = controller_path;
  return result;
}

}  // namespace graphworld
