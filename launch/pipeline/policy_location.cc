#include "launch/pipeline/policy_location.h"

#include <cstdlib>
#include <filesystem>

#include "common/error.h"
#include "launch/pipeline/cost_options.h"

namespace graphworld {

std::string resolve_policy_path(const std::string& spec) {
  if (spec == "default" || spec == "default-gpu") {
    const char* dir = std::getenv("GRAPHWORLD_POLICY_DIR");
    const std::string path = std::string(dir ? dir : GRAPHWORLD_SOURCE_DIR "/policies") + "/" + spec + ".gwpolicy";
    if (!std::filesystem::is_regular_file(path))
      throw UsageError("the " + spec + " policy " + path + " is missing; policies/train-default" +
                       (spec == "default-gpu" ? " gpu" : "") +
                       " rebuilds it, or pass --policy FILE.gwpolicy from 'graphworld policy export'");
    return path;
  }
  if (!std::filesystem::is_regular_file(spec))
    throw UsageError("policy file " + spec + " does not exist; 'graphworld policy export RUN -o FILE.gwpolicy' makes "
                     "one from a training run, or use --policy default (or default-gpu)");
  return spec;
}

std::optional<std::string> policy_gpu(const PolicyFileInfo& info) {
  const std::string prefix = "gpu (";
  if (info.cost_model.rfind(prefix, 0) != 0) return std::nullopt;
  const size_t end = info.cost_model.find_first_of(",)", prefix.size());
  if (end == std::string::npos || end == prefix.size()) return std::nullopt;
  return info.cost_model.substr(prefix.size(), end - prefix.size());
}

CostModelOptions cost_options_for_policy(const CliArgs& args, const PolicyFileInfo* policy) {
  const std::optional<std::string> trained_gpu = policy ? policy_gpu(*policy) : std::nullopt;
  CostModelOptions options = cost_options_from(args, trained_gpu ? "gpu" : "analytic");
  if (trained_gpu && options.kind == "gpu" && !args.value("--gpu")) options.gpu = *trained_gpu;
  return options;
}

bool greedy_finish_from(const CliArgs& args, const std::string& fallback) {
  const std::string finish = args.value_or("--finish", fallback);
  if (finish == "greedy") return true;
  if (finish == "none") return false;
  throw UsageError("--finish must be greedy (greedy search from the agent's best graph) or none (the agent's result "
                   "as it is), not '" + finish + "'");
}

}  // namespace graphworld
