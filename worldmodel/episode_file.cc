#include "worldmodel/episode_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace graphworld {
namespace {

constexpr uint32_t kEpisodeMagic = 0x50455747;  // "GWEP"
// Written in batches of this size: one write per episode would be a
// system call per few hundred bytes.
constexpr size_t kWriteBatchBytes = size_t{4} << 20;

template <typename T>
void put(std::vector<char>& out, const T& value) {
  const char* bytes = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof(T));
}

template <typename T>
void put_array(std::vector<char>& out, const T* values, size_t count) {
  const char* bytes = reinterpret_cast<const char*>(values);
  out.insert(out.end(), bytes, bytes + count * sizeof(T));
}

// Reads from a record, refusing to run past its end.
class RecordReader {
 public:
  RecordReader(const char* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  bool get(T& value) {
    return get_array(&value, 1);
  }
  template <typename T>
  bool get_array(T* values, size_t count) {
    const size_t n = count * sizeof(T);
    if (n > size_ - at_) return false;
    std::memcpy(values, data_ + at_, n);
    at_ += n;
    return true;
  }
  bool at_end() const { return at_ == size_; }

 private:
  const char* data_;
  size_t size_, at_ = 0;
};

std::string system_error_text() { return std::strerror(errno); }

}  // namespace

EpisodeFile::EpisodeFile(const std::string& directory) : directory_(directory.empty() ? "." : directory) {
  std::string path = (std::filesystem::path(directory_) / "graphworld-episodes-XXXXXX").string();
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0)
    throw Error("cannot make a file for the rebuilt episodes in " + directory_ + ": " + system_error_text() +
                " (name another folder with room, --spill-dir DIR)");
  // Nameless from here on: it goes when the process does.
  ::unlink(path.c_str());
}

EpisodeFile::~EpisodeFile() {
  if (fd_ >= 0) ::close(fd_);
}

void EpisodeFile::append(const WorldEpisode& episode) {
  const size_t start = pending_.size();
  put(pending_, kEpisodeMagic);
  put(pending_, episode.graph_index);
  put(pending_, static_cast<uint32_t>(episode.steps.size()));
  for (const WorldStep& s : episode.steps) {
    if (s.summary.size() != static_cast<size_t>(kSummaryDim) || s.locations.size() != s.allowed.size()) {
      pending_.resize(start);  // the episode is refused whole: the file stays as it was
      throw Error("an episode step has a summary of " + std::to_string(s.summary.size()) + " floats (expected " +
                  std::to_string(kSummaryDim) + ") or " + std::to_string(s.locations.size()) +
                  " match counts for " + std::to_string(s.allowed.size()) + " allowed rules");
    }
    put_array(pending_, s.summary.data(), s.summary.size());
    put(pending_, static_cast<uint32_t>(s.allowed.size()));
    put_array(pending_, s.allowed.data(), s.allowed.size());
    put_array(pending_, s.locations.data(), s.locations.size());
    put(pending_, s.xfer);
    put(pending_, s.location);
    put(pending_, s.reward);
    put(pending_, static_cast<uint8_t>(s.done ? 1 : 0));
  }
  Entry entry;
  entry.offset = end_;
  entry.bytes = static_cast<int64_t>(pending_.size() - start);
  entry.steps = static_cast<int64_t>(episode.steps.size());
  entry.graph_index = episode.graph_index;
  entry.complete = episode.complete();
  index_.push_back(entry);
  end_ += entry.bytes;
  if (pending_.size() >= kWriteBatchBytes) flush();
}

void EpisodeFile::flush() const {
  size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t n = ::pwrite(fd_, pending_.data() + done, pending_.size() - done, written_);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = system_error_text();
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));  // what was written stays
      throw Error("cannot write the rebuilt episodes to " + directory_ + ": " + why +
                  " (they take about 0.6 KiB a step; name a folder with room, --spill-dir DIR)");
    }
    done += static_cast<size_t>(n);
    written_ += n;
  }
  pending_.clear();
}

const WorldEpisode& EpisodeFile::episode(size_t i, WorldEpisode& scratch) const {
  const Entry& entry = index_.at(i);
  if (entry.offset + entry.bytes > written_) flush();
  read_buffer_.resize(static_cast<size_t>(entry.bytes));
  size_t done = 0;
  while (done < read_buffer_.size()) {
    const ssize_t n = ::pread(fd_, read_buffer_.data() + done, read_buffer_.size() - done,
                              entry.offset + static_cast<int64_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error("cannot read rebuilt episode " + std::to_string(i) + " back from its file in " + directory_ + ": " +
                  (n == 0 ? std::string("the file ended early") : system_error_text()));
    done += static_cast<size_t>(n);
  }
  const auto damaged = [&](const std::string& why) {
    return FormatError("rebuilt episode " + std::to_string(i) + " read back from its file in " + directory_ +
                       " is not the one written (" + why + ")");
  };
  RecordReader in(read_buffer_.data(), read_buffer_.size());
  uint32_t magic = 0, steps = 0;
  if (!in.get(magic) || magic != kEpisodeMagic) throw damaged("no episode mark");
  if (!in.get(scratch.graph_index) || !in.get(steps) || steps != entry.steps) throw damaged("its step count");
  scratch.steps.resize(steps);
  for (WorldStep& s : scratch.steps) {
    uint32_t allowed = 0;
    uint8_t done_flag = 0;
    s.summary.resize(kSummaryDim);
    if (!in.get_array(s.summary.data(), s.summary.size()) || !in.get(allowed) || allowed > read_buffer_.size())
      throw damaged("a step's summary");
    s.allowed.resize(allowed);
    s.locations.resize(allowed);
    if (!in.get_array(s.allowed.data(), allowed) || !in.get_array(s.locations.data(), allowed) || !in.get(s.xfer) ||
        !in.get(s.location) || !in.get(s.reward) || !in.get(done_flag) || done_flag > 1)
      throw damaged("a step's rules or action");
    s.done = done_flag != 0;
  }
  if (!in.at_end()) throw damaged("bytes left over");
  return scratch;
}

}  // namespace graphworld
