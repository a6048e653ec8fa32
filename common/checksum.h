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

}  // namespace graphworld
