// VectorEnv's location masks without writing N x L bytes per environment
// per step. A batch's location_mask [E, N, L] is almost all zeros: only the
// rows of rules allowed now hold ones. Buffers come from a pool of zeroed
// ones; the threads that step write only the allowed rows and note them;
// when NumPy frees the array (the last view of it gone), those rows are
// zeroed again and the buffer goes back to the pool. An array is therefore
// never changed while anyone holds it, and a step writes kilobytes, not the
// megabytes of the whole mask (2 MiB for 8 environments of 1,307 rules and
// 200 locations), which had cost a fifth of a small graph's step. The
// arrays are read-only, since only the rows written are cleared.
#pragma once

#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "env/gym/observation.h"

namespace graphworld::python {

// One batch's location_mask bytes, zero outside the rows noted as written.
struct LocationMaskBuffer {
  std::vector<uint8_t> bytes;                  // [envs * rows * row_bytes]
  std::vector<std::vector<uint32_t>> written;  // per environment, the rows holding ones
};

class LocationMaskPool : public std::enable_shared_from_this<LocationMaskPool> {
 public:
  // Masks of `envs` environments, `rows` rules by `row_bytes` locations.
  static std::shared_ptr<LocationMaskPool> create(size_t envs, size_t rows, size_t row_bytes);

  // One batch's mask being filled: take() it with the GIL held, fill()
  // each environment from any thread (one thread per environment), then
  // to_array() with the GIL held, once.
  class Batch {
   public:
    void fill(size_t env, const Observation& observation);
    pybind11::array_t<uint8_t> to_array();

   private:
    friend class LocationMaskPool;
    std::shared_ptr<LocationMaskPool> pool_;
    std::unique_ptr<LocationMaskBuffer> buffer_;  // dropped, not reused, if no array is made
  };
  Batch take();

 private:
  LocationMaskPool(size_t envs, size_t rows, size_t row_bytes) : envs_(envs), rows_(rows), row_bytes_(row_bytes) {}
  void give_back(std::unique_ptr<LocationMaskBuffer> buffer);

  // Buffers kept for reuse at most: a step's array, the one before it
  // still held by the caller, and a little slack.
  static constexpr size_t kKept = 4;
  const size_t envs_, rows_, row_bytes_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<LocationMaskBuffer>> free_;
};

}  // namespace graphworld::python
