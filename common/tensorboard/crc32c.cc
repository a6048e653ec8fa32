#include "common/tensorboard/crc32c.h"

#include <array>

namespace graphworld {
namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82f63b78u;

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kPolynomial : 0u);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

// A byte at a time: event records are small and written once per update.
uint32_t crc32c(const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) crc = kTable[(crc ^ bytes[i]) & 0xffu] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

}  // namespace graphworld
