#include "env/cost/cost_cache_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/checksum.h"
#include "common/error.h"

namespace graphworld {
namespace {

constexpr const char* kMagic = "graphworld-cost-cache 1";
constexpr const char* kCostFormat = "%.9g";

uint64_t fnv1a(const char* data, size_t size) { return fnv1a_64(data, size); }

// Holds flock(LOCK_EX) on a lock file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UsageError("cannot open lock file " + path + ": " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        ::close(fd_);
        throw UsageError("cannot lock " + path + ": " + std::strerror(errno));
      }
    }
  }
  ~FileLock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

std::string read_all(const std::string& path, bool& exists) {
  std::ifstream in(path, std::ios::binary);
  exists = static_cast<bool>(in);
  if (!exists) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

double round_to_cache_precision(double ms) {
  char number[64];
  std::snprintf(number, sizeof(number), kCostFormat, ms);
  return std::strtod(number, nullptr);
}

std::string default_cache_dir() {
  if (const char* dir = std::getenv("GRAPHWORLD_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/graphworld";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/graphworld";
  throw UsageError("no cache directory: set GRAPHWORLD_CACHE_DIR (or HOME)");
}

CostCacheFile::CostCacheFile(std::string path, std::string fingerprint)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)) {
  if (fingerprint_.find('\n') != std::string::npos) throw UsageError("a cost cache fingerprint must be one line");
}

bool CostCacheFile::parse(const std::string& text, CostEntries& out) {
  auto fail = [&](size_t line, const std::string& what) {
    problem_ = "line " + std::to_string(line) + ": " + what;
    return false;
  };
  size_t end_line = text.rfind("\nend ");
  if (end_line == std::string::npos) return fail(0, "no 'end' line (the file is truncated)");
  size_t body_size = end_line + 1;
  std::istringstream lines(text.substr(0, body_size));
  std::string line;
  size_t number = 0;
  if (!std::getline(lines, line) || line != kMagic)
    return fail(1, "not a version-1 cost cache (expected '" + std::string(kMagic) + "')");
  ++number;
  if (!std::getline(lines, line) || line != "fingerprint " + fingerprint_)
    return fail(2, "fingerprint does not match this device (" + fingerprint_ + ")");
  ++number;
  size_t records = 0;
  while (std::getline(lines, line)) {
    ++number;
    size_t tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 == line.size()) return fail(number, "malformed record");
    char* parsed_end = nullptr;
    std::string ms_text = line.substr(0, tab);
    double ms = std::strtod(ms_text.c_str(), &parsed_end);
    if (parsed_end != ms_text.c_str() + ms_text.size() || !(ms >= 0) || ms > 1e9)
      return fail(number, "bad cost '" + ms_text + "'");
    out[line.substr(tab + 1)] = ms;
    ++records;
  }
  unsigned long long count = 0, checksum = 0;
  std::string trailer = text.substr(body_size);
  char extra = 0;
  if (std::sscanf(trailer.c_str(), "end %llu %llx%c", &count, &checksum, &extra) < 2 ||
      (extra != 0 && extra != '\n'))
    return fail(number + 1, "malformed 'end' line");
  if (count != records) return fail(number + 1, "record count " + std::to_string(count) + " but " + std::to_string(records) + " records");
  if (checksum != fnv1a(text.data(), body_size)) return fail(number + 1, "checksum mismatch (the file was altered or partly written)");
  return true;
}

CostEntries CostCacheFile::load_unlocked() {
  bool exists = false;
  std::string text = read_all(path_, exists);
  CostEntries entries;
  if (!exists) return entries;
  if (parse(text, entries)) return entries;
  std::string aside = path_ + ".corrupt";
  std::error_code ignored;
  std::filesystem::rename(path_, aside, ignored);
  std::fprintf(stderr, "warning: cost cache %s is corrupt (%s); moved it to %s and will measure again\n", path_.c_str(),
               problem_.c_str(), aside.c_str());
  return {};
}

CostEntries CostCacheFile::load_read_only() {
  bool exists = false;
  const std::string text = read_all(path_, exists);
  CostEntries entries;
  if (exists && !parse(text, entries)) return {};
  return entries;
}

CostEntries CostCacheFile::load() {
  std::filesystem::path target(path_);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  FileLock lock(path_ + ".lock");  // so a corrupt file is moved aside by one process only
  return load_unlocked();
}

size_t CostCacheFile::merge_and_save(const CostEntries& entries) {
  std::filesystem::path target(path_);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  FileLock lock(path_ + ".lock");
  CostEntries merged = load_unlocked();
  for (const auto& [key, ms] : entries) merged[key] = ms;
  // Sorted, so the file is stable and diffable.
  std::vector<std::pair<std::string, double>> rows(merged.begin(), merged.end());
  std::sort(rows.begin(), rows.end());
  std::string body = std::string(kMagic) + "\nfingerprint " + fingerprint_ + "\n";
  char number[64];
  for (const auto& [key, ms] : rows) {
    std::snprintf(number, sizeof(number), kCostFormat, ms);
    body += number;
    body += '\t';
    body += key;
    body += '\n';
  }
  char trailer[96];
  std::snprintf(trailer, sizeof(trailer), "end %zu %016llx\n", rows.size(),
                static_cast<unsigned long long>(fnv1a(body.data(), body.size())));
  body += trailer;

  std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("cannot write cost cache " + tmp + ": " + std::strerror(errno));
  size_t written = 0;
  while (written < body.size()) {
    ssize_t n = ::write(fd, body.data() + written, body.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      throw UsageError("cannot write cost cache " + tmp + ": " + std::strerror(errno));
    }
    written += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    throw UsageError("cannot replace cost cache " + path_ + ": " + std::strerror(errno));
  }
  return rows.size();
}

}  // namespace graphworld
