#include "learner/policy_rollouts.h"

#include <memory>
#include <random>

#include "common/error.h"
#include "common/stopwatch.h"
#include "learner/compute_threads.h"

namespace graphworld {


SearchResult optimize_with_policy(const Graph& graph, const RuleMatcher& matcher, CostModel& cost,
                                  PolicyNetwork& policy, const PolicyRolloutOptions& options) {
  if (options.threads < 1) throw UsageError("policy rollouts need at least one thread");
  ComputeThreads threads(options.threads);
  if (options.rollouts < 1) throw UsageError("--rollouts must be at least 1");
  if (policy.config().num_xfers != static_cast<int32_t>(matcher.num_rules()))
    throw UsageError("the policy was trained with " + std::to_string(policy.config().num_xfers) +
                     " rules, this rule library has " + std::to_string(matcher.num_rules()));
  Stopwatch clock;
  SearchResult result;
  result.algorithm = "policy";
  GraphEnv prototype(graph, matcher, cost, options.env);
  prototype.reset(options.seed);
  result.original_cost_ms = result.best_cost_ms = prototype.initial_cost_ms();
  result.graph = graph.pruned();
  if (prototype.done()) {  // no rule applies: the input is the answer
    result.search_s = clock.elapsed_s();
    return result;
  }
  std::vector<std::unique_ptr<GraphEnv>> envs;
  for (int32_t k = 0; k < options.rollouts; ++k) {
    envs.push_back(prototype.clone());
    envs.back()->reset(options.seed + static_cast<uint64_t>(k));
  }
  std::mt19937_64 rng(options.seed);
  EpisodeRecord best_record;  // the actions that reached the cheapest graph so far
  while (true) {
    std::vector<GraphEnv*> live;
    for (auto& env : envs)
      if (!env->done()) live.push_back(env.get());
    if (live.empty()) break;
    // The greedy rollout and the sampled ones differ in how actions are
    // drawn, so they take one forward pass each.
    std::vector<const Observation*> greedy_obs, sampled_obs;
    std::vector<GraphEnv*> greedy_envs, sampled_envs;
    for (GraphEnv* env : live) {
      const bool greedy = env == envs[0].get();
      (greedy ? greedy_obs : sampled_obs).push_back(&env->observation());
      (greedy ? greedy_envs : sampled_envs).push_back(env);
    }
    std::vector<PolicyStep> steps;
    std::vector<GraphEnv*> order;
    if (!greedy_obs.empty()) {
      for (const PolicyStep& s : policy.act(greedy_obs, rng, /*greedy=*/true)) steps.push_back(s);
      order.insert(order.end(), greedy_envs.begin(), greedy_envs.end());
    }
    if (!sampled_obs.empty()) {
      for (const PolicyStep& s : policy.act(sampled_obs, rng)) steps.push_back(s);
      order.insert(order.end(), sampled_envs.begin(), sampled_envs.end());
    }
    for (size_t i = 0; i < order.size(); ++i) {
      order[i]->step(steps[i].action);
      ++result.explored;
      if (order[i]->cost_ms() < result.best_cost_ms) {
        result.best_cost_ms = order[i]->cost_ms();
        best_record = order[i]->record();
      }
    }
  }
  if (!best_record.actions.empty()) {
    // Replaying the best prefix gives its graph and the rules on the way.
    std::unique_ptr<GraphEnv> replay = prototype.clone();
    replay->replay(best_record);
    result.graph = replay->graph().pruned();
    for (const auto& a : best_record.actions)
      if (a.xfer < static_cast<int32_t>(matcher.num_rules())) result.applied.push_back(matcher.rules()[static_cast<size_t>(a.xfer)].name);
  }
  result.generated = result.explored;
  result.search_s = clock.elapsed_s();
  return result;
}

}  // namespace graphworld
