// The benchmarks behind `graphworld bench NAME`, one file each.
#pragma once

#include <vector>

#include "common/process_memory.h"
#include "launch/cli_args.h"

namespace graphworld {

int run_bench_io(const CliArgs& args);        // cmd_bench.cc
int run_bench_cost(const CliArgs& args);      // cmd_bench_cost.cc
int run_bench_fidelity(const CliArgs& args);  // cmd_bench_fidelity.cc
int run_bench_rules(const CliArgs& args);     // cmd_bench_rules.cc
int run_bench_policy(const CliArgs& args);    // cmd_bench_policy.cc
int run_bench_wire(const CliArgs& args);      // cmd_bench_wire.cc

}  // namespace graphworld
