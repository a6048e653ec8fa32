// Summing float buffers that live in GPU memory across data-parallel
// learner ranks with NCCL: the gradient path of learners that train on GPUs
// (a CUDA LibTorch, train.device: cuda). The gloo group still carries the
// batches, the statistics and NCCL's own rendezvous (rank 0's unique id is
// broadcast through it); only the gradients go GPU to GPU.
//
// Built where CUDA and NCCL exist (GRAPHWORLD_HAVE_CUDA, cmake/Cuda.cmake).
// Elsewhere nccl_compiled() is false and the rest throws UnavailableError.
// Torch-free: it takes raw device pointers.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace graphworld {

bool nccl_compiled();

// A new NCCL unique id (rank 0 makes it; the other ranks receive it).
std::string nccl_unique_id();

class NcclAllReduce {
 public:
  // Joins the NCCL communicator of `size` ranks on CUDA device
  // `cuda_device`. Error naming the rank and NCCL's message on failure, or
  // when the other ranks have not joined within `timeout_s` (the
  // communicator is aborted, never left waiting).
  NcclAllReduce(const std::string& unique_id, int rank, int size, int cuda_device, double timeout_s);
  ~NcclAllReduce();
  NcclAllReduce(const NcclAllReduce&) = delete;
  NcclAllReduce& operator=(const NcclAllReduce&) = delete;

  // Sums `count` floats at `device_data` over the ranks, in place. Waits for
  // the device's earlier work first and for the sum before returning, so it
  // needs no knowledge of the caller's CUDA streams. Error (and the
  // communicator aborted) when the sum has not completed within timeout_s:
  // a rank has ended.
  void sum_in_place(float* device_data, size_t count);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
