// Times single ops on the GPU with cuDNN and cuBLAS, as TASO does, but with
// memory allocated per measurement and sized to it (TASO reserves ~6.5 GB up
// front). Compiled by nvcc wherever CUDA is found; runs only on a GPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "env/cost/cuda_op_spec.h"

namespace graphworld {
namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(status));
}
void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

int64_t product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Device memory owned for the duration of one measurement.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(std::max<size_t>(bytes, 4)) {
    check_cuda(cudaMalloc(&ptr_, bytes_), "cudaMalloc");
    check_cuda(cudaMemset(ptr_, 0, bytes_), "cudaMemset");
    // The memset runs on the legacy stream, which the timing stream does not wait for.
    check_cuda(cudaDeviceSynchronize(), "cudaMemset");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* f() const { return static_cast<float*>(ptr_); }
  void* raw() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_;
};

DeviceBuffer floats(int64_t count) { return DeviceBuffer(static_cast<size_t>(count) * sizeof(float)); }

// RAII wrappers for cuDNN descriptors.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  explicit TensorDesc(std::vector<int64_t> dims) {
    check_cudnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    while (dims.size() < 4) dims.push_back(1);  // cuDNN wants 4 to 8 dims
    std::vector<int> size(dims.begin(), dims.end()), stride(dims.size());
    int s = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      stride[i] = s;
      s *= size[i];
    }
    check_cudnn(cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, static_cast<int>(size.size()), size.data(), stride.data()),
                "cudnnSetTensorNdDescriptor");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
};

// cuDNN and cuBLAS run on one stream of their own, not the legacy default
// stream, so that CudaTimingMethod::kGraph can capture their calls.
struct Handles {
  cudnnHandle_t dnn = nullptr;
  cublasHandle_t blas = nullptr;
  cudaStream_t stream = nullptr;
  Handles() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
      throw std::runtime_error(
          "no usable GPU: the cuda cost model needs an NVIDIA GPU and driver at run time; use --cost measured on the CPU");
    check_cudnn(cudnnCreate(&dnn), "cudnnCreate");
    check_cublas(cublasCreate(&blas), "cublasCreate");
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cudnn(cudnnSetStream(dnn, stream), "cudnnSetStream");
    check_cublas(cublasSetStream(blas, stream), "cublasSetStream");
  }
  ~Handles() {
    cublasDestroy(blas);
    cudnnDestroy(dnn);
    cudaStreamDestroy(stream);
  }
};

Handles& handles() {
  static Handles instance;
  return instance;
}

cudaStream_t stream() { return handles().stream; }

class EventPair {
 public:
  EventPair() {
    check_cuda(cudaEventCreate(&start_), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  // Milliseconds `work` took on the stream.
  float time(const std::function<void()>& work) {
    check_cuda(cudaEventRecord(start_, stream()), "cudaEventRecord");
    work();
    check_cuda(cudaEventRecord(stop_, stream()), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// One captured CUDA graph of `batch` calls of a body, freed on every path.
class CapturedGraph {
 public:
  CapturedGraph(const std::function<void()>& body, int batch) {
    check_cuda(cudaStreamBeginCapture(stream(), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    try {
      for (int i = 0; i < batch; ++i) body();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      cudaStreamEndCapture(stream(), &broken);
      if (broken) cudaGraphDestroy(broken);
      cudaGetLastError();
      throw;
    }
    check_cuda(cudaStreamEndCapture(stream(), &graph_), "cudaStreamEndCapture (a call the graph cannot hold?)");
    check_cuda(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
  }
  ~CapturedGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch() const { check_cuda(cudaGraphLaunch(exec_, stream()), "cudaGraphLaunch"); }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Times `body` as the policy says (CudaTimingPolicy): the median over samples
// of `batch` calls each, per call.
double time_with_events(const std::function<void()>& body, const CudaTimingPolicy& policy) {
  EventPair events;
  for (int i = 0; i < policy.warmup; ++i) body();
  check_cuda(cudaStreamSynchronize(stream()), "warm-up");
  // Size the batch from the quickest of three single calls.
  float single = 1e9f;
  for (int i = 0; i < 3; ++i) single = std::min(single, events.time(body));
  const int batch = static_cast<int>(
      std::clamp(std::ceil(policy.min_sample_ms / std::max(single, 1e-4f)), 1.0, static_cast<double>(policy.max_batch)));
  std::unique_ptr<CapturedGraph> graph;
  if (policy.method == CudaTimingMethod::kGraph) {
    graph = std::make_unique<CapturedGraph>(body, batch);
    graph->launch();  // the first replay uploads the graph
    check_cuda(cudaStreamSynchronize(stream()), "graph warm-up");
  }
  auto run_batch = [&] {
    if (graph) {
      graph->launch();
    } else {
      for (int i = 0; i < batch; ++i) body();
    }
  };
  std::vector<float> samples;
  float total = 0;
  while (static_cast<int>(samples.size()) < policy.min_repeats ||
         (total < policy.min_total_ms && static_cast<int>(samples.size()) < policy.max_repeats)) {
    const float ms = events.time(run_batch);
    samples.push_back(ms / static_cast<float>(batch));
    total += ms;
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

__global__ void elementwise_kernel(const float* a, const float* b, float* out, int64_t n, int64_t nb, int flops) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = a[i];
    if (b) v += b[i % nb];
    for (int j = 1; j < flops; ++j) v = v * 0.999f + 0.001f;
    out[i] = v;
  }
}

constexpr int kMaxRank = 8;
struct PermuteArgs {
  int rank;
  int64_t out_dims[kMaxRank];
  int64_t in_strides_permuted[kMaxRank];  // input stride of the axis that lands at each output axis
};

__global__ void transpose_kernel(const float* in, float* out, int64_t n, PermuteArgs args) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    for (int d = args.rank - 1; d >= 0; --d) {
      offset += (rest % args.out_dims[d]) * args.in_strides_permuted[d];
      rest /= args.out_dims[d];
    }
    out[i] = in[offset];
  }
}

__global__ void layer_norm_kernel(const float* in, float* out, int64_t cols, float eps) {
  __shared__ float sums[2][256];
  const float* row = in + blockIdx.x * cols;
  float* dst = out + blockIdx.x * cols;
  float s = 0, sq = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    s += row[c];
    sq += row[c] * row[c];
  }
  sums[0][threadIdx.x] = s;
  sums[1][threadIdx.x] = sq;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      sums[0][threadIdx.x] += sums[0][threadIdx.x + half];
      sums[1][threadIdx.x] += sums[1][threadIdx.x + half];
    }
    __syncthreads();
  }
  float mean = sums[0][0] / cols;
  float inv = rsqrtf(sums[1][0] / cols - mean * mean + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = (row[c] - mean) * inv;
}

unsigned grid_for(int64_t n) { return static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 65535)); }

double time_conv(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  cudnnHandle_t dnn = handles().dnn;
  TensorDesc x(s.in), y(s.out);
  cudnnFilterDescriptor_t w;
  check_cudnn(cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
  check_cudnn(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, static_cast<int>(s.in2[0]),
                                         static_cast<int>(s.in2[1]), static_cast<int>(s.in2[2]), static_cast<int>(s.in2[3])),
              "cudnnSetFilter4dDescriptor");
  cudnnConvolutionDescriptor_t conv;
  check_cudnn(cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
  check_cudnn(cudnnSetConvolution2dDescriptor(conv, static_cast<int>(s.pads[0]), static_cast<int>(s.pads[1]),
                                              static_cast<int>(s.strides[0]), static_cast<int>(s.strides[1]),
                                              static_cast<int>(s.dilations[0]), static_cast<int>(s.dilations[1]),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "cudnnSetConvolution2dDescriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(conv, static_cast<int>(s.groups)), "cudnnSetConvolutionGroupCount");
  check_cudnn(cudnnSetConvolutionMathType(conv, CUDNN_DEFAULT_MATH), "cudnnSetConvolutionMathType");
  // cuDNN's own output shape (asymmetric ONNX pads are timed with the larger pad).
  int dims[4];
  check_cudnn(cudnnGetConvolution2dForwardOutputDim(conv, x.d, w, &dims[0], &dims[1], &dims[2], &dims[3]),
              "cudnnGetConvolution2dForwardOutputDim");
  TensorDesc y_cudnn({dims[0], dims[1], dims[2], dims[3]});
  DeviceBuffer in = floats(product(s.in)), weight = floats(product(s.in2)),
               out = floats(int64_t{dims[0]} * dims[1] * dims[2] * dims[3]);
  // Size the workspace to what the candidate algorithms ask for, capped by free memory.
  int returned = 0;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  check_cudnn(cudnnGetConvolutionForwardAlgorithm_v7(dnn, x.d, w, conv, y_cudnn.d, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                     &returned, perf),
              "cudnnGetConvolutionForwardAlgorithm_v7");
  size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  size_t workspace_bytes = 0;
  for (int i = 0; i < returned; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory < free_bytes / 2)
      workspace_bytes = std::max(workspace_bytes, perf[i].memory);
  DeviceBuffer workspace(workspace_bytes);
  check_cudnn(cudnnFindConvolutionForwardAlgorithmEx(dnn, x.d, in.raw(), w, weight.raw(), conv, y_cudnn.d, out.raw(),
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, workspace.raw(),
                                                     workspace.bytes()),
              "cudnnFindConvolutionForwardAlgorithmEx");
  // cuDNN's Find times each algorithm once, which at these sizes is mostly
  // noise: time every algorithm it could run properly and keep the best. (Its
  // three quickest were not enough: a 3x3 conv over 64 channels at 56x56 kept
  // 17.9 us where the same conv with a bias, fused, ran in 11.1.)
  std::vector<cudnnConvolutionFwdAlgo_t> candidates;
  for (int i = 0; i < returned; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace.bytes()) candidates.push_back(perf[i].algo);
  if (candidates.empty()) throw std::runtime_error("no cuDNN algorithm for this convolution");
  std::unique_ptr<DeviceBuffer> bias;
  std::unique_ptr<TensorDesc> bias_desc;
  cudnnActivationDescriptor_t act = nullptr;
  if (s.has_bias || s.activation) {
    bias = std::make_unique<DeviceBuffer>(static_cast<size_t>(dims[1]) * sizeof(float));
    bias_desc = std::make_unique<TensorDesc>(std::vector<int64_t>{1, dims[1], 1, 1});
    check_cudnn(cudnnCreateActivationDescriptor(&act), "cudnnCreateActivationDescriptor");
    cudnnActivationMode_t mode = s.activation == 1 ? CUDNN_ACTIVATION_RELU
                                 : s.activation == 2 ? CUDNN_ACTIVATION_SIGMOID
                                 : s.activation == 3 ? CUDNN_ACTIVATION_TANH
                                 : s.activation == 4 ? CUDNN_ACTIVATION_CLIPPED_RELU
                                                     : CUDNN_ACTIVATION_IDENTITY;
    const double coefficient = s.activation == 4 ? s.clip_max : 0.0;
    check_cudnn(cudnnSetActivationDescriptor(act, mode, CUDNN_NOT_PROPAGATE_NAN, coefficient),
                "cudnnSetActivationDescriptor");
  }
  const float one = 1, zero = 0;
  // A runtime runs the bias and activation either fused into the convolution
  // (cuDNN offers that for relu and, with IMPLICIT_PRECOMP_GEMM only, for no
  // activation) or as kernels after it; it is priced at the quicker.
  auto separate = [&](cudnnConvolutionFwdAlgo_t algo) {
    check_cudnn(cudnnConvolutionForward(dnn, &one, x.d, in.raw(), w, weight.raw(), conv, algo, workspace.raw(),
                                        workspace.bytes(), &zero, y_cudnn.d, out.raw()),
                "cudnnConvolutionForward");
    if (s.has_bias) check_cudnn(cudnnAddTensor(dnn, &one, bias_desc->d, bias->raw(), &one, y_cudnn.d, out.raw()), "cudnnAddTensor");
    if (s.activation)
      check_cudnn(cudnnActivationForward(dnn, act, &one, y_cudnn.d, out.raw(), &zero, y_cudnn.d, out.raw()),
                  "cudnnActivationForward");
  };
  auto fused = [&](cudnnConvolutionFwdAlgo_t algo) {
    check_cudnn(cudnnConvolutionBiasActivationForward(dnn, &one, x.d, in.raw(), w, weight.raw(), conv, algo,
                                                      workspace.raw(), workspace.bytes(), &zero, y_cudnn.d, out.raw(),
                                                      bias_desc->d, bias->raw(), act, y_cudnn.d, out.raw()),
                "cudnnConvolutionBiasActivationForward");
  };
  double best = 1e30;
  std::string failures;
  auto consider = [&](const std::function<void()>& body) {
    try {
      best = std::min(best, time_with_events(body, p));
    } catch (const std::exception& e) {
      failures += std::string(failures.empty() ? "" : "; ") + e.what();
    }
  };
  for (cudnnConvolutionFwdAlgo_t algo : candidates) consider([&] { separate(algo); });
  if (act && s.activation == 1)
    for (cudnnConvolutionFwdAlgo_t algo : candidates) consider([&] { fused(algo); });
  if (act && s.activation == 0) consider([&] { fused(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM); });
  if (act) cudnnDestroyActivationDescriptor(act);
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroyFilterDescriptor(w);
  if (best >= 1e30) throw std::runtime_error("no way to run this convolution: " + failures);
  return best;
}

double time_gemm(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  cublasHandle_t blas = handles().blas;
  int64_t a_count = (s.a_broadcast ? 1 : s.batch) * s.m * s.k, b_count = (s.b_broadcast ? 1 : s.batch) * s.k * s.n;
  DeviceBuffer a = floats(a_count), b = floats(b_count), c = floats(s.batch * s.m * s.n);
  const float one = 1, beta = s.has_bias ? 1.0f : 0.0f;
  // Row-major C = A*B is column-major C^T = B^T * A^T.
  cublasOperation_t op_b = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  int ldb = static_cast<int>(s.trans_b ? s.k : s.n), lda = static_cast<int>(s.trans_a ? s.m : s.k);
  auto run = [&] {
    check_cublas(cublasSgemmStridedBatched(blas, op_b, op_a, static_cast<int>(s.n), static_cast<int>(s.m),
                                           static_cast<int>(s.k), &one, b.f(), ldb, s.b_broadcast ? 0 : s.k * s.n, a.f(),
                                           lda, s.a_broadcast ? 0 : s.m * s.k, &beta, c.f(), static_cast<int>(s.n),
                                           s.m * s.n, static_cast<int>(s.batch)),
                 "cublasSgemmStridedBatched");
    if (s.activation) {
      int64_t n = s.batch * s.m * s.n;
      elementwise_kernel<<<grid_for(n), 256, 0, stream()>>>(c.f(), nullptr, c.f(), n, 1, 1);
    }
  };
  return time_with_events(run, p);
}

double time_pool(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  TensorDesc x(s.in), y(s.out);
  cudnnPoolingDescriptor_t pool;
  check_cudnn(cudnnCreatePoolingDescriptor(&pool), "cudnnCreatePoolingDescriptor");
  cudnnPoolingMode_t mode = s.mode == 0   ? CUDNN_POOLING_MAX
                            : s.mode == 1 ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                          : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  check_cudnn(cudnnSetPooling2dDescriptor(pool, mode, CUDNN_NOT_PROPAGATE_NAN, static_cast<int>(s.kernel[0]),
                                          static_cast<int>(s.kernel[1]), static_cast<int>(s.pads[0]),
                                          static_cast<int>(s.pads[1]), static_cast<int>(s.strides[0]),
                                          static_cast<int>(s.strides[1])),
              "cudnnSetPooling2dDescriptor");
  int dims[4];
  check_cudnn(cudnnGetPooling2dForwardOutputDim(pool, x.d, &dims[0], &dims[1], &dims[2], &dims[3]),
              "cudnnGetPooling2dForwardOutputDim");
  TensorDesc y_cudnn({dims[0], dims[1], dims[2], dims[3]});
  DeviceBuffer in = floats(product(s.in)), out = floats(int64_t{dims[0]} * dims[1] * dims[2] * dims[3]);
  const float one = 1, zero = 0;
  double ms = time_with_events(
      [&] {
        check_cudnn(cudnnPoolingForward(handles().dnn, pool, &one, x.d, in.raw(), &zero, y_cudnn.d, out.raw()),
                    "cudnnPoolingForward");
      },
      p);
  cudnnDestroyPoolingDescriptor(pool);
  return ms;
}

double time_activation(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  TensorDesc x(s.in);
  cudnnActivationDescriptor_t act;
  check_cudnn(cudnnCreateActivationDescriptor(&act), "cudnnCreateActivationDescriptor");
  cudnnActivationMode_t mode = s.activation == 1   ? CUDNN_ACTIVATION_RELU
                               : s.activation == 2 ? CUDNN_ACTIVATION_SIGMOID
                               : s.activation == 3 ? CUDNN_ACTIVATION_TANH
                                                   : CUDNN_ACTIVATION_CLIPPED_RELU;
  check_cudnn(cudnnSetActivationDescriptor(act, mode, CUDNN_NOT_PROPAGATE_NAN, s.clip_max), "cudnnSetActivationDescriptor");
  DeviceBuffer in = floats(product(s.in)), out = floats(product(s.in));
  const float one = 1, zero = 0;
  double ms = time_with_events(
      [&] {
        check_cudnn(cudnnActivationForward(handles().dnn, act, &one, x.d, in.raw(), &zero, x.d, out.raw()),
                    "cudnnActivationForward");
      },
      p);
  cudnnDestroyActivationDescriptor(act);
  return ms;
}

double time_batch_norm(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  TensorDesc x(s.in), param({1, s.in[1], 1, 1});
  DeviceBuffer in = floats(product(s.in)), out = floats(product(s.in));
  DeviceBuffer scale = floats(s.in[1]), bias = floats(s.in[1]), mean = floats(s.in[1]), var = floats(s.in[1]);
  const float one = 1, zero = 0;
  return time_with_events(
      [&] {
        check_cudnn(cudnnBatchNormalizationForwardInference(handles().dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x.d,
                                                            in.raw(), x.d, out.raw(), param.d, scale.raw(), bias.raw(),
                                                            mean.raw(), var.raw(), 1e-5),
                    "cudnnBatchNormalizationForwardInference");
      },
      p);
}

double time_op_tensor(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  TensorDesc a(s.in), b(s.in2), c(s.out);
  cudnnOpTensorDescriptor_t desc;
  check_cudnn(cudnnCreateOpTensorDescriptor(&desc), "cudnnCreateOpTensorDescriptor");
  check_cudnn(cudnnSetOpTensorDescriptor(desc, s.mode == 1 ? CUDNN_OP_TENSOR_MUL : CUDNN_OP_TENSOR_ADD, CUDNN_DATA_FLOAT,
                                         CUDNN_NOT_PROPAGATE_NAN),
              "cudnnSetOpTensorDescriptor");
  DeviceBuffer da = floats(product(s.in)), db = floats(product(s.in2)), dc = floats(product(s.out));
  const float one = 1, minus = -1, zero = 0;
  double ms = time_with_events(
      [&] {
        check_cudnn(cudnnOpTensor(handles().dnn, desc, &one, a.d, da.raw(), s.mode == 2 ? &minus : &one, b.d, db.raw(),
                                  &zero, c.d, dc.raw()),
                    "cudnnOpTensor");
      },
      p);
  cudnnDestroyOpTensorDescriptor(desc);
  return ms;
}

double time_softmax(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  TensorDesc x({s.rows, s.cols, s.inner, 1});
  DeviceBuffer in = floats(s.rows * s.cols * s.inner), out = floats(s.rows * s.cols * s.inner);
  const float one = 1, zero = 0;
  return time_with_events(
      [&] {
        check_cudnn(cudnnSoftmaxForward(handles().dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, x.d,
                                        in.raw(), &zero, x.d, out.raw()),
                    "cudnnSoftmaxForward");
      },
      p);
}

double time_reduce(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  TensorDesc a(s.in), c(s.out);
  cudnnReduceTensorDescriptor_t desc;
  check_cudnn(cudnnCreateReduceTensorDescriptor(&desc), "cudnnCreateReduceTensorDescriptor");
  check_cudnn(cudnnSetReduceTensorDescriptor(desc, s.mode == 1 ? CUDNN_REDUCE_TENSOR_AVG : CUDNN_REDUCE_TENSOR_ADD,
                                             CUDNN_DATA_FLOAT, CUDNN_NOT_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                             CUDNN_32BIT_INDICES),
              "cudnnSetReduceTensorDescriptor");
  size_t workspace_bytes = 0;
  check_cudnn(cudnnGetReductionWorkspaceSize(handles().dnn, desc, a.d, c.d, &workspace_bytes),
              "cudnnGetReductionWorkspaceSize");
  DeviceBuffer in = floats(product(s.in)), out = floats(product(s.out)), workspace(workspace_bytes);
  const float one = 1, zero = 0;
  double ms = time_with_events(
      [&] {
        check_cudnn(cudnnReduceTensor(handles().dnn, desc, nullptr, 0, workspace.raw(), workspace.bytes(), &one, a.d,
                                      in.raw(), &zero, c.d, out.raw()),
                    "cudnnReduceTensor");
      },
      p);
  cudnnDestroyReduceTensorDescriptor(desc);
  return ms;
}

double time_transpose(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  if (s.in.size() > kMaxRank) throw std::runtime_error("transpose of rank > 8");
  PermuteArgs args{};
  args.rank = static_cast<int>(s.in.size());
  std::vector<int64_t> in_strides(s.in.size(), 1);
  for (size_t d = s.in.size() - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * s.in[d + 1];
  for (size_t d = 0; d < s.in.size(); ++d) {
    args.out_dims[d] = s.in[static_cast<size_t>(s.perm[d])];
    args.in_strides_permuted[d] = in_strides[static_cast<size_t>(s.perm[d])];
  }
  int64_t n = product(s.in);
  DeviceBuffer in = floats(n), out = floats(n);
  return time_with_events([&] { transpose_kernel<<<grid_for(n), 256, 0, stream()>>>(in.f(), out.f(), n, args); }, p);
}

double time_concat(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  int64_t row = 0;
  for (int64_t piece : s.piece_inner) row += piece;
  DeviceBuffer whole = floats(s.outer * row), parts = floats(s.outer * row);
  return time_with_events(
      [&] {
        int64_t offset = 0;
        for (int64_t piece : s.piece_inner) {
          size_t width = static_cast<size_t>(piece) * sizeof(float);
          float* dst = whole.f() + offset;
          const float* src = parts.f() + offset * s.outer;
          check_cuda(cudaMemcpy2DAsync(dst, static_cast<size_t>(row) * sizeof(float), src, width, width,
                                       static_cast<size_t>(s.outer), cudaMemcpyDeviceToDevice, stream()),
                     "cudaMemcpy2DAsync");
          offset += piece;
        }
      },
      p);
}

double time_elementwise(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  DeviceBuffer a = floats(s.numel), out = floats(s.numel);
  std::unique_ptr<DeviceBuffer> b;
  if (s.num_inputs > 1) b = std::make_unique<DeviceBuffer>(static_cast<size_t>(s.numel) * sizeof(float));
  return time_with_events(
      [&] {
        elementwise_kernel<<<grid_for(s.numel), 256, 0, stream()>>>(a.f(), b ? b->f() : nullptr, out.f(), s.numel, s.numel,
                                                       s.flops_per_element);
      },
      p);
}

double time_layer_norm(const CudaOpSpec& s, const CudaTimingPolicy& p) {
  DeviceBuffer in = floats(s.rows * s.cols), out = floats(s.rows * s.cols);
  return time_with_events(
      [&] { layer_norm_kernel<<<static_cast<unsigned>(s.rows), 256, 0, stream()>>>(in.f(), out.f(), s.cols, 1e-5f); }, p);
}

}  // namespace

std::string cuda_device_fingerprint(CudaTimingMethod method) {
  handles();  // throws when there is no GPU
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  int blas = 0;
  cublasGetVersion(handles().blas, &blas);
  return std::string("gpu=") + prop.name + "; sm=" + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
         "; cuda=" + std::to_string(runtime) + "; cudnn=" + std::to_string(cudnnGetVersion()) +
         "; cublas=" + std::to_string(blas) + "; timer=cudnn-3" +
         (method == CudaTimingMethod::kGraph ? "; method=graph" : "");
}

double cuda_time_op(const CudaOpSpec& spec, const CudaTimingPolicy& policy) {
  handles();
  // The check after the op reports launch errors of this op only, not one
  // left behind by an earlier, unrelated CUDA call in this process.
  cudaGetLastError();
  double ms = 0;
  switch (spec.kind) {
    case CudaOpKind::Conv: ms = time_conv(spec, policy); break;
    case CudaOpKind::Gemm: ms = time_gemm(spec, policy); break;
    case CudaOpKind::Pool: ms = time_pool(spec, policy); break;
    case CudaOpKind::Activation: ms = time_activation(spec, policy); break;
    case CudaOpKind::BatchNorm: ms = time_batch_norm(spec, policy); break;
    case CudaOpKind::OpTensor: ms = time_op_tensor(spec, policy); break;
    case CudaOpKind::Softmax: ms = time_softmax(spec, policy); break;
    case CudaOpKind::Reduce: ms = time_reduce(spec, policy); break;
    case CudaOpKind::Transpose: ms = time_transpose(spec, policy); break;
    case CudaOpKind::Concat: ms = time_concat(spec, policy); break;
    case CudaOpKind::Elementwise: ms = time_elementwise(spec, policy); break;
    case CudaOpKind::LayerNorm: ms = time_layer_norm(spec, policy); break;
  }
  check_cuda(cudaGetLastError(), "kernel launch");
  return ms;
}

}  // namespace graphworld
