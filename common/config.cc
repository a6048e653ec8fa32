#include "common/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace graphworld {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + items[i];
  return out;
}

// A list override: "[a, b]" (YAML flow) or "a,b".
std::vector<std::string> parse_list(const std::string& text, const std::string& where) {
  std::vector<std::string> items;
  if (!text.empty() && text.front() == '[') {
    try {
      YAML::Node node = YAML::Load(text);
      for (const YAML::Node& item : node) items.push_back(item.as<std::string>());
    } catch (const YAML::Exception& e) {
      throw ConfigError(where + ": not a list: " + e.what());
    }
    return items;
  }
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

}  // namespace

ConfigSchema& ConfigSchema::add(const std::string& key, Entry entry) {
  if (entries_.count(key)) throw Error("config schema: key '" + key + "' declared twice");
  // A key is a value or a section, never both ("ppo" and "ppo.clip").
  for (const auto& [other, unused] : entries_)
    if (other.rfind(key + ".", 0) == 0 || key.rfind(other + ".", 0) == 0)
      throw Error("config schema: '" + key + "' and '" + other + "' cannot both be keys");
  entries_.emplace(key, std::move(entry));
  return *this;
}

ConfigSchema& ConfigSchema::add_bool(const std::string& key, bool fallback, const std::string& help) {
  return add(key, {fallback, 0, 0, {}, help});
}
ConfigSchema& ConfigSchema::add_int(const std::string& key, int64_t fallback, int64_t min, int64_t max,
                                    const std::string& help) {
  return add(key, {fallback, static_cast<double>(min), static_cast<double>(max), {}, help});
}
ConfigSchema& ConfigSchema::add_double(const std::string& key, double fallback, double min, double max,
                                       const std::string& help) {
  return add(key, {fallback, min, max, {}, help});
}
ConfigSchema& ConfigSchema::add_string(const std::string& key, const std::string& fallback, const std::string& help,
                                       std::vector<std::string> choices) {
  return add(key, {fallback, 0, 0, std::move(choices), help});
}
ConfigSchema& ConfigSchema::add_string_list(const std::string& key, std::vector<std::string> fallback,
                                            const std::string& help) {
  return add(key, {std::move(fallback), 0, 0, {}, help});
}

const ConfigSchema::Entry* ConfigSchema::find(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string ConfigSchema::closest_key(const std::string& key) const {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& [name, entry] : entries_) {
    const size_t d = edit_distance(key, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

Config::Config(const ConfigSchema& schema) : schema_(schema) {
  for (const auto& [key, entry] : schema_.entries()) values_[key] = entry.fallback;
}

void Config::set(const std::string& key, const std::string& text, const std::string& where) {
  const ConfigSchema::Entry* entry = schema_.find(key);
  if (!entry)
    throw ConfigError(where + ": unknown key '" + key + "'; did you mean '" + schema_.closest_key(key) + "'?");
  const std::string what = where + ": '" + key + "'";
  ConfigValue value;
  if (std::holds_alternative<bool>(entry->fallback)) {
    if (text == "true" || text == "yes" || text == "on" || text == "1") value = true;
    else if (text == "false" || text == "no" || text == "off" || text == "0") value = false;
    else throw ConfigError(what + " must be true or false, got '" + text + "'");
  } else if (std::holds_alternative<int64_t>(entry->fallback)) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size())
      throw ConfigError(what + " must be an integer, got '" + text + "'");
    if (v < entry->min || v > entry->max)
      throw ConfigError(what + " must be in [" + format_number(entry->min) + ", " + format_number(entry->max) +
                        "], got " + text);
    value = v;
  } else if (std::holds_alternative<double>(entry->fallback)) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
      throw ConfigError(what + " must be a number, got '" + text + "'");
    if (v < entry->min || v > entry->max)
      throw ConfigError(what + " must be in [" + format_number(entry->min) + ", " + format_number(entry->max) +
                        "], got " + text);
    value = v;
  } else if (std::holds_alternative<std::string>(entry->fallback)) {
    if (!entry->choices.empty() && std::find(entry->choices.begin(), entry->choices.end(), text) == entry->choices.end())
      throw ConfigError(what + " must be one of " + join(entry->choices, ", ") + ", got '" + text + "'");
    value = text;
  } else {
    value = parse_list(text, what);
  }
  values_[key] = std::move(value);
}

const ConfigValue& Config::value(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw Error("config: the program read key '" + key + "', which its schema does not declare");
  return it->second;
}

bool Config::get_bool(const std::string& key) const { return std::get<bool>(value(key)); }
int64_t Config::get_int(const std::string& key) const { return std::get<int64_t>(value(key)); }
double Config::get_double(const std::string& key) const { return std::get<double>(value(key)); }
const std::string& Config::get_string(const std::string& key) const { return std::get<std::string>(value(key)); }
const std::vector<std::string>& Config::get_string_list(const std::string& key) const {
  return std::get<std::vector<std::string>>(value(key));
}

namespace {

// Dotted keys as a tree, for nested YAML.
struct KeyTree {
  std::map<std::string, KeyTree> children;
  const ConfigValue* value = nullptr;
};

void emit_value(YAML::Emitter& out, const ConfigValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) out << *b;
  else if (const auto* i = std::get_if<int64_t>(&value)) out << *i;
  else if (const auto* d = std::get_if<double>(&value)) {
    // The shortest text that reads back as the same double ("0.2", not
    // "0.20000000000000001").
    char text[32];
    const auto result = std::to_chars(text, text + sizeof(text), *d);
    out << std::string(text, result.ptr);
  }
  else if (const auto* s = std::get_if<std::string>(&value)) out << YAML::DoubleQuoted << *s;
  else {
    out << YAML::Flow << YAML::BeginSeq;
    for (const std::string& item : std::get<std::vector<std::string>>(value)) out << YAML::DoubleQuoted << item;
    out << YAML::EndSeq;
  }
}

void emit_tree(YAML::Emitter& out, const KeyTree& tree) {
  out << YAML::BeginMap;
  for (const auto& [name, child] : tree.children) {
    out << YAML::Key << name << YAML::Value;
    if (child.value) emit_value(out, *child.value);
    else emit_tree(out, child);
  }
  out << YAML::EndMap;
}

}  // namespace

std::string Config::value_text(const std::string& key) const {
  YAML::Emitter out;
  emit_value(out, value(key));
  return out.c_str();
}

std::vector<std::string> Config::keys() const {
  std::vector<std::string> keys;
  for (const auto& item : values_) keys.push_back(item.first);
  return keys;
}

std::string Config::to_yaml() const {
  KeyTree root;
  for (const auto& [key, value] : values_) {
    KeyTree* node = &root;
    std::stringstream s(key);
    for (std::string part; std::getline(s, part, '.');) node = &node->children[part];
    node->value = &value;
  }
  YAML::Emitter out;
  emit_tree(out, root);
  return std::string(out.c_str()) + "\n";
}

namespace {

void load_node(Config& config, const ConfigSchema& schema, const YAML::Node& node, const std::string& prefix,
               const std::string& path) {
  for (const auto& item : node) {
    const std::string key = prefix + item.first.as<std::string>();
    const YAML::Node& value = item.second;
    if (value.IsMap()) {
      load_node(config, schema, value, key + ".", path);
    } else if (value.IsSequence()) {
      const ConfigSchema::Entry* entry = schema.find(key);
      if (entry && !std::holds_alternative<std::vector<std::string>>(entry->fallback))
        throw ConfigError(path + ": '" + key + "' takes one value, not a list");
      // Re-emitted as a YAML flow list, so items may hold commas.
      YAML::Emitter flow;
      flow << YAML::Flow << YAML::BeginSeq;
      for (const YAML::Node& v : value) flow << YAML::DoubleQuoted << v.as<std::string>();
      flow << YAML::EndSeq;
      config.set(key, flow.c_str(), path);
    } else if (value.IsNull()) {
      throw ConfigError(path + ": '" + key + "' has no value");
    } else {
      config.set(key, value.Scalar(), path);
    }
  }
}

}  // namespace

namespace {

Config apply_yaml(const ConfigSchema& schema, const YAML::Node& root, const std::string& where) {
  Config config(schema);
  if (!root.IsNull() && !root.IsMap()) throw ConfigError(where + ": a config file must be a map of keys to values");
  if (root.IsMap()) load_node(config, schema, root, "", where);
  return config;
}

ConfigError yaml_error(const std::string& where, const YAML::Exception& e) {
  return ConfigError(where + ": not valid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                     std::to_string(e.mark.column + 1) + ": " + e.msg);
}

}  // namespace

Config parse_config_text(const ConfigSchema& schema, const std::string& yaml_text, const std::string& where) {
  try {
    return apply_yaml(schema, YAML::Load(yaml_text), where);
  } catch (const YAML::Exception& e) {
    throw yaml_error(where, e);
  }
}

Config load_config(const ConfigSchema& schema, const std::string& path, const std::vector<std::string>& overrides) {
  Config config(schema);
  if (!path.empty()) {
    YAML::Node root;
    try {
      root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
      throw ConfigError(path + ": cannot read the config file (does it exist?)");
    } catch (const YAML::Exception& e) {
      throw yaml_error(path, e);
    }
    config = apply_yaml(schema, root, path);
  }
  for (const std::string& item : overrides) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("override '" + item + "': write it as key=value, e.g. ppo.clip=0.1");
    config.set(item.substr(0, eq), item.substr(eq + 1), "override '" + item + "'");
  }
  return config;
}

}  // namespace graphworld
