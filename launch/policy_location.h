// Where `--policy default` lives: the policy that ships with graphworld
// (policies/default.gwpolicy in the source tree, or $GRAPHWORLD_POLICY_DIR).
#pragma once

#include <string>

namespace graphworld {

// "default" becomes the shipped policy's path; anything else is a path.
// Throws UsageError when the file does not exist, saying how to get one.
std::string resolve_policy_path(const std::string& spec);

}  // namespace graphworld
