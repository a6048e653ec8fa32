// FNV-1a 64: the checksum data files carry so a truncated or altered file is
// caught before it is parsed. Not a cryptographic hash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphworld {

inline uint64_t fnv1a_64(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}

// A 64-bit checksum of 8-byte words (then the tail bytes), several times
// faster than FNV-1a's byte-at-a-time loop: for message payloads, where it
// runs on every parameter chunk. It catches truncation and corruption, not
// tampering (CURVE does that). Not used for files, whose format names FNV-1a.
inline uint64_t word_checksum_64(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9e3779b97f4a7c15ull ^ size;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, bytes + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

}  // namespace graphworld
