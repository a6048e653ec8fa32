#include "common/error.h"
#include "learner/nccl_all_reduce.h"

namespace graphworld {

// This build has no CUDA toolkit with NCCL (cmake/Cuda.cmake).

struct NcclAllReduce::Impl {};

bool nccl_compiled() { return false; }

std::string nccl_unique_id() {
  throw UnavailableError("this graphworld was built without NCCL (no CUDA toolkit with NCCL was found)");
}

NcclAllReduce::NcclAllReduce(const std::string&, int, int, int, double) {
  throw UnavailableError("this graphworld was built without NCCL (no CUDA toolkit with NCCL was found)");
}

NcclAllReduce::~NcclAllReduce() = default;

void NcclAllReduce::sum_in_place(float*, size_t) {
  throw UnavailableError("this graphworld was built without NCCL");
}

}  // namespace graphworld
