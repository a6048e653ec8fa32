#include "launch/policy_location.h"

#include <cstdlib>
#include <filesystem>

#include "common/error.h"

namespace graphworld {

std::string resolve_policy_path(const std::string& spec) {
  if (spec == "default") {
    const char* dir = std::getenv("GRAPHWORLD_POLICY_DIR");
    const std::string path = std::string(dir ? dir : GRAPHWORLD_SOURCE_DIR "/policies") + "/default.gwpolicy";
    if (!std::filesystem::is_regular_file(path))
      throw UsageError("the default policy " + path + " is missing; policies/train-default rebuilds it, or pass "
                       "--policy FILE.gwpolicy from 'graphworld policy export'");
    return path;
  }
  if (!std::filesystem::is_regular_file(spec))
    throw UsageError("policy file " + spec + " does not exist; 'graphworld policy export RUN -o FILE.gwpolicy' makes "
                     "one from a training run, or use --policy default");
  return spec;
}

}  // namespace graphworld
