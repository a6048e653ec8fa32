// Typed configuration from YAML files and `key=value` overrides.
//
// A ConfigSchema declares every key a program reads, with its type, default,
// valid range and a line of help. Nested YAML maps name keys with dots
// (`ppo: {clip: 0.2}` is `ppo.clip`). Loading checks everything against the
// schema and throws ConfigError naming the file (or the override), the key,
// what was wrong and what to do:
//   runs/a.yaml: unknown key 'ppo.clp'; did you mean 'ppo.clip'?
//   runs/a.yaml: 'ppo.epochs' must be an integer, got '2.5'
//   override 'ppo.clip=3': 'ppo.clip' must be in [0, 1], got 3
// A resolved Config writes back as YAML (every key, defaults included), so a
// run folder records exactly what ran.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/error.h"

namespace graphworld {

class ConfigError : public UsageError {
 public:
  using UsageError::UsageError;
};

using ConfigValue = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;

class ConfigSchema {
 public:
  ConfigSchema& add_bool(const std::string& key, bool fallback, const std::string& help);
  ConfigSchema& add_int(const std::string& key, int64_t fallback, int64_t min, int64_t max, const std::string& help);
  ConfigSchema& add_double(const std::string& key, double fallback, double min, double max, const std::string& help);
  // `choices` empty: any string.
  ConfigSchema& add_string(const std::string& key, const std::string& fallback, const std::string& help,
                           std::vector<std::string> choices = {});
  ConfigSchema& add_string_list(const std::string& key, std::vector<std::string> fallback, const std::string& help);

  struct Entry {
    ConfigValue fallback;
    double min = 0, max = 0;  // numbers only
    std::vector<std::string> choices;
    std::string help;
  };
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const Entry* find(const std::string& key) const;
  // The declared key nearest to `key` by edit distance (for "did you mean").
  std::string closest_key(const std::string& key) const;

 private:
  ConfigSchema& add(const std::string& key, Entry entry);
  std::map<std::string, Entry> entries_;
};

class Config {
 public:
  Config() = default;
  explicit Config(const ConfigSchema& schema);  // every key at its default

  bool get_bool(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const std::vector<std::string>& get_string_list(const std::string& key) const;

  // Checks the value against the schema; `where` names its source in errors.
  void set(const std::string& key, const std::string& text, const std::string& where);
  // The value of `key` as YAML text, for messages and comparisons.
  std::string value_text(const std::string& key) const;
  std::vector<std::string> keys() const;  // every key, sorted
  // Every key as nested YAML, in key order.
  std::string to_yaml() const;

 private:
  const ConfigValue& value(const std::string& key) const;
  ConfigSchema schema_;  // a copy: a Config outlives the code that declared its keys
  std::map<std::string, ConfigValue> values_;
};

// The schema's defaults, then `path` (if not empty), then each `key=value`
// override in order. Throws ConfigError as described above, or when the file
// cannot be read or is not YAML (with the parser's line and column).
Config load_config(const ConfigSchema& schema, const std::string& path, const std::vector<std::string>& overrides);
// A config from YAML text (a checkpoint's copy); `where` names it in errors.
Config parse_config_text(const ConfigSchema& schema, const std::string& yaml_text, const std::string& where);

}  // namespace graphworld
