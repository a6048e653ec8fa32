// graphworld env-bench MODEL [--steps N] [--json]: how fast GraphEnv steps.
// graphworld env-bench MODEL --envs N --threads T: how fast N of them step
// together on T threads (VectorGraphEnv, what Python's VectorEnv steps).
//
// Takes random allowed actions (never NO-OP) and times each step(), which
// applies the rewrite, re-matches the touched region, updates masks and cost,
// and builds the next observation. Episodes that end are reset, untimed;
// with --envs, by the next step (auto-reset), and timed as steps, as a
// Python loop over VectorEnv counts them.
#include <algorithm>
#include <cstdio>
#include <random>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/latency.h"
#include "env/gym/graph_env.h"
#include "env/gym/vector_graph_env.h"
#include "env/rules/rule_library.h"
#include "launch/bench_commands.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"
#include "launch/pipeline/model_source.h"

namespace graphworld {
namespace {

// --locations, --max-steps and --location-rewards, as both benchmarks take them.
GraphEnvOptions env_options_from(const CliArgs& args) {
  GraphEnvOptions options;
  options.max_locations = static_cast<int32_t>(args.int_value("--locations", 200));
  options.max_steps = static_cast<int32_t>(args.int_value("--max-steps", 100));
  options.location_rewards = args.flag("--location-rewards");
  return options;
}

// --envs N: N environments stepped together, a random allowed action each
// (chosen on this thread, as a Python policy would), for --steps steps in
// all; steps/s over the whole loop. tests/bench/python_vector_env runs the
// same from Python.
int run_vector_env_bench(const CliArgs& args, const std::string& spec, int64_t envs) {
  const int64_t steps = args.int_value("--steps", 20000);
  const int64_t threads = args.int_value("--threads", 2);
  if (steps < 1) throw UsageError("--steps must be >= 1");
  if (envs < 1 || envs > 4096) throw UsageError("--envs must be in [1, 4096], got " + std::to_string(envs));
  if (threads < 1 || threads > 256) throw UsageError("--threads must be in [1, 256], got " + std::to_string(threads));
  const GraphEnvOptions options = env_options_from(args);
  const auto seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  const LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
  const RuleMatcher matcher(default_rule_library().rules);
  const CostModelOptions cost = cost_options_from(args);
  make_cost_model_with_progress(cost);  // a measured table is filled once, here, with progress
  VectorGraphEnv vector({model.graph}, static_cast<int32_t>(envs), matcher, [&] { return make_cost_model(cost); },
                        options, static_cast<int32_t>(threads), seed);
  vector.reset();
  std::mt19937_64 rng(seed);
  std::vector<Action> actions(vector.size());
  int64_t stepped = 0, episodes = 0;
  Stopwatch clock;
  while (stepped < steps) {
    for (size_t i = 0; i < vector.size(); ++i) {
      const VectorEnvSlot& s = vector.slot(i);
      actions[i] = s.reset_next ? Action{s.observation->num_xfers, 0} : random_allowed_action(*s.observation, rng);
    }
    vector.step(actions);
    stepped += static_cast<int64_t>(vector.size());
    for (size_t i = 0; i < vector.size(); ++i) episodes += vector.slot(i).reset_next ? 1 : 0;
  }
  const double seconds = clock.elapsed_ms() / 1000.0;
  const double per_s = static_cast<double>(stepped) / std::max(seconds, 1e-9);
  if (args.flag("--json")) {
    JsonWriter j;
    j.begin_object()
        .key("model").value(model.source)
        .key("envs").value(envs)
        .key("threads").value(threads)
        .key("steps").value(stepped)
        .key("episodes").value(episodes)
        .key("seconds").value(seconds)
        .key("steps_per_s").value(per_s)
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("%s: %lld environments on %lld threads, %lld steps (%lld episodes ended) in %.2f s\n",
              model.source.c_str(), static_cast<long long>(envs), static_cast<long long>(threads),
              static_cast<long long>(stepped), static_cast<long long>(episodes), seconds);
  std::printf("  %.0f steps/s (random allowed actions, auto-reset steps counted)\n", per_s);
  std::printf("  peak RSS %.0f MiB\n", peak_rss_mib());
  return 0;
}

int run_env_bench(const CliArgs& args) {
  const std::string& spec = args.positional(0, "a MODEL (an .onnx file or a zoo name)");
  args.expect_at_most(1);
  if (args.value("--envs") || args.value("--threads")) return run_vector_env_bench(args, spec, args.int_value("--envs", 1));
  const int64_t steps = args.int_value("--steps", 200);
  if (steps < 1) throw UsageError("--steps must be >= 1");
  const GraphEnvOptions options = env_options_from(args);
  const auto seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
  const RuleMatcher matcher(default_rule_library().rules);
  std::unique_ptr<CostModel> cost = make_cost_model_with_progress(cost_options_from(args));

  Stopwatch construct_clock;
  GraphEnv env(model.graph, matcher, *cost, options);
  const double construct_ms = construct_clock.elapsed_ms();
  LatencyStats reset = measure_latency([&] { env.reset(seed); }, 1, 10);

  std::mt19937_64 rng(seed);
  std::vector<double> step_ms;
  int64_t episodes = 1;
  const Observation* obs = &env.reset(seed);
  while (static_cast<int64_t>(step_ms.size()) < steps) {
    if (env.done()) {
      obs = &env.reset(seed + static_cast<uint64_t>(episodes++));
      if (env.done()) throw UsageError(model.source + ": no rule applies to this graph; there is nothing to step");
    }
    const Action action = random_allowed_action(*obs, rng);
    Stopwatch clock;
    StepResult r = env.step(action);
    step_ms.push_back(clock.elapsed_ms());
    obs = r.observation;
  }
  const double median = percentile(step_ms, 0.5), p99 = percentile(step_ms, 0.99);
  if (args.flag("--json")) {
    JsonWriter j;
    j.begin_object()
        .key("model").value(model.source)
        .key("step_median_ms").value(median)
        .key("step_p99_ms").value(p99)
        .key("reset_ms").value(reset.median_ms)
        .key("construct_ms").value(construct_ms)
        .key("steps").value(static_cast<int64_t>(step_ms.size()))
        .key("episodes").value(episodes)
        .key("rules").value(static_cast<int64_t>(matcher.num_rules()))
        .key("max_locations").value(static_cast<int64_t>(options.max_locations))
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("%s: %zu steps over %lld episodes, %zu rules, %d locations\n", model.source.c_str(), step_ms.size(),
              static_cast<long long>(episodes), matcher.num_rules(), options.max_locations);
  std::printf("  step   median %.3f ms   p99 %.3f ms\n", median, p99);
  std::printf("  reset  median %.3f ms   (first construction %.1f ms)\n", reset.median_ms, construct_ms);
  std::printf("  peak RSS %.0f MiB\n", peak_rss_mib());
  return 0;
}

}  // namespace

Subcommand env_bench_command() {
  std::vector<CliOption> options = {
      {"--steps", "", "N", "timed steps (default 200; with --envs, steps of all environments, 20000)"},
      {"--envs", "", "N", "step N environments together (VectorGraphEnv, as Python's VectorEnv) and report steps/s"},
      {"--threads", "", "T", "with --envs: threads that step them (default 2)"},
      {"--locations", "", "L", "locations per rule (default 200)"},
      {"--max-steps", "", "N", "episode length before it is reset (default 100)"},
      {"--seed", "", "S", "action sampling seed (default 0)"},
      {"--location-rewards", "", "", "price every allowed location at every step (network.location_rewards)"},
      {"--batch", "", "N", "batch size for zoo models (default 1)"},
      input_shape_option(),
      {"--json", "", "", "print one JSON object"},
  };
  for (const CliOption& o : cost_cli_options()) options.push_back(o);
  return {{"env-bench",
           "MODEL",
           "Time GraphEnv: reset() and step() with random allowed actions.",
           "A step applies the rewrite, re-matches the touched region, updates masks and cost and builds the\n"
           "next observation. JSON keys: step_median_ms, step_p99_ms, reset_ms, steps, model, construct_ms,\n"
           "episodes, rules, max_locations, peak_rss_mib. With --envs N: model, envs, threads, steps,\n"
           "episodes, seconds, steps_per_s, peak_rss_mib.",
           options},
          run_env_bench};
}

}  // namespace graphworld
