// A config's keys as one table: each row declares a key in a ConfigSchema
// (name, type, range, default, help) and says where its value goes in a
// typed options struct, so the schema and the conversion cannot drift apart
// and adding a key is one row plus the code that uses it.
//
//   ConfigTable<RunOptions> t;
//   t.integer("run.steps", 1000, 1, 1 << 30, "steps to run", [](RunOptions& o) -> auto& { return o.steps; });
//   t.text("run.mode", "fast", "how", {"fast", "slow"}, [](RunOptions& o, const std::string& v) { o.mode = parse(v); });
//   Config c = load_config(t.schema, path, overrides);
//   RunOptions o = t.options_from(c);
//
// A row's last argument selects the field (options -> field&; integers are
// narrowed to its type) or, where the value needs converting, sets it
// (options, value).
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/config.h"

namespace graphworld {

// A key's value into the field that holds it (integers narrowed to the
// field's type; the schema's range keeps them in it).
template <class Field, class Value>
void assign_config_value(Field& field, const Value& value) {
  if constexpr (std::is_arithmetic_v<Field> && std::is_arithmetic_v<Value>) field = static_cast<Field>(value);
  else field = value;
}

template <class Options>
class ConfigTable {
 public:
  using Apply = std::function<void(const Config&, Options&)>;

  template <class Set>
  void boolean(const std::string& key, bool fallback, const std::string& help, Set set) {
    schema.add_bool(key, fallback, help);
    rows_.push_back([key, set](const Config& c, Options& o) { put(set, o, c.get_bool(key)); });
  }
  template <class Set>
  void integer(const std::string& key, int64_t fallback, int64_t min, int64_t max, const std::string& help, Set set) {
    schema.add_int(key, fallback, min, max, help);
    rows_.push_back([key, set](const Config& c, Options& o) { put(set, o, c.get_int(key)); });
  }
  template <class Set>
  void real(const std::string& key, double fallback, double min, double max, const std::string& help, Set set) {
    schema.add_double(key, fallback, min, max, help);
    rows_.push_back([key, set](const Config& c, Options& o) { put(set, o, c.get_double(key)); });
  }
  template <class Set>
  void text(const std::string& key, const std::string& fallback, const std::string& help, Set set) {
    text(key, fallback, help, {}, set);
  }
  // `choices` empty: any string.
  template <class Set>
  void text(const std::string& key, const std::string& fallback, const std::string& help,
            std::vector<std::string> choices, Set set) {
    schema.add_string(key, fallback, help, std::move(choices));
    rows_.push_back([key, set](const Config& c, Options& o) { put(set, o, c.get_string(key)); });
  }
  template <class Set>
  void texts(const std::string& key, std::vector<std::string> fallback, const std::string& help, Set set) {
    schema.add_string_list(key, std::move(fallback), help);
    rows_.push_back([key, set](const Config& c, Options& o) { put(set, o, c.get_string_list(key)); });
  }

  // Every row applied to a default-constructed Options.
  Options options_from(const Config& config) const {
    Options options{};
    for (const Apply& apply : rows_) apply(config, options);
    return options;
  }

  ConfigSchema schema;

 private:
  // `set` is a setter (options, value) or a field selector (options) -> field&.
  template <class Set, class Value>
  static void put(const Set& set, Options& options, const Value& value) {
    if constexpr (std::is_invocable_v<const Set&, Options&, const Value&>) set(options, value);
    else assign_config_value(set(options), value);
  }

  std::vector<Apply> rows_;
};

}  // namespace graphworld
