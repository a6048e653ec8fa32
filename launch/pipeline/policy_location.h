// Where `--policy default` and `--policy default-gpu` live: the policies
// that ship with graphworld (policies/default.gwpolicy and
// policies/default-gpu.gwpolicy in the source tree, or $GRAPHWORLD_POLICY_DIR),
// and the cost model a policy is priced with when the user names none.
#pragma once

#include <optional>
#include <string>

#include "env/cost/cost_model_factory.h"
#include "launch/cli_args.h"
#include "learner/policy_file.h"

namespace graphworld {

// "default" and "default-gpu" become the shipped policies' paths; anything
// else is a path. Throws UsageError when the file does not exist, saying how
// to get one.
std::string resolve_policy_path(const std::string& spec);

// The GPU profile a policy trained under the gpu cost model was priced for
// ("h100-sxm" from "gpu (h100-sxm, table: auto)"); nullopt for a policy
// trained under another cost model. optimize and evaluate price such a
// policy's results with `--cost gpu --gpu NAME` unless --cost says otherwise.
std::optional<std::string> policy_gpu(const PolicyFileInfo& info);

// The cost model options of a command that runs `policy` (none: a search):
// cost_options_from(args), defaulting to `--cost gpu --gpu NAME` for a
// policy trained for a GPU.
CostModelOptions cost_options_for_policy(const CliArgs& args, const PolicyFileInfo* policy);

// Whether `--finish greedy|none` of a command that runs an agent (`fallback`
// when not given) asks for the greedy finish of its result
// (env/search/greedy_finish.h). optimize finishes by default, to write the
// best file it can; evaluate does not, to judge the agent alone.
bool greedy_finish_from(const CliArgs& args, const std::string& fallback);

}  // namespace graphworld
