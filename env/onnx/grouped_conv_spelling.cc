#include "env/onnx/grouped_conv_spelling.h"

#include <cstring>

#include "common/error.h"

namespace graphworld {

int64_t this_cpu_channel_block() {
#if defined(__x86_64__)
  // onnxruntime's MLAS: every x86-64 CPU has blocked kernels of 8 channels
  // (SSE, AVX, AVX2); AVX-512F widens the block to 16.
  return __builtin_cpu_supports("avx512f") ? kAvx512ChannelBlock : kAvx2ChannelBlock;
#else
  return 0;
#endif
}

int64_t regroup_factor(int64_t groups, int64_t in_per_group, int64_t out_per_group, int64_t channel_block) {
  if (channel_block <= 1 || groups <= 1 || in_per_group <= 0 || out_per_group <= 0) return 1;
  if (in_per_group % channel_block == 0 && out_per_group % channel_block == 0) return 1;
  // The block is a power of two, so only powers of two can complete it.
  for (int64_t factor = 2; factor <= kMaxRegroupFactor; factor *= 2) {
    if (groups % factor != 0) continue;
    if ((in_per_group * factor) % channel_block == 0 && (out_per_group * factor) % channel_block == 0) return factor;
  }
  return 1;
}

int64_t regroup_factor_of(const Graph& graph, const Op& op, int64_t channel_block) {
  const int64_t groups = op.attrs.get_int(AttrKey::Group, 1);
  if (op.type != OpType::Conv || groups <= 1 || op.inputs.size() < 2 || op.outputs[0].shape.size() != 4) return 1;
  const TensorInfo& kernel = graph.info(op.inputs[1]);
  if (kernel.dtype != DType::Float32 || kernel.shape.size() != 4 || kernel.shape[0] % groups != 0) return 1;
  return regroup_factor(groups, kernel.shape[1], kernel.shape[0] / groups, channel_block);
}

bool has_regroupable_conv(const Graph& graph, int64_t channel_block) {
  if (channel_block <= 1) return false;
  for (OpId id = 0; id < static_cast<OpId>(graph.num_ops()); ++id)
    if (regroup_factor_of(graph, graph.op(id), channel_block) > 1) return true;
  return false;
}

std::shared_ptr<TensorData> regrouped_kernel(const TensorData& kernel, int64_t groups, int64_t factor) {
  const Shape& s = kernel.shape();
  if (kernel.dtype() != DType::Float32 || s.size() != 4 || groups < 1 || factor < 1 || groups % factor != 0 ||
      s[0] % groups != 0)
    throw GraphError("regrouped_kernel: a float kernel [O, I/groups, kH, kW] with O and groups divisible by the "
                     "factor is needed, got " + shape_to_string(s) + " with " + std::to_string(groups) +
                     " groups and factor " + std::to_string(factor));
  const int64_t out_channels = s[0], in_per_group = s[1], window = s[2] * s[3];
  const int64_t out_per_group = out_channels / groups;
  auto result = std::make_shared<TensorData>(DType::Float32, Shape{out_channels, in_per_group * factor, s[2], s[3]});
  float* out = result->floats();
  std::memset(out, 0, static_cast<size_t>(result->numel()) * sizeof(float));
  const float* in = kernel.floats();
  const size_t row = static_cast<size_t>(in_per_group * window);
  for (int64_t o = 0; o < out_channels; ++o) {
    // Output channel o belonged to group o / out_per_group; within its
    // merged group that is slot (o / out_per_group) % factor of the input
    // channels.
    const int64_t slot = (o / out_per_group) % factor;
    std::memcpy(out + (o * factor + slot) * static_cast<int64_t>(row), in + o * static_cast<int64_t>(row),
                row * sizeof(float));
  }
  return result;
}

}  // namespace graphworld
