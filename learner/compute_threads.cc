#include "learner/compute_threads.h"

#include <dlfcn.h>
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>

#include <ATen/Parallel.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define GRAPHWORLD_HAVE_MXCSR 1
#endif

namespace graphworld {
namespace {

// OpenBLAS's setter, when the BLAS loaded is OpenBLAS (looked up at run time,
// so another BLAS links and runs too).
void set_blas_threads(int threads) {
  using Setter = void (*)(int);
  static const auto setter = reinterpret_cast<Setter>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
  if (setter) setter(threads);
}

// OpenBLAS's own count (0 where the BLAS is another).
int blas_threads() {
  using Getter = int (*)();
  static const auto getter = reinterpret_cast<Getter>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  return getter ? getter() : 0;
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

BlasThreads::BlasThreads(int threads) : previous_(blas_threads()) { set_blas_threads(threads); }

BlasThreads::~BlasThreads() {
  if (previous_ > 0) set_blas_threads(previous_);
}

#ifdef GRAPHWORLD_HAVE_MXCSR
namespace {
constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
}
FlushDenormals::FlushDenormals() : previous_(_mm_getcsr()) { _mm_setcsr(previous_ | kFlushToZero | kDenormalsAreZero); }
FlushDenormals::~FlushDenormals() { _mm_setcsr(previous_); }
unsigned denormal_mode() { return _mm_getcsr() & (kFlushToZero | kDenormalsAreZero); }
DenormalMode::DenormalMode(unsigned mode) : previous_(_mm_getcsr()) {
  _mm_setcsr((previous_ & ~(kFlushToZero | kDenormalsAreZero)) | mode);
}
DenormalMode::~DenormalMode() { _mm_setcsr(previous_); }
#else
FlushDenormals::FlushDenormals() = default;
FlushDenormals::~FlushDenormals() = default;
unsigned denormal_mode() { return 0; }
DenormalMode::DenormalMode(unsigned) {}
DenormalMode::~DenormalMode() = default;
#endif

std::string choose_blas_kernels() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return "";
  using Name = char* (*)();
  using Step = void (*)();
  const auto corename = reinterpret_cast<Name>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const auto quit = reinterpret_cast<Step>(::dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  const auto init = reinterpret_cast<Step>(::dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  if (!corename || !quit || !init) return "";
  const char* chosen = corename();
  if (chosen == nullptr) return "";
  std::string before(chosen);
  std::string lower;
  for (char c : before) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const char* const kBeforeAvx[] = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom",
                                            "katmai", "coppermine", "northwood", "banias", "opteron", "opteron_sse3",
                                            "barcelona", "bobcat"};
  if (std::find(std::begin(kBeforeAvx), std::end(kBeforeAvx), lower) == std::end(kBeforeAvx)) return "";
#if defined(__x86_64__)
  const char* better = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") ? "SkylakeX"
                       : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                       : __builtin_cpu_supports("avx") ? "Sandybridge"
                                                         : nullptr;
  if (better == nullptr) return "";
  if (setenv("OPENBLAS_CORETYPE", better, 1) != 0) return "";
  quit();
  init();
  const char* now = corename();
  return before + " -> " + (now ? now : better);
#else
  return "";
#endif
}

void keep_freed_tensor_memory() {
  ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace graphworld
