// graphworld bench rules [MODELS]: how fast the default rules are matched.
// For each zoo model: every match of every rule from scratch (index build
// plus full search), then the incremental re-match after one rewrite,
// averaged over a sequence of random rewrites.
#include <cstdio>
#include <random>

#include "common/error.h"
#include "common/json_writer.h"
#include "common/stopwatch.h"
#include "env/rules/graph_rewriter.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "launch/bench_commands.h"
#include "common/latency.h"

namespace graphworld {

int run_bench_rules(const CliArgs& args) {
  args.expect_at_most(2);
  const std::vector<std::string> models =
      split_comma_list(args.positional_count() > 1 ? args.positional(1, "MODELS") : "resnet50,bert");
  const int repeats = static_cast<int>(args.int_value("--repeats", 10));
  const int steps = static_cast<int>(args.int_value("--steps", 50));
  if (repeats < 1 || steps < 1) throw UsageError("--repeats and --steps must be >= 1");
  const RuleLibrary& library = default_rule_library();
  RuleMatcher matcher(library.rules);
  const bool json = args.flag("--json");
  JsonWriter out;
  if (json) out.begin_object().key("rules").value(static_cast<int64_t>(library.rules.size())).key("models").begin_array();
  else std::printf("%zu rules (default library)\n%-10s %6s %8s %12s %12s %14s %14s\n", library.rules.size(), "model",
                   "ops", "matches", "scratch ms", "scratch p90", "increment ms", "increment max");

  for (const std::string& name : models) {
    Graph graph = build_zoo_model(name, {});
    size_t matches = 0;
    LatencyStats scratch = measure_latency(
        [&] {
          GraphIndex index(graph);
          matches = matcher.find_all(graph, index).size();
        },
        1, repeats);
    // Random rewrites; time only apply(), which includes the re-match.
    GraphRewriter rewriter(matcher, graph);
    std::mt19937_64 rng(1);
    std::vector<double> step_ms;
    for (int s = 0; s < steps && !rewriter.matches().empty(); ++s) {
      size_t pick = rng() % rewriter.matches().size();
      Stopwatch clock;
      rewriter.apply(pick);
      step_ms.push_back(clock.elapsed_ms());
    }
    double mean = 0, worst = 0;
    for (double ms : step_ms) {
      mean += ms / static_cast<double>(step_ms.size());
      worst = std::max(worst, ms);
    }
    if (json) {
      out.begin_object().key("model").value(name).key("ops").value(static_cast<int64_t>(graph.num_ops()))
          .key("matches").value(static_cast<int64_t>(matches)).key("scratch_median_ms").value(scratch.median_ms)
          .key("scratch_p90_ms").value(scratch.p90_ms).key("incremental_mean_ms").value(mean)
          .key("incremental_max_ms").value(worst).key("rewrites").value(static_cast<int64_t>(step_ms.size())).end_object();
    } else {
      std::printf("%-10s %6zu %8zu %12.2f %12.2f %14.3f %14.3f\n", name.c_str(), graph.num_ops(), matches,
                  scratch.median_ms, scratch.p90_ms, mean, worst);
    }
  }
  if (json) {
    out.end_array().key("peak_rss_mib").value(peak_rss_mib()).end_object();
    std::printf("%s\n", out.str().c_str());
  } else {
    std::printf("peak RSS %.0f MiB\n", peak_rss_mib());
  }
  return 0;
}

}  // namespace graphworld
