// graphworld bench policy [MODELS]: how fast the policy network is, per
// model: parameters, inference for one observation on one thread, batched
// inference, and PPO minibatch steps (samples/s) on observations collected
// by random walks through the model's GraphEnv.
#include <cstdio>
#include <algorithm>
#include <random>
#include <thread>

#include "common/error.h"
#include "common/json_writer.h"
#include "env/cost/analytic_cost_model.h"
#include "env/gym/graph_env.h"
#include "env/rules/rule_library.h"
#include "launch/bench_commands.h"
#include "launch/pipeline/model_source.h"
#include "learner/compute_device.h"
#include "learner/cuda_graph_work.h"
#include "learner/gemm_rate.h"
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
  options.workers = static_cast<int32_t>(args.int_value("--workers", 0));
  if (options.workers < 0) throw UsageError("--workers must be >= 0 (0: one per thread)");
  const ResolvedDevice device = resolve_compute_device(args.value_or("--device", "cpu"), "--device");
  if (!device.note.empty()) std::fprintf(stderr, "bench policy: %s\n", device.note.c_str());
  options.device = device.device;
  options.reference = !args.flag("--no-reference");
  options.cuda_graphs = args.flag("--cuda-graph");
  if (options.cuda_graphs && !CudaGraphWork::available())
    throw UsageError("--cuda-graph: " + CudaGraphWork::unavailable_reason());
  if (options.cuda_graphs && options.device.rfind("cuda", 0) != 0)
    throw UsageError("--cuda-graph replays PPO steps on a GPU, and this run is on " + options.device +
                     "; add --device cuda");
  const int threads = options.train_threads > 0 ? options.train_threads
                                                : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double gemm_gflops = measure_gemm_gflops(options.device, threads);
  const bool json = args.flag("--json");
  JsonWriter out;
  if (json) {
    out.begin_object().key("hidden").value(options.network.hidden).key("rounds").value(options.network.message_rounds)
        .key("minibatch").value(options.minibatch).key("device").value(options.device).key("threads").value(threads)
        .key("gemm_gflops").value(gemm_gflops).key("cuda_graph").value(options.cuda_graphs).key("models").begin_array();
  } else {
    std::printf("policy network: hidden %d, %d message rounds, %zu rules; PPO minibatch %d on %s%s\n",
                options.network.hidden, options.network.message_rounds, library.rules.size(), options.minibatch,
                options.device.c_str(), options.cuda_graphs ? ", steps replayed from a CUDA graph" : "");
    std::printf("%-10s %6s %7s %9s %9s %10s %8s %9s %10s %8s %8s %8s\n", "model", "nodes", "params", "infer ms",
                "p90 ms", "batch ms/o", "workers", "step ms", "samples/s", "before", "speedup", "GFLOP/s");
  }
  for (const std::string& name : models) {
    const LoadedModel model = load_model(name);
    const std::vector<Observation> observations = collect_observations(model.graph, matcher, options.minibatch, 1);
    const PolicyBenchmarkResult r = benchmark_policy(observations, options);
    const double speedup = r.reference_ppo_samples_per_s > 0 ? r.ppo_samples_per_s / r.reference_ppo_samples_per_s : 0;
    if (json) {
      out.begin_object().key("model").value(name).key("nodes").value(static_cast<int64_t>(observations[0].graph.num_nodes))
          .key("parameters").value(r.parameters).key("inference_median_ms").value(r.inference_median_ms)
          .key("inference_p90_ms").value(r.inference_p90_ms).key("batched_ms_per_observation")
          .value(r.batched_ms_per_observation).key("workers").value(r.workers).key("ppo_step_ms").value(r.ppo_step_ms)
          .key("ppo_samples_per_s").value(r.ppo_samples_per_s);
      if (options.reference)
        out.key("reference_ppo_samples_per_s").value(r.reference_ppo_samples_per_s).key("speedup").value(speedup);
      out.key("ppo_gflop_per_step").value(r.ppo_gflop_per_step).key("ppo_gflops").value(r.ppo_gflops).end_object();
    } else {
      std::printf("%-10s %6d %7lld %9.3f %9.3f %10.3f %8d %9.2f %10.0f %8.0f %7.2fx %8.1f\n", name.c_str(),
                  observations[0].graph.num_nodes, static_cast<long long>(r.parameters), r.inference_median_ms,
                  r.inference_p90_ms, r.batched_ms_per_observation, r.workers, r.ppo_step_ms, r.ppo_samples_per_s,
                  r.reference_ppo_samples_per_s, speedup, r.ppo_gflops);
    }
  }
  if (json) {
    out.end_array().key("peak_rss_mib").value(peak_rss_mib()).end_object();
    std::printf("%s\n", out.str().c_str());
  } else {
    std::printf("inference on 1 thread; batched inference on %d threads; PPO steps shared by the workers, each on one "
                "thread, and before (as the learner was) by one network on %d threads\n",
                threads, threads);
    std::printf("GFLOP/s: of the PPO step's matrix products; a %s sgemm on %d threads reaches %.1f GFLOP/s here. Peak "
                "RSS %.0f MiB\n",
                options.device == "cpu" ? "1024-wide" : "8192-wide", threads, gemm_gflops, peak_rss_mib());
  }
  return 0;
}

}  // namespace graphworld
