// How many threads LibTorch's math uses, set in one place for everything
// that sits under it: ATen's intra-op pool, OpenMP, and OpenBLAS's own pool
// (Debian's LibTorch calls OpenBLAS for matrix products, and OpenBLAS keeps
// its threads spinning in sched_yield between calls unless told otherwise:
// a third of a one-thread PPO update went there).
#pragma once

#include <string>

namespace graphworld {

// Sets the thread count for the scope, restoring ATen's previous count
// after (OpenBLAS gets the same count back: its own cannot be read).
class ComputeThreads {
 public:
  explicit ComputeThreads(int threads);
  ~ComputeThreads();
  ComputeThreads(const ComputeThreads&) = delete;
  ComputeThreads& operator=(const ComputeThreads&) = delete;

 private:
  int previous_;
};

// Sets only OpenBLAS's thread count for the scope, ATen's left as it is:
// for code that runs single-threaded matrix products side by side on
// threads of its own (worldmodel/lstm_sequence.h). ComputeThreads would
// also rebuild LibTorch's thread pools, which costs a thread start per
// thread every time.
class BlasThreads {
 public:
  explicit BlasThreads(int threads);
  ~BlasThreads();
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int previous_;
};

// Flushes denormal floats to zero on the calling thread for the scope (x86's
// FTZ and DAZ; nothing elsewhere), restoring what was there after. Training
// drives some gradients into the denormal range, where every multiply takes
// a microcode assist: a world model's MDN-RNN epoch grew from 2.4 s to 4 s
// over six epochs, all of it in OpenBLAS's kernels. Threads started inside
// the scope inherit the setting.
class FlushDenormals {
 public:
  FlushDenormals();
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  unsigned previous_ = 0;
};

// The calling thread's denormal handling, to carry onto a worker thread
// that was started elsewhere: DenormalMode there(denormal_mode()) here.
unsigned denormal_mode();
class DenormalMode {
 public:
  explicit DenormalMode(unsigned mode);
  ~DenormalMode();
  DenormalMode(const DenormalMode&) = delete;
  DenormalMode& operator=(const DenormalMode&) = delete;

 private:
  unsigned previous_ = 0;
};

// OpenBLAS picks its kernels by the CPU's model number, and falls back to
// its oldest x86-64 kernels (Prescott: SSE3) for a model it does not know,
// as in virtual machines that hide it: there a 2-core AVX-512 machine ran
// sgemm at 64 GFLOP/s, a third of what its vector units do. Where OpenBLAS
// chose a pre-AVX kernel on a CPU that has AVX-512, AVX2 with FMA, or AVX,
// this switches it to SkylakeX, Haswell or Sandybridge (OpenBLAS's own
// run-time choice, as OPENBLAS_CORETYPE would make it). Nothing happens
// when OPENBLAS_CORETYPE is set, when the BLAS is not a run-time-dispatching
// OpenBLAS, or when its choice fits. Call it before any matrix product,
// with no other thread running one. Returns "old -> new" when it switched,
// "" otherwise.
std::string choose_blas_kernels();

// The network's tensors are small and short-lived: by default glibc returns
// every freed block above 128 KiB to the kernel and maps it again on the
// next allocation, so a PPO update spent a tenth of its time in page faults.
// Raising the thresholds keeps those blocks in the heap (bounded: at most
// kTrimThreshold of freed memory is held). Process-wide; training and policy
// commands call it once.
void keep_freed_tensor_memory();

}  // namespace graphworld
