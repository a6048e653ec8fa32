#include "learner/compute_threads.h"

#include <dlfcn.h>
#include <malloc.h>

#include <ATen/Parallel.h>

namespace graphworld {
namespace {

// OpenBLAS's setter, when the BLAS loaded is OpenBLAS (looked up at run time,
// so another BLAS links and runs too).
void set_blas_threads(int threads) {
  using Setter = void (*)(int);
  static const auto setter = reinterpret_cast<Setter>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (setter) setter(threads);
}

constexpr int kMmapThreshold = 64 << 20;   // blocks above this are still mapped separately
constexpr int kTrimThreshold = 256 << 20;  // free memory kept at the top of the heap

}  // namespace

ComputeThreads::ComputeThreads(int threads) : previous_(at::get_num_threads()) {
  at::set_num_threads(threads);
  set_blas_threads(threads);
}

ComputeThreads::~ComputeThreads() {
  at::set_num_threads(previous_);
  set_blas_threads(previous_);
}

void keep_freed_tensor_memory() {
  ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace graphworld
