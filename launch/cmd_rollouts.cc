// graphworld rollouts inspect FILE [--json]
//
// Summarises a run's rollout store (RUN/rollouts.h5), also while the
// learner is writing it: it shows what has been flushed so far.
#include <cstdio>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/rollout_store.h"
#include "common/rollout_store_summary.h"
#include "launch/commands.h"

namespace graphworld {
namespace {

void print_text(const std::string& file, const RolloutStoreSummary& s) {
  std::printf("%s\n", file.c_str());
  std::printf("run              %s\n", s.info.run_id.c_str());
  std::printf("steps            %lld (flushed so far)\n", static_cast<long long>(s.steps));
  std::printf("episodes ended   %lld\n", static_cast<long long>(s.episodes_ended));
  if (s.steps > 0) {
    std::printf("policy versions  %lld to %lld\n", static_cast<long long>(s.min_policy_version),
                static_cast<long long>(s.max_policy_version));
    std::printf("mean reward      %.5f per step\n", s.reward_sum / static_cast<double>(s.steps));
  }
  std::printf("rules            %d\n", s.info.num_xfers);
  std::printf("actors           %zu\n", s.steps_by_actor.size());
  for (const auto& [id, steps] : s.steps_by_actor)
    std::printf("  actor %-6u   %lld steps\n", id, static_cast<long long>(steps));
  std::printf("graphs           %zu\n", s.info.graphs.size());
  for (size_t i = 0; i < s.graphs.size(); ++i) {
    const RolloutStoreSummary::PerGraph& g = s.graphs[i];
    std::printf("  %-24s %lld steps, %lld episodes ended", s.info.graphs[i].c_str(), static_cast<long long>(g.steps),
                static_cast<long long>(g.episodes_ended));
    if (g.steps > 0) std::printf(", lowest cost reached %.4f ms", g.lowest_cost_ms);
    std::printf("\n");
  }
}

void print_json(const std::string& file, const RolloutStoreSummary& s) {
  JsonWriter json;
  json.begin_object()
      .key("file").value(file)
      .key("run_id").value(s.info.run_id)
      .key("steps").value(s.steps)
      .key("episodes_ended").value(s.episodes_ended)
      .key("min_policy_version").value(s.min_policy_version)
      .key("max_policy_version").value(s.max_policy_version)
      .key("mean_reward").value(s.steps > 0 ? s.reward_sum / static_cast<double>(s.steps) : 0.0)
      .key("num_xfers").value(s.info.num_xfers)
      .key("actors").begin_array();
  for (const auto& [id, steps] : s.steps_by_actor)
    json.begin_object().key("id").value(static_cast<int64_t>(id)).key("steps").value(steps).end_object();
  json.end_array().key("graphs").begin_array();
  for (size_t i = 0; i < s.graphs.size(); ++i)
    json.begin_object()
        .key("name").value(s.info.graphs[i])
        .key("steps").value(s.graphs[i].steps)
        .key("episodes_ended").value(s.graphs[i].episodes_ended)
        .key("lowest_cost_ms").value(s.graphs[i].lowest_cost_ms)
        .end_object();
  json.end_array().end_object();
  std::printf("%s\n", json.str().c_str());
}

int run_rollouts(const CliArgs& args) {
  const std::string& action = args.positional(0, "an action: inspect");
  if (action != "inspect") throw UsageError("unknown rollouts action '" + action + "'; use 'rollouts inspect FILE'");
  const std::string& file = args.positional(1, "a rollout store FILE (RUN/rollouts.h5)");
  args.expect_at_most(2);
  const RolloutStoreReader store(file);
  const RolloutStoreSummary summary = summarize_rollout_store(store);
  if (args.flag("--json")) print_json(file, summary);
  else print_text(file, summary);
  return 0;
}

}  // namespace

Subcommand rollouts_command() {
  return {{"rollouts",
           "inspect FILE [--json]",
           "Summarise a run's rollout store (RUN/rollouts.h5), also while it is being written.",
           "Prints the run id, the steps flushed so far, episodes, the policy versions that acted, and steps\n"
           "per actor and per training graph with the lowest cost reached. A store a learner is writing is\n"
           "read as it stands at its last flush (every distributed.store_flush_s seconds).",
           {
               {"--json", "", "", "one JSON object instead of text"},
           }},
          run_rollouts};
}

}  // namespace graphworld
