#include <cstddef>
#include <string>

#include "common/error.h"
#include "env/rules/rule_library.h"

// Bytes of env/rules/library/default.rules, embedded at build time.
extern const unsigned char graphworld_default_rule_library[];
extern const std::size_t graphworld_default_rule_library_size;

namespace graphworld {

const RuleLibrary& default_rule_library() {
  static const RuleLibrary library = parse_rule_library(
      std::string(reinterpret_cast<const char*>(graphworld_default_rule_library), graphworld_default_rule_library_size),
      "default rule library (built in from env/rules/library/default.rules)");
  return library;
}

}  // namespace graphworld
