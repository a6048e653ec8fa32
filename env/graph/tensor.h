// Tensor metadata (dtype and shape) and host-side tensor values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace graphworld {

// float32 for activations and weights; int64 for shape tensors.
enum class DType : uint8_t { Float32, Int64 };
std::string dtype_name(DType dtype);
size_t dtype_size(DType dtype);

using Shape = std::vector<int64_t>;
int64_t num_elements(const Shape& shape);
// Like num_elements, but throws GraphError naming `what` if a dimension is
// negative or the product overflows (malformed files can claim anything).
int64_t checked_num_elements(const Shape& shape, const std::string& what);
std::string shape_to_string(const Shape& shape);  // "[1,3,224,224]"

struct TensorInfo {
  DType dtype = DType::Float32;
  Shape shape;
  bool operator==(const TensorInfo& other) const = default;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return num_elements(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
};

// Concrete tensor values on the host: imported weights, executor inputs and
// outputs. Immutable once shared; the buffer is 64-byte aligned so ATen can
// wrap it without copying. Each instance gets a process-unique id, which is
// how structural hashing tells weights apart without hashing megabytes.
class TensorData {
 public:
  TensorData(DType dtype, Shape shape);  // uninitialised contents
  static std::shared_ptr<TensorData> from_floats(Shape shape, const std::vector<float>& values);
  static std::shared_ptr<TensorData> from_ints(Shape shape, const std::vector<int64_t>& values);

  DType dtype() const { return info_.dtype; }
  const Shape& shape() const { return info_.shape; }
  const TensorInfo& info() const { return info_; }
  int64_t numel() const { return info_.numel(); }
  size_t nbytes() const { return info_.nbytes(); }
  uint64_t uid() const { return uid_; }

  void* raw() { return buffer_.get(); }
  const void* raw() const { return buffer_.get(); }
  float* floats() { return static_cast<float*>(raw()); }
  const float* floats() const { return static_cast<const float*>(raw()); }
  int64_t* ints() { return static_cast<int64_t*>(raw()); }
  const int64_t* ints() const { return static_cast<const int64_t*>(raw()); }
  std::vector<int64_t> to_int_vector() const;  // int64 data only

 private:
  struct FreeAligned {
    void operator()(std::byte* p) const;
  };
  TensorInfo info_;
  std::unique_ptr<std::byte[], FreeAligned> buffer_;
  uint64_t uid_;
};

// Parameters of a seeded-random weight: values are uniform in [low, high),
// drawn from a platform-independent generator seeded with `seed`.
struct RandomInit {
  uint64_t seed = 0;
  float low = -1;
  float high = 1;
  bool operator==(const RandomInit& other) const = default;
};

// Fills `out` (numel floats) deterministically from `init`.
void fill_random(const RandomInit& init, float* out, int64_t numel);

}  // namespace graphworld
