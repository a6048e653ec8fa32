// A trained policy as one versioned file (FILE.gwpolicy): the network's
// weights and configuration, the observation-feature version and the hash of
// the rule library it chose among, the environment settings it was trained
// with, and where it came from. It is a checked file (common/checkpoint_file.h),
// so damage is refused, never loaded.
//
// A policy only means something with the rules and features it was trained
// on: check_policy_fits() refuses another library or feature version and
// says which differs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/rules/rule_library.h"
#include "learner/policy_network.h"

namespace graphworld {

struct PolicyFileInfo {
  PolicyNetworkConfig network;
  int32_t feature_version = 0;
  std::string rule_library_hash;  // rule_library_hash() of its library
  int32_t max_steps = 0, max_locations = 0;  // the episodes it was trained on
  // Provenance, for `graphworld policy show`.
  std::vector<std::string> trained_on;
  std::string cost_model;
  std::string source;  // the checkpoint it was exported from
  int64_t updates = 0, env_steps = 0;
};

struct LoadedPolicy {
  PolicyFileInfo info;
  PolicyNetwork network;
};

// Hex FNV-1a of the library's serialised rules (the description excluded).
std::string rule_library_hash(const RuleLibrary& library);

void save_policy_file(const std::string& path, const PolicyNetwork& network, const PolicyFileInfo& info);
// Throws FormatError naming the file and what is wrong with it.
LoadedPolicy load_policy_file(const std::string& path);
// Throws UsageError when the policy was made for other rules or features.
void check_policy_fits(const PolicyFileInfo& info, const RuleLibrary& library, const std::string& path);

// A human description (`graphworld policy show`).
std::string describe_policy(const PolicyFileInfo& info, int64_t parameters);

}  // namespace graphworld
