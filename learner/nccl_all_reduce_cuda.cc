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
};

bool nccl_compiled() { return true; }

std::string nccl_unique_id() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id), "making the NCCL unique id");
  return std::string(id.internal, sizeof(id.internal));
}

NcclAllReduce::NcclAllReduce(const std::string& unique_id, int rank, int size, int cuda_device)
    : impl_(std::make_unique<Impl>()) {
  ncclUniqueId id;
  if (unique_id.size() != sizeof(id.internal))
    throw Error("data-parallel learners: rank " + std::to_string(rank) + " got an NCCL id of " +
                std::to_string(unique_id.size()) + " bytes, not " + std::to_string(sizeof(id.internal)));
  std::copy(unique_id.begin(), unique_id.end(), id.internal);
  impl_->device = cuda_device;
  impl_->rank = rank;
  const std::string where = "rank " + std::to_string(rank) + " on CUDA device " + std::to_string(cuda_device);
  check_cuda(cudaSetDevice(cuda_device), "selecting the GPU of " + where);
  check_cuda(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "making a CUDA stream for " + where);
  check_nccl(ncclCommInitRank(&impl_->comm, size, id, rank), "joining the NCCL communicator as " + where);
}

NcclAllReduce::~NcclAllReduce() {
  if (impl_->comm) ncclCommDestroy(impl_->comm);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

void NcclAllReduce::sum_in_place(float* device_data, size_t count) {
  check_cuda(cudaSetDevice(impl_->device), "selecting the learner's GPU");
  // The gradients were written by LibTorch on its own stream: wait for the
  // device, sum on ours, then wait for the sum.
  check_cuda(cudaDeviceSynchronize(), "waiting for the gradients");
  check_nccl(ncclAllReduce(device_data, device_data, count, ncclFloat, ncclSum, impl_->comm, impl_->stream),
             "summing gradients with NCCL (did another learner rank end?)");
  check_cuda(cudaStreamSynchronize(impl_->stream), "waiting for the NCCL sum");
}

}  // namespace graphworld
