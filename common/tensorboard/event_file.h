// TensorBoard event files: the run folder's events.out.tfevents.graphworld,
// written beside metrics.jsonl so `tensorboard --logdir RUN` shows a run's
// curves, and read back by tests and `graphworld report`.
//
// The file is TensorFlow's record format: per record a little-endian uint64
// length, the masked CRC-32C of those 8 bytes, the data (a serialized Event
// protobuf, event.proto), and the masked CRC-32C of the data. The first
// record carries the file version "brain.Event:2"; each later one a Summary
// of scalars at one step.
//
//   append_scalar_event(event_file_path(run), {env_steps, now, {{"ppo/entropy", 1.2f}}});
//   EventFileContents all = read_event_file(event_file_path(run));
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace graphworld {

inline constexpr const char* kEventFileVersion = "brain.Event:2";

// RUN/events.out.tfevents.graphworld (TensorBoard finds files by "tfevents").
std::string event_file_path(const std::string& run_dir);

struct ScalarEvent {
  int64_t step = 0;
  double wall_time = 0;  // seconds since the Unix epoch
  std::vector<std::pair<std::string, float>> values;  // tag, value
};

// Appends one event, first writing the version record when the file is new
// or empty. Error naming the file if the write fails (disk full).
void append_scalar_event(const std::string& path, const ScalarEvent& event);

struct EventFileContents {
  std::string file_version;          // the first record's
  std::vector<ScalarEvent> scalars;  // every scalar event, in file order
  int64_t records = 0;               // every record read, the version record included
};

// Reads and checks every record. FormatError naming the file, the record's
// byte offset and what is wrong: a length or data CRC that does not match, a
// record cut short, data that is not an Event, a file without the version
// record. With `drop_cut_tail`, a last record cut short (a crash mid-write)
// is dropped instead; damage anywhere else is still an error.
EventFileContents read_event_file(const std::string& path, bool drop_cut_tail = false);

// Rewrites the file (atomically) with the scalar events `keep` accepts, in
// order; a cut-short last record is dropped. Does nothing if the file does
// not exist. What a resumed run uses to drop the events of updates it redoes.
void filter_event_file(const std::string& path, const std::function<bool(const ScalarEvent&)>& keep);

}  // namespace graphworld
