#include "launch/process/child_process.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace graphworld {

ChildProcess::ChildProcess(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw Error(std::string("cannot start ") + argv[0] + ": fork failed (" + std::strerror(errno) + ")");
  if (pid_ == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);  // the launcher died before the line above
    // The launcher's stop handlers must not carry over into the child.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    execv(args[0], args.data());
    const std::string message = std::string("cannot run ") + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(2, message.data(), message.size());
    _exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

std::optional<int> ChildProcess::poll() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) status_ = status;
  return status_;
}

void ChildProcess::signal(int signal_number) {
  if (pid_ > 0 && !poll()) ::kill(pid_, signal_number);
}

std::string ChildProcess::describe(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string own_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace graphworld
