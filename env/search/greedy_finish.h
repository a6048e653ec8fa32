// Finishing an agent's result greedily: greedy search from the best graph
// an agent's rollouts reached, so that rewrites which still pay at once
// (a BatchNorm fold, an activation fusion the rollouts stopped short of)
// are not left undone. The agent chooses the path, which is where it can
// differ from a search; the finish only takes what greedy search would take
// from there.
//
// `optimize --policy` finishes by default (`--finish none` writes the
// agent's own result); `evaluate` judges the agent alone unless given
// `--finish greedy`. The learning tests and benchmarks judge the agent
// alone: where greedy search already finds TASO's figure, a policy that
// stops at once would reach it with a finish.
#pragma once

#include <cstdint>

#include "env/cost/cost_model.h"
#include "env/rules/rule_matcher.h"
#include "env/search/search.h"

namespace graphworld {

// Greedy search from `result.graph`, for at most `max_steps` rewrites. The
// rewrites it takes are appended to `result.applied`; `result.graph` and
// `result.best_cost_ms` become its result when cheaper; `result.finish`
// records what the agent alone had reached and what the finish took. The
// rollouts' `search_s` and `explored` are left as they were.
void finish_greedily(SearchResult& result, const RuleMatcher& matcher, CostModel& cost, int64_t max_steps);

}  // namespace graphworld
