#include "learner/segment_ops.h"

#include <cstring>
#include <string>

namespace graphworld {
namespace {

thread_local bool aten_row_ops = false;

bool own_kernel_types(const torch::Tensor& values) {
  return !aten_row_ops && values.device().is_cpu() &&
         (values.scalar_type() == torch::kFloat32 || values.scalar_type() == torch::kFloat64);
}

bool own_index(const torch::Tensor& index) {
  return index.device().is_cpu() && index.scalar_type() == torch::kInt64 && index.dim() == 1;
}

// The shape of `values` with its first dimension replaced by `rows`.
std::vector<int64_t> with_rows(const torch::Tensor& values, int64_t rows) {
  std::vector<int64_t> shape = values.sizes().vec();
  shape[0] = rows;
  return shape;
}

// Every index in [0, rows), checked in one pass before any row moves.
void check_indices(const int64_t* index, int64_t count, int64_t rows, const char* op) {
  bool inside = true;
  for (int64_t i = 0; i < count; ++i) inside &= index[i] >= 0 && index[i] < rows;
  if (inside) return;
  for (int64_t i = 0; i < count; ++i)
    TORCH_CHECK(index[i] >= 0 && index[i] < rows, op, ": index ", index[i], " at position ", i, " is outside [0, ",
                rows, ")");
}

// to[k] += from[k] for a row; a compile-time width (the network's hidden
// width, 32 by default) becomes a fixed loop the compiler vectorises.
template <typename T, int64_t kWidth>
inline void add_row_fixed(T* __restrict to, const T* __restrict from) {
  for (int64_t k = 0; k < kWidth; ++k) to[k] += from[k];
}

template <typename T>
inline void add_row(T* __restrict to, const T* __restrict from, int64_t width) {
  switch (width) {
    case 16: return add_row_fixed<T, 16>(to, from);
    case 32: return add_row_fixed<T, 32>(to, from);
    case 64: return add_row_fixed<T, 64>(to, from);
    default:
      for (int64_t k = 0; k < width; ++k) to[k] += from[k];
  }
}

// Scatter-adds rows: out[index[i] * out_stride + k] += values[i * in_stride + k]
// for k < width (index null: row i).
template <typename T>
void scatter_add_rows(const T* values, int64_t in_stride, const int64_t* index, int64_t count, int64_t width, T* out,
                      int64_t out_stride) {
  if (width == 32) {
    for (int64_t i = 0; i < count; ++i)
      add_row_fixed<T, 32>(out + (index ? index[i] : i) * out_stride, values + i * in_stride);
    return;
  }
  for (int64_t i = 0; i < count; ++i) add_row(out + (index ? index[i] : i) * out_stride, values + i * in_stride, width);
}

// values [rows, ...] -> [index.size(0), ...], no autograd.
torch::Tensor gather_forward(const torch::Tensor& values, const torch::Tensor& index) {
  const torch::Tensor v = values.contiguous();
  const torch::Tensor ids = index.contiguous();
  const int64_t count = ids.size(0), rows = v.size(0);
  torch::Tensor out = torch::empty(with_rows(v, count), v.options());
  const int64_t width = rows > 0 ? v.numel() / rows : 0;
  const int64_t* id = ids.data_ptr<int64_t>();
  check_indices(id, count, rows, "gather_rows");
  const size_t bytes = v.element_size() * static_cast<size_t>(width);
  const auto* from = static_cast<const char*>(v.data_ptr());
  auto* to = static_cast<char*>(out.data_ptr());
  for (int64_t i = 0; i < count; ++i) std::memcpy(to + i * bytes, from + id[i] * bytes, bytes);
  return out;
}

// values [index.size(0), ...] -> [segments, ...], no autograd.
torch::Tensor scatter_add_forward(const torch::Tensor& values, const torch::Tensor& index, int64_t segments) {
  const torch::Tensor v = values.contiguous();
  const torch::Tensor ids = index.contiguous();
  TORCH_CHECK(ids.size(0) == v.size(0), "segment_sum: ", v.size(0), " rows but ", ids.size(0), " indices");
  torch::Tensor out = torch::zeros(with_rows(v, segments), v.options());
  const int64_t count = v.size(0);
  const int64_t width = count > 0 ? v.numel() / count : 0;
  const int64_t* id = ids.data_ptr<int64_t>();
  check_indices(id, count, segments, "segment_sum");
  if (v.scalar_type() == torch::kFloat32)
    scatter_add_rows(v.data_ptr<float>(), width, id, count, width, out.data_ptr<float>(), width);
  else
    scatter_add_rows(v.data_ptr<double>(), width, id, count, width, out.data_ptr<double>(), width);
  return out;
}

struct GatherRows : torch::autograd::Function<GatherRows> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& values,
                               const torch::Tensor& index) {
    ctx->save_for_backward({index});
    ctx->saved_data["rows"] = values.size(0);
    return gather_forward(values, index);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const torch::Tensor index = ctx->get_saved_variables()[0];
    return {scatter_add_forward(grad[0], index, ctx->saved_data["rows"].toInt()), torch::Tensor()};
  }
};

struct SegmentSum : torch::autograd::Function<SegmentSum> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& values,
                               const torch::Tensor& index, int64_t segments) {
    ctx->save_for_backward({index});
    return scatter_add_forward(values, index, segments);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const torch::Tensor index = ctx->get_saved_variables()[0];
    return {gather_forward(grad[0], index), torch::Tensor(), torch::Tensor()};
  }
};

// A gathered sum's term as the kernel reads it.
struct TermRows {
  const float* values;   // at the term's first column
  const int64_t* index;  // null: row i
  int64_t stride;        // between rows of the value
};

template <int64_t kWidth, bool kRelu>
void gathered_sum_rows(const std::vector<TermRows>& terms, const float* bias, int64_t rows, int64_t width,
                       float* out) {
  const int64_t w = kWidth > 0 ? kWidth : width;
  for (int64_t i = 0; i < rows; ++i) {
    float* __restrict to = out + i * w;
    std::memcpy(to, bias, sizeof(float) * static_cast<size_t>(w));
    for (const TermRows& t : terms) {
      const float* from = t.values + (t.index ? t.index[i] : i) * t.stride;
      if constexpr (kWidth > 0) add_row_fixed<float, kWidth>(to, from);
      else add_row(to, from, w);
    }
    if constexpr (kRelu)
      for (int64_t k = 0; k < w; ++k) to[k] = to[k] > 0 ? to[k] : 0.0f;
  }
}

struct GatheredSum : torch::autograd::Function<GatheredSum> {
  // `layout`: per term its value, column, and whether it has an index (the
  // indices themselves come in `indices`, undefined where none).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, at::TensorList values,
                               std::vector<torch::Tensor> indices, std::vector<int64_t> layout,
                               const torch::Tensor& bias, int64_t rows, bool relu) {
    const int64_t width = bias.size(0);
    std::vector<torch::Tensor> kept;
    for (const torch::Tensor& v : values) kept.push_back(v.stride(1) == 1 ? v : v.contiguous());
    std::vector<TermRows> terms;
    for (size_t t = 0; t < indices.size(); ++t) {
      const torch::Tensor& v = kept[static_cast<size_t>(layout[2 * t])];
      const int64_t column = layout[2 * t + 1];
      TORCH_CHECK(column >= 0 && column + width <= v.size(1), "gathered_sum: term ", t, " reads columns ", column,
                  "..", column + width, " of a value ", v.size(1), " wide");
      const int64_t* index = nullptr;
      if (indices[t].defined()) {
        indices[t] = indices[t].contiguous();
        TORCH_CHECK(indices[t].size(0) == rows, "gathered_sum: index ", t, " has ", indices[t].size(0),
                    " entries for ", rows, " rows");
        index = indices[t].data_ptr<int64_t>();
        check_indices(index, rows, v.size(0), "gathered_sum");
      } else {
        TORCH_CHECK(v.size(0) == rows, "gathered_sum: term ", t, " has ", v.size(0), " rows, not ", rows);
      }
      terms.push_back({v.data_ptr<float>() + column, index, v.stride(0)});
    }
    const torch::Tensor b = bias.contiguous();
    torch::Tensor out = torch::empty({rows, width}, b.options());
    float* to = out.data_ptr<float>();
    const float* b0 = b.data_ptr<float>();
    if (width == 32) {
      if (relu) gathered_sum_rows<32, true>(terms, b0, rows, width, to);
      else gathered_sum_rows<32, false>(terms, b0, rows, width, to);
    } else {
      if (relu) gathered_sum_rows<0, true>(terms, b0, rows, width, to);
      else gathered_sum_rows<0, false>(terms, b0, rows, width, to);
    }
    // The output is kept for the ReLU's gradient (zero where it is zero).
    indices.push_back(relu ? out : torch::Tensor());
    ctx->save_for_backward(indices);
    std::vector<int64_t> shapes;
    for (const torch::Tensor& v : values) {
      shapes.push_back(v.size(0));
      shapes.push_back(v.size(1));
    }
    ctx->saved_data["shapes"] = shapes;
    ctx->saved_data["layout"] = layout;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    std::vector<torch::Tensor> indices = ctx->get_saved_variables();
    const torch::Tensor relu_out = indices.back();
    indices.pop_back();
    const std::vector<int64_t> shapes = ctx->saved_data["shapes"].toIntVector();
    const std::vector<int64_t> layout = ctx->saved_data["layout"].toIntVector();
    torch::Tensor g = grad[0].contiguous();
    if (relu_out.defined()) {
      torch::Tensor masked = torch::empty_like(g);
      const float* from = g.data_ptr<float>();
      const float* y = relu_out.data_ptr<float>();
      float* to = masked.data_ptr<float>();
      for (int64_t k = 0, n = g.numel(); k < n; ++k) to[k] = y[k] > 0 ? from[k] : 0.0f;
      g = masked;
    }
    const int64_t rows = g.size(0), width = g.size(1);
    const size_t count = shapes.size() / 2;
    torch::autograd::variable_list out(count);
    for (size_t v = 0; v < count; ++v) {
      std::vector<size_t> reading;
      for (size_t t = 0; t < indices.size(); ++t)
        if (layout[2 * t] == static_cast<int64_t>(v)) reading.push_back(t);
      if (reading.empty()) continue;
      const int64_t value_rows = shapes[2 * v], value_width = shapes[2 * v + 1];
      if (reading.size() == 1 && !indices[reading[0]].defined() && value_width == width) {
        out[v] = g;  // the value itself, every column: its gradient is the output's
        continue;
      }
      torch::Tensor dv = torch::zeros({value_rows, value_width}, g.options());
      for (size_t t : reading) {
        const int64_t* index = indices[t].defined() ? indices[t].data_ptr<int64_t>() : nullptr;
        scatter_add_rows(g.data_ptr<float>(), width, index, rows, width, dv.data_ptr<float>() + layout[2 * t + 1],
                         value_width);
      }
      out[v] = dv;
    }
    out.push_back(torch::Tensor());  // indices
    out.push_back(torch::Tensor());  // layout
    out.push_back(g.sum(0));         // bias
    out.push_back(torch::Tensor());  // rows
    out.push_back(torch::Tensor());  // relu
    return out;
  }
};

// [h | sum of received edges | sum of sent edges].
struct NodeInputs : torch::autograd::Function<NodeInputs> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& nodes_in,
                               const torch::Tensor& edges_in, const torch::Tensor& senders_in,
                               const torch::Tensor& receivers_in) {
    const torch::Tensor h = nodes_in.contiguous(), e = edges_in.contiguous();
    const torch::Tensor senders = senders_in.contiguous(), receivers = receivers_in.contiguous();
    const int64_t nodes = h.size(0), edges = e.size(0), width = h.size(1);
    TORCH_CHECK(e.size(1) == width && senders.size(0) == edges && receivers.size(0) == edges,
                "node_inputs: nodes and edges of one width, one sender and receiver per edge");
    check_indices(senders.data_ptr<int64_t>(), edges, nodes, "node_inputs (senders)");
    check_indices(receivers.data_ptr<int64_t>(), edges, nodes, "node_inputs (receivers)");
    torch::Tensor out = torch::empty({nodes, 3 * width}, h.options());
    float* o = out.data_ptr<float>();
    const float* hp = h.data_ptr<float>();
    for (int64_t n = 0; n < nodes; ++n) {
      std::memcpy(o + n * 3 * width, hp + n * width, sizeof(float) * static_cast<size_t>(width));
      std::memset(o + n * 3 * width + width, 0, sizeof(float) * 2 * static_cast<size_t>(width));
    }
    scatter_add_rows(e.data_ptr<float>(), width, receivers.data_ptr<int64_t>(), edges, width, o + width, 3 * width);
    scatter_add_rows(e.data_ptr<float>(), width, senders.data_ptr<int64_t>(), edges, width, o + 2 * width, 3 * width);
    ctx->save_for_backward({senders, receivers});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const std::vector<torch::Tensor> saved = ctx->get_saved_variables();
    const torch::Tensor& senders = saved[0];
    const torch::Tensor& receivers = saved[1];
    const torch::Tensor g = grad[0].contiguous();
    const int64_t nodes = g.size(0), width = g.size(1) / 3, edges = senders.size(0);
    torch::Tensor dh = g.narrow(1, 0, width).contiguous();
    // An edge's gradient: the received-sum block of its receiver's row plus
    // the sent-sum block of its sender's row.
    torch::Tensor de = torch::empty({edges, width}, g.options());
    const float* gp = g.data_ptr<float>();
    const int64_t* s = senders.data_ptr<int64_t>();
    const int64_t* r = receivers.data_ptr<int64_t>();
    float* d = de.data_ptr<float>();
    for (int64_t i = 0; i < edges; ++i) {
      std::memcpy(d + i * width, gp + r[i] * 3 * width + width, sizeof(float) * static_cast<size_t>(width));
      add_row(d + i * width, gp + s[i] * 3 * width + 2 * width, width);
    }
    (void)nodes;
    return {dh, de, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor gather_rows(const torch::Tensor& values, const torch::Tensor& index) {
  if (!(own_kernel_types(values) && own_index(index) && values.dim() >= 1)) return values.index_select(0, index);
  return GatherRows::apply(values, index);
}

torch::Tensor segment_sum(const torch::Tensor& values, const torch::Tensor& index, int64_t segments) {
  if (!(own_kernel_types(values) && own_index(index) && values.dim() >= 1))
    return torch::zeros(with_rows(values, segments), values.options()).index_add(0, index, values);
  return SegmentSum::apply(values, index, segments);
}

torch::Tensor gathered_sum(const std::vector<torch::Tensor>& values, const std::vector<GatherTerm>& terms,
                           const torch::Tensor& bias, int64_t rows, bool relu) {
  TORCH_CHECK(!terms.empty() && bias.dim() == 1, "gathered_sum: at least one term and a 1-D bias");
  const int64_t width = bias.size(0);
  bool own = own_kernel_types(bias) && bias.scalar_type() == torch::kFloat32;
  for (const torch::Tensor& v : values) own = own && v.scalar_type() == torch::kFloat32 && v.device().is_cpu() && v.dim() == 2;
  for (const GatherTerm& t : terms) {
    TORCH_CHECK(t.value >= 0 && static_cast<size_t>(t.value) < values.size(), "gathered_sum: term reads value ",
                t.value, " of ", values.size());
    own = own && (!t.index.defined() || own_index(t.index));
  }
  if (!own) {
    torch::Tensor sum;
    for (const GatherTerm& t : terms) {
      torch::Tensor block = values[static_cast<size_t>(t.value)].narrow(1, t.column, width);
      if (t.index.defined()) block = gather_rows(block, t.index);
      sum = sum.defined() ? sum + block : block;
    }
    sum = sum + bias;
    return relu ? torch::relu(sum) : sum;
  }
  std::vector<torch::Tensor> indices;
  std::vector<int64_t> layout;
  for (const GatherTerm& t : terms) {
    indices.push_back(t.index);
    layout.push_back(t.value);
    layout.push_back(t.column);
  }
  return GatheredSum::apply(at::TensorList(values), indices, layout, bias, rows, relu);
}

torch::Tensor gathered_sum(const std::vector<torch::Tensor>& values, const std::vector<torch::Tensor>& indices,
                           const torch::Tensor& bias, int64_t rows, bool relu) {
  TORCH_CHECK(values.size() == indices.size(), "gathered_sum: one index (or none) per value");
  std::vector<GatherTerm> terms;
  for (size_t k = 0; k < values.size(); ++k) terms.push_back({static_cast<int32_t>(k), 0, indices[k]});
  return gathered_sum(values, terms, bias, rows, relu);
}

torch::Tensor node_inputs(const torch::Tensor& nodes, const torch::Tensor& edges, const torch::Tensor& senders,
                          const torch::Tensor& receivers) {
  const bool own = own_kernel_types(nodes) && nodes.scalar_type() == torch::kFloat32 &&
                   edges.scalar_type() == torch::kFloat32 && edges.device().is_cpu() && nodes.dim() == 2 &&
                   edges.dim() == 2 && own_index(senders) && own_index(receivers);
  if (!own)
    return torch::cat({nodes, segment_sum(edges, receivers, nodes.size(0)), segment_sum(edges, senders, nodes.size(0))},
                      1);
  return NodeInputs::apply(nodes, edges, senders, receivers);
}

AtenRowOps::AtenRowOps() : previous_(aten_row_ops) { aten_row_ops = true; }
AtenRowOps::~AtenRowOps() { aten_row_ops = previous_; }
bool AtenRowOps::active() { return aten_row_ops; }

}  // namespace graphworld
