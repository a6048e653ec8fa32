#include "worldmodel/model_based_agent.h"

#include <filesystem>
#include <optional>
#include <random>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/gym/graph_env.h"
#include "worldmodel/controller.h"

namespace graphworld {
std::string run_world_model_path(const std::string& run_dir) { return run_dir + "/world_model.gwworld"; }
std::string run_controller_path(const std::string& run_dir) { return run_dir + "/controller.gwctl"; }

struct ModelBasedAgent::Impl {
  std::string source;
  WorldModel model;
  mutable DreamController controller;  // forward() is not const
};

ModelBasedAgent::ModelBasedAgent(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelBasedAgent::ModelBasedAgent(ModelBasedAgent&&) noexcept = default;
ModelBasedAgent& ModelBasedAgent::operator=(ModelBasedAgent&&) noexcept = default;
ModelBasedAgent::~ModelBasedAgent() = default;

bool ModelBasedAgent::is_model_based_run(const std::string& path) {
  return std::filesystem::is_directory(path) && std::filesystem::exists(run_world_model_path(path));
}

ModelBasedAgent ModelBasedAgent::load_run(const std::string& run_dir) {
  if (!std::filesystem::exists(run_world_model_path(run_dir)))
    throw Error(run_dir + ": no world_model.gwworld; a model-based run ('model_based.enabled: true') writes one "
                          "when its first round's greedy episodes have been played");
  if (!std::filesystem::exists(run_controller_path(run_dir)))
    throw Error(run_dir + ": no controller.gwctl; it is written beside world_model.gwworld, so the run folder is incomplete");
  WorldModel model = WorldModel::load(run_world_model_path(run_dir));
  DreamController controller = load_controller(run_controller_path(run_dir), model);
  controller->eval();
  return ModelBasedAgent(std::make_unique<Impl>(Impl{run_dir, std::move(model), std::move(controller)}));
}

const WorldModelInfo& ModelBasedAgent::info() const { return impl_->model.info(); }
const std::string& ModelBasedAgent::source() const { return impl_->source; }

void ModelBasedAgent::check_fits(const std::string& library_hash, int32_t num_rules) const {
  const WorldModelInfo& info = impl_->model.info();
  if (info.rule_library_hash != library_hash || impl_->model.vocabulary().num_xfers() != num_rules)
    throw UsageError(impl_->source + ": the model-based agent was trained with another rule library (hash " +
                     info.rule_library_hash + ", " + std::to_string(impl_->model.vocabulary().num_xfers()) +
                     " rules) than this one (hash " + library_hash + ", " + std::to_string(num_rules) +
                     " rules); pass the library it was trained with (--rules)");
}

SearchResult ModelBasedAgent::optimize(const Graph& graph, const RuleMatcher& matcher, CostModel& cost,
                                       int32_t rollouts, int32_t max_steps, uint64_t seed) const {
  if (rollouts < 1) throw UsageError("--rollouts must be at least 1");
  Stopwatch clock;
  GraphEnvOptions options;
  options.max_steps = max_steps;
  options.location_rewards = impl_->model.info().best_locations;  // its rules go where they pay most
  GraphEnv env(graph, matcher, cost, options);
  env.reset(seed);
  SearchResult result;
  result.algorithm = "model-based";
  result.original_cost_ms = result.best_cost_ms = env.initial_cost_ms();
  result.graph = graph.pruned();
  if (env.done()) {  // no rule applies
    result.search_s = clock.elapsed_s();
    return result;
  }
  std::optional<Graph> best_graph;
  EpisodeRecord best_record;
  std::mt19937_64 rng(seed);
  auto track = [&](Observation, Action, float, float, const StepResult&) {
    ++result.explored;
    if (env.cost_ms() < result.best_cost_ms) {
      result.best_cost_ms = env.cost_ms();
      best_graph = env.graph();
      best_record = env.record();
    }
  };
  for (int32_t k = 0; k < rollouts; ++k)
    real_controller_episode(env, 0, impl_->model, impl_->controller, /*greedy=*/k == 0, /*explore=*/0.0, rng,
                            seed + static_cast<uint64_t>(k), track);
  if (best_graph) {
    result.graph = best_graph->pruned();
    result.applied = applied_rule_names(best_record, matcher);
  }
  result.generated = result.explored;
  result.search_s = clock.elapsed_s();
  return result;
}

}  // namespace graphworld
