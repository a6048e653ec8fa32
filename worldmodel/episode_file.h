// Rebuilt episodes kept on disk, for stores whose episodes would not fit in
// memory (`worldmodel train --resident-steps`): appended once while the
// stores are replayed, then read back a batch at a time in every epoch.
// A step takes about 0.6 KiB here (its summary, allowed rules and their
// match counts), against the ~60 bytes of the store it was rebuilt from and
// several KiB as training tensors.
//
// The file is unlinked as soon as it is made, so it goes away with the
// process however that ends (done, Ctrl-C, killed) and never outlives it.
//
//   EpisodeFile file("/scratch");              // a nameless file there
//   file.append(episode);                      // ... while replaying
//   WorldEpisode scratch;
//   const WorldEpisode& e = file.episode(3, scratch);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "worldmodel/episode_source.h"

namespace graphworld {

class EpisodeFile final : public EpisodeSource {
 public:
  // Error naming `directory` when no file can be made there.
  explicit EpisodeFile(const std::string& directory);
  ~EpisodeFile() override;
  EpisodeFile(const EpisodeFile&) = delete;
  EpisodeFile& operator=(const EpisodeFile&) = delete;

  // Error naming the directory when the disk is full or a write fails.
  void append(const WorldEpisode& episode);

  size_t size() const override { return index_.size(); }
  int64_t steps(size_t i) const override { return index_.at(i).steps; }
  // FormatError when the bytes read back are not the episode written.
  const WorldEpisode& episode(size_t i, WorldEpisode& scratch) const override;
  bool complete(size_t i) const override { return index_.at(i).complete; }
  int32_t graph_index(size_t i) const { return index_.at(i).graph_index; }

  int64_t bytes() const { return end_; }
  const std::string& directory() const { return directory_; }

 private:
  struct Entry {
    int64_t offset = 0;
    int64_t bytes = 0;
    int64_t steps = 0;
    int32_t graph_index = 0;
    bool complete = false;
  };
  void flush() const;

  std::string directory_;
  int fd_ = -1;
  std::vector<Entry> index_;
  int64_t end_ = 0;                    // bytes appended, pending ones included
  mutable std::vector<char> pending_;  // appended, not yet written
  mutable int64_t written_ = 0;        // bytes in the file
  mutable std::vector<char> read_buffer_;
};

}  // namespace graphworld
