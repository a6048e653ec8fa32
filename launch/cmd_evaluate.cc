// graphworld evaluate POLICY MODELS... [--json]
//
// A trained policy beside the searches it replaces: each model optimised by
// the policy, by greedy search and by TASO-style search, with cost,
// equivalence (executor and onnxruntime), onnxruntime latency before and
// after (its graph optimisations off and on) and time. The JSON is what
// `graphworld report --evaluation` draws its bars and rule heatmap from.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/json_writer.h"
#include "common/process_memory.h"
#include "env/rules/rule_library.h"
#include "env/search/greedy_finish.h"
#include "learner/policy_file.h"
#include "learner/policy_rollouts.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"
#include "launch/evaluation/model_evaluation.h"
#include "launch/pipeline/model_source.h"
#include "launch/pipeline/policy_location.h"
#include "worldmodel/model_based_agent.h"

namespace graphworld {
namespace {

void write_latency(JsonWriter& j, const std::string& prefix, const std::optional<LatencyComparison>& timing) {
  if (!timing) {
    j.key(prefix + "_original_ms").null_value().key(prefix + "_optimized_ms").null_value()
        .key(prefix + "_speedup").null_value();
    return;
  }
  j.key(prefix + "_original_ms").value(timing->original_ms).key(prefix + "_optimized_ms").value(timing->candidate_ms)
      .key(prefix + "_speedup").value(timing->speedup);
}

void write_model(JsonWriter& j, const ModelEvaluation& e) {
  j.begin_object().key("model").value(e.model).key("ops").value(e.ops).key("original_cost_ms").value(e.original_cost_ms)
      .key("methods").begin_object();
  for (const MethodEvaluation& m : e.methods) {
    j.key(m.method).begin_object()
        .key("optimized_cost_ms").value(m.optimized_cost_ms)
        .key("reduction_pct").value(m.reduction_pct)
        .key("applied").begin_object();
    for (const auto& [rule, n] : m.applied) j.key(rule).value(n);
    j.end_object()
        .key("steps").value(m.steps)
        .key("optimize_s").value(m.optimize_s)
        .key("finish");
    if (m.finish.ran)
      j.begin_object().key("steps").value(m.finish.steps).key("time_s").value(m.finish.seconds)
          .key("agent_cost_ms").value(m.finish.agent_cost_ms).key("agent_reduction_pct").value(m.agent_reduction_pct)
          .end_object();
    else
      j.null_value();
    j
        .key("check_s").value(m.check_s)
        .key("equivalent").value(true)
        .key("executor_max_rel_err").value(m.executor_max_rel_err)
        .key("onnxruntime_max_rel_err");
    if (m.onnxruntime_difference) j.value(m.onnxruntime_difference->max_rel_err);
    else j.null_value();
    write_latency(j, "onnxruntime_opt_off", m.onnxruntime_disabled);
    write_latency(j, "onnxruntime_opt_on", m.onnxruntime_all);
    j.end_object();
  }
  j.end_object().end_object();
}

void print_model(const ModelEvaluation& e) {
  std::printf("%s (%lld ops), cost %.4f ms\n", e.model.c_str(), static_cast<long long>(e.ops), e.original_cost_ms);
  std::printf("  %-7s %12s %9s %9s %9s %19s %19s\n", "method", "cost ms", "less", "time s", "max err",
              "ort opt off ms", "ort opt on ms");
  for (const MethodEvaluation& m : e.methods) {
    auto latency = [](const std::optional<LatencyComparison>& t) {
      char text[40];
      if (!t) return std::string("-");
      std::snprintf(text, sizeof(text), "%.3f -> %.3f", t->original_ms, t->candidate_ms);
      return std::string(text);
    };
    std::printf("  %-7s %12.4f %8.2f%% %9.2f %9.2g %19s %19s\n", m.method.c_str(), m.optimized_cost_ms, m.reduction_pct,
                m.optimize_s, m.onnxruntime_difference ? m.onnxruntime_difference->max_rel_err : m.executor_max_rel_err,
                latency(m.onnxruntime_disabled).c_str(), latency(m.onnxruntime_all).c_str());
    if (m.finish.ran)
      std::printf("  %-7s %21.2f%%   (the agent before its greedy finish of %lld rewrites, %.2f s)\n", "",
                  m.agent_reduction_pct, static_cast<long long>(m.finish.steps), m.finish.seconds);
  }
}

int run_evaluate(const CliArgs& args) {
  const std::string& policy_spec =
      args.positional(0, "a POLICY (a .gwpolicy file, 'default', or a model-based run folder)");
  if (args.positional_count() < 2)
    throw UsageError("evaluate needs at least one MODEL after the policy (an .onnx file or a zoo name)");
  EvaluationOptions options;
  const int64_t rollouts = args.int_value("--rollouts", 8);
  if (rollouts < 1 || rollouts > 4096) throw UsageError("--rollouts must be in [1, 4096]");
  options.rollouts = static_cast<int32_t>(rollouts);
  options.greedy_budget = args.int_value("--greedy-budget", 1000);
  options.taso_budget = args.int_value("--budget", 1000);
  if (options.greedy_budget < 0 || options.taso_budget < 0) throw UsageError("--budget and --greedy-budget must be >= 0");
  options.alpha = args.double_value("--alpha", 1.05);
  options.seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  options.tolerance = args.double_value("--tolerance", 1e-3);
  if (!(options.tolerance > 0)) throw UsageError("--tolerance must be > 0");
  options.onnxruntime = !args.flag("--no-onnxruntime");
  options.latency_rounds = static_cast<int>(args.int_value("--latency-rounds", 5));
  if (options.latency_rounds < 1) throw UsageError("--latency-rounds must be >= 1");
  options.threads = static_cast<int>(args.int_value("--ort-threads", 1));
  if (options.threads < 1) throw UsageError("--ort-threads must be >= 1");
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");
  if (options.onnxruntime) require_onnxruntime();

  const RuleLibrary library = args.value("--rules") ? load_rule_library(*args.value("--rules")) : default_rule_library();
  const int64_t rollout_steps = args.int_value("--max-steps", 0);
  if (rollout_steps < 0 || rollout_steps > 100000 || (args.value("--max-steps") && rollout_steps == 0))
    throw UsageError("--max-steps must be in [1, 100000]");
  // The agent: a model-free policy file, or a model-based run's world model and controller.
  std::string agent_source, agent_kind;
  std::optional<LoadedPolicy> policy;
  std::optional<ModelBasedAgent> model_based;
  int32_t max_steps = 0;
  if (ModelBasedAgent::is_model_based_run(policy_spec)) {
    model_based = ModelBasedAgent::load_run(policy_spec);
    model_based->check_fits(rule_library_hash(library), static_cast<int32_t>(library.rules.size()));
    agent_source = policy_spec;
    agent_kind = "model-based";
    max_steps = static_cast<int32_t>(rollout_steps > 0 ? rollout_steps : std::max(model_based->info().max_steps, 1));
  } else {
    agent_source = resolve_policy_path(policy_spec);
    policy = load_policy_file(agent_source);
    check_policy_fits(policy->info, library, agent_source);
    agent_kind = "model-free";
    max_steps = static_cast<int32_t>(rollout_steps > 0 ? rollout_steps : std::max<int64_t>(policy->info.max_steps, 200));
  }
  const RuleMatcher matcher(library.rules);
  const AgentOptimizer agent = [&](const Graph& graph, CostModel& cost) {
    if (model_based) return model_based->optimize(graph, matcher, cost, options.rollouts, max_steps, options.seed);
    PolicyRolloutOptions rollout;
    rollout.rollouts = options.rollouts;
    rollout.seed = options.seed;
    rollout.env.max_steps = max_steps;
    rollout.env.max_locations = policy->info.max_locations;
    rollout.time_budget_s = 0;  // a seed gives one result
    return optimize_with_policy(graph, matcher, cost, policy->network, rollout);
  };
  // The finish is greedy search from the agent's graph, on the greedy row's budget.
  const int64_t finish_steps = greedy_finish_from(args, "none") ? options.greedy_budget : 0;
  const AgentOptimizer finished_agent = [&](const Graph& graph, CostModel& cost) {
    SearchResult result = agent(graph, cost);
    if (finish_steps > 0) finish_greedily(result, matcher, cost, finish_steps);
    return result;
  };
  // A policy trained for a GPU is judged on that GPU's costs unless --cost says otherwise.
  std::unique_ptr<CostModel> cost =
      make_cost_model_with_progress(cost_options_for_policy(args, policy ? &policy->info : nullptr), !quiet);
  // Every model is read before the first is evaluated: a bad name fails at once.
  std::vector<LoadedModel> models;
  for (size_t i = 1; i < args.positional_count(); ++i)
    models.push_back(load_model(args.positional(i, "a MODEL"), args.int_value("--batch", 1), import_options_from(args)));

  std::vector<ModelEvaluation> evaluations;
  for (size_t i = 0; i < models.size(); ++i) {
    auto progress = [&](const std::string& line) {
      if (!quiet) std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, models.size(), line.c_str());
    };
    evaluations.push_back(evaluate_model(models[i], matcher, *cost, finished_agent, options, progress));
    if (!json) print_model(evaluations.back());
  }
  cost->flush();
  const std::string json_file = args.value_or("--json-file", "");
  if (json || !json_file.empty()) {
    JsonWriter j;
    j.begin_object().key("policy").value(agent_source).key("agent").value(agent_kind)
        .key("cost_model").value(cost->name())
        .key("rollouts").value(options.rollouts).key("max_steps").value(max_steps)
        .key("agent_finish").value(finish_steps > 0 ? "greedy" : "none")
        .key("greedy_budget").value(options.greedy_budget).key("taso_budget").value(options.taso_budget)
        .key("alpha").value(options.alpha).key("seed").value(options.seed).key("tolerance").value(options.tolerance)
        .key("onnxruntime_threads").value(options.threads).key("models").begin_array();
    for (const ModelEvaluation& e : evaluations) write_model(j, e);
    j.end_array().key("peak_rss_mib").value(peak_rss_mib()).end_object();
    if (json) std::printf("%s\n", j.str().c_str());
    if (!json_file.empty()) {
      write_file_atomically(json_file, j.str() + "\n");
      if (!json) std::printf("wrote %s\n", json_file.c_str());
    }
  }
  return 0;
}

}  // namespace

Subcommand evaluate_command() {
  std::vector<CliOption> options = {
      {"--rollouts", "", "K", "the agent: one greedy and K-1 sampled rollouts, the cheapest graph wins (default 8)"},
      {"--max-steps", "", "N", "the agent: rewrites per rollout at most (default: a policy file's episode length or\n"
                               "200, whichever is longer; a model-based run's episode length)"},
      {"--finish", "", "F", "the agent: none (default: the agent's result as it is) or greedy (greedy search from\n"
                            "the agent's best graph takes the rewrites that still pay at once, as optimize does;\n"
                            "at most --greedy-budget of them)"},
      {"--budget", "", "N", "TASO search: graphs to expand (default 1000)"},
      {"--greedy-budget", "", "N", "greedy search: steps at most (default 1000)"},
      {"--alpha", "", "A", "TASO search: keep graphs costing less than A times the best (default 1.05)"},
      {"--seed", "", "S", "sampled rollouts and the equivalence check's inputs (default 0)"},
      {"--rules", "", "FILE", "the rule library the agent was trained with (default: the built-in library)"},
      {"--tolerance", "", "T", "largest relative output difference accepted as equal (default 1e-3)"},
      {"--no-onnxruntime", "", "", "check and time in graphworld's executor only"},
      {"--latency-rounds", "", "R", "alternating onnxruntime timing rounds per comparison (default 5)"},
      {"--ort-threads", "", "T", "onnxruntime's threads while timing (default 1)"},
      {"--batch", "", "N", "batch size for zoo models (default 1)"},
      input_shape_option(),
      {"--json", "", "", "print one JSON object"},
      {"--json-file", "", "FILE", "also write the JSON object to FILE (the table is printed as usual)"},
      {"--quiet", "-q", "", "no progress on stderr"},
  };
  for (const CliOption& o : cost_cli_options()) options.push_back(o);
  return {{"evaluate",
           "POLICY MODEL...",
           "Optimise models with a trained agent, greedy search and TASO search, and compare the results.",
           "POLICY is a model-free policy (a .gwpolicy file from 'graphworld policy export', or 'default') or a\n"
           "model-based run folder (its world_model.gwworld and controller.gwctl: the controller acts on the real\n"
           "graph as in the run's real episodes). Its results are the method 'policy'.\n"
           "For each model and method: the optimised cost and reduction, the rules applied, the time taken, the\n"
           "largest output difference against the original (executor, and onnxruntime on the exported file), and\n"
           "onnxruntime latency of the original and the optimised model with onnxruntime's graph optimisations off\n"
           "and on (alternating rounds). A result that is not equivalent stops the command with an error naming\n"
           "the model, the method and the rules applied (exit status 2); nothing is reported for it.\n"
           "JSON: {policy, agent (model-free or model-based), cost_model, rollouts, max_steps, agent_finish, greedy_budget, taso_budget, alpha, seed, tolerance,\n"
           "onnxruntime_threads, peak_rss_mib, models: [{model, ops, original_cost_ms, methods: {policy|greedy|taso:\n"
           "{optimized_cost_ms, reduction_pct, applied, steps, optimize_s, finish, check_s, equivalent, executor_max_rel_err,\n"
           "onnxruntime_max_rel_err, onnxruntime_opt_off_original_ms, onnxruntime_opt_off_optimized_ms,\n"
           "onnxruntime_opt_off_speedup, onnxruntime_opt_on_original_ms, onnxruntime_opt_on_optimized_ms,\n"
           "onnxruntime_opt_on_speedup}}}] (onnxruntime keys null with --no-onnxruntime).",
           options},
          run_evaluate};
}

}  // namespace graphworld
