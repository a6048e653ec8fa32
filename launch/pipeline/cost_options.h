// The cost-model options several subcommands share (--cost, --threads,
// --cache-dir, --rates) and a progress line for first-time measurement.
#pragma once

#include <memory>
#include <vector>

#include "env/cost/cost_model.h"
#include "env/cost/cost_model_factory.h"
#include "launch/cli_args.h"

namespace graphworld {

std::vector<CliOption> cost_cli_options();
CostModelOptions cost_options_from(const CliArgs& args, const std::string& default_kind = "analytic");
// Builds the model and, for measured models unless `show_progress` is false
// (a command's --quiet), prints measurement progress to stderr (at most a few
// lines a second).
std::unique_ptr<CostModel> make_cost_model_with_progress(const CostModelOptions& options, bool show_progress = true);

}  // namespace graphworld
