// Writing a file so that readers see the old contents or the new, never a
// mix: the bytes go to PATH.tmp, are fsync'd, and the temporary file is
// renamed over PATH. A crash part way leaves at most a stray PATH.tmp.
#pragma once

#include <string>

namespace graphworld {

// Throws Error naming the file and the failing call (disk full, no
// permission) and removes the temporary file.
void write_file_atomically(const std::string& path, const std::string& bytes);
// The same with `header` written first (checked files prepend one).
void write_file_atomically(const std::string& path, const std::string& header, const std::string& bytes);
// The same for secrets: the file is created with mode 0600 (owner only).
void write_private_file_atomically(const std::string& path, const std::string& bytes);
// A whole file's bytes; Error naming the file when it cannot be read. (Its
// writers above make sure it is never half-written.)
std::string read_file(const std::string& path);
// Copies `from` over `to` the same way, in blocks (a rollout store can be
// gigabytes). Error naming both files if either side fails.
void copy_file_atomically(const std::string& from, const std::string& to);

}  // namespace graphworld
