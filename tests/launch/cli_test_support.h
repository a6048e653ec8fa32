// Helpers for the tests that run the graphworld binary as a user does.
#pragma once

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace graphworld::testing {

// Runs `graphworld ARGS`; returns its exit status, `out` gets stdout+stderr.
inline int gw(const std::string& args, std::string* out) {
  return run_command(graphworld_binary() + " " + args, out);
}

// The number after "key": in `json` (the first such key), or -1 if none.
inline double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":(-?[0-9.eE+-]+)"))) return -1;
  return std::stod(m[1]);
}

inline void expect_keys(const std::string& json, const std::vector<std::string>& keys) {
  for (const auto& key : keys) EXPECT_NE(json.find("\"" + key + "\":"), std::string::npos) << key << " missing in " << json;
}

}  // namespace graphworld::testing
