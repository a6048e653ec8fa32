// graphworld cost export-table MODEL... -o FILE: see cmd_cost_export.cc.
#pragma once

#include "launch/cli_args.h"

namespace graphworld {

int run_cost_export_table(const CliArgs& args);

}  // namespace graphworld
