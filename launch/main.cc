// The `graphworld` command-line tool.
//
// Every error a user can cause ends here as one clear message on stderr and
// exit status 2; nothing is allowed to crash or print a stack trace.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "common/error.h"
#include "launch/commands.h"
#include "learner/compute_threads.h"

namespace {

const std::vector<graphworld::Subcommand>& all_commands() {
  static const std::vector<graphworld::Subcommand> commands = {
      graphworld::optimize_command(), graphworld::import_command(),  graphworld::run_command(),
      graphworld::check_command(),    graphworld::zoo_command(),     graphworld::cost_command(),
      graphworld::calibrate_command(), graphworld::rules_command(),  graphworld::env_bench_command(),
      graphworld::train_command(),    graphworld::learner_command(), graphworld::actor_command(),
      graphworld::policy_command(),   graphworld::rollouts_command(), graphworld::worldmodel_command(), graphworld::launch_command(),
      graphworld::evaluate_command(), graphworld::report_command(),
      graphworld::devices_command(),  graphworld::bench_command()};
  return commands;
}

void print_usage() {
  std::printf("usage: graphworld COMMAND [options]\n\n"
              "graphworld optimises deep-learning computation graphs (ONNX) with verified substitutions.\n\n"
              "commands:\n");
  for (const auto& command : all_commands()) std::printf("  %-10s %s\n", command.spec.name.c_str(), command.spec.summary.c_str());
  std::printf("\nRun 'graphworld COMMAND --help' for the options of a command.\n");
}

// OpenMP's threads spin between parallel regions unless told otherwise, and
// LibTorch's small matrix products in learning are mostly gaps between
// regions: on 2 cores the spinning took over half the CPU (PPO updates 2.3x
// faster and dream steps 2.5x with passive waits). The OpenMP runtime reads
// its settings when it loads, before main, so the learning commands
// re-execute themselves once with OMP_WAIT_POLICY=PASSIVE unless the user
// chose a policy. Commands that time kernels (cost, calibrate, optimize's
// checks) keep the runtime's default, so their numbers stay comparable.
bool learns(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "train" || command == "learner" || command == "actor" || command == "worldmodel") return true;
  return command == "bench" && argc > 2 && std::string(argv[2]) == "policy";
}

void passive_openmp_waits(int argc, char** argv) {
  if (!learns(argc, argv) || std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  // Started through the dynamic loader (ld-linux ./graphworld ...), the
  // running image is the loader, which would not take these arguments.
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return;
  self[length] = '\0';
  if (std::string(self).find("/ld-") != std::string::npos) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv(self, argv);
  // Not re-executed: carry on with the runtime's default.
}

}  // namespace

int main(int argc, char** argv) {
  passive_openmp_waits(argc, argv);
  // The learning commands' matrix products on OpenBLAS's best kernels where
  // it misjudged this CPU (compute_threads.h); the others keep its choice,
  // as with the waits above.
  if (learns(argc, argv)) graphworld::choose_blas_kernels();
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h" || std::string(argv[1]) == "help") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& command : all_commands()) {
    if (command.spec.name != name) continue;
    try {
      graphworld::CliArgs parsed(command.spec, args);
      if (parsed.help_requested()) {
        std::printf("%s", graphworld::render_help(command.spec).c_str());
        return 0;
      }
      return command.run(parsed);
    } catch (const graphworld::Error& e) {
      std::fprintf(stderr, "graphworld %s: error: %s\n", name.c_str(), e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "graphworld %s: internal error: %s\n", name.c_str(), e.what());
      return 3;
    }
  }
  std::fprintf(stderr, "graphworld: unknown command '%s'; run 'graphworld --help' for the list\n", name.c_str());
  return 2;
}
