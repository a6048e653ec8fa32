#include <algorithm>
#include <chrono>
#include <thread>
#include <cuda_runtime.h>
#include <nccl.h>

#include "common/error.h"
#include "learner/nccl_all_reduce.h"

namespace graphworld {
namespace {

void check_cuda(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw Error("data-parallel learners: " + what + ": " + cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const std::string& what) {
  if (status != ncclSuccess) throw Error("data-parallel learners: " + what + ": " + ncclGetErrorString(status));
}

}  // namespace

struct NcclAllReduce::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0, rank = 0;
  double timeout_s = 0;

  // The communicator is non-blocking: its calls return at once and this
  // polls until `done` says the work is over, NCCL reports an error, or the
  // time is up; the last two abort the communicator (a dead peer would
  // otherwise leave this rank waiting for ever).
  template <typename Done>
  void wait(Done done, const std::string& what) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      ncclResult_t state = ncclSuccess;
      ncclCommGetAsyncError(comm, &state);
      if (state != ncclSuccess && state != ncclInProgress) {
        abort();
        throw Error("data-parallel learners: " + what + ": " + ncclGetErrorString(state) +
                    " (did another learner rank end?)");
      }
      if (state == ncclSuccess && done()) return;
      if (std::chrono::steady_clock::now() > deadline) {
        abort();
        throw Error("data-parallel learners: " + what + " did not finish in " + std::to_string(timeout_s) +
                    " s; did another learner rank end?");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void abort() {
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
  }
};

bool nccl_compiled() { return true; }

std::string nccl_unique_id() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id), "making the NCCL unique id");
  return std::string(id.internal, sizeof(id.internal));
}

NcclAllReduce::NcclAllReduce(const std::string& unique_id, int rank, int size, int cuda_device, double timeout_s)
    : impl_(std::make_unique<Impl>()) {
  ncclUniqueId id;
  if (unique_id.size() != sizeof(id.internal))
    throw Error("data-parallel learners: rank " + std::to_string(rank) + " got an NCCL id of " +
                std::to_string(unique_id.size()) + " bytes, not " + std::to_string(sizeof(id.internal)));
  std::copy(unique_id.begin(), unique_id.end(), id.internal);
  impl_->device = cuda_device;
  impl_->rank = rank;
  impl_->timeout_s = timeout_s;
  const std::string where = "rank " + std::to_string(rank) + " on CUDA device " + std::to_string(cuda_device);
  check_cuda(cudaSetDevice(cuda_device), "selecting the GPU of " + where);
  check_cuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "making a CUDA stream for " + where);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  const ncclResult_t started = ncclCommInitRankConfig(&impl_->comm, size, id, rank, &config);
  if (started != ncclSuccess && started != ncclInProgress)
    check_nccl(started, "joining the NCCL communicator as " + where);
  impl_->wait([] { return true; }, "joining the NCCL communicator as " + where);
}

NcclAllReduce::~NcclAllReduce() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);  // null after an abort
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclAllReduce::sum_in_place(float* device_data, size_t count) {
  check_cuda(cudaSetDevice(impl_->device), "selecting the learner's GPU");
  // The gradients were written by LibTorch on its own stream: wait for the
  // device, sum on ours, then wait for the sum.
  check_cuda(cudaDeviceSynchronize(), "waiting for the gradients");
  if (!impl_->comm) throw Error("data-parallel learners: the NCCL communicator was aborted after an earlier failure");
  const ncclResult_t started =
      ncclAllReduce(device_data, device_data, count, ncclFloat, ncclSum, impl_->comm, impl_->stream);
  if (started != ncclSuccess && started != ncclInProgress)
    check_nccl(started, "summing gradients with NCCL (did another learner rank end?)");
  impl_->wait(
      [stream = impl_->stream] {
        const cudaError_t status = cudaStreamQuery(stream);
        if (status != cudaSuccess && status != cudaErrorNotReady) check_cuda(status, "the NCCL sum");
        return status == cudaSuccess;
      },
      "summing gradients with NCCL");
}

}  // namespace graphworld
