// The subcommands of the `graphworld` CLI. Each lives in its own cmd_*.cc
// with its option declarations and help text.
#pragma once

#include <vector>

#include "launch/cli_args.h"

namespace graphworld {

struct Subcommand {
  CliCommand spec;
  int (*run)(const CliArgs& args);
};

Subcommand import_command();
Subcommand run_command();
Subcommand check_command();
Subcommand zoo_command();
Subcommand devices_command();
Subcommand bench_command();
Subcommand cost_command();
Subcommand calibrate_command();
Subcommand rules_command();
Subcommand optimize_command();
Subcommand env_bench_command();
Subcommand train_command();
Subcommand learner_command();
Subcommand actor_command();
Subcommand policy_command();
Subcommand rollouts_command();
Subcommand worldmodel_command();
Subcommand launch_command();
Subcommand evaluate_command();
Subcommand report_command();

}  // namespace graphworld
