#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "common/error.h"

namespace graphworld {
namespace {

void write_all(int fd, const char* p, size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(path + ": write failed (" + std::strerror(errno) + "); is the disk full?");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void write_with_mode(const std::string& path, const std::string& header, const std::string& bytes, mode_t mode) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0) throw Error(path + ": cannot create " + temp + " (" + std::strerror(errno) + ")");
  try {
    // A stale temporary file keeps its old mode through O_TRUNC.
    if (::fchmod(fd, mode) != 0) throw Error(path + ": cannot set its mode (" + std::string(std::strerror(errno)) + ")");
    write_all(fd, header.data(), header.size(), path);
    write_all(fd, bytes.data(), bytes.size(), path);
    // The data must be on disk before the rename makes it the file.
    if (::fsync(fd) != 0) throw Error(path + ": fsync failed (" + std::string(std::strerror(errno)) + ")");
  } catch (...) {
    ::close(fd);
    std::remove(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    std::remove(temp.c_str());
    throw Error(path + ": close failed (" + std::string(std::strerror(errno)) + ")");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw Error(path + ": cannot replace the file (" + std::string(std::strerror(errno)) + ")");
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& bytes) {
  write_with_mode(path, std::string(), bytes, 0644);
}

void write_file_atomically(const std::string& path, const std::string& header, const std::string& bytes) {
  write_with_mode(path, header, bytes, 0644);
}

void write_private_file_atomically(const std::string& path, const std::string& bytes) {
  write_with_mode(path, std::string(), bytes, 0600);
}

}  // namespace graphworld
