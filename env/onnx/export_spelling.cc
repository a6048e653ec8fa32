#include "env/onnx/export_spelling.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

namespace graphworld {
namespace {

using Uses = std::vector<std::vector<std::vector<TensorUse>>>;

bool channel_split(const Op& op) {
  const int64_t axis = op.attrs.get_int(AttrKey::Axis, 0);
  return op.type == OpType::Split && (axis == 1 || axis == -3) && op.outputs.size() >= 1 &&
         op.outputs[0].shape.size() == 4;
}

Activation activation_of(OpType type) {
  switch (type) {
    case OpType::Relu: return Activation::Relu;
    case OpType::Sigmoid: return Activation::Sigmoid;
    case OpType::Tanh: return Activation::Tanh;
    default: return Activation::None;
  }
}

}  // namespace

namespace {

// Planning state shared by the three passes.
class SpellingPlanner {
 public:
  SpellingPlanner(const Graph& g, const std::vector<bool>& live, const std::vector<bool>& constant)
      : g_(g), live_(live), constant_(constant), uses_(g.consumers()) {
    for (const GraphOutput& o : g.outputs()) named_outputs_.insert(o.ref);
  }

  ExportSpelling plan() {
    // Topological order: a grouped conv may need the activation in front of
    // it moved into the convs before it, which must be planned already.
    const std::vector<OpId> order = g_.topological_order();
    for (OpId id : order) {
      if (!live_[id] || constant_[id]) continue;
      if (g_.op(id).type == OpType::Conv) plan_conv_pieces(id);
      if (g_.op(id).type == OpType::MatMul) plan_matmul(id);
    }
    for (OpId id : order)
      if (live_[id] && !constant_[id] && activation_of(g_.op(id).type) != Activation::None) plan_activation(id);
    return std::move(spelling_);
  }

 private:
  // The live readers of one output; none when a graph output names it.
  std::vector<TensorUse> readers(TensorRef ref) const {
    if (named_outputs_.count(ref)) return {};
    std::vector<TensorUse> out;
    for (const TensorUse& u : uses_[ref.op][ref.index])
      if (live_[u.op]) out.push_back(u);
    return out;
  }
  // Live readers whether or not a graph output names the tensor (a piece
  // nothing reads is not written).
  std::vector<TensorUse> live_readers(TensorRef ref) const {
    std::vector<TensorUse> out;
    for (const TensorUse& u : uses_[ref.op][ref.index])
      if (live_[u.op]) out.push_back(u);
    return out;
  }
  std::optional<TensorUse> one_reader(TensorRef ref) const {
    std::vector<TensorUse> r = readers(ref);
    if (r.size() != 1) return std::nullopt;
    return r[0];
  }

  void plan_conv_pieces(OpId id) {
    const Op& op = g_.op(id);
    if (op.outputs.size() != 1 || op.outputs[0].shape.size() != 4) return;
    for (size_t k = 1; k < op.inputs.size(); ++k)
      if (!constant_[op.inputs[k].op]) return;
    std::optional<TensorUse> reader = one_reader({id, 0});
    if (!reader || reader->slot != 0 || !channel_split(g_.op(reader->op)) || constant_[reader->op]) return;
    std::vector<ExportSpelling::ConvPiece> pieces;
    std::vector<OpId> splits;
    add_pieces(reader->op, 0, pieces, splits);
    const int64_t groups = op.attrs.get_int(AttrKey::Group, 1);
    if (groups > 1 && !assign_group_inputs(op, groups, pieces)) return;
    for (OpId split : splits) spelling_.split_written_as_pieces.insert(split);
    spelling_.conv_pieces[id] = std::move(pieces);
  }

  // Leaves of the tree of channel Splits under a conv, in channel order
  // (repeated merges leave a Split of a Split's piece).
  void add_pieces(OpId split, int64_t offset, std::vector<ExportSpelling::ConvPiece>& pieces,
                  std::vector<OpId>& splits) const {
    splits.push_back(split);
    const std::vector<int64_t> sizes = g_.op(split).attrs.require_ints(AttrKey::Split);
    for (size_t k = 0; k < sizes.size(); ++k) {
      const TensorRef out{split, static_cast<int32_t>(k)};
      std::optional<TensorUse> r = one_reader(out);
      if (r && r->slot == 0 && channel_split(g_.op(r->op)) && !constant_[r->op]) {
        add_pieces(r->op, offset, pieces, splits);
      } else if (named_outputs_.count(out) || !live_readers(out).empty()) {
        ExportSpelling::ConvPiece piece;
        piece.begin = offset;
        piece.end = offset + sizes[k];
        piece.out = out;
        pieces.push_back(piece);
      }
      offset += sizes[k];
    }
  }

  // A grouped conv that merged convs on different inputs reads their
  // channel Concat: each piece must cover whole groups whose input channels
  // are exactly one of the Concat's inputs, which the piece then reads.
  bool assign_group_inputs(const Op& conv, int64_t groups, std::vector<ExportSpelling::ConvPiece>& pieces) {
    OpId concat = conv.inputs[0].op;
    // act(Concat(...)) in front of the conv, as a rewrite that moved the
    // activation behind the Concat leaves it: the activation goes back into
    // the convs that feed the Concat, and the pieces read their outputs.
    // Planning the move first is safe even if the pieces are then
    // rejected: act(Concat(a, b)) = Concat(act(a), act(b)) either way.
    const OpId in_front = concat;
    if (activation_of(g_.op(in_front).type) != Activation::None) {
      std::optional<TensorUse> act_reader = one_reader({in_front, 0});
      if (!act_reader || !plan_activation(in_front)) return false;
      concat = g_.op(in_front).inputs[0].op;
    }
    const Op& c = g_.op(concat);
    const int64_t axis = c.attrs.get_int(AttrKey::Axis, 0);
    if (c.type != OpType::Concat || (axis != 1 && axis != -3) || constant_[concat]) return false;
    std::optional<TensorUse> concat_reader = one_reader({concat, 0});
    if (!concat_reader) return false;
    const int64_t out_per_group = conv.outputs[0].shape[1] / groups;
    const int64_t in_per_group = g_.info(conv.inputs[1]).shape[1];
    for (ExportSpelling::ConvPiece& piece : pieces) {
      if (piece.begin % out_per_group || piece.end % out_per_group) return false;
      const int64_t in_begin = piece.begin / out_per_group * in_per_group;
      const int64_t in_end = piece.end / out_per_group * in_per_group;
      int64_t offset = 0;
      bool found = false;
      for (const TensorRef& input : c.inputs) {
        const int64_t channels = g_.info(input).shape[1];
        if (offset == in_begin && offset + channels == in_end) {
          piece.input = input;
          found = true;
        }
        offset += channels;
      }
      if (!found) return false;
      piece.groups = (piece.end - piece.begin) / out_per_group;
    }
    // Every Concat input must be read by a piece, or its producer would be
    // written with nothing reading it.
    for (const TensorRef& input : c.inputs) {
      const bool read = std::any_of(pieces.begin(), pieces.end(),
                                    [&](const ExportSpelling::ConvPiece& p) { return p.input == input; });
      if (!read) return false;
    }
    spelling_.concat_not_written.insert(concat);
    return true;
  }

  void plan_matmul(OpId id) {
    const Op& op = g_.op(id);
    // Gemm is float-only in runtimes' CPU kernels.
    if (op.inputs.size() != 2 || g_.info(op.inputs[0]).shape.size() != 2 || g_.info(op.inputs[1]).shape.size() != 2 ||
        g_.info(op.inputs[0]).dtype != DType::Float32 || g_.info(op.inputs[1]).dtype != DType::Float32)
      return;
    // MatMul then Add is left for the runtime to fuse into a Gemm with a bias.
    bool feeds_add = false;
    for (const TensorUse& u : readers({id, 0})) feeds_add = feeds_add || g_.op(u.op).type == OpType::Add;
    if (!(feeds_add && op.attrs.get_int(AttrKey::Activation, 0) == 0)) spelling_.matmul_as_gemm.insert(id);
  }

  // act(Concat(a, b, ...)) where each input is a conv (or a conv piece)
  // without an activation, read only by the Concat: the activation goes
  // into each conv, where runtimes fuse it.
  // Returns whether the activation is (now) moved.
  bool plan_activation(OpId id) {
    if (spelling_.activation_into_concat_inputs.count(id)) return true;
    const Op& op = g_.op(id);
    if (op.inputs.size() != 1 || op.outputs.size() != 1) return false;
    const OpId concat = op.inputs[0].op;
    const Op& c = g_.op(concat);
    std::optional<TensorUse> concat_reader = one_reader({concat, 0});
    if (c.type != OpType::Concat || constant_[concat] || !concat_reader || concat_reader->op != id) return false;
    // Applied only once every input qualifies. They point into
    // spelling_.conv_pieces, which does not change until they have run.
    std::vector<std::function<void()>> moves;
    std::set<TensorRef> seen;
    for (const TensorRef& ref : c.inputs) {
      std::optional<TensorUse> r = one_reader(ref);
      if (!r || r->op != concat || !seen.insert(ref).second) return false;
      const Op& producer = g_.op(ref.op);
      const Activation act = activation_of(op.type);
      if (producer.type == OpType::Conv && !spelling_.conv_pieces.count(ref.op) && !constant_[ref.op] &&
          producer.attrs.get_int(AttrKey::Activation, 0) == 0 && !spelling_.conv_activation.count(ref.op)) {
        moves.push_back([this, ref, act] { spelling_.conv_activation[ref.op] = act; });
        continue;
      }
      ExportSpelling::ConvPiece* piece = find_piece(ref);
      if (!piece || piece->activation != Activation::None) return false;
      moves.push_back([piece, act] { piece->activation = act; });
    }
    for (auto& move : moves) move();
    spelling_.activation_into_concat_inputs.insert(id);
    return true;
  }

  // The piece that writes `ref`, if a conv is written as pieces and its own
  // activation is none (a piece inherits the conv's).
  ExportSpelling::ConvPiece* find_piece(TensorRef ref) {
    if (!spelling_.split_written_as_pieces.count(ref.op)) return nullptr;
    for (auto& [conv, pieces] : spelling_.conv_pieces) {
      if (g_.op(conv).attrs.get_int(AttrKey::Activation, 0) != 0) continue;
      for (ExportSpelling::ConvPiece& piece : pieces)
        if (piece.out == ref) return &piece;
    }
    return nullptr;
  }

  const Graph& g_;
  const std::vector<bool>& live_;
  const std::vector<bool>& constant_;
  const Uses uses_;
  std::set<TensorRef> named_outputs_;
  ExportSpelling spelling_;
};

}  // namespace

ExportSpelling plan_export_spelling(const Graph& g, const std::vector<bool>& live, const std::vector<bool>& constant) {
  return SpellingPlanner(g, live, constant).plan();
}

namespace {

// The part of output channels [begin, end) of a kernel left after trimming
// zero border rows and columns the padding can absorb.
struct KernelWindow {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  std::vector<int64_t> pads;
  bool operator==(const KernelWindow& other) const = default;
};

KernelWindow trimmed_window(const TensorData& kernel, int64_t begin, int64_t end, const std::vector<int64_t>& pads,
                            const std::vector<int64_t>& dilations) {
  const Shape& s = kernel.shape();
  const int64_t in = s[1], kh = s[2], kw = s[3];
  const float* base = kernel.floats() + begin * in * kh * kw;
  const int64_t planes = (end - begin) * in;
  auto row_zero = [&](int64_t r) {
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t c = 0; c < kw; ++c)
        if (base[(p * kh + r) * kw + c] != 0.0f) return false;
    return true;
  };
  auto col_zero = [&](int64_t c) {
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t r = 0; r < kh; ++r)
        if (base[(p * kh + r) * kw + c] != 0.0f) return false;
    return true;
  };
  // Dropping a zero first row shifts the window down by one dilation step,
  // which the top padding must give up; a zero last row is paid by the
  // bottom padding. The output size is unchanged either way.
  KernelWindow w{0, kh, 0, kw, pads};
  const int64_t dh = dilations.size() > 0 ? dilations[0] : 1, dw = dilations.size() > 1 ? dilations[1] : 1;
  while (w.bottom - w.top > 1 && w.pads[0] >= dh && row_zero(w.top)) ++w.top, w.pads[0] -= dh;
  while (w.bottom - w.top > 1 && w.pads[2] >= dh && row_zero(w.bottom - 1)) --w.bottom, w.pads[2] -= dh;
  while (w.right - w.left > 1 && w.pads[1] >= dw && col_zero(w.left)) ++w.left, w.pads[1] -= dw;
  while (w.right - w.left > 1 && w.pads[3] >= dw && col_zero(w.right - 1)) --w.right, w.pads[3] -= dw;
  return w;
}

}  // namespace

std::shared_ptr<TensorData> conv_kernel_piece(const TensorData& kernel, int64_t begin, int64_t end,
                                              std::vector<int64_t>& pads, const std::vector<int64_t>& dilations) {
  const KernelWindow w = trimmed_window(kernel, begin, end, pads, dilations);
  pads = w.pads;
  const Shape& s = kernel.shape();
  const int64_t in = s[1], kh = s[2], kw = s[3];
  const float* base = kernel.floats() + begin * in * kh * kw;
  const int64_t planes = (end - begin) * in, rows = w.bottom - w.top, cols = w.right - w.left;
  auto piece = std::make_shared<TensorData>(DType::Float32, Shape{end - begin, in, rows, cols});
  float* out = piece->floats();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t r = w.top; r < w.bottom; ++r)
      std::memcpy(out + (p * rows + (r - w.top)) * cols, base + (p * kh + r) * kw + w.left,
                  static_cast<size_t>(cols) * sizeof(float));
  return piece;
}

std::vector<std::pair<int64_t, int64_t>> kernel_channel_runs(const TensorData& kernel, const std::vector<int64_t>& pads,
                                                             const std::vector<int64_t>& dilations) {
  const int64_t out_channels = kernel.shape()[0];
  std::vector<std::pair<int64_t, int64_t>> runs;
  KernelWindow current;
  for (int64_t o = 0; o < out_channels; ++o) {
    KernelWindow w = trimmed_window(kernel, o, o + 1, pads, dilations);
    if (runs.empty() || !(w == current)) {
      runs.push_back({o, o + 1});
      current = std::move(w);
    } else {
      runs.back().second = o + 1;
    }
  }
  // Only the structure a kernel merge leaves counts: a few runs of many
  // channels. Scattered zero rows (a pruned filter) are not worth a split.
  constexpr size_t kMaxRuns = 8;
  constexpr int64_t kMinRunChannels = 4;
  bool structured = runs.size() > 1 && runs.size() <= kMaxRuns;
  for (const auto& [begin, end] : runs) structured = structured && end - begin >= kMinRunChannels;
  if (!structured) return {{0, out_channels}};
  return runs;
}

}  // namespace graphworld
