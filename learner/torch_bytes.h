// LibTorch archives as bytes in memory, for checkpoints, policy files and
// (later) parameter messages. Internal to learner/ .cc files.
#pragma once

#include <torch/torch.h>

#include <string>

namespace graphworld {

std::string archive_to_bytes(torch::serialize::OutputArchive& archive);
// Tensors load onto the CPU. Throws FormatError naming `what` when the
// bytes are not a LibTorch archive.
void archive_from_bytes(torch::serialize::InputArchive& archive, const std::string& bytes, const std::string& what);

// Arbitrary bytes stored in an archive as a uint8 tensor, and back.
torch::Tensor bytes_to_tensor(const std::string& bytes);
std::string tensor_to_bytes(const torch::Tensor& tensor);

// Reads `key` from `archive`; FormatError naming `what` and the key if absent.
torch::Tensor read_tensor(torch::serialize::InputArchive& archive, const std::string& key, const std::string& what);
std::string read_bytes(torch::serialize::InputArchive& archive, const std::string& key, const std::string& what);

}  // namespace graphworld
