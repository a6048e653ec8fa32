#include "python/location_mask_pool.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace graphworld::python {

namespace py = pybind11;

std::shared_ptr<LocationMaskPool> LocationMaskPool::create(size_t envs, size_t rows, size_t row_bytes) {
  return std::shared_ptr<LocationMaskPool>(new LocationMaskPool(envs, rows, row_bytes));
}

LocationMaskPool::Batch LocationMaskPool::take() {
  Batch batch;
  batch.pool_ = shared_from_this();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      batch.buffer_ = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!batch.buffer_) {
    batch.buffer_ = std::make_unique<LocationMaskBuffer>();
    batch.buffer_->bytes.assign(envs_ * rows_ * row_bytes_, 0);
    batch.buffer_->written.resize(envs_);
  }
  return batch;
}

void LocationMaskPool::Batch::fill(size_t env, const Observation& observation) {
  const LocationMaskPool& pool = *pool_;
  uint8_t* base = buffer_->bytes.data() + env * pool.rows_ * pool.row_bytes_;
  std::vector<uint32_t>& written = buffer_->written[env];
  const size_t rows = std::min(pool.rows_, static_cast<size_t>(observation.num_xfers));
  const size_t row_bytes = std::min(pool.row_bytes_, static_cast<size_t>(observation.max_locations));
  for (size_t x = 0; x < rows; ++x) {
    if (!observation.xfer_mask[x]) continue;
    std::memcpy(base + x * pool.row_bytes_, observation.location_mask.data() + x * static_cast<size_t>(observation.max_locations),
                row_bytes);
    written.push_back(static_cast<uint32_t>(x));
  }
}

py::array_t<uint8_t> LocationMaskPool::Batch::to_array() {
  const LocationMaskPool& pool = *pool_;
  // The capsule owns the buffer (and a reference to the pool) until NumPy
  // frees the array and every view of it.
  struct Owner {
    std::shared_ptr<LocationMaskPool> pool;
    std::unique_ptr<LocationMaskBuffer> buffer;
  };
  uint8_t* data = buffer_->bytes.data();
  auto* owner = new Owner{std::move(pool_), std::move(buffer_)};
  py::capsule free_when_done(owner, [](void* p) {
    std::unique_ptr<Owner> o(static_cast<Owner*>(p));
    o->pool->give_back(std::move(o->buffer));
  });
  const auto e = static_cast<py::ssize_t>(pool.envs_), n = static_cast<py::ssize_t>(pool.rows_),
             l = static_cast<py::ssize_t>(pool.row_bytes_);
  py::array_t<uint8_t> array({e, n, l}, {n * l, l, py::ssize_t{1}}, data, free_when_done);
  // Read-only: only the rows written are cleared before the buffer is
  // reused, so a write by the caller would show in a later step's mask.
  array.attr("setflags")(py::arg("write") = false);
  return array;
}

void LocationMaskPool::give_back(std::unique_ptr<LocationMaskBuffer> buffer) {
  for (size_t env = 0; env < envs_; ++env) {
    uint8_t* base = buffer->bytes.data() + env * rows_ * row_bytes_;
    for (uint32_t row : buffer->written[env]) std::memset(base + row * row_bytes_, 0, row_bytes_);
    buffer->written[env].clear();
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (free_.size() < kKept) free_.push_back(std::move(buffer));
}

}  // namespace graphworld::python
