// How many threads LibTorch's math uses, set in one place for everything
// that sits under it: ATen's intra-op pool, OpenMP, and OpenBLAS's own pool
// (Debian's LibTorch calls OpenBLAS for matrix products, and OpenBLAS keeps
// its threads spinning in sched_yield between calls unless told otherwise:
// a third of a one-thread PPO update went there).
#pragma once

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

// The network's tensors are small and short-lived: by default glibc returns
// every freed block above 128 KiB to the kernel and maps it again on the
// next allocation, so a PPO update spent a tenth of its time in page faults.
// Raising the thresholds keeps those blocks in the heap (bounded: at most
// kTrimThreshold of freed memory is held). Process-wide; training and policy
// commands call it once.
void keep_freed_tensor_memory();

}  // namespace graphworld
