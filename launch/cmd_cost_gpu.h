// graphworld cost export-gpu-configs / import-gpu-times / fit-gpu: see cmd_cost_gpu.cc.
#pragma once

#include "launch/cli_args.h"

namespace graphworld {

int run_cost_export_gpu_configs(const CliArgs& args);
int run_cost_import_gpu_times(const CliArgs& args);
int run_cost_fit_gpu(const CliArgs& args);

}  // namespace graphworld
