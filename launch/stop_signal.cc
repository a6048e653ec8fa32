#include "launch/stop_signal.h"

#include <atomic>
#include <csignal>

namespace graphworld {
namespace {

// Lock-free, so safe to set in a signal handler and to read from other threads.
std::atomic<bool> requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_stop_signal(int signal) {
  requested = true;
  std::signal(signal, SIG_DFL);
}

}  // namespace

void install_stop_signals() {
  requested = false;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

void restore_default_signals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

bool stop_requested() { return requested.load(); }

}  // namespace graphworld
