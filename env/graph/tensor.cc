#include "env/graph/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "common/error.h"
#include "env/graph/hashing.h"

namespace graphworld {
namespace {
std::atomic<uint64_t> next_uid{1};
}

std::string dtype_name(DType dtype) { return dtype == DType::Float32 ? "float32" : "int64"; }
size_t dtype_size(DType dtype) { return dtype == DType::Float32 ? 4 : 8; }

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t checked_num_elements(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw GraphError(what + ": negative dimension in shape " + shape_to_string(shape));
    // The byte size must fit too, hence the margin of 8 (bytes per element).
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 60))
      throw GraphError(what + ": shape " + shape_to_string(shape) + " has more elements than can be addressed");
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

void TensorData::FreeAligned::operator()(std::byte* p) const { std::free(p); }

TensorData::TensorData(DType dtype, Shape shape)
    : info_{dtype, std::move(shape)}, uid_(next_uid.fetch_add(1)) {
  checked_num_elements(info_.shape, "tensor");
  size_t bytes = info_.nbytes();
  size_t rounded = ((bytes + 63) / 64) * 64;
  if (rounded == 0) rounded = 64;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
  if (!p) throw std::bad_alloc();
  buffer_.reset(p);
}

std::shared_ptr<TensorData> TensorData::from_floats(Shape shape, const std::vector<float>& values) {
  auto data = std::make_shared<TensorData>(DType::Float32, std::move(shape));
  if (static_cast<int64_t>(values.size()) != data->numel())
    throw GraphError("TensorData::from_floats: " + std::to_string(values.size()) + " values for shape " +
                     shape_to_string(data->shape()));
  if (!values.empty()) std::memcpy(data->raw(), values.data(), values.size() * sizeof(float));
  return data;
}

std::shared_ptr<TensorData> TensorData::from_ints(Shape shape, const std::vector<int64_t>& values) {
  auto data = std::make_shared<TensorData>(DType::Int64, std::move(shape));
  if (static_cast<int64_t>(values.size()) != data->numel())
    throw GraphError("TensorData::from_ints: " + std::to_string(values.size()) + " values for shape " +
                     shape_to_string(data->shape()));
  if (!values.empty()) std::memcpy(data->raw(), values.data(), values.size() * sizeof(int64_t));
  return data;
}

std::vector<int64_t> TensorData::to_int_vector() const {
  if (dtype() != DType::Int64) throw GraphError("expected an int64 tensor, got " + dtype_name(dtype()));
  return std::vector<int64_t>(ints(), ints() + numel());
}

void fill_random(const RandomInit& init, float* out, int64_t numel) {
  // splitmix64 stream: fast, and the same numbers on every platform.
  uint64_t state = init.seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  const float span = init.high - init.low;
  for (int64_t i = 0; i < numel; ++i) {
    state += 0x9e3779b97f4a7c15ull;
    uint64_t r = mix64(state);
    float unit = static_cast<float>(r >> 40) * (1.0f / 16777216.0f);  // 24 bits in [0,1)
    out[i] = init.low + span * unit;
  }
}

}  // namespace graphworld
