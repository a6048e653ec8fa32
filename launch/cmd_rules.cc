// graphworld rules generate|verify|show|stats|select: make, check, inspect
// and subset rule library files.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/stopwatch.h"
#include "env/rules/rule_generator.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_verifier.h"
#include "launch/commands.h"

namespace graphworld {
namespace {

// "default" (or nothing) is the library built into graphworld.
RuleLibrary library_from(const CliArgs& args, size_t position) {
  if (args.positional_count() <= position || args.positional(position, "FILE") == "default")
    return default_rule_library();
  return load_rule_library(args.positional(position, "FILE"));
}

int run_generate(const CliArgs& args) {
  args.expect_at_most(1);
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("rules generate needs -o FILE: where to write the library");
  GeneratorOptions options;
  options.max_ops = static_cast<int>(args.int_value("--max-ops", 3));
  const bool quiet = args.flag("--quiet");
  Stopwatch clock;
  options.progress = [&](const std::string& line) {
    if (!quiet) std::fprintf(stderr, "[%6.1fs] %s\n", clock.elapsed_s(), line.c_str());
  };

  RuleLibraryBuild build = build_rule_library(options, !args.flag("--no-hand-written"));
  const RuleLibrary& library = build.library;
  const size_t hand_written = build.hand_written;
  const GeneratorResult& generated = build.generated;
  const GeneratorStats& s = generated.stats;
  save_rule_library(library, out);

  std::printf("graphs enumerated        %zu%s\n", s.graphs, s.truncated ? " (stopped at the per-world limit)" : "");
  std::printf("classes of equals        %zu\n", s.buckets);
  std::printf("candidate pairs          %zu\n", s.pairs);
  std::printf("  pruned, shared op      %zu\n", s.pruned_common);
  std::printf("  pruned, same output    %zu\n", s.pruned_output_op);
  std::printf("  pruned, duplicate      %zu\n", s.pruned_duplicate);
  std::printf("  pruned, unbound        %zu\n", s.pruned_unbound);
  std::printf("  pruned, identity grows %zu\n", s.pruned_identity_growth);
  std::printf("  rejected by verifier   %zu\n", s.rejected);
  std::printf("generated rules kept     %zu (%zu for any odd kernel size, %zu for any stride)\n", s.kept, s.generic_kernel,
              s.generic_strides);
  std::printf("hand-written rules        %zu\n", hand_written);
  std::printf("wrote %zu rules to %s in %.1f s\n", library.rules.size(), out.c_str(), clock.elapsed_s());
  if (args.flag("--verbose"))
    for (const std::string& r : generated.rejections) std::printf("rejected %s\n", r.c_str());
  return 0;
}

int run_verify(const CliArgs& args) {
  args.expect_at_most(2);
  RuleLibrary library = library_from(args, 1);
  Stopwatch clock;
  size_t failed = 0;
  for (size_t i = 0; i < library.rules.size(); ++i) {
    const Rule& rule = library.rules[i];
    VerifyResult v = verify_rule(rule);
    if (!v.passed) {
      ++failed;
      std::printf("FAIL %s: %s\n", rule.name.c_str(), v.failure.c_str());
    } else if (args.flag("--verbose")) {
      std::printf("ok   %s (%d instantiations, max relative error %.2g)\n", rule.name.c_str(), v.instantiations, v.max_error);
    }
    if ((i + 1) % 50 == 0) std::fprintf(stderr, "[%6.1fs] verified %zu of %zu\n", clock.elapsed_s(), i + 1, library.rules.size());
  }
  std::printf("%zu of %zu rules verified, %zu failed (%.1f s)\n", library.rules.size() - failed, library.rules.size(),
              failed, clock.elapsed_s());
  return failed == 0 ? 0 : 1;
}

int run_show(const CliArgs& args) {
  args.expect_at_most(2);
  RuleLibrary library = library_from(args, 1);
  const std::string only = args.value_or("--rule", "");
  std::printf("# %s\n# %zu rules\n", library.description.c_str(), library.rules.size());
  size_t shown = 0;
  for (const Rule& rule : library.rules) {
    if (!only.empty() && rule.name != only) continue;
    std::printf("\n%s", describe_rule(rule).c_str());
    ++shown;
  }
  if (!only.empty() && shown == 0) throw UsageError("no rule named '" + only + "' in the library");
  return 0;
}

// The rules named in --rule (comma-separated), in the library's order: for
// ablations and for asking what a search finds with only some rewrites.
int run_select(const CliArgs& args) {
  args.expect_at_most(2);
  const std::string out = args.value_or("--output", "");
  if (out.empty()) throw UsageError("rules select needs -o FILE: where to write the selected rules");
  const std::string names = args.value_or("--rule", "");
  if (names.empty()) throw UsageError("rules select needs --rule NAME[,NAME...]: the rules to keep");
  const std::vector<std::string> wanted = split_comma_list(names);
  RuleLibrary library = library_from(args, 1);
  RuleLibrary selected;
  selected.description = library.description + " (selected: " + names + ")";
  for (const std::string& name : wanted) {
    const bool known = std::any_of(library.rules.begin(), library.rules.end(),
                                   [&](const Rule& rule) { return rule.name == name; });
    if (!known) throw UsageError("no rule named '" + name + "' in the library; 'graphworld rules show' lists them");
  }
  for (const Rule& rule : library.rules)
    if (std::find(wanted.begin(), wanted.end(), rule.name) != wanted.end()) selected.rules.push_back(rule);
  save_rule_library(selected, out);
  std::printf("wrote %zu of %zu rules to %s\n", selected.rules.size(), library.rules.size(), out.c_str());
  return 0;
}

int run_stats(const CliArgs& args) {
  args.expect_at_most(2);
  RuleLibrary library = library_from(args, 1);
  std::map<std::string, size_t> by_set, by_origin;
  for (const Rule& rule : library.rules) {
    ++by_set[rule_op_set(rule)];
    ++by_origin[rule.origin];
  }
  std::printf("# %s\n", library.description.c_str());
  std::printf("%zu rules:", library.rules.size());
  for (const auto& [origin, n] : by_origin) std::printf(" %zu %s", n, origin.c_str());
  std::printf("\n\n%6s  %s\n", "rules", "source op set");
  std::vector<std::pair<size_t, std::string>> sorted;
  for (const auto& [set, n] : by_set) sorted.emplace_back(n, set);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  for (const auto& [n, set] : sorted) std::printf("%6zu  %s\n", n, set.c_str());
  return 0;
}

int run_rules(const CliArgs& args) {
  const std::string action = args.positional(0, "ACTION (generate, verify, show, stats or select)");
  if (action == "generate") return run_generate(args);
  if (action == "verify") return run_verify(args);
  if (action == "show") return run_show(args);
  if (action == "stats") return run_stats(args);
  if (action == "select") return run_select(args);
  throw UsageError("unknown action '" + action + "'; use generate, verify, show, stats or select");
}

}  // namespace

Subcommand rules_command() {
  return {{"rules",
           "ACTION [FILE]",
           "Generate, verify and inspect substitution rule libraries.",
           "Actions:\n"
           "  generate -o FILE   enumerate graphs of up to --max-ops ops, pair equal ones, verify, write a library\n"
           "  verify [FILE]      check every rule in float64 at many instantiations; exit 1 if any fails\n"
           "  show [FILE]        print every rule (or --rule NAME) readably\n"
           "  stats [FILE]       count rules by the op types of their source pattern\n"
           "  select [FILE] --rule A,B -o OUT   write a library of only the named rules\n"
           "FILE defaults to the library built into graphworld (also spelled 'default').",
           {{"--output", "-o", "FILE", "generate, select: where to write the library"},
            {"--max-ops", "", "K", "generate: largest graph enumerated, in ops (default 3)"},
            {"--no-hand-written", "", "", "generate: leave the hand-written rules out"},
            {"--rule", "", "NAME", "show: only this rule; select: the rules to keep, comma-separated"},
            {"--verbose", "-v", "", "verify: list passing rules too; generate: list rejected pairs"},
            {"--quiet", "-q", "", "generate: no progress lines"}}},
          run_rules};
}

}  // namespace graphworld
