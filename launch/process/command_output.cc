#include "launch/process/command_output.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "common/error.h"

namespace graphworld {

CommandOutput command_output(const std::vector<std::string>& argv) {
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) close(fd);
  };
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    close_all();
    throw Error("cannot run " + argv.at(0) + ": pipe failed (" + why + ")");
  }
  std::vector<std::string> owned = argv;
  std::vector<char*> args;
  for (std::string& a : owned) args.push_back(a.data());
  args.push_back(nullptr);
  // Prepared before fork: the child may only make async-signal-safe calls.
  const std::string cannot_run = "cannot run " + argv.at(0) + "\n";
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::strerror(errno);
    close_all();
    throw Error("cannot run " + argv.at(0) + ": fork failed (" + why + ")");
  }
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 0);  // dup2 clears close-on-exec on fd 0
    execvp(args[0], args.data());
    (void)!write(2, cannot_run.data(), cannot_run.size());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandOutput result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buffer[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;  // the pipes are closed below; the child then sees EPIPE, not a full pipe
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (pollfd& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return result;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::filesystem::path candidate = std::filesystem::path(dir) / program;
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

}  // namespace graphworld
