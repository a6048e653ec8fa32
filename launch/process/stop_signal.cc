#include "launch/process/stop_signal.h"

#include <atomic>
#include <csignal>

namespace graphworld {
namespace {

// Lock-free, so safe to set in a signal handler and to read from other threads.
std::atomic<bool> requested{false};
std::atomic<int> requested_by{0};
static_assert(std::atomic<bool>::is_always_lock_free);
static_assert(std::atomic<int>::is_always_lock_free);

void on_stop_signal(int signal) {
  int none = 0;
  requested_by.compare_exchange_strong(none, signal);  // the first signal is the reason
  requested = true;
  std::signal(signal, SIG_DFL);
}

}  // namespace

void install_stop_signals() {
  requested = false;
  requested_by = 0;
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGUSR1, on_stop_signal);
}

void restore_default_signals() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGUSR1, SIG_DFL);
}

bool stop_requested() { return requested.load(); }

int stop_signal_number() { return requested_by.load(); }

}  // namespace graphworld
