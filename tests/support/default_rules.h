// The built-in rule library as tests use it: one shared matcher, and a
// rule's index by name for tests that act on one named rule (indices shift
// whenever the library grows, names do not).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "env/rules/rule_library.h"
#include "env/rules/rule_matcher.h"

namespace graphworld::testing {

inline const RuleMatcher& default_matcher() {
  static const RuleMatcher matcher(default_rule_library().rules);
  return matcher;
}

// The default library's index of the rule named `name`; fails the calling
// test and returns -1 when it has none.
inline int32_t default_rule_index(const std::string& name) {
  const auto& rules = default_matcher().rules();
  for (size_t r = 0; r < rules.size(); ++r)
    if (rules[r].name == name) return static_cast<int32_t>(r);
  ADD_FAILURE() << "no rule '" << name << "' in the default library";
  return -1;
}

}  // namespace graphworld::testing
