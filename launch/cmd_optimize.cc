// graphworld optimize MODEL -o OUT.onnx [--search taso|greedy|random]
//   [--budget N] [--alpha A] [--cost analytic|measured|cuda] [--json]
//
// Searches for a cheaper equivalent graph with the rule library, checks with
// the executor that it computes what the original does, and only then
// writes it as ONNX.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "common/json_writer.h"
#include "env/onnx/onnx_export.h"
#include "env/ops/executor.h"
#include "env/rules/rule_library.h"
#include "env/search/search.h"
#include "launch/bench_commands.h"
#include "launch/commands.h"
#include "launch/cost_options.h"
#include "launch/model_source.h"
#include "launch/output_compare.h"

namespace graphworld {
namespace {

void print_progress(const SearchProgress& p, bool tty) {
  std::fprintf(stderr,
               tty ? "\r\033[K[%6.1f s] best %.4f ms (%+.2f%%), %lld graphs explored, %lld priced, %zu queued"
                   : "[%6.1f s] best %.4f ms (%+.2f%%), %lld graphs explored, %lld priced, %zu queued\n",
               p.elapsed_s, p.best_cost_ms, 100.0 * (p.best_cost_ms - p.original_cost_ms) / p.original_cost_ms,
               static_cast<long long>(p.explored), static_cast<long long>(p.generated), p.queued);
  std::fflush(stderr);
}

int run_optimize(const CliArgs& args) {
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
  const bool json = args.flag("--json");
  const bool quiet = args.flag("--quiet");

  LoadedModel model = load_model(spec, args.int_value("--batch", 1));
  const RuleLibrary library = args.value("--rules") ? load_rule_library(*args.value("--rules")) : default_rule_library();
  const RuleMatcher matcher(library.rules);
  std::unique_ptr<CostModel> cost = make_cost_model_with_progress(cost_options_from(args), !quiet);
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (!quiet) {
    std::fprintf(stderr, "optimising %s (%zu ops) with %s search, budget %lld, alpha %.3g, %s cost model, %zu rules\n",
                 model.source.c_str(), model.graph.num_ops(), algorithm.c_str(), static_cast<long long>(options.budget),
                 options.alpha, cost->name().c_str(), library.rules.size());
    options.progress = [tty](const SearchProgress& p) { print_progress(p, tty); };
    options.progress_interval_s = tty ? 0.25 : 5.0;
  }
  SearchResult result = run_search(algorithm, model.graph, matcher, *cost, options);
  cost->flush();
  if (!quiet && tty) std::fprintf(stderr, "\n");

  // Equivalence with the executor on seeded random inputs, before writing.
  const auto inputs = random_inputs(model.graph, options.seed + 1);
  const auto expected = Executor(model.graph).run(inputs);
  const auto got = Executor(result.graph).run(inputs);
  const OutputDifference diff = compare_outputs(expected, got);
  if (diff.nonfinite_expected > 0)
    throw Error(model.source + " gives " + std::to_string(diff.nonfinite_expected) +
                " NaN or infinite output values on random inputs in [-1, 1), so the optimised graph's equivalence "
                "cannot be checked; not writing " + out + ". Check the model in 'graphworld run' first");
  if (!(diff.max_rel_err <= tolerance)) {
    char detail[160];
    std::snprintf(detail, sizeof(detail), "max relative error %.3g > tolerance %.3g", diff.max_rel_err, tolerance);
    throw Error("the optimised graph does not compute what " + model.source + " computes (" + detail +
                "); not writing " + out + ". A rule applied here is wrong for this model: rerun with --search greedy "
                "or --budget 0 to narrow it down, and report the applied rules (--json)");
  }
  export_onnx_file(result.graph, out);

  const std::map<std::string, int> counts = result.applied_counts();
  if (json) {
    JsonWriter j;
    j.begin_object()
        .key("model").value(model.source)
        .key("output").value(out)
        .key("search").value(algorithm)
        .key("cost_model").value(cost->name())
        .key("original_cost").value(result.original_cost_ms)
        .key("optimized_cost").value(result.best_cost_ms)
        .key("reduction_pct").value(result.reduction_pct())
        .key("applied").begin_object();
    for (const auto& [rule, n] : counts) j.key(rule).value(static_cast<int64_t>(n));
    j.end_object()
        .key("search_s").value(result.search_s)
        .key("explored").value(result.explored)
        .key("generated").value(result.generated)
        .key("max_rel_err").value(diff.max_rel_err)
        .key("peak_rss_mib").value(peak_rss_mib())
        .end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("optimised %s with %s search (%s cost model)\n", model.source.c_str(), algorithm.c_str(),
              cost->name().c_str());
  std::printf("  original cost    %10.4f ms\n", result.original_cost_ms);
  std::printf("  optimised cost   %10.4f ms   (%.2f%% less)\n", result.best_cost_ms, result.reduction_pct());
  std::printf("  search           %10.2f s    (%lld graphs explored, %lld priced)\n", result.search_s,
              static_cast<long long>(result.explored), static_cast<long long>(result.generated));
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::printf("  substitutions    %zu applied%s\n", result.applied.size(), sorted.empty() ? " (none improved the cost)" : ":");
  for (const auto& [rule, n] : sorted) std::printf("    %4d  %s\n", n, rule.c_str());
  std::printf("  equivalence      max relative error %.2g against the original (executor, random inputs)\n",
              diff.max_rel_err);
  std::printf("  wrote            %s\n", out.c_str());
  return 0;
}

}  // namespace

Subcommand optimize_command() {
  std::vector<CliOption> options = {
      {"--output", "-o", "OUT.onnx", "where to write the optimised model (required)"},
      {"--search", "", "ALGO", "taso (default: cost-based backtracking), greedy or random"},
      {"--budget", "", "N", "taso: graphs to expand; greedy and random: steps (default 1000)"},
      {"--alpha", "", "A", "taso: keep graphs costing less than A times the best (default 1.05)"},
      {"--seed", "", "S", "random search and the equivalence check's inputs (default 0)"},
      {"--rules", "", "FILE", "a rule library file (default: the built-in library)"},
      {"--tolerance", "", "T", "largest relative output difference accepted as equal (default 1e-3)"},
      {"--batch", "", "N", "batch size for zoo models (default 1)"},
      {"--json", "", "", "print one JSON object"},
      {"--quiet", "-q", "", "no progress on stderr"},
  };
  for (const CliOption& o : cost_cli_options()) options.push_back(o);
  return {{"optimize",
           "MODEL",
           "Rewrite a model (an .onnx file or a zoo name) into a cheaper equivalent and write it as ONNX.",
           "Progress (best cost, graphs explored, elapsed time) goes to stderr. Before writing, the executor\n"
           "runs the original and the result on the same random inputs; a result that differs by more than\n"
           "--tolerance is refused with the reason. JSON keys: original_cost, optimized_cost (ms), reduction_pct,\n"
           "applied (rule name to count), search_s, model, output, search, cost_model, explored, generated,\n"
           "max_rel_err, peak_rss_mib.",
           options},
          run_optimize};
}

}  // namespace graphworld
