// 64-bit hash mixing used by structural hashing. Not cryptographic; strong
// enough that collisions are rare, and graphs are still deduplicated on
// structural equality, never on the hash alone.
#pragma once

#include <cstdint>
#include <cstring>

namespace graphworld {

inline uint64_t mix64(uint64_t x) {
  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

inline uint64_t hash_combine(uint64_t seed, uint64_t value) {
  return mix64(seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2)));
}

inline uint64_t hash_double(double d) {
  if (d == 0) d = 0;  // +0 and -0 hash alike
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}

}  // namespace graphworld
