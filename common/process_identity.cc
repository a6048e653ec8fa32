#include "common/process_identity.h"

#include <chrono>
#include <cstdio>
#include <random>

namespace graphworld {

int64_t unix_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t new_incarnation() {
  std::random_device device;
  // The clock as well: a random_device that is a fixed-seed PRNG on some
  // platforms would otherwise repeat across restarts.
  return (static_cast<uint64_t>(device()) << 32) ^ device() ^ static_cast<uint64_t>(unix_time_ns());
}

std::string new_run_id() {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(new_incarnation()));
  return text;
}

}  // namespace graphworld
