// Files that must never be half-written or silently corrupt: checkpoints,
// policy files. A payload is stored behind a small header (magic, format
// version, payload length, FNV-1a checksum), written to a temporary file,
// fsync'd and renamed into place, so a crash leaves the old file or the new
// one, never a mix; reading checks every header field and the checksum and
// refuses the file with a FormatError that says which check failed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphworld {

// `kind` is a short tag stored in the header ("checkpoint", "policy"): a
// file of another kind is refused, not misread.
void write_checked_file(const std::string& path, const std::string& kind, const std::string& payload);
std::string read_checked_file(const std::string& path, const std::string& kind);

// Checkpoints in `dir` named PREFIX-<number>.ckpt, oldest first.
std::vector<std::string> list_numbered_files(const std::string& dir, const std::string& prefix);
// Removes all but the newest `keep` of them.
void prune_numbered_files(const std::string& dir, const std::string& prefix, size_t keep);

}  // namespace graphworld
