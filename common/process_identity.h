// Identities of processes and runs in the distributed system, and the wall
// clock that stamps messages. One place, so every process makes them alike.
#pragma once

#include <cstdint>
#include <string>

namespace graphworld {

// Nanoseconds since the Unix epoch (wall clock: comparable across machines,
// for lag and latency reports only, never for ordering).
int64_t unix_time_ns();

// Random, different every time a process starts, so peers tell a restarted
// process from a reconnecting one.
uint64_t new_incarnation();

// 16 random hex digits: a run's id, made once per run.
std::string new_run_id();

}  // namespace graphworld
