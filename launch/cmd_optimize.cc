// graphworld optimize MODEL -o OUT.onnx [--search taso|greedy|random]
//   [--budget N] [--alpha A] [--cost analytic|measured|cuda] [--json]
//
// Searches for a cheaper equivalent graph with the rule library, checks with
// the executor that it computes what the original does, and only then
// writes it as ONNX.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/onnx/grouped_conv_spelling.h"
#include "env/onnx/onnx_export.h"
#include "env/rules/rule_library.h"
#include "env/search/search.h"
#include "learner/policy_file.h"
#include "learner/policy_rollouts.h"
#include "launch/bench_commands.h"
#include "launch/command_json.h"
#include "launch/commands.h"
#include "launch/pipeline/cost_options.h"
#include "launch/pipeline/end_to_end_check.h"
#include "launch/pipeline/model_source.h"
#include "launch/pipeline/onnxruntime_comparison.h"
#include "launch/pipeline/optimize_pipeline.h"
#include "launch/pipeline/policy_location.h"

namespace graphworld {
namespace {

// --channel-block: which onnxruntime channel block narrow groups are
// widened to (env/onnx/grouped_conv_spelling.h); 0 keeps every group.
int64_t parse_channel_block(const std::string& text) {
  if (text == "auto") return this_cpu_channel_block();
  if (text == "none") return 0;
  if (text == "16") return kAvx512ChannelBlock;
  if (text == "8") return kAvx2ChannelBlock;
  throw UsageError("--channel-block must be auto, 16 (AVX-512), 8 (AVX2) or none, got '" + text + "'");
}

void print_progress(const SearchProgress& p, bool tty) {
  std::fprintf(stderr,
               tty ? "\r\033[K[%6.1f s] best %.4f ms (%+.2f%%), %lld graphs explored, %lld priced, %zu queued"
                   : "[%6.1f s] best %.4f ms (%+.2f%%), %lld graphs explored, %lld priced, %zu queued\n",
               p.elapsed_s, p.best_cost_ms, 100.0 * (p.best_cost_ms - p.original_cost_ms) / p.original_cost_ms,
               static_cast<long long>(p.explored), static_cast<long long>(p.generated), p.queued);
  std::fflush(stderr);
}

// RUNTIME_speedup, RUNTIME_original_ms, RUNTIME_optimized_ms; null when not timed.
void write_speedup(JsonWriter& j, const std::string& runtime, const std::optional<LatencyComparison>& timing) {
  j.key(runtime + "_speedup");
  if (!timing) {
    j.null_value().key(runtime + "_original_ms").null_value().key(runtime + "_optimized_ms").null_value();
    return;
  }
  j.value(timing->speedup).key(runtime + "_original_ms").value(timing->original_ms)
      .key(runtime + "_optimized_ms").value(timing->candidate_ms);
}

// "finish": the policy's greedy finish and what the policy alone reached; null without one.
void write_finish(JsonWriter& j, const SearchResult& result) {
  j.key("finish");
  if (!result.finish.ran) {
    j.null_value();
    return;
  }
  j.begin_object().key("steps").value(result.finish.steps).key("time_s").value(result.finish.seconds)
      .key("agent_cost").value(result.finish.agent_cost_ms).key("agent_reduction_pct").value(result.agent_reduction_pct())
      .end_object();
}

// The command's work. With --json, or when `json_out` is given (a caller
// in this process: command_json.h), the report is one JSON object, printed
// or handed back; otherwise lines for a person.
int optimize_with(const CliArgs& args, std::string* json_out) {
  const std::string& spec = args.positional(0, "a MODEL (an .onnx file or a zoo name)");
  args.expect_at_most(1);
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("optimize needs -o OUT.onnx: where to write the optimised model");
  const std::string algorithm = args.value_or("--search", "taso");
  SearchOptions options;
  options.budget = args.int_value("--budget", 1000);
  options.alpha = args.double_value("--alpha", 1.05);
  options.seed = static_cast<uint64_t>(args.int_value("--seed", 0));
  const double tolerance = args.double_value("--tolerance", 1e-3);
  if (!(tolerance > 0)) throw UsageError("--tolerance must be > 0");
  const bool json = args.flag("--json") || json_out != nullptr;
  const bool quiet = args.flag("--quiet");
  const std::optional<std::string> policy_spec = args.value("--policy");
  if (policy_spec && args.value("--search"))
    throw UsageError("--policy and --search are two ways to optimise; give one");
  Stopwatch io_clock;
  std::optional<LoadedPolicy> policy;
  std::string policy_file;
  if (policy_spec) {
    policy_file = resolve_policy_path(*policy_spec);
    policy = load_policy_file(policy_file);
  }
  // A policy trained for a GPU is priced for that GPU unless --cost says otherwise.
  const CostModelOptions cost_options = cost_options_for_policy(args, policy ? &policy->info : nullptr);
  // A file optimised for a GPU is judged on the GPU's terms: this CPU's
  // end-to-end timing and onnxruntime's CPU spellings would undo what pays
  // there, so with --cost gpu they are off unless asked for (the
  // equivalence check stays).
  const bool for_gpu = cost_options.kind == "gpu";
  EndToEndCheckOptions check_options;
  check_options.runtime = parse_verify_runtime(args.value_or("--verify-runtime", for_gpu ? "none" : "executor"));
  check_options.noise_margin = args.double_value("--noise-margin", 0.01);
  if (!(check_options.noise_margin >= 0 && check_options.noise_margin < 1))
    throw UsageError("--noise-margin must be in [0, 1), e.g. 0.01 for 1%");
  check_options.rounds = static_cast<int>(args.int_value("--verify-rounds", 7));
  if (check_options.rounds < 1) throw UsageError("--verify-rounds must be >= 1");
  check_options.threads = static_cast<int>(args.int_value("--threads", 0));
  check_options.seed = options.seed + 1;
  if (check_options.runtime == VerifyRuntime::OnnxRuntime) require_onnxruntime();
  ExportOptions export_options;
  const std::string spelling = args.value_or("--spelling", for_gpu ? "as-searched" : "fusing-runtimes");
  if (spelling != "fusing-runtimes" && spelling != "as-searched")
    throw UsageError("--spelling must be fusing-runtimes or as-searched, got '" + spelling + "'");
  export_options.spell_for_fusing_runtimes = spelling == "fusing-runtimes";
  if (args.value("--channel-block") && spelling == "as-searched")
    throw UsageError(std::string("--channel-block widens groups for onnxruntime's blocked kernels, which --spelling "
                                 "as-searched does not do") +
                     (for_gpu && !args.value("--spelling") ? " (the default with --cost gpu)" : "") +
                     "; give one of them (--spelling fusing-runtimes with it, or leave it out)");
  if (spelling == "fusing-runtimes")
    export_options.regroup_channel_block = parse_channel_block(args.value_or("--channel-block", for_gpu ? "none" : "auto"));

  const int64_t rollouts_value = args.int_value("--rollouts", 8);
  if (rollouts_value < 1 || rollouts_value > 4096) throw UsageError("--rollouts must be in [1, 4096]");
  const auto rollouts = static_cast<int32_t>(rollouts_value);
  if (!policy_spec && (args.value("--rollouts") || args.value("--max-steps") || args.value("--rollout-time") ||
                       args.value("--finish")))
    throw UsageError("--rollouts, --max-steps, --rollout-time and --finish apply to --policy; with a search use "
                     "--budget");
  // The finish takes at most greedy search's own default budget of rewrites.
  const int64_t finish_steps = policy_spec && greedy_finish_from(args, "greedy") ? SearchOptions{}.budget : 0;

  LoadedModel model = load_model(spec, args.int_value("--batch", 1), import_options_from(args));
  const RuleLibrary library = args.value("--rules") ? load_rule_library(*args.value("--rules")) : default_rule_library();
  if (policy) check_policy_fits(policy->info, library, policy_file);
  double io_s = io_clock.elapsed_s();
  const RuleMatcher matcher(library.rules);
  std::unique_ptr<CostModel> cost = make_cost_model_with_progress(cost_options, !quiet);
  const bool tty = isatty(STDERR_FILENO) != 0;
  OptimizeRequest request;
  request.model = &model;
  request.matcher = &matcher;
  request.cost = cost.get();
  request.algorithm = algorithm;
  request.search = options;
  request.out = out;
  request.tolerance = tolerance;
  request.export_options = export_options;
  request.check = check_options;
  if (!quiet) request.say = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  if (policy) {
    request.policy = &policy->network;
    request.rollouts.rollouts = rollouts;
    request.rollouts.seed = options.seed;
    const int64_t max_steps = args.int_value("--max-steps", std::max<int64_t>(policy->info.max_steps, 200));
    if (max_steps < 1 || max_steps > 100000) throw UsageError("--max-steps must be in [1, 100000]");
    request.rollouts.env.max_steps = static_cast<int32_t>(max_steps);
    request.rollouts.time_budget_s = args.double_value("--rollout-time", 1.0);
    if (!(request.rollouts.time_budget_s >= 0)) throw UsageError("--rollout-time must be >= 0 (0: no limit)");
    request.rollouts.env.max_locations = policy->info.max_locations;
    request.finish_steps = finish_steps;
    if (!quiet)
      std::fprintf(stderr, "optimising %s (%zu ops) with policy %s, %d rollouts, %s cost model\n", model.source.c_str(),
                   model.graph.num_ops(), policy_file.c_str(), rollouts, cost->name().c_str());
  } else if (!quiet) {
    std::fprintf(stderr, "optimising %s (%zu ops) with %s search, budget %lld, alpha %.3g, %s cost model, %zu rules\n",
                 model.source.c_str(), model.graph.num_ops(), algorithm.c_str(), static_cast<long long>(options.budget),
                 options.alpha, cost->name().c_str(), library.rules.size());
    request.search.progress = [tty](const SearchProgress& p) { print_progress(p, tty); };
    request.search.progress_interval_s = tty ? 0.25 : 5.0;
  }
  const OptimizeOutcome outcome = optimize_model(request);
  if (!quiet && tty && !policy) std::fprintf(stderr, "\n");
  const SearchResult& result = outcome.result;
  const CheckedCandidate& candidate = outcome.candidate;
  const ExportReport& export_report = candidate.export_report;
  const EndToEndCheck& check = outcome.check;
  const double check_s = outcome.check_s;
  const std::string method = policy ? "policy" : algorithm;
  io_s += outcome.write_s;
  const char* written = check.optimized_is_faster ? "optimized" : "original";

  const std::map<std::string, int> counts = result.applied_counts();
  if (json) {
    JsonWriter j;
    j.begin_object()
        .key("model").value(model.source)
        .key("output").value(out)
        .key("search").value(method)
        .key("cost_model").value(cost->name())
        .key("original_cost").value(result.original_cost_ms)
        .key("optimized_cost").value(result.best_cost_ms)
        .key("reduction_pct").value(result.reduction_pct())
        .key("applied").begin_object();
    for (const auto& [rule, n] : counts) j.key(rule).value(static_cast<int64_t>(n));
    j.end_object()
        .key("search_s").value(result.search_s);
    if (policy) j.key("policy").value(policy_file).key("rollouts").value(rollouts).key("rollout_s").value(result.search_s);
    else j.key("policy").null_value().key("rollouts").null_value().key("rollout_s").null_value();
    write_finish(j, result);
    j.key("check_s").value(check_s)
        .key("io_s").value(io_s)
        .key("explored").value(result.explored)
        .key("generated").value(result.generated)
        .key("max_rel_err").value(candidate.max_rel_err)
        .key("spelling").value(spelling)
        .key("channel_block").value(export_options.regroup_channel_block)
        .key("regrouped_convs").value(export_report.regrouped_convs)
        .key("verify_runtime").value(verify_runtime_name(check_options.runtime))
        .key("noise_margin").value(check_options.noise_margin);
    write_speedup(j, "executor", check.executor);
    write_speedup(j, "onnxruntime", check.onnxruntime);
    if (check.onnxruntime_graph_difference) j.key("onnxruntime_same_ops").value(check.onnxruntime_graph_difference->empty());
    else j.key("onnxruntime_same_ops").null_value();
    j.key("written").value(written)
        .key("verdict").value(check.verdict)
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    if (json_out)
      *json_out = j.str();
    else
      std::printf("%s\n", j.str().c_str());
    return 0;
  }
  if (policy)
    std::printf("optimised %s with policy %s (%s cost model)\n", model.source.c_str(), policy_file.c_str(),
                cost->name().c_str());
  else
    std::printf("optimised %s with %s search (%s cost model)\n", model.source.c_str(), algorithm.c_str(),
                cost->name().c_str());
  std::printf("  original cost    %10.4f ms\n", result.original_cost_ms);
  std::printf("  optimised cost   %10.4f ms   (%.2f%% less)\n", result.best_cost_ms, result.reduction_pct());
  if (policy) {
    std::printf("  rollouts         %10.3f s    (%d rollouts, %lld steps; check %.3f s, I/O %.3f s)\n", result.search_s,
                rollouts, static_cast<long long>(result.explored), check_s, io_s);
    if (result.finish.ran)
      std::printf("  greedy finish    %10.3f s    (%lld rewrites; the policy alone reached %.4f ms, %.2f%% less)\n",
                  result.finish.seconds, static_cast<long long>(result.finish.steps), result.finish.agent_cost_ms,
                  result.agent_reduction_pct());
  }
  else
    std::printf("  search           %10.2f s    (%lld graphs explored, %lld priced)\n", result.search_s,
                static_cast<long long>(result.explored), static_cast<long long>(result.generated));
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("  substitutions    %zu applied%s\n", result.applied.size(), sorted.empty() ? " (none improved the cost)" : ":");
  for (const auto& [rule, n] : sorted) std::printf("    %4d  %s\n", n, rule.c_str());
  if (export_report.regrouped_convs > 0)
    std::printf("  spelling         %lld grouped convs written with wider groups for onnxruntime's blocked kernels "
                "(%lld-channel blocks)\n",
                static_cast<long long>(export_report.regrouped_convs),
                static_cast<long long>(export_options.regroup_channel_block));
  std::printf("  equivalence      max relative error %.2g against the original (executor, random inputs)\n",
              candidate.max_rel_err);
  if (check.executor)
    std::printf("  end to end       executor %.3f -> %.3f ms: %.3fx (median of %zu alternating rounds)\n",
                check.executor->original_ms, check.executor->candidate_ms, check.executor->speedup,
                check.executor->ratios.size());
  if (check.onnxruntime)
    std::printf("                   onnxruntime, its optimisations on, %.3f -> %.3f ms: %.3fx\n",
                check.onnxruntime->original_ms, check.onnxruntime->candidate_ms, check.onnxruntime->speedup);
  if (check.optimized_is_faster) {
    std::printf("  wrote            %s (the optimised model; %s)\n", out.c_str(), check.verdict.c_str());
  } else {
    std::printf("  kept original    %s; wrote the original model to %s\n", check.verdict.c_str(), out.c_str());
  }
  return 0;
}

int run_optimize(const CliArgs& args) { return optimize_with(args, nullptr); }

}  // namespace

std::string optimize_json(const std::vector<std::string>& args) {
  const Subcommand command = optimize_command();
  const CliArgs parsed(command.spec, args);
  std::string json;
  optimize_with(parsed, &json);
  return json;
}

Subcommand optimize_command() {
  std::vector<CliOption> options = {
      {"--output", "-o", "OUT.onnx", "where to write the optimised model (required)"},
      {"--search", "", "ALGO", "taso (default: cost-based backtracking), greedy or random"},
      {"--budget", "", "N", "taso: graphs to expand; greedy and random: steps (default 1000)"},
      {"--alpha", "", "A", "taso: keep graphs costing less than A times the best (default 1.05)"},
      {"--seed", "", "S", "random search and the equivalence check's inputs (default 0)"},
      {"--policy", "", "FILE", "optimise with a trained policy instead of a search (FILE.gwpolicy, or 'default' or\n"
                               "'default-gpu' for the shipped ones; one trained under --cost gpu is priced so unless\n"
                               "--cost says otherwise)"},
      {"--rollouts", "", "K", "--policy: one greedy and K-1 sampled rollouts, the cheapest graph wins (default 8)"},
      {"--rollout-time", "", "S", "--policy: the sampled rollouts stop after S seconds of rollouts (default 1; the greedy\n"
                                  "one always finishes; 0: no limit, for results that depend on the seed alone)"},
      {"--max-steps", "", "N", "--policy: rewrites per rollout at most (default 200, or the training episodes' length\n"
                               "if longer; a rollout also ends when the policy chooses NO-OP)"},
      {"--finish", "", "F", "--policy: greedy (default: greedy search from the policy's best graph takes the\n"
                            "rewrites that still pay at once) or none (the policy's result as it is)"},
      {"--rules", "", "FILE", "a rule library file (default: the built-in library)"},
      {"--tolerance", "", "T", "largest relative output difference accepted as equal (default 1e-3)"},
      {"--batch", "", "N", "batch size for zoo models (default 1)"},
      input_shape_option(),
      {"--verify-runtime", "", "RT", "time original against optimised end to end before writing: executor (default;\n"
                                     "none with --cost gpu, whose gains this CPU's timing would not show),\n"
                                     "onnxruntime (also in onnxruntime with its optimisations on; it decides, and a tie\n"
                                     "within the margin is taken only where onnxruntime runs the same ops for both\n"
                                     "files and the executor finds it faster) or none"},
      {"--spelling", "", "S", "fusing-runtimes (default: written so onnxruntime and runtimes like it can fuse; merged\n"
                              "convs come back apart, grouped convs with narrow groups get wider ones) or\n"
                              "as-searched (the graph as searched: for oneDNN-based runtimes and GPUs; the default\n"
                              "with --cost gpu)"},
      {"--channel-block", "", "B", "the channel block of onnxruntime's blocked conv kernels on the machine that will\n"
                                   "run the file, which narrow groups are widened to: auto (default: this CPU's, 16\n"
                                   "with AVX-512, 8 on other x86-64 CPUs, none elsewhere), 16, 8 or none (keep every\n"
                                   "group; none with --cost gpu). The end-to-end check times this CPU: for another\n"
                                   "machine's block, check\n"
                                   "with --verify-runtime executor or none"},
      {"--noise-margin", "", "M", "the optimised model must be at least 1+M times faster end to end (default 0.01)"},
      {"--verify-rounds", "", "N", "alternating timing rounds of the end-to-end check (default 7; --threads sets its\n"
                                    "threads too)"},
      {"--json", "", "", "print one JSON object"},
      {"--quiet", "-q", "", "no progress on stderr"},
  };
  for (const CliOption& o : cost_cli_options()) options.push_back(o);
  return {{"optimize",
           "MODEL",
           "Rewrite a model (an .onnx file or a zoo name) into a cheaper equivalent and write it as ONNX.",
           "Progress (best cost, graphs explored, elapsed time) goes to stderr. Before writing, the executor\n"
           "runs the original and the result on the same random inputs; a result that differs by more than\n"
           "--tolerance is refused with the reason. Then both are timed end to end in alternating rounds\n"
           "(--verify-runtime); when the optimised model is not faster by the noise margin, OUT gets the\n"
           "original model instead (a byte-for-byte copy of an input file), and the output says so.\n"
           "JSON keys: original_cost, optimized_cost (ms), reduction_pct, applied (rule name to count),\n"
           "search_s, policy, rollouts, rollout_s (--policy; else null), finish (--policy with its greedy finish:\n"
           "{steps, time_s, agent_cost, agent_reduction_pct}, the policy alone before it; else null), check_s (equivalence), io_s (reading and\n"
           "writing), model, output, search, cost_model, explored, generated, max_rel_err, spelling, channel_block\n"
           "(the block narrow groups were aimed at; 0: none), regrouped_convs\n"
           "(grouped convs the candidate file respelled, also when the original was written), verify_runtime,\n"
           "noise_margin, executor_speedup, executor_original_ms, executor_optimized_ms,\n"
           "onnxruntime_speedup, onnxruntime_original_ms, onnxruntime_optimized_ms (null when not timed),\n"
           "onnxruntime_same_ops (in an onnxruntime tie the executor finds faster: whether onnxruntime's optimised\n"
           "graphs of both files have the same op counts; else null),\n"
           "written (optimized or original), verdict, peak_rss_mib.",
           options},
          run_optimize};
}

}  // namespace graphworld
