// A set of rules, and the file that stores one.
//
// File layout (little-endian):
//   8 bytes  magic "GWRULES\n"
//   4 bytes  format version (kRuleLibraryFormatVersion)
//   4 bytes  reserved, zero
//   8 bytes  payload size in bytes
//   8 bytes  FNV-1a 64 checksum of the payload
//   payload  a Cap'n Proto message, schema common/schema/rules.capnp
// The header is checked before the payload is parsed, so a truncated, altered
// or old file fails with a message saying which, never with a crash.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/rules/rule.h"

namespace graphworld {

inline constexpr uint32_t kRuleLibraryFormatVersion = 1;

struct RuleLibrary {
  std::string description;
  std::vector<Rule> rules;
};

// Writes atomically (temporary file, then rename). Throws Error on I/O failure.
void save_rule_library(const RuleLibrary& library, const std::string& path);
// Throws FormatError naming the file (and the rule, op type or reference)
// when the file is not a rule library, is corrupt, has another format
// version, names an unknown op type or parameter, or refers to something that
// does not exist.
RuleLibrary load_rule_library(const std::string& path);

// The same, on bytes in memory (`what` names the source in errors).
std::string serialize_rule_library(const RuleLibrary& library);
RuleLibrary parse_rule_library(const std::string& bytes, const std::string& what);

// The library built into this binary: the shipped default, generated and
// hand-written, every rule verified.
const RuleLibrary& default_rule_library();

}  // namespace graphworld
