// The run's rollout store: every step the actors sent, in one HDF5 file,
// readable while it is written (SWMR).
//
// A step is stored as scalars only: which training graph, the episode's
// seed and the step's index in it, the action, and what PPO and a world
// model read (reward, done, cost, log-probability, value, policy version,
// actor). GraphEnv replays an episode exactly from its graph, seed and
// actions, so observations are rebuilt rather than stored: a step costs
// tens of bytes instead of tens of kilobytes.
//
// Layout (all created before writing starts, since SWMR allows no new
// objects afterwards): one chunked, extendable 1-D dataset per column under
// /steps, /graphs (the training graphs' names, fixed-length strings),
// /config (the run's resolved config, bytes), and attributes on the root
// (format version, run id, number of xfers). Data reaches the file on
// flush(): a crash loses at most what was appended since the last flush and
// leaves everything before it readable.
//
// After a crash the file is still marked as open for writing, which plain
// HDF5 readers refuse; RolloutStoreWriter::resume() clears that mark itself
// (as `h5clear -s` does) and appends after the last flushed step.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace graphworld {

inline constexpr uint32_t kRolloutStoreFormatVersion = 1;

struct StoredStep {
  uint32_t actor_id = 0;
  int32_t env_slot = 0;       // the actor's environment: consecutive steps of one slot form its segments
  int64_t policy_version = 0;
  int32_t graph_index = 0;    // into RolloutStoreInfo::graphs
  uint64_t episode_seed = 0;
  int32_t episode_step = 0;   // steps taken in the episode before this one
  int32_t xfer = 0;
  int32_t location = 0;
  float reward = 0;
  uint8_t done = 0;
  double cost_ms = 0;         // after the step
  float log_prob = 0;
  float value = 0;
  bool operator==(const StoredStep&) const = default;
};

struct RolloutStoreInfo {
  std::string run_id;
  std::vector<std::string> graphs;  // zoo names or ONNX paths, as the run's config names them
  int32_t num_xfers = 0;            // the rule library's size
  std::string config_text;          // the run's resolved config
};

struct RolloutStoreOptions {
  int64_t chunk_steps = 16384;  // rows per HDF5 chunk
  double flush_every_s = 5.0;   // append() flushes when this much time has passed since the last flush
};

class RolloutStoreWriter {
 public:
  // A new store; Error if `path` exists (a run never overwrites its data).
  static std::unique_ptr<RolloutStoreWriter> create(const std::string& path, const RolloutStoreInfo& info,
                                                    RolloutStoreOptions options = {});
  // Appends to an existing store of run `run_id`, clearing the open mark a
  // crash left. FormatError if it is not a rollout store of this format or
  // run.
  static std::unique_ptr<RolloutStoreWriter> resume(const std::string& path, const std::string& run_id,
                                                    RolloutStoreOptions options = {});
  ~RolloutStoreWriter();  // flushes and closes; errors are logged, not thrown
  RolloutStoreWriter(const RolloutStoreWriter&) = delete;
  RolloutStoreWriter& operator=(const RolloutStoreWriter&) = delete;

  void append(std::span<const StoredStep> steps);
  void flush();  // every appended step is in the file and visible to readers
  void close();  // flush, then release the file (the open mark is cleared)
  int64_t steps() const;
  const RolloutStoreInfo& info() const;
  const std::string& path() const;

  struct Impl;

 private:
  explicit RolloutStoreWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class RolloutStoreReader {
 public:
  // Opens for reading while a writer may still be appending (SWMR).
  // FormatError naming the file for anything that is not a rollout store.
  explicit RolloutStoreReader(const std::string& path);
  ~RolloutStoreReader();
  RolloutStoreReader(const RolloutStoreReader&) = delete;
  RolloutStoreReader& operator=(const RolloutStoreReader&) = delete;

  // Sees what the writer has flushed since the last refresh.
  void refresh();
  // Steps visible now: all columns hold at least this many rows.
  int64_t steps() const;
  std::vector<StoredStep> read(int64_t begin, int64_t count) const;
  const RolloutStoreInfo& info() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
