// A model-based run's agent outside training: the world model and the
// controller a run leaves in its folder (RUN/world_model.gwworld,
// RUN/controller.gwctl), optimising a graph the way the run's real episodes
// did: the controller acts on the real encoder's z and the world model's h
// (worldmodel/controller.h), one greedy episode and rollouts-1 sampled
// ones, and the cheapest graph any of them reached wins. What
// `graphworld evaluate` runs for a model-based policy. Torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "env/cost/cost_model.h"
#include "env/rules/rule_matcher.h"
#include "env/search/search.h"
#include "worldmodel/world_model.h"

namespace graphworld {

// Where a model-based run keeps its agent: written by its learner, read here.
std::string run_world_model_path(const std::string& run_dir);  // RUN/world_model.gwworld
std::string run_controller_path(const std::string& run_dir);    // RUN/controller.gwctl

class ModelBasedAgent {
 public:
  // Error naming the run folder when it is not a model-based run that has
  // trained its controller (no world_model.gwworld or controller.gwctl).
  static ModelBasedAgent load_run(const std::string& run_dir);
  // True when `path` is a folder holding a model-based run's agent.
  static bool is_model_based_run(const std::string& path);

  ModelBasedAgent(ModelBasedAgent&&) noexcept;
  ModelBasedAgent& operator=(ModelBasedAgent&&) noexcept;
  ~ModelBasedAgent();

  const WorldModelInfo& info() const;
  const std::string& source() const;  // the run folder

  // UsageError when the agent was trained with another rule library.
  void check_fits(const std::string& library_hash, int32_t num_rules) const;

  // No time limit: a seed gives one result. search_s is the rollouts' time;
  // explored counts the steps taken.
  SearchResult optimize(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, int32_t rollouts,
                        int32_t max_steps, uint64_t seed) const;

 private:
  struct Impl;
  explicit ModelBasedAgent(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
