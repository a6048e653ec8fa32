#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

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

void copy_file_atomically(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY);
  if (in < 0) throw Error(from + ": cannot open it to copy to " + to + " (" + std::strerror(errno) + ")");
  const std::string temp = to + ".tmp";
  const int out = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) {
    ::close(in);
    throw Error(to + ": cannot create " + temp + " (" + std::strerror(errno) + ")");
  }
  try {
    std::string block(1 << 20, '\0');
    while (true) {
      const ssize_t n = ::read(in, block.data(), block.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw Error(from + ": read failed while copying to " + to + " (" + std::strerror(errno) + ")");
      if (n == 0) break;
      write_all(out, block.data(), static_cast<size_t>(n), to);
    }
    if (::fsync(out) != 0) throw Error(to + ": fsync failed (" + std::string(std::strerror(errno)) + ")");
  } catch (...) {
    ::close(in);
    ::close(out);
    std::remove(temp.c_str());
    throw;
  }
  ::close(in);
  if (::close(out) != 0 || std::rename(temp.c_str(), to.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    throw Error(to + ": cannot replace it with the copy of " + from + " (" + why + ")");
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path + ": read failed");
  return bytes;
}

}  // namespace graphworld
