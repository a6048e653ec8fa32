// CRC-32C (Castagnoli), the checksum of TensorBoard's record format, and the
// "masked" form that format stores (a CRC of data that itself holds CRCs
// would otherwise be weak).
#pragma once

#include <cstddef>
#include <cstdint>

namespace graphworld {

uint32_t crc32c(const void* data, size_t size);

// Rotate right by 15 bits, then add a constant (the record format's rule).
inline uint32_t mask_crc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace graphworld
