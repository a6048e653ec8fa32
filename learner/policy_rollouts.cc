#include "learner/policy_rollouts.h"

#include <memory>
#include <optional>
#include <random>

#include "common/error.h"
#include "common/stopwatch.h"
#include "learner/compute_threads.h"

namespace graphworld {


SearchResult optimize_with_policy(const Graph& graph, const RuleMatcher& matcher, CostModel& cost,
                                  PolicyNetwork& policy, const PolicyRolloutOptions& options) {
  if (options.threads < 1) throw UsageError("policy rollouts need at least one thread");
  ComputeThreads threads(options.threads);
  keep_freed_tensor_memory();
  if (options.rollouts < 1) throw UsageError("--rollouts must be at least 1");
  if (policy.config().num_xfers != static_cast<int32_t>(matcher.num_rules()))
    throw UsageError("the policy was trained with " + std::to_string(policy.config().num_xfers) +
                     " rules, this rule library has " + std::to_string(matcher.num_rules()));
  Stopwatch clock;
  SearchResult result;
  result.algorithm = "policy";
  GraphEnvOptions env_options = options.env;
  env_options.location_rewards = env_options.location_rewards || policy.config().location_rewards;
  GraphEnv prototype(graph, matcher, cost, env_options);
  prototype.reset(options.seed);
  result.original_cost_ms = result.best_cost_ms = prototype.initial_cost_ms();
  result.graph = graph.pruned();
  if (prototype.done()) {  // no rule applies: the input is the answer
    result.search_s = clock.elapsed_s();
    return result;
  }
  std::mt19937_64 rng(options.seed);
  EpisodeRecord best_record;  // the actions that reached the cheapest graph so far
  std::optional<Graph> best_graph;  // kept, not replayed: the budget then covers everything
  // Steps every live env of `envs` once, greedily or sampled, in one batch.
  auto step_all = [&](const std::vector<std::unique_ptr<GraphEnv>>& envs, bool greedy) {
    std::vector<GraphEnv*> live;
    std::vector<const Observation*> observations;
    for (const auto& env : envs)
      if (!env->done()) {
        live.push_back(env.get());
        observations.push_back(&env->observation());
      }
    if (live.empty()) return false;
    const std::vector<PolicyStep> steps = policy.act(observations, rng, greedy);
    for (size_t i = 0; i < live.size(); ++i) {
      live[i]->step(steps[i].action);
      ++result.explored;
      if (live[i]->cost_ms() < result.best_cost_ms) {
        result.best_cost_ms = live[i]->cost_ms();
        best_record = live[i]->record();
        best_graph = live[i]->graph();
      }
    }
    return true;
  };
  // The greedy rollout runs to its end first: it is usually the best, and
  // it is what a time budget always leaves room for.
  std::vector<std::unique_ptr<GraphEnv>> greedy;
  greedy.push_back(prototype.clone());
  while (step_all(greedy, /*greedy=*/true)) {
  }
  // Then the sampled ones, batched, while the budget lasts.
  std::vector<std::unique_ptr<GraphEnv>> sampled;
  for (int32_t k = 1; k < options.rollouts; ++k) {
    sampled.push_back(prototype.clone());
    sampled.back()->reset(options.seed + static_cast<uint64_t>(k));
  }
  // A step is not started unless the last one's duration still fits.
  double last_step_s = 0;
  while (true) {
    const double now = clock.elapsed_s();
    if (options.time_budget_s > 0 && now + last_step_s >= options.time_budget_s) break;
    if (!step_all(sampled, /*greedy=*/false)) break;
    last_step_s = clock.elapsed_s() - now;
  }
  if (best_graph) {
    result.graph = best_graph->pruned();
    result.applied = applied_rule_names(best_record, matcher);
  }
  result.generated = result.explored;
  result.search_s = clock.elapsed_s();
  return result;
}

}  // namespace graphworld
