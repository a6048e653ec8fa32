#include "launch/runs/store_episodes.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "common/config.h"
#include "common/error.h"
#include "common/rollout_store.h"
#include "launch/runs/run_replay.h"
#include "launch/runs/training_setup.h"
#include "learner/policy_file.h"
#include "worldmodel/world_model.h"

namespace graphworld {

namespace {

// Errors from deep inside (replay, graph loading) name the store.
template <typename E>
E prefixed(const std::string& path, const Error& e) {
  const std::string what = e.what();
  return E(what.rfind(path, 0) == 0 ? what : path + ": " + what);
}

void read_one(const std::string& path, StoreEpisodes& out, std::map<std::string, int32_t>& graph_index,
              const std::string& first, const EpisodeSink& sink,
              const std::function<void(const std::string&)>& progress, int64_t slice_steps) {
  const RolloutStoreReader store(path);
  const RolloutStoreInfo& info = store.info();
  if (info.config_text.empty())
    throw FormatError(path + ": the store keeps no run config, so its observations cannot be rebuilt");
  const Config config = parse_config_text(training_config_schema(), info.config_text, path + " (its run config)");
  const TrainingOptions options = training_options_from(config);
  const std::string run_dir = std::filesystem::path(path).parent_path().string();
  RunReplay run(run_dir, options, info.graphs);
  const RuleMatcher& matcher = run.matcher();
  if (static_cast<int32_t>(matcher.num_rules()) != info.num_xfers)
    throw FormatError(path + ": the store was written with " + std::to_string(info.num_xfers) +
                      " rules, its config's library has " + std::to_string(matcher.num_rules()));
  const std::string& hash = run.rule_library_hash();
  const int32_t max_steps = options.collector.env.max_steps;
  const std::string reward = reward_kind_name(options.collector.env.reward);
  const bool best_locations = options.model_based.enabled && options.model_based.best_locations;
  const bool look_ahead = best_locations && options.model_based.look_ahead_locations;
  if (out.rule_library_hash.empty()) {
    out.rule_library_hash = hash;
    out.num_xfers = info.num_xfers;
    out.max_steps = max_steps;
    out.reward = reward;
    out.best_locations = best_locations;
    out.look_ahead_locations = look_ahead;
  } else if (best_locations != out.best_locations || look_ahead != out.look_ahead_locations) {
    throw UsageError(path + ": its run applied rules at " + rule_placement(best_locations, look_ahead) + ", " + first +
                     "'s at " + rule_placement(out.best_locations, out.look_ahead_locations) +
                     " (model_based.best_locations, look_ahead_locations); a world model learns one way of "
                     "placing rules");
  } else if (reward != out.reward) {
    throw UsageError("its run's rewards are '" + reward + "', those of " + first + " '" + out.reward +
                     "'; a world model learns one kind of reward");
  } else if (hash != out.rule_library_hash) {
    throw UsageError(path + ": its run used another rule library than " + first +
                     "; a world model learns one library's rules");
  } else if (max_steps != out.max_steps) {
    throw UsageError(path + ": its episodes last up to " + std::to_string(max_steps) + " steps, those of " +
                     first + " " + std::to_string(out.max_steps) + "; train on stores of one horizon");
  }
  ObservationReplay& replay = run.replay();
  ReplayReport report;
  int64_t episodes = 0;
  const StoredEpisodeAssembler::Emit emit = [&](WorldEpisode&& e) {
    if (e.graph_index < 0 || static_cast<size_t>(e.graph_index) >= info.graphs.size())
      throw FormatError("an episode names training graph " + std::to_string(e.graph_index) + " of " +
                        std::to_string(info.graphs.size()));
    const std::string& name = info.graphs[static_cast<size_t>(e.graph_index)];
    auto [it, added] = graph_index.emplace(name, static_cast<int32_t>(out.graphs.size()));
    if (added) out.graphs.push_back(name);
    e.graph_index = it->second;
    ++episodes;
    sink(std::move(e));
  };
  const ReplayFunction replay_slice = [&](const std::vector<StoredStep>& s,
                                          const std::function<void(size_t, const Observation&)>& visit) {
    const ReplayReport r = replay.replay(s, visit);
    report.rebuilt += r.rebuilt;
    report.missed += r.missed;
    report.cost_mismatches += r.cost_mismatches;
  };
  StoredEpisodeAssembler assembler;
  const int64_t total = store.steps();
  for (int64_t at = 0; at < total; at += slice_steps) {
    const int64_t count = std::min(slice_steps, total - at);
    assembler.add(store.read(at, count), replay_slice, emit);
    if (progress && total > slice_steps)
      progress(path + ": " + std::to_string(at + count) + " of " + std::to_string(total) + " steps replayed, " +
               std::to_string(episodes) + " episodes");
  }
  assembler.finish(emit);
  out.stored_steps += total;
  out.rebuilt_steps += report.rebuilt;
  out.missed_steps += report.missed;
  out.cost_mismatches += report.cost_mismatches;
  if (progress)
    progress(path + ": " + std::to_string(total) + " steps, " + std::to_string(report.rebuilt) + " rebuilt, " +
             std::to_string(episodes) + " episodes" +
             (report.cost_mismatches > 0
                  ? ", " + std::to_string(report.cost_mismatches) +
                        " steps priced otherwise than their run (rewards are the stored ones)"
                  : ""));
}

void check_paths(const std::vector<std::string>& paths) {
  if (paths.empty()) throw UsageError("no rollout store given (--from RUN/rollouts.h5)");
  for (const std::string& path : paths)
    if (!std::filesystem::is_regular_file(path))
      throw UsageError(path + ": no such rollout store (a run's RUN/rollouts.h5)");
}

}  // namespace

StoreEpisodes stream_store_episodes(const std::vector<std::string>& paths, const EpisodeSink& sink,
                                    const std::function<void(const std::string&)>& progress, int64_t slice_steps) {
  if (slice_steps < 1) throw UsageError("stores are read in slices of at least one step");
  check_paths(paths);
  StoreEpisodes out;
  std::map<std::string, int32_t> graph_index;
  for (const std::string& path : paths) {
    try {
      read_one(path, out, graph_index, paths.front(), sink, progress, slice_steps);
    } catch (const FormatError& e) {
      throw prefixed<FormatError>(path, e);
    } catch (const UsageError& e) {
      throw prefixed<UsageError>(path, e);
    } catch (const Error& e) {
      throw prefixed<Error>(path, e);
    }
  }
  return out;
}

StoreEpisodes load_store_episodes(const std::vector<std::string>& paths,
                                  const std::function<void(const std::string&)>& progress) {
  std::vector<WorldEpisode> episodes;
  StoreEpisodes out =
      stream_store_episodes(paths, [&](WorldEpisode&& e) { episodes.push_back(std::move(e)); }, progress);
  out.episodes = std::move(episodes);
  return out;
}

int64_t stored_steps_in(const std::vector<std::string>& paths) {
  check_paths(paths);
  int64_t steps = 0;
  for (const std::string& path : paths) steps += RolloutStoreReader(path).steps();
  return steps;
}

}  // namespace graphworld
