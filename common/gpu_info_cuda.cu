// CUDA implementation of probe_gpus(): versions of every GPU library the
// project links, the visible devices, and a small numeric self-test that
// exercises cuBLAS and cuDNN on device 0.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/gpu_info.h"

namespace graphworld {
namespace {

std::string cuda_message(cudaError_t status) { return cudaGetErrorString(status); }

// Runs C = A*B (2x3 * 3x2) with cuBLAS and y = relu(x) with cuDNN, and checks
// both against values computed on the host.
std::string run_self_test() {
  const float a[6] = {1, -2, 3, 4, 5, -6};  // column-major 2x3
  const float b[6] = {7, 8, 9, 10, 11, 12}; // column-major 3x2
  float expect[4];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      float sum = 0;
      for (int k = 0; k < 3; ++k) sum += a[i + 2 * k] * b[k + 3 * j];
      expect[i + 2 * j] = sum;
    }
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  // dc holds the SGEMM's 2x2 result and then the ReLU's 1x1x2x3 output.
  if (cudaMalloc(&da, sizeof(a)) != cudaSuccess || cudaMalloc(&db, sizeof(b)) != cudaSuccess ||
      cudaMalloc(&dc, 6 * sizeof(float)) != cudaSuccess) {
    cudaFree(da);
    cudaFree(db);
    return "cudaMalloc failed";
  }
  std::string verdict = "ok";
  cudaMemcpy(da, a, sizeof(a), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, sizeof(b), cudaMemcpyHostToDevice);
  cublasHandle_t blas = nullptr;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
    verdict = "cublasCreate failed";
  } else {
    const float one = 1, zero = 0;
    float got[4] = {};
    if (cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, da, 2, db, 3, &zero, dc, 2) != CUBLAS_STATUS_SUCCESS)
      verdict = "cublasSgemm failed";
    else if (cudaMemcpy(got, dc, sizeof(got), cudaMemcpyDeviceToHost) != cudaSuccess)
      verdict = "copying the SGEMM result failed";
    else
      for (int i = 0; i < 4; ++i)
        if (std::fabs(got[i] - expect[i]) > 1e-4f) verdict = "cuBLAS SGEMM mismatch";
    cublasDestroy(blas);
  }
  cudnnHandle_t dnn = nullptr;
  if (verdict == "ok") {
    if (cudnnCreate(&dnn) != CUDNN_STATUS_SUCCESS) {
      verdict = "cudnnCreate failed";
    } else {
      cudnnTensorDescriptor_t desc;
      cudnnActivationDescriptor_t act;
      cudnnCreateTensorDescriptor(&desc);
      cudnnSetTensor4dDescriptor(desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 2, 3);
      cudnnCreateActivationDescriptor(&act);
      cudnnSetActivationDescriptor(act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0);
      const float one = 1, zero = 0;
      float got[6] = {};
      if (cudnnActivationForward(dnn, act, &one, desc, da, &zero, desc, dc) != CUDNN_STATUS_SUCCESS)
        verdict = "cudnnActivationForward failed";
      else if (cudaMemcpy(got, dc, sizeof(got), cudaMemcpyDeviceToHost) != cudaSuccess)
        verdict = "copying the ReLU result failed";
      else
        for (int i = 0; i < 6; ++i)
          if (got[i] != (a[i] > 0 ? a[i] : 0.0f)) verdict = "cuDNN ReLU mismatch";
      cudnnDestroyActivationDescriptor(act);
      cudnnDestroyTensorDescriptor(desc);
      cudnnDestroy(dnn);
    }
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaGetLastError();  // leave no error of the self-test for later CUDA calls to report
  return verdict;
}

}  // namespace

GpuInfo probe_gpus() {
  GpuInfo info;
  info.cuda_built = true;
  info.cudnn_version = static_cast<int>(cudnnGetVersion());
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) info.nccl_version = nccl;
  int blas_major = 0, blas_minor = 0, blas_patch = 0;
  cublasGetProperty(MAJOR_VERSION, &blas_major);
  cublasGetProperty(MINOR_VERSION, &blas_minor);
  cublasGetProperty(PATCH_LEVEL, &blas_patch);
  info.cublas_version = blas_major * 10000 + blas_minor * 100 + blas_patch;
  cudaRuntimeGetVersion(&info.cuda_runtime_version);

  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    info.runtime_error = "no usable GPU: " + cuda_message(status);
    return info;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    GpuDevice device;
    device.index = i;
    device.name = prop.name;
    device.compute_major = prop.major;
    device.compute_minor = prop.minor;
    device.memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
    info.devices.push_back(device);
  }
  if (!info.devices.empty()) {
    cudaSetDevice(0);
    info.self_test = run_self_test();
  }
  return info;
}

}  // namespace graphworld
