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

// A 64-bit checksum of 8-byte words (then the tail bytes), many times
// faster than FNV-1a's byte-at-a-time loop: for message payloads, where it
// runs on every parameter chunk. Four independent lanes, so the multiplies
// overlap instead of waiting on each other. It catches truncation and
// corruption, not tampering (CURVE does that). Not used for files, whose
// format names FNV-1a.
inline uint64_t word_checksum_64(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
  uint64_t lane[4] = {0x9e3779b97f4a7c15ull ^ size, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull, 0x27d4eb2f165667c5ull};
  size_t i = 0;
  for (; i + 32 <= size; i += 32)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      __builtin_memcpy(&w, bytes + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * kMul;
      lane[k] ^= lane[k] >> 32;
    }
  uint64_t h = lane[0];
  for (int k = 1; k < 4; ++k) h = (h ^ lane[k]) * kMul;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    __builtin_memcpy(&w, bytes + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  for (; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

}  // namespace graphworld
