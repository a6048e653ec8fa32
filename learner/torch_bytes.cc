#include "learner/torch_bytes.h"

#include <cstring>
#include <sstream>

#include "common/error.h"

namespace graphworld {

std::string archive_to_bytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream out(std::ios::binary);
  archive.save_to(out);
  return std::move(out).str();
}

void archive_from_bytes(torch::serialize::InputArchive& archive, const std::string& bytes, const std::string& what) {
  try {
    // Onto the CPU whatever device wrote it: a GPU learner's checkpoint or
    // parameters load anywhere, and callers copy to their own device.
    archive.load_from(bytes.data(), bytes.size(), torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    throw FormatError(what + ": not a LibTorch archive (" + std::string(e.what_without_backtrace()) + ")");
  }
}

torch::Tensor bytes_to_tensor(const std::string& bytes) {
  torch::Tensor t = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  if (!bytes.empty()) std::memcpy(t.data_ptr<uint8_t>(), bytes.data(), bytes.size());
  return t;
}

std::string tensor_to_bytes(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.to(torch::kUInt8).contiguous();
  return std::string(reinterpret_cast<const char*>(t.data_ptr<uint8_t>()), static_cast<size_t>(t.numel()));
}

torch::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key, const std::string& what) {
  torch::Tensor t;
  if (!archive.try_read(key, t)) throw FormatError(what + ": '" + key + "' is missing");
  return t;
}

std::string read_bytes(torch::serialize::InputArchive& archive, const std::string& key, const std::string& what) {
  return tensor_to_bytes(read_tensor(archive, key, what));
}

}  // namespace graphworld
