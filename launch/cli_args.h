// Command-line parsing for graphworld's subcommands.
//
// Each subcommand declares its options (with help text) and positionals; the
// parser rejects unknown options with a pointer to --help, and renders the
// help page from the same declarations so they cannot drift apart.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace graphworld {

struct CliOption {
  std::string name;        // "--iters"
  std::string short_name;  // "-o", or empty
  std::string value_name;  // "N"; empty for a boolean flag
  std::string help;
};

struct CliCommand {
  std::string name;         // "run"
  std::string positionals;  // "MODEL"
  std::string summary;      // one line
  std::string details;      // free text after the options
  std::vector<CliOption> options;
};

class CliArgs {
 public:
  // Parses args (after the subcommand name). Throws UsageError on an unknown
  // option or a missing value. `help_requested()` is true for -h/--help.
  CliArgs(const CliCommand& command, const std::vector<std::string>& args);

  bool help_requested() const { return help_; }
  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  std::optional<std::string> value(const std::string& name) const;
  std::string value_or(const std::string& name, const std::string& fallback) const;
  // Every value of an option given more than once, in order (value() gives the last).
  std::vector<std::string> values(const std::string& name) const;
  int64_t int_value(const std::string& name, int64_t fallback) const;
  double double_value(const std::string& name, double fallback) const;
  // The i-th positional; throws UsageError naming `what` when missing.
  const std::string& positional(size_t i, const std::string& what) const;
  size_t positional_count() const { return positionals_.size(); }
  // Throws if there are more positionals than `max`.
  void expect_at_most(size_t max) const;

 private:
  const CliCommand& command_;
  bool help_ = false;
  std::map<std::string, bool> flags_;
  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> repeated_values_;
  std::vector<std::string> positionals_;
};

std::string render_help(const CliCommand& command);

// "a,b,,c" -> {"a", "b", "c"}: an option's comma-separated list, empty items dropped.
std::vector<std::string> split_comma_list(const std::string& text);

}  // namespace graphworld
