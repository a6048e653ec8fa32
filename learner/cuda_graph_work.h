// A piece of device work captured once in a CUDA graph and then replayed:
// one launch in place of the few hundred small kernels a PPO minibatch's
// forward and backward pass issue one by one from the host. On a GPU the
// policy network's kernels are so small that launching them, not running
// them, is most of a minibatch's time.
//
//   CudaGraphWork graph(device_index, [&] { ...device work on fixed tensors... });
//   for (...) { fill the fixed input tensors; graph.replay(); read the fixed outputs; }
//
// `work` must only issue device work on the given device: no value read
// back to the host, no shape that depends on data, and inputs and outputs
// in tensors that outlive the graph and stay where they are (the graph
// holds their addresses; a tensor it allocates while capturing lives in
// the graph's own memory pool and is rewritten by each replay). The
// constructor first runs `work` `warmup_runs` times on a side stream, so
// that cuBLAS, cuDNN and the caching allocator make their handles and
// workspaces outside the capture, then records it: the capture itself runs
// nothing. Autograd's backward pass may be part of `work` (its kernels go to
// the stream of their forward ones, the capturing one).
//
// Where this build's LibTorch has no CUDA, available() is false and the
// constructor throws UsageError saying how to get one that has. A capture
// that fails throws UsageError; LibTorch may then be left unable to use
// that device in this process, so the message says to start again without
// the graph. Free of LibTorch types; used by learner/ and its commands.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace graphworld {

class CudaGraphWork {
 public:
  // Whether this build's LibTorch has CUDA (and so can capture at all).
  static bool available();
  // Why it cannot, where it cannot: what to build instead.
  static std::string unavailable_reason();

  // `what` names the work in errors ("the PPO minibatch step").
  CudaGraphWork(int32_t device_index, const std::function<void()>& work, const std::string& what,
                int32_t warmup_runs = 3);
  ~CudaGraphWork();
  CudaGraphWork(const CudaGraphWork&) = delete;
  CudaGraphWork& operator=(const CudaGraphWork&) = delete;

  // Launches the graph on the current stream of its device.
  void replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphworld
