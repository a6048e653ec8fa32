#include "common/checkpoint_file.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/checksum.h"
#include "common/error.h"

namespace graphworld {
namespace {

constexpr char kMagic[8] = {'G', 'W', 'C', 'H', 'E', 'C', 'K', '1'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kKindBytes = 16;

struct Header {
  char magic[8];
  uint32_t version;
  char kind[kKindBytes];
  uint64_t payload_bytes;
  uint64_t checksum;
};

}  // namespace

void write_checked_file(const std::string& path, const std::string& kind, const std::string& payload) {
  if (kind.size() >= kKindBytes) throw Error("checked file kind '" + kind + "' is too long");
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kFormatVersion;
  std::memcpy(h.kind, kind.data(), kind.size());
  h.payload_bytes = payload.size();
  h.checksum = fnv1a_64(payload.data(), payload.size());
  write_file_atomically(path, std::string(reinterpret_cast<const char*>(&h), sizeof(h)), payload);
}

std::string read_checked_file(const std::string& path, const std::string& kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(path + ": cannot open the " + kind + " file (does it exist?)");
  Header h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof(h)))
    throw FormatError(path + ": truncated: shorter than a " + kind + " file's header");
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
    throw FormatError(path + ": not a graphworld " + kind + " file (bad magic bytes); use an earlier " + kind +
                      " or another file");
  if (h.version != kFormatVersion)
    throw FormatError(path + ": format version " + std::to_string(h.version) + ", this graphworld reads version " +
                      std::to_string(kFormatVersion));
  const std::string stored_kind(h.kind, strnlen(h.kind, kKindBytes));
  if (stored_kind != kind) throw FormatError(path + ": a " + stored_kind + " file, not a " + kind + " file");
  std::error_code ec;
  const uintmax_t file_bytes = std::filesystem::file_size(path, ec);
  // Checked before allocating: a damaged length must not ask for terabytes.
  if (ec || file_bytes < sizeof(h) || h.payload_bytes > file_bytes - sizeof(h))
    throw FormatError(path + ": truncated or damaged: the header promises " + std::to_string(h.payload_bytes) +
                      " bytes of payload, the file holds " + std::to_string(ec ? 0 : file_bytes - sizeof(h)) +
                      "; use an earlier " + kind);
  std::string payload(h.payload_bytes, '\0');
  if (!in.read(payload.data(), static_cast<std::streamsize>(payload.size())))
    throw FormatError(path + ": truncated: the header promises " + std::to_string(h.payload_bytes) +
                      " bytes of payload, fewer are there");
  if (in.peek() != std::char_traits<char>::eof())
    throw FormatError(path + ": trailing bytes after the payload: the file was altered; use an earlier " + kind);
  if (fnv1a_64(payload.data(), payload.size()) != h.checksum)
    throw FormatError(path + ": checksum mismatch: the file is corrupt; use an earlier " + kind);
  return payload;
}

std::vector<std::string> list_numbered_files(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<uint64_t, std::string>> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix + "-", 0) != 0 || entry.path().extension() != ".ckpt") continue;
    const std::string digits = name.substr(prefix.size() + 1, name.size() - prefix.size() - 1 - 5);
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    found.emplace_back(std::stoull(digits), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& [number, path] : found) paths.push_back(std::move(path));
  return paths;
}

void prune_numbered_files(const std::string& dir, const std::string& prefix, size_t keep) {
  const std::vector<std::string> paths = list_numbered_files(dir, prefix);
  for (size_t i = 0; i + keep < paths.size(); ++i) std::filesystem::remove(paths[i]);
}

}  // namespace graphworld
