#include "env/cost/cuda_op_timer.h"

#include <algorithm>
#include <stdexcept>

#include "common/error.h"

namespace graphworld {
namespace {

int64_t product(const Shape& shape, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t d = from; d < std::min(to, shape.size()); ++d) n *= shape[d];
  return n;
}

// cuDNN's fused activations: 1 relu, 2 sigmoid, 3 tanh, 4 clipped relu. The
// piecewise-linear ones graphworld fuses (hard sigmoid, hard swish, leaky
// relu) are timed as the clipped relu, the nearest one cuDNN fuses.
int activation_code(const Attributes& attrs) {
  auto act = static_cast<Activation>(attrs.get_int(AttrKey::Activation, 0));
  switch (act) {
    case Activation::None: return 0;
    case Activation::Relu: return 1;
    case Activation::Sigmoid: return 2;
    case Activation::Tanh: return 3;
    case Activation::HardSigmoid:
    case Activation::HardSwish:
    case Activation::LeakyRelu: return 4;
  }
  return 0;
}

CudaOpSpec elementwise(const OpCostKey& key, int flops) {
  CudaOpSpec spec;
  spec.kind = CudaOpKind::Elementwise;
  spec.numel = product(key.outputs[0].shape);
  spec.num_inputs = static_cast<int>(std::min<size_t>(key.inputs.size(), 2));
  spec.flops_per_element = flops;
  return spec;
}

// Conv/pool window parameters, with symmetric padding (the larger side).
void window(const OpCostKey& key, CudaOpSpec& spec, bool is_conv) {
  spec.in = key.inputs[0].shape;
  spec.out = key.outputs[0].shape;
  if (spec.in.size() != 4) throw GraphError("the cuda cost model times 2-D windows only, got input " + shape_to_string(spec.in));
  spec.kernel = is_conv ? Shape{key.inputs[1].shape[2], key.inputs[1].shape[3]} : key.attrs.require_ints(AttrKey::KernelShape);
  spec.strides = key.attrs.get_ints(AttrKey::Strides, {1, 1});
  spec.dilations = key.attrs.get_ints(AttrKey::Dilations, {1, 1});
  auto pads = key.attrs.get_ints(AttrKey::Pads, {0, 0, 0, 0});
  spec.pads = {std::max(pads[0], pads[2]), std::max(pads[1], pads[3])};
}

// Broadcast operand shapes padded to the output's rank.
Shape aligned(const Shape& shape, size_t rank) {
  Shape out(rank - std::min(rank, shape.size()), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

}  // namespace

CudaOpSpec cuda_spec_for(const OpCostKey& key) {
  CudaOpSpec spec;
  const Shape& x = key.inputs.empty() ? key.outputs[0].shape : key.inputs[0].shape;
  switch (key.type) {
    case OpType::Conv:
      spec.kind = CudaOpKind::Conv;
      window(key, spec, true);
      spec.in2 = key.inputs[1].shape;
      spec.groups = key.attrs.get_int(AttrKey::Group, 1);
      spec.has_bias = key.inputs.size() > 2;
      spec.activation = activation_code(key.attrs);
      if (spec.activation == 4) spec.clip_max = 6;
      return spec;
    case OpType::ConvTranspose: {
      // Timed as the GEMM cuDNN runs for it: a 1x1 conv of the input to
      // (O/group)*kH*kW channels per group; the col2im scatter is memory-bound
      // and small beside it.
      const Shape& w = key.inputs[1].shape;
      if (x.size() != 4 || w.size() != 4)
        throw GraphError("the cuda cost model times 2-D transposed convolutions only, got input " + shape_to_string(x));
      spec.kind = CudaOpKind::Conv;
      spec.in = x;
      spec.groups = key.attrs.get_int(AttrKey::Group, 1);
      spec.in2 = {w[1] * w[2] * w[3] * spec.groups, w[0] / spec.groups, 1, 1};
      spec.out = {x[0], spec.in2[0], x[2], x[3]};
      spec.kernel = {1, 1};
      spec.strides = {1, 1};
      spec.dilations = {1, 1};
      spec.pads = {0, 0};
      spec.has_bias = key.inputs.size() > 2;
      spec.activation = activation_code(key.attrs);
      if (spec.activation == 4) spec.clip_max = 6;
      return spec;
    }
    case OpType::MatMul: {
      Shape a = key.inputs[0].shape, b = key.inputs[1].shape;
      if (a.size() == 1) a.insert(a.begin(), 1);
      if (b.size() == 1) b.push_back(1);
      spec.kind = CudaOpKind::Gemm;
      spec.m = a[a.size() - 2];
      spec.k = a.back();
      spec.n = b.back();
      int64_t a_batch = product(a, 0, a.size() - 2), b_batch = product(b, 0, b.size() - 2);
      spec.batch = std::max(a_batch, b_batch);
      spec.a_broadcast = a_batch == 1 && spec.batch > 1;
      spec.b_broadcast = b_batch == 1 && spec.batch > 1;
      if (spec.b_broadcast) {  // one big gemm, as cuBLAS users do
        spec.m *= spec.batch;
        spec.batch = 1;
        spec.b_broadcast = false;
      }
      spec.activation = activation_code(key.attrs);
      return spec;
    }
    case OpType::Gemm: {
      spec.kind = CudaOpKind::Gemm;
      spec.trans_a = key.attrs.get_int(AttrKey::TransA, 0) != 0;
      spec.trans_b = key.attrs.get_int(AttrKey::TransB, 0) != 0;
      const Shape& a = key.inputs[0].shape;
      const Shape& b = key.inputs[1].shape;
      spec.m = spec.trans_a ? a[1] : a[0];
      spec.k = spec.trans_a ? a[0] : a[1];
      spec.n = spec.trans_b ? b[0] : b[1];
      spec.has_bias = key.inputs.size() > 2;
      spec.activation = activation_code(key.attrs);
      return spec;
    }
    case OpType::MaxPool:
    case OpType::AvgPool:
      spec.kind = CudaOpKind::Pool;
      window(key, spec, false);
      spec.mode = key.type == OpType::MaxPool ? 0 : key.attrs.get_int(AttrKey::CountIncludePad, 0) ? 1 : 2;
      return spec;
    case OpType::GlobalAvgPool:
      spec.kind = CudaOpKind::Pool;
      spec.in = x;
      spec.out = key.outputs[0].shape;
      if (x.size() != 4) throw GraphError("the cuda cost model times 2-D pools only, got " + shape_to_string(x));
      spec.kernel = {x[2], x[3]};
      spec.strides = {1, 1};
      spec.pads = {0, 0};
      spec.mode = 1;
      return spec;
    case OpType::Relu:
    case OpType::Sigmoid:
    case OpType::Tanh:
      spec.kind = CudaOpKind::Activation;
      spec.in = x;
      spec.activation = key.type == OpType::Relu ? 1 : key.type == OpType::Sigmoid ? 2 : 3;
      return spec;
    case OpType::Clip:
      if (key.attrs.get_float(AttrKey::Min, -1) == 0 && key.attrs.has(AttrKey::Max)) {
        spec.kind = CudaOpKind::Activation;
        spec.in = x;
        spec.activation = 4;
        spec.clip_max = key.attrs.get_float(AttrKey::Max, 6);
        return spec;
      }
      return elementwise(key, 2);
    case OpType::BatchNorm:
      if (x.size() != 4) return elementwise(key, 2);
      spec.kind = CudaOpKind::BatchNorm;
      spec.in = x;
      return spec;
    case OpType::Add:
    case OpType::Sub:
    case OpType::Mul: {
      size_t rank = key.outputs[0].shape.size();
      Shape a = aligned(key.inputs[0].shape, rank), b = aligned(key.inputs[1].shape, rank);
      // cuDNN broadcasts only B; the full-size operand goes first.
      if (a != key.outputs[0].shape) std::swap(a, b);
      if (a != key.outputs[0].shape || rank > 8) return elementwise(key, 1);
      spec.kind = CudaOpKind::OpTensor;
      spec.in = a;
      spec.in2 = b;
      spec.out = key.outputs[0].shape;
      spec.mode = key.type == OpType::Mul ? 1 : key.type == OpType::Sub ? 2 : 0;
      return spec;
    }
    case OpType::Softmax: {
      int64_t axis = key.attrs.get_int(AttrKey::Axis, -1);
      if (axis < 0) axis += static_cast<int64_t>(x.size());
      spec.kind = CudaOpKind::Softmax;
      spec.rows = product(x, 0, static_cast<size_t>(axis));
      spec.cols = x[static_cast<size_t>(axis)];
      spec.inner = product(x, static_cast<size_t>(axis) + 1);
      return spec;
    }
    case OpType::LayerNorm: {
      int64_t axis = key.attrs.get_int(AttrKey::Axis, -1);
      if (axis < 0) axis += static_cast<int64_t>(x.size());
      spec.kind = CudaOpKind::LayerNorm;
      spec.rows = product(x, 0, static_cast<size_t>(axis));
      spec.cols = product(x, static_cast<size_t>(axis));
      return spec;
    }
    case OpType::ReduceMean:
    case OpType::ReduceSum: {
      if (x.size() > 8) return elementwise(key, 1);
      spec.kind = CudaOpKind::Reduce;
      spec.in = x;
      // cuDNN wants the kept-dims shape: reduced axes become 1.
      spec.out = x;
      auto axes = key.attrs.get_ints(AttrKey::Axes);
      if (axes.empty())
        for (size_t d = 0; d < x.size(); ++d) axes.push_back(static_cast<int64_t>(d));
      for (int64_t a : axes) spec.out[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.size()) : a)] = 1;
      spec.mode = key.type == OpType::ReduceMean ? 1 : 0;
      return spec;
    }
    case OpType::Transpose: {
      spec.kind = CudaOpKind::Transpose;
      spec.in = x;
      spec.perm = key.attrs.get_ints(AttrKey::Perm);
      if (spec.perm.empty())
        for (int64_t d = static_cast<int64_t>(x.size()) - 1; d >= 0; --d) spec.perm.push_back(d);
      if (x.size() > 8) throw GraphError("the cuda cost model times transposes of rank <= 8, got " + shape_to_string(x));
      return spec;
    }
    case OpType::Concat:
    case OpType::Split: {
      const Shape& whole = key.type == OpType::Concat ? key.outputs[0].shape : x;
      int64_t axis = key.attrs.get_int(AttrKey::Axis, 0);
      if (axis < 0) axis += static_cast<int64_t>(whole.size());
      spec.kind = CudaOpKind::Concat;
      spec.outer = product(whole, 0, static_cast<size_t>(axis));
      const auto& pieces = key.type == OpType::Concat ? key.inputs : key.outputs;
      for (const TensorInfo& piece : pieces) spec.piece_inner.push_back(product(piece.shape, static_cast<size_t>(axis)));
      return spec;
    }
    case OpType::Div:
      return elementwise(key, 4);
    case OpType::Pow:
    case OpType::Erf:
    case OpType::Gelu:
      return elementwise(key, 16);
    case OpType::Sqrt:
      return elementwise(key, 4);
    case OpType::HardSigmoid:
    case OpType::HardSwish:
    case OpType::LeakyRelu:
    case OpType::PRelu:
    case OpType::Max:
    case OpType::Min:
    case OpType::Mean:
      return elementwise(key, 2);
    case OpType::Softplus:
    case OpType::Mish:
      return elementwise(key, 16);
    case OpType::ReduceMax:
    case OpType::ReduceMin:
      return elementwise(key, 1);
    default:
      // Data movement (Pad, Slice, EnlargeKernel...): one read and one write per output element.
      return elementwise(key, 1);
  }
}

bool cuda_cost_model_compiled() {
#ifdef GRAPHWORLD_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

#ifdef GRAPHWORLD_HAVE_CUDA
namespace {

class CudaOpTimer : public OpTimer {
 public:
  explicit CudaOpTimer(TimingPolicy policy) {
    policy_.warmup = policy.warmup;
    policy_.min_repeats = policy.min_repeats;
    policy_.max_repeats = policy.max_repeats;
    policy_.min_total_ms = policy.min_total_ms;
    try {
      fingerprint_ = cuda_device_fingerprint(policy_.method);
    } catch (const std::runtime_error& e) {
      throw UnavailableError(std::string("the cuda cost model cannot run here: ") + e.what());
    }
  }
  std::string fingerprint() const override { return fingerprint_; }
  double time_ms(const OpCostKey& key) override {
    try {
      return cuda_time_op(cuda_spec_for(key), policy_);
    } catch (const std::runtime_error& e) {
      if (dynamic_cast<const Error*>(&e)) throw;
      throw GraphError("timing " + key.canonical() + " on the GPU failed: " + e.what());
    }
  }

 private:
  CudaTimingPolicy policy_;
  std::string fingerprint_;
};

}  // namespace

std::unique_ptr<OpTimer> make_cuda_op_timer(TimingPolicy policy) { return std::make_unique<CudaOpTimer>(policy); }
#else
std::unique_ptr<OpTimer> make_cuda_op_timer(TimingPolicy) {
  throw UnavailableError(
      "the cuda cost model is not in this build: CUDA was not found when graphworld was configured "
      "(install the toolkit under /usr/local/cuda and rebuild with GRAPHWORLD_CUDA=AUTO or ON); "
      "use --cost measured on the CPU");
}
#endif

}  // namespace graphworld
