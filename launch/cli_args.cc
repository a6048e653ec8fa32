#include "launch/cli_args.h"

#include <cstdlib>

#include "common/error.h"

namespace graphworld {
namespace {

const CliOption* find_option(const CliCommand& command, const std::string& token) {
  for (const CliOption& o : command.options)
    if (o.name == token || (!o.short_name.empty() && o.short_name == token)) return &o;
  return nullptr;
}

std::string see_help(const CliCommand& command) { return "; see 'graphworld " + command.name + " --help'"; }

}  // namespace

CliArgs::CliArgs(const CliCommand& command, const std::vector<std::string>& args) : command_(command) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string token = args[i];
    if (token == "-h" || token == "--help") {
      help_ = true;
      continue;
    }
    if (token.size() > 1 && token[0] == '-' && !(token[1] >= '0' && token[1] <= '9')) {
      std::string inline_value;
      bool has_inline = false;
      if (auto eq = token.find('='); eq != std::string::npos && token.rfind("--", 0) == 0) {
        inline_value = token.substr(eq + 1);
        token = token.substr(0, eq);
        has_inline = true;
      }
      const CliOption* option = find_option(command, token);
      if (!option) throw UsageError("unknown option '" + token + "' for 'graphworld " + command.name + "'" + see_help(command));
      if (option->value_name.empty()) {
        if (has_inline) throw UsageError("option " + option->name + " takes no value" + see_help(command));
        flags_[option->name] = true;
      } else if (has_inline) {
        values_[option->name] = inline_value;
        repeated_values_[option->name].push_back(inline_value);
      } else {
        if (i + 1 >= args.size())
          throw UsageError("option " + option->name + " needs a value (" + option->value_name + ")" + see_help(command));
        values_[option->name] = args[++i];
        repeated_values_[option->name].push_back(values_[option->name]);
      }
      continue;
    }
    positionals_.push_back(token);
  }
}

std::vector<std::string> CliArgs::values(const std::string& name) const {
  auto it = repeated_values_.find(name);
  return it == repeated_values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<std::string> CliArgs::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string CliArgs::value_or(const std::string& name, const std::string& fallback) const {
  return value(name).value_or(fallback);
}

int64_t CliArgs::int_value(const std::string& name, int64_t fallback) const {
  auto v = value(name);
  if (!v) return fallback;
  char* end = nullptr;
  long long parsed = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0')
    throw UsageError("option " + name + " expects an integer, got '" + *v + "'" + see_help(command_));
  return parsed;
}

double CliArgs::double_value(const std::string& name, double fallback) const {
  auto v = value(name);
  if (!v) return fallback;
  char* end = nullptr;
  double parsed = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0')
    throw UsageError("option " + name + " expects a number, got '" + *v + "'" + see_help(command_));
  return parsed;
}

const std::string& CliArgs::positional(size_t i, const std::string& what) const {
  if (i >= positionals_.size())
    throw UsageError("'graphworld " + command_.name + "' needs " + what + see_help(command_));
  return positionals_[i];
}

void CliArgs::expect_at_most(size_t max) const {
  if (positionals_.size() > max)
    throw UsageError("unexpected argument '" + positionals_[max] + "' for 'graphworld " + command_.name + "'" +
                     see_help(command_));
}

std::string render_help(const CliCommand& command) {
  std::string out = "usage: graphworld " + command.name + (command.positionals.empty() ? "" : " " + command.positionals) +
                    (command.options.empty() ? "" : " [options]") + "\n\n" + command.summary + "\n";
  if (!command.options.empty()) {
    out += "\noptions:\n";
    for (const CliOption& o : command.options) {
      std::string left = "  " + (o.short_name.empty() ? "" : o.short_name + ", ") + o.name +
                         (o.value_name.empty() ? "" : " " + o.value_name);
      if (left.size() < 28) left.resize(28, ' ');
      else left += "\n" + std::string(28, ' ');
      // A help text's later lines line up under its first.
      std::string help;
      for (char c : o.help) help += c == '\n' ? "\n" + std::string(28, ' ') : std::string(1, c);
      out += left + help + "\n";
    }
    out += "  -h, --help                show this help\n";
  }
  if (!command.details.empty()) out += "\n" + command.details + "\n";
  return out;
}

std::vector<std::string> split_comma_list(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

}  // namespace graphworld
