// A child process of the launcher: started from an argument list, polled
// without blocking, signalled, and never left behind: it gets SIGTERM if the
// launcher dies (PR_SET_DEATHSIG) and runs in its own process group, so a
// terminal's Ctrl-C reaches only the launcher, which decides what each
// child is told.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace graphworld {

class ChildProcess {
 public:
  // Starts `argv` (argv[0] a path). Error if fork or exec fails.
  explicit ChildProcess(std::vector<std::string> argv);
  ~ChildProcess();  // SIGKILLs and reaps a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The exit status once it has ended (as waitpid gives it), without waiting.
  std::optional<int> poll();
  bool running() { return !poll().has_value(); }
  void signal(int signal_number);
  // "exit code 3" or "killed by signal 9" for a status from poll().
  static std::string describe(int status);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// This executable's path (for starting more of itself).
std::string own_executable();

}  // namespace graphworld
