// Running a program to read what it prints (sbatch, squeue, scontrol...):
// no shell, so arguments need no quoting.
#pragma once

#include <string>
#include <vector>

namespace graphworld {

struct CommandOutput {
  int exit_code = -1;  // the program's exit code; 127 if it could not be started
  std::string out;     // standard output
  std::string err;     // standard error
};

// Runs argv (argv[0] found on PATH) to its end. Error only if no process
// could be made at all.
CommandOutput command_output(const std::vector<std::string>& argv);

// `program`'s full path as PATH finds it; empty if it is not there.
std::string find_on_path(const std::string& program);
inline bool on_path(const std::string& program) { return !find_on_path(program).empty(); }

}  // namespace graphworld
