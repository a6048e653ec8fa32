// graphworld bench policy [MODELS]: how fast the policy network is, per
// model: parameters, inference for one observation on one thread, batched
// inference, and PPO minibatch steps (samples/s) on observations collected
// by random walks through the model's GraphEnv.
#include <cstdio>
#include <random>

#include "common/error.h"
#include "common/json_writer.h"
#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "launch/bench_commands.h"
#include "launch/pipeline/model_source.h"
#include "learner/policy_benchmark.h"

namespace graphworld {
namespace {

// Observations along random walks from the model's initial graph, so the
// samples are of the graphs an agent meets, not only the first one.
std::vector<Observation> collect_observations(const Graph& graph, const RuleMatcher& matcher, int32_t count,
                                              uint64_t seed) {
  AnalyticCostModel cost;
  GraphEnv env(graph, matcher, cost);
  std::mt19937_64 rng(seed);
  std::vector<Observation> out;
  const Observation* obs = &env.reset(seed);
  while (static_cast<int32_t>(out.size()) < count) {
    out.push_back(*obs);
    StepResult r = env.step(random_allowed_action(*obs, rng));
    obs = r.done ? &env.reset(seed + out.size()) : r.observation;
  }
  return out;
}

}  // namespace

int run_bench_policy(const CliArgs& args) {
  args.expect_at_most(2);
  const std::vector<std::string> models =
      split_comma_list(args.positional_count() > 1 ? args.positional(1, "MODELS") : "resnet50,bert");
  const RuleLibrary& library = default_rule_library();
  const RuleMatcher matcher(library.rules);
  PolicyBenchmarkOptions options;
  options.network.num_xfers = static_cast<int32_t>(library.rules.size());
  options.network.hidden = static_cast<int32_t>(args.int_value("--hidden", options.network.hidden));
  options.network.message_rounds = static_cast<int32_t>(args.int_value("--rounds", options.network.message_rounds));
  options.minibatch = static_cast<int32_t>(args.int_value("--batch", options.minibatch));
  options.repeats = static_cast<int32_t>(args.int_value("--repeats", options.repeats));
  options.train_threads = static_cast<int32_t>(args.int_value("--threads", 0));
  const bool json = args.flag("--json");
  JsonWriter out;
  if (json) {
    out.begin_object().key("hidden").value(options.network.hidden).key("rounds").value(options.network.message_rounds)
        .key("minibatch").value(options.minibatch).key("models").begin_array();
  } else {
    std::printf("policy network: hidden %d, %d message rounds, %zu rules; PPO minibatch %d\n", options.network.hidden,
                options.network.message_rounds, library.rules.size(), options.minibatch);
    std::printf("%-10s %7s %7s %11s %16s %16s %14s %14s\n", "model", "nodes", "params", "infer ms", "infer p90 ms",
                "batched ms/obs", "train step ms", "samples/s");
  }
  for (const std::string& name : models) {
    const LoadedModel model = load_model(name);
    const std::vector<Observation> observations = collect_observations(model.graph, matcher, options.minibatch, 1);
    const PolicyBenchmarkResult r = benchmark_policy(observations, options);
    if (json) {
      out.begin_object().key("model").value(name).key("nodes").value(static_cast<int64_t>(observations[0].graph.num_nodes))
          .key("parameters").value(r.parameters).key("inference_median_ms").value(r.inference_median_ms)
          .key("inference_p90_ms").value(r.inference_p90_ms).key("batched_ms_per_observation")
          .value(r.batched_ms_per_observation).key("train_step_ms").value(r.train_step_ms)
          .key("train_samples_per_s").value(r.train_samples_per_s).end_object();
    } else {
      std::printf("%-10s %7d %7lld %11.3f %16.3f %16.3f %14.2f %14.0f\n", name.c_str(), observations[0].graph.num_nodes,
                  static_cast<long long>(r.parameters), r.inference_median_ms, r.inference_p90_ms,
                  r.batched_ms_per_observation, r.train_step_ms, r.train_samples_per_s);
    }
  }
  if (json) {
    out.end_array().key("peak_rss_mib").value(peak_rss_mib()).end_object();
    std::printf("%s\n", out.str().c_str());
  } else {
    const std::string threads = options.train_threads == 1   ? "1 thread"
                                : options.train_threads > 1 ? std::to_string(options.train_threads) + " threads"
                                                            : "every core";
    std::printf("inference on 1 thread; batched inference and training on %s; peak RSS %.0f MiB\n", threads.c_str(),
                peak_rss_mib());
  }
  return 0;
}

}  // namespace graphworld
