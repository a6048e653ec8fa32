// Helpers for the tests that run the graphworld binary as a user does.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/test_env.h"

namespace graphworld::testing {

// Runs `graphworld ARGS`; returns its exit status, `out` gets stdout+stderr.
inline int gw(const std::string& args, std::string* out) {
  return run_command(graphworld_binary() + " " + args, out);
}

inline void expect_keys(const std::string& json, const std::vector<std::string>& keys) {
  for (const auto& key : keys) EXPECT_NE(json.find("\"" + key + "\":"), std::string::npos) << key << " missing in " << json;
}

}  // namespace graphworld::testing
