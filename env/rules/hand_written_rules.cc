#include "env/rules/hand_written_rules.h"

#include <functional>
#include <optional>
#include <string>

#include "env/rules/rule_writer.h"

namespace graphworld {

namespace {

constexpr const char* kOrigin = "hand-written";
using Ints = std::vector<int64_t>;

DimTerm one() { return DimTerm::of_literal(1); }

// The conv attributes a rule passes through unchanged.
struct ConvParams {
  int32_t strides, pads, dilations;
};

ConvParams conv_params(RuleWriter& w) {
  return {w.param("s", AttrKey::Strides), w.param("p", AttrKey::Pads), w.param("d", AttrKey::Dilations)};
}

RuleWriter::AttrList conv_attrs(const ConvParams& p, AttrExpr activation) {
  return {{AttrKey::Strides, par(p.strides)},
          {AttrKey::Pads, par(p.pads)},
          {AttrKey::Dilations, par(p.dilations)},
          {AttrKey::Activation, std::move(activation)}};
}

// A conv of any group count (dense, grouped, depthwise) whose output channels
// the rule treats one by one: x [n, c, h, w] and kernel [o, cg, kh, kw] with
// c = g * cg. Rules that only scale, shift or activate each output channel
// hold for every g, so they should match ResNeXt's and MobileNet's convs too.
struct GroupedConv {
  DimTerm n, c, h, w, o, cg, kh, kw;
  int32_t groups;
  std::vector<DimTerm> input_shape() const { return {n, c, h, w}; }
  std::vector<DimTerm> kernel_shape() const { return {o, cg, kh, kw}; }
};

GroupedConv grouped_conv_dims(RuleWriter& w) {
  GroupedConv g{w.dim("n"), w.dim("c"), w.dim("h", DimDomain::Spatial), w.dim("w", DimDomain::Spatial),
                w.dim("o"), w.dim("cg"), w.dim("kh", DimDomain::Kernel), w.dim("kw", DimDomain::Kernel),
                w.param("g", AttrKey::Group)};
  w.constraint(ConstraintKind::GroupedChannels, {g.groups}, {g.c, g.cg, g.o});
  return g;
}

RuleWriter::AttrList with_groups(RuleWriter::AttrList attrs, const GroupedConv& g) {
  attrs.push_back({AttrKey::Group, par(g.groups)});
  return attrs;
}

// The input x and weight k of a conv a fold rewrites: a Conv of any group
// count, or a ConvTranspose of one group, whose weight is [c, o, kh, kw].
struct ConvOperands {
  DimTerm o;
  PatternRef x, k;
  std::optional<GroupedConv> groups;  // set for Conv
};

ConvOperands conv_operands(RuleWriter& w, bool transposed) {
  ConvOperands out;
  if (!transposed) {
    out.groups = grouped_conv_dims(w);
    out.o = out.groups->o;
    out.x = w.var("x", out.groups->input_shape());
    out.k = w.weight("k", out.groups->kernel_shape());
    return out;
  }
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  out.o = w.dim("o");
  DimTerm kh = w.dim("kh", DimDomain::Kernel), kw = w.dim("kw", DimDomain::Kernel);
  out.x = w.var("x", {n, c, h, wd});
  out.k = w.weight("k", {c, out.o, kh, kw});
  return out;
}

// BatchNorm(Conv(x, k[, b])) -> Conv(x, k * s, (b - mean) * s + beta) with
// s = gamma / sqrt(var + eps). The new weights are weight-only, so folded.
// The same for ConvTranspose (decoders and FPN necks): its weight is
// [c, o, kh, kw] (one group), so the scale runs along the weight's second axis.
Rule fold_batchnorm(OpType conv_type, bool conv_bias) {
  const bool transposed = conv_type == OpType::ConvTranspose;
  const std::string kind = transposed ? "fold-conv-transpose" : "fold-conv";
  RuleWriter w(kind + (conv_bias ? "-bias-batchnorm" : "-batchnorm"), kOrigin);
  const auto [o, x, k, groups] = conv_operands(w, transposed);
  PatternRef cb = conv_bias ? w.weight("b", {o}) : PatternRef{};
  PatternRef gamma = w.weight("gamma", {o}), beta = w.weight("beta", {o}), mean = w.weight("mean", {o});
  PatternRef variance = w.weight("var", {o}, /*positive=*/true);
  ConvParams p = conv_params(w);
  RuleWriter::AttrList attrs = conv_attrs(p, lit(int64_t{0}));
  if (groups) attrs = with_groups(std::move(attrs), *groups);
  if (transposed)
    attrs = {{AttrKey::Strides, par(p.strides)},
             {AttrKey::Pads, par(p.pads)},
             {AttrKey::Dilations, par(p.dilations)},
             {AttrKey::OutputPadding, par(w.param("op", AttrKey::OutputPadding))},
             {AttrKey::Group, lit(int64_t{1})}};
  int32_t eps = w.param("eps", AttrKey::Epsilon);
  std::vector<PatternRef> conv_in = {x, k};
  if (conv_bias) conv_in.push_back(cb);
  PatternRef conv = w.source(conv_type, conv_in, attrs);
  PatternRef bn = w.source(OpType::BatchNorm, {conv, gamma, beta, mean, variance}, {{AttrKey::Epsilon, par(eps)}});

  PatternRef eps_tensor = w.target_constant(par(eps), {one()});
  PatternRef stddev = w.target(OpType::Sqrt, {w.target(OpType::Add, {variance, eps_tensor})});
  PatternRef scale = w.target(OpType::Div, {gamma, stddev});
  const std::vector<DimTerm> scale_shape = transposed ? std::vector<DimTerm>{one(), o, one(), one()}
                                                      : std::vector<DimTerm>{o, one(), one(), one()};
  PatternRef scale4 = w.target(OpType::Reshape, {scale}, {{AttrKey::Shape, AttrExpr::of_dims(scale_shape)}});
  PatternRef k2 = w.target(OpType::Mul, {k, scale4});
  PatternRef shifted = conv_bias ? w.target(OpType::Sub, {cb, mean}) : PatternRef{};
  PatternRef b2 = conv_bias ? w.target(OpType::Add, {w.target(OpType::Mul, {shifted, scale}), beta})
                            : w.target(OpType::Sub, {beta, w.target(OpType::Mul, {mean, scale})});
  PatternRef fused = w.target(conv_type, {x, k2, b2}, attrs);
  w.output(bn, fused);
  return w.finish();
}

const std::pair<OpType, Activation> kActivations[] = {
    {OpType::Relu, Activation::Relu}, {OpType::Sigmoid, Activation::Sigmoid}, {OpType::Tanh, Activation::Tanh}};

const std::pair<OpType, Activation> kParametricActivations[] = {{OpType::HardSigmoid, Activation::HardSigmoid},
                                                                {OpType::HardSwish, Activation::HardSwish},
                                                                {OpType::LeakyRelu, Activation::LeakyRelu}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

// An activation fused into the conv it follows. The piecewise-linear ones
// mobile networks use carry their parameters (alpha, beta) along.
Rule fuse_conv_activation(OpType act_type, Activation act, bool bias) {
  RuleWriter w(std::string(bias ? "fuse-conv-bias-" : "fuse-conv-") + lower(op_type_name(act_type)), kOrigin);
  const GroupedConv g = grouped_conv_dims(w);
  PatternRef x = w.var("x", g.input_shape());
  PatternRef k = w.var("k", g.kernel_shape());
  std::vector<PatternRef> in = {x, k};
  if (bias) in.push_back(w.var("b", {g.o}));
  ConvParams p = conv_params(w);
  RuleWriter::AttrList act_attrs, fused = with_groups(conv_attrs(p, lit(static_cast<int64_t>(act))), g);
  if (act_type == OpType::HardSigmoid || act_type == OpType::LeakyRelu) {
    int32_t alpha = w.param("alpha", AttrKey::Alpha);
    act_attrs.push_back({AttrKey::Alpha, par(alpha)});
    fused.push_back({AttrKey::ActivationAlpha, par(alpha)});
  }
  if (act_type == OpType::HardSigmoid) {
    int32_t beta = w.param("beta", AttrKey::Beta);
    act_attrs.push_back({AttrKey::Beta, par(beta)});
    fused.push_back({AttrKey::ActivationBeta, par(beta)});
  }
  PatternRef conv = w.source(OpType::Conv, in, with_groups(conv_attrs(p, lit(int64_t{0})), g));
  PatternRef activated = w.source(act_type, {conv}, act_attrs);
  w.output(activated, w.target(OpType::Conv, in, fused));
  return w.finish();
}

// Add(Conv(x, k), b) with b [1, o, 1, 1] -> Conv(x, k, b as [o]): exporters
// such as paddle2onnx write a conv's (and a transposed conv's) bias as a
// separate Add, which hides the conv from BatchNorm folding and activation
// fusion. A conv of any group count (weight [o, c/g, kh, kw]); a transposed
// conv of one group (weight [c, o, kh, kw]).
Rule fold_add_into_conv_bias(OpType conv_type) {
  const bool transposed = conv_type == OpType::ConvTranspose;
  RuleWriter w(transposed ? "fold-add-into-conv-transpose-bias" : "fold-add-into-conv-bias", kOrigin);
  const auto [o, x, k, groups] = conv_operands(w, transposed);
  PatternRef b = w.weight("b", {one(), o, one(), one()});
  RuleWriter::AttrList attrs = {{AttrKey::Strides, par(w.param("s", AttrKey::Strides))},
                                {AttrKey::Pads, par(w.param("p", AttrKey::Pads))},
                                {AttrKey::Dilations, par(w.param("d", AttrKey::Dilations))},
                                {AttrKey::Activation, lit(int64_t{0})}};
  if (groups) attrs = with_groups(std::move(attrs), *groups);
  if (transposed) attrs.push_back({AttrKey::OutputPadding, par(w.param("op", AttrKey::OutputPadding))});
  PatternRef conv = w.source(conv_type, {x, k}, attrs);
  PatternRef added = w.source(OpType::Add, {conv, b});
  PatternRef bias = w.target(OpType::Reshape, {b}, {{AttrKey::Shape, AttrExpr::of_dims({o})}});
  w.output(added, w.target(conv_type, {x, k, bias}, attrs));
  return w.finish();
}

// x [..., m, k] @ w [k, n], rank 2 or 3 (BERT's projections are rank 3).
std::vector<DimTerm> matmul_lhs(RuleWriter& w, int rank, DimTerm k) {
  std::vector<DimTerm> shape;
  if (rank == 3) shape.push_back(w.dim("b"));
  shape.push_back(w.dim("m"));
  shape.push_back(k);
  return shape;
}

Rule fuse_matmul_activation(OpType act_type, Activation act, int rank) {
  RuleWriter w("fuse-matmul-rank" + std::to_string(rank) + "-" + lower(op_type_name(act_type)), kOrigin);
  DimTerm k = w.dim("k"), n = w.dim("n");
  PatternRef x = w.var("x", matmul_lhs(w, rank, k));
  PatternRef y = w.var("y", {k, n});
  PatternRef mm = w.source(OpType::MatMul, {x, y}, {{AttrKey::Activation, lit(int64_t{0})}});
  PatternRef activated = w.source(act_type, {mm});
  w.output(activated, w.target(OpType::MatMul, {x, y}, {{AttrKey::Activation, lit(static_cast<int64_t>(act))}}));
  return w.finish();
}

// The merged target's outputs: split `merged` along `axis` into sizes
// `first` and `second`, which replace `out1` and `out2`.
void split_into(RuleWriter& w, PatternRef merged, int64_t axis, DimTerm first, DimTerm second, PatternRef out1,
                PatternRef out2) {
  PatternRef split = w.target(OpType::Split, {merged},
                              {{AttrKey::Axis, lit(axis)}, {AttrKey::Split, AttrExpr::of_dims({first, second})}}, 2);
  w.output(out1, split);
  w.output(out2, RuleWriter::out(split, 1));
}

// The inputs of two convs reading one input `x` with kernels k1 [o1, ..]
// and k2 [o2, ..] and, with `bias`, biases b1 [o1] and b2 [o2], which this
// declares; and those of the conv that merges them.
struct SiblingConvInputs {
  PatternRef x, k2, b1, b2;
  bool bias = false;
  std::vector<PatternRef> first, second;  // each conv's inputs
  // The merged conv's: x, `k1` (the first kernel as the merged conv takes
  // it) and k2 concatenated, and with bias the biases concatenated.
  std::vector<PatternRef> merged(RuleWriter& w, PatternRef k1) const {
    std::vector<PatternRef> inputs = {x, w.target(OpType::Concat, {k1, k2}, {{AttrKey::Axis, lit(int64_t{0})}})};
    if (bias) inputs.push_back(w.target(OpType::Concat, {b1, b2}, {{AttrKey::Axis, lit(int64_t{0})}}));
    return inputs;
  }
};

SiblingConvInputs sibling_conv_inputs(RuleWriter& w, PatternRef x, PatternRef k1, PatternRef k2, DimTerm o1, DimTerm o2,
                                      bool bias) {
  SiblingConvInputs in;
  in.x = x;
  in.k2 = k2;
  in.bias = bias;
  in.first = {x, k1};
  in.second = {x, k2};
  if (bias) {
    in.first.push_back(in.b1 = w.weight("b1", {o1}));
    in.second.push_back(in.b2 = w.weight("b2", {o2}));
  }
  return in;
}

// Two convs reading one input with the same strides and activation: one conv
// over the concatenated weights, then a split. Without `enlarge` the kernels
// have one size and any pads and dilations (shared); with it they are odd
// sizes with "same" padding, and the first kernel is zero-padded to the
// second's size, which keeps every output in place.
Rule merge_parallel_convs(bool bias, bool enlarge) {
  RuleWriter w(std::string("merge-parallel-convs") + (enlarge ? "-enlarge" : "") + (bias ? "-bias" : ""), kOrigin);
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm o1 = w.dim("o1"), o2 = w.dim("o2");
  const DimDomain domain = enlarge ? DimDomain::OddKernel : DimDomain::Kernel;
  DimTerm kh1 = w.dim(enlarge ? "kh1" : "kh", domain), kw1 = w.dim(enlarge ? "kw1" : "kw", domain);
  DimTerm kh2 = enlarge ? w.dim("kh2", domain) : kh1, kw2 = enlarge ? w.dim("kw2", domain) : kw1;
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k1 = w.weight("k1", {o1, c, kh1, kw1}), k2 = w.weight("k2", {o2, c, kh2, kw2});
  const SiblingConvInputs in = sibling_conv_inputs(w, x, k1, k2, o1, o2, bias);
  // Attributes of a conv with kernel (kh, kw).
  std::function<RuleWriter::AttrList(DimTerm, DimTerm)> attrs;
  if (enlarge) {
    int32_t s = w.param("s", AttrKey::Strides), a = w.param("a", AttrKey::Activation);
    attrs = [s, a](DimTerm kh, DimTerm kw) {
      return RuleWriter::AttrList{{AttrKey::Strides, par(s)},
                                  {AttrKey::Pads, AttrExpr::same_pads({kh, kw})},
                                  {AttrKey::Activation, par(a)}};
    };
  } else {
    ConvParams p = conv_params(w);
    int32_t a = w.param("a", AttrKey::Activation);
    attrs = [p, a](DimTerm, DimTerm) { return conv_attrs(p, par(a)); };
  }
  PatternRef c1 = w.source(OpType::Conv, in.first, attrs(kh1, kw1));
  PatternRef c2 = w.source(OpType::Conv, in.second, attrs(kh2, kw2));
  PatternRef first = enlarge ? w.target(OpType::EnlargeKernel, {k1}, {{AttrKey::KernelShape, AttrExpr::of_dims({kh2, kw2})}})
                             : k1;
  split_into(w, w.target(OpType::Conv, in.merged(w, first), attrs(kh2, kw2)), 1, o1, o2, c1, c2);
  return w.finish();
}

Rule merge_parallel_matmuls(int rank) {
  RuleWriter w("merge-parallel-matmuls-rank" + std::to_string(rank), kOrigin);
  DimTerm k = w.dim("k"), n1 = w.dim("n1"), n2 = w.dim("n2");
  PatternRef x = w.var("x", matmul_lhs(w, rank, k));
  PatternRef y1 = w.weight("y1", {k, n1}), y2 = w.weight("y2", {k, n2});
  int32_t a = w.param("a", AttrKey::Activation);
  PatternRef m1 = w.source(OpType::MatMul, {x, y1}, {{AttrKey::Activation, par(a)}});
  PatternRef m2 = w.source(OpType::MatMul, {x, y2}, {{AttrKey::Activation, par(a)}});
  PatternRef y = w.target(OpType::Concat, {y1, y2}, {{AttrKey::Axis, lit(int64_t{1})}});
  PatternRef mm = w.target(OpType::MatMul, {x, y}, {{AttrKey::Activation, par(a)}});
  split_into(w, mm, rank - 1, n1, n2, m1, m2);
  return w.finish();
}

// Two convs of the same shape on two inputs -> one conv with two groups over
// the concatenated inputs. With `concat_outputs` the source concatenates the
// two results (as Inception's branches do) and no split is needed.
Rule merge_grouped_convs(bool concat_outputs) {
  RuleWriter w(concat_outputs ? "merge-grouped-convs-concat" : "merge-grouped-convs", kOrigin);
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm o = w.dim("o"), kh = w.dim("kh", DimDomain::Kernel), kw = w.dim("kw", DimDomain::Kernel);
  PatternRef x1 = w.var("x1", {n, c, h, wd}), x2 = w.var("x2", {n, c, h, wd});
  PatternRef k1 = w.weight("k1", {o, c, kh, kw}), k2 = w.weight("k2", {o, c, kh, kw});
  ConvParams p = conv_params(w);
  int32_t a = w.param("a", AttrKey::Activation);
  PatternRef c1 = w.source(OpType::Conv, {x1, k1}, conv_attrs(p, par(a)));
  PatternRef c2 = w.source(OpType::Conv, {x2, k2}, conv_attrs(p, par(a)));
  PatternRef xs = w.target(OpType::Concat, {x1, x2}, {{AttrKey::Axis, lit(int64_t{1})}});
  PatternRef ks = w.target(OpType::Concat, {k1, k2}, {{AttrKey::Axis, lit(int64_t{0})}});
  RuleWriter::AttrList grouped = conv_attrs(p, par(a));
  grouped.push_back({AttrKey::Group, lit(int64_t{2})});
  PatternRef conv = w.target(OpType::Conv, {xs, ks}, grouped);
  if (concat_outputs) {
    w.output(w.source(OpType::Concat, {c1, c2}, {{AttrKey::Axis, lit(int64_t{1})}}), conv);
  } else {
    split_into(w, conv, 1, o, o, c1, c2);
  }
  return w.finish();
}

std::vector<DimTerm> dims_of_rank(RuleWriter& w, int rank) {
  std::vector<DimTerm> shape;
  for (int i = 0; i < rank; ++i) shape.push_back(w.dim("d" + std::to_string(i)));
  return shape;
}

enum class PairRewrite { Cancel, Compose };

Rule transpose_pair(PairRewrite kind, int rank) {
  RuleWriter w(std::string(kind == PairRewrite::Cancel ? "cancel" : "compose") + "-transposes-rank" +
                   std::to_string(rank),
               kOrigin);
  PatternRef x = w.var("x", dims_of_rank(w, rank));
  int32_t p1 = w.param("p1", AttrKey::Perm), p2 = w.param("p2", AttrKey::Perm);
  PatternRef t1 = w.source(OpType::Transpose, {x}, {{AttrKey::Perm, par(p1)}});
  PatternRef t2 = w.source(OpType::Transpose, {t1}, {{AttrKey::Perm, par(p2)}});
  if (kind == PairRewrite::Cancel) {
    w.constraint(ConstraintKind::InversePerms, {p1, p2});
    w.output(t2, x);
  } else {
    w.output(t2, w.target(OpType::Transpose, {x}, {{AttrKey::Perm, AttrExpr::compose_perm(p1, p2)}}));
  }
  return w.finish();
}

Rule remove_identity_transpose(int rank) {
  RuleWriter w("remove-identity-transpose-rank" + std::to_string(rank), kOrigin);
  PatternRef x = w.var("x", dims_of_rank(w, rank));
  int32_t p = w.param("p", AttrKey::Perm);
  w.constraint(ConstraintKind::IdentityPerm, {p});
  w.output(w.source(OpType::Transpose, {x}, {{AttrKey::Perm, par(p)}}), x);
  return w.finish();
}

// Reshape(Reshape(x, s1), s2): reshapes read memory in order, so only s2
// matters. When s2 is x's own shape the pair disappears.
Rule reshape_pair(PairRewrite kind, int rank) {
  RuleWriter w(std::string(kind == PairRewrite::Cancel ? "cancel" : "compose") + "-reshapes-rank" +
                   std::to_string(rank),
               kOrigin);
  PatternRef x = w.var("x", dims_of_rank(w, rank));
  int32_t s1 = w.param("s1", AttrKey::Shape), s2 = w.param("s2", AttrKey::Shape);
  PatternRef r1 = w.source(OpType::Reshape, {x}, {{AttrKey::Shape, par(s1)}});
  PatternRef r2 = w.source(OpType::Reshape, {r1}, {{AttrKey::Shape, par(s2)}});
  if (kind == PairRewrite::Cancel) {
    w.output(r2, x);
  } else {
    w.output(r2, w.target(OpType::Reshape, {x}, {{AttrKey::Shape, par(s2)}}));
  }
  return w.finish();
}

Rule cancel_split_concat(int rank) {
  RuleWriter w("cancel-split-concat-rank" + std::to_string(rank), kOrigin);
  PatternRef x = w.var("x", dims_of_rank(w, rank));
  int32_t axis = w.param("axis", AttrKey::Axis), sizes = w.param("sizes", AttrKey::Split);
  PatternRef split = w.source(OpType::Split, {x}, {{AttrKey::Axis, par(axis)}, {AttrKey::Split, par(sizes)}}, 2);
  PatternRef concat = w.source(OpType::Concat, {split, RuleWriter::out(split, 1)}, {{AttrKey::Axis, par(axis)}});
  w.output(concat, x);
  return w.finish();
}

// Two tensors of one rank that differ only along the feature axis: channels
// for images (axis 1 of rank 4), the last axis otherwise.
struct FeaturePieces {
  int axis;
  DimTerm first, second;  // their sizes along it
  std::vector<DimTerm> first_shape, second_shape;
};

FeaturePieces feature_pieces(RuleWriter& w, int rank, const char* first, const char* second) {
  FeaturePieces p{rank == 4 ? 1 : rank - 1, DimTerm::of_literal(1), DimTerm::of_literal(1), dims_of_rank(w, rank), {}};
  p.second_shape = p.first_shape;
  p.first = w.dim(first);
  p.second = w.dim(second);
  p.first_shape[static_cast<size_t>(p.axis)] = p.first;
  p.second_shape[static_cast<size_t>(p.axis)] = p.second;
  return p;
}

Rule cancel_concat_split(int rank) {
  RuleWriter w("cancel-concat-split-rank" + std::to_string(rank), kOrigin);
  const FeaturePieces pieces = feature_pieces(w, rank, "cx", "cy");
  const int axis = pieces.axis;
  const DimTerm cx = pieces.first, cy = pieces.second;
  PatternRef x = w.var("x", pieces.first_shape), y = w.var("y", pieces.second_shape);
  PatternRef concat = w.source(OpType::Concat, {x, y}, {{AttrKey::Axis, lit(int64_t{axis})}});
  PatternRef split = w.source(OpType::Split, {concat},
                              {{AttrKey::Axis, lit(int64_t{axis})}, {AttrKey::Split, AttrExpr::of_dims({cx, cy})}}, 2);
  w.output(split, x);
  w.output(RuleWriter::out(split, 1), y);
  return w.finish();
}

// Two elementwise ops on sibling inputs (two outputs of one op, such as the
// pieces of a merged matmul or conv) -> one op over the inputs concatenated
// along the feature axis (channels for images), then a split. On a GPU that
// is one launch for two, paid for with a Concat of the inputs: a loss on its
// own, and a gain once the Concat meets the Split it undoes
// (cancel-split-concat). TASO composes its merges the same way; the sibling
// constraint keeps the pairs to those whose Concat can be undone, so the
// matches grow with the graph, not with its square.
// `bias`: the second operands are weight vectors along that axis (rank 3
// only), concatenated once, for free.
Rule merge_parallel_elementwise(OpType type, int rank, bool bias) {
  const bool binary = type == OpType::Add || type == OpType::Mul;
  RuleWriter w("merge-parallel-" + lower(op_type_name(type)) + (bias ? "-bias" : "") + "-rank" + std::to_string(rank),
               kOrigin);
  const FeaturePieces pieces = feature_pieces(w, rank, "n1", "n2");
  const int axis = pieces.axis;
  const DimTerm n1 = pieces.first, n2 = pieces.second;
  const std::vector<DimTerm>& shape1 = pieces.first_shape;
  const std::vector<DimTerm>& shape2 = pieces.second_shape;
  PatternRef x1 = w.var("x1", shape1), x2 = w.var("x2", shape2);
  w.siblings(x1, x2);
  const RuleWriter::AttrList along = {{AttrKey::Axis, lit(int64_t{axis})}};
  PatternRef xs = w.target(OpType::Concat, {x1, x2}, along);
  if (!binary) {
    PatternRef a = w.source(type, {x1}), b = w.source(type, {x2});
    split_into(w, w.target(type, {xs}), axis, n1, n2, a, b);
    return w.finish();
  }
  PatternRef y1 = bias ? w.weight("y1", {n1}) : w.var("y1", shape1);
  PatternRef y2 = bias ? w.weight("y2", {n2}) : w.var("y2", shape2);
  PatternRef a = w.source(type, {x1, y1}), b = w.source(type, {x2, y2});
  PatternRef ys = w.target(OpType::Concat, {y1, y2}, {{AttrKey::Axis, lit(int64_t{bias ? 0 : axis})}});
  split_into(w, w.target(type, {xs, ys}), axis, n1, n2, a, b);
  return w.finish();
}

// Conv1x1(AvgPool(x)) -> AvgPool(Conv1x1(x)), the conv's activation
// applied after the pool. A 1x1 conv without bias mixes channels pixel by
// pixel and an average pool mixes pixels channel by channel; both are
// linear and map zero padding to zero, so they commute for any pool window,
// stride, padding and count_include_pad, and any group count. Inception's
// pooling branches pool the block's input and then narrow it (768 -> 192
// channels): pooling after the conv reads a quarter of the channels, and
// the conv then reads the block's input like the block's other 1x1 convs,
// so it can merge with them.
Rule commute_avgpool_conv1x1(OpType act_type, Activation act) {
  const bool activated = act != Activation::None;
  RuleWriter w(std::string("commute-avgpool-conv1x1") + (activated ? "-" + lower(op_type_name(act_type)) : ""), kOrigin);
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm o = w.dim("o"), cg = w.dim("cg");
  const int32_t g = w.param("g", AttrKey::Group);
  w.constraint(ConstraintKind::GroupedChannels, {g}, {c, cg, o});
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k = w.var("k", {o, cg, one(), one()});
  const RuleWriter::AttrList pool_attrs = {{AttrKey::KernelShape, par(w.param("ks", AttrKey::KernelShape))},
                                           {AttrKey::Strides, par(w.param("ps", AttrKey::Strides))},
                                           {AttrKey::Pads, par(w.param("pp", AttrKey::Pads))},
                                           {AttrKey::CountIncludePad, par(w.param("cip", AttrKey::CountIncludePad))},
                                           {AttrKey::CeilMode, par(w.param("ceil", AttrKey::CeilMode))}};
  const int32_t d = w.param("d", AttrKey::Dilations);
  auto conv_attrs_with = [&](Activation a) {
    return RuleWriter::AttrList{{AttrKey::Strides, lit(Ints{1, 1})},
                                {AttrKey::Pads, lit(Ints{0, 0, 0, 0})},
                                {AttrKey::Dilations, par(d)},
                                {AttrKey::Group, par(g)},
                                {AttrKey::Activation, lit(static_cast<int64_t>(a))}};
  };
  PatternRef pooled = w.source(OpType::AvgPool, {x}, pool_attrs);
  PatternRef conv = w.source(OpType::Conv, {pooled, k}, conv_attrs_with(act));
  PatternRef target = w.target(OpType::AvgPool, {w.target(OpType::Conv, {x, k}, conv_attrs_with(Activation::None))},
                               pool_attrs);
  if (activated) target = w.target(act_type, {target});
  w.output(conv, target);
  return w.finish();
}

// Two convs reading one input with the same window, one with a fused
// activation and one without -> one conv without it, split, and the
// activation applied to the first piece. What merge-parallel-convs does
// for convs that differ in activation, paying a separate activation kernel
// for the launch it saves (after commute-avgpool-conv1x1 the pooling
// branch's conv has handed its Relu to the pool).
Rule merge_parallel_convs_mixed_activation(OpType act_type, Activation act, bool bias) {
  RuleWriter w("merge-parallel-convs-" + lower(op_type_name(act_type)) + "-and-none" + (bias ? "-bias" : ""), kOrigin);
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm o1 = w.dim("o1"), o2 = w.dim("o2");
  DimTerm kh = w.dim("kh", DimDomain::Kernel), kw = w.dim("kw", DimDomain::Kernel);
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k1 = w.weight("k1", {o1, c, kh, kw}), k2 = w.weight("k2", {o2, c, kh, kw});
  const SiblingConvInputs in = sibling_conv_inputs(w, x, k1, k2, o1, o2, bias);
  const ConvParams p = conv_params(w);
  PatternRef c1 = w.source(OpType::Conv, in.first, conv_attrs(p, lit(static_cast<int64_t>(act))));
  PatternRef c2 = w.source(OpType::Conv, in.second, conv_attrs(p, lit(int64_t{0})));
  PatternRef conv = w.target(OpType::Conv, in.merged(w, k1), conv_attrs(p, lit(int64_t{0})));
  PatternRef split = w.target(OpType::Split, {conv},
                              {{AttrKey::Axis, lit(int64_t{1})}, {AttrKey::Split, AttrExpr::of_dims({o1, o2})}}, 2);
  w.output(c1, w.target(act_type, {split}));
  w.output(c2, RuleWriter::out(split, 1));
  return w.finish();
}


// Two sibling projections (the pieces of one merged matmul), each viewed as
// heads [b, s, h, d] and transposed to [b, h, s, d]: one view of both as
// [b, s, 2, h, d], one transpose to [2, b, h, s, d] and a split. Frameworks
// do the same when they permute a fused q/k/v projection once. The Concat
// it adds meets the Split of the merged matmul (cancel-split-concat), so on
// a GPU two transposes become one. In a transformer layer q and v share
// this permutation and k does not, so the rule pays only where q merged
// with v first: a choice that greedy search, which merges q with k, misses.
Rule merge_parallel_head_transposes() {
  RuleWriter w("merge-parallel-head-transposes", kOrigin);
  DimTerm b = w.dim("b"), s = w.dim("s"), n = w.dim("n"), h = w.dim("h"), d = w.dim("d");
  w.constraint(ConstraintKind::DimProduct, {}, {n, h, d});
  PatternRef x1 = w.var("x1", {b, s, n}), x2 = w.var("x2", {b, s, n});
  w.siblings(x1, x2);
  const RuleWriter::AttrList heads = {{AttrKey::Shape, AttrExpr::of_dims({b, s, h, d})}};
  const RuleWriter::AttrList swap_tokens_and_heads = {{AttrKey::Perm, ints({0, 2, 1, 3})}};
  PatternRef t1 = w.source(OpType::Transpose, {w.source(OpType::Reshape, {x1}, heads)}, swap_tokens_and_heads);
  PatternRef t2 = w.source(OpType::Transpose, {w.source(OpType::Reshape, {x2}, heads)}, swap_tokens_and_heads);
  PatternRef both = w.target(OpType::Concat, {x1, x2}, {{AttrKey::Axis, lit(int64_t{2})}});
  PatternRef viewed = w.target(OpType::Reshape, {both},
                               {{AttrKey::Shape, AttrExpr::of_dims({b, s, DimTerm::of_literal(2), h, d})}});
  PatternRef moved = w.target(OpType::Transpose, {viewed}, {{AttrKey::Perm, ints({2, 0, 3, 1, 4})}});
  PatternRef split = w.target(OpType::Split, {moved},
                              {{AttrKey::Axis, lit(int64_t{0})}, {AttrKey::Split, AttrExpr::of_dims({one(), one()})}}, 2);
  const RuleWriter::AttrList per_piece = {{AttrKey::Shape, AttrExpr::of_dims({b, h, s, d})}};
  w.output(t1, w.target(OpType::Reshape, {split}, per_piece));
  w.output(t2, w.target(OpType::Reshape, {RuleWriter::out(split, 1)}, per_piece));
  return w.finish();
}

}  // namespace

std::vector<Rule> hand_written_rules() {
  std::vector<Rule> rules;
  rules.push_back(fold_batchnorm(OpType::Conv, false));
  rules.push_back(fold_batchnorm(OpType::Conv, true));
  for (const auto& [type, act] : kActivations) {
    rules.push_back(fuse_conv_activation(type, act, false));
    rules.push_back(fuse_conv_activation(type, act, true));
    rules.push_back(fuse_matmul_activation(type, act, 2));
    rules.push_back(fuse_matmul_activation(type, act, 3));
  }
  for (const auto& [type, act] : kParametricActivations) {
    rules.push_back(fuse_conv_activation(type, act, false));
    rules.push_back(fuse_conv_activation(type, act, true));
  }
  rules.push_back(fold_batchnorm(OpType::ConvTranspose, false));
  rules.push_back(fold_batchnorm(OpType::ConvTranspose, true));
  rules.push_back(fold_add_into_conv_bias(OpType::Conv));
  rules.push_back(fold_add_into_conv_bias(OpType::ConvTranspose));
  for (bool enlarge : {false, true})
    for (bool bias : {false, true}) rules.push_back(merge_parallel_convs(bias, enlarge));
  rules.push_back(merge_parallel_matmuls(2));
  rules.push_back(merge_parallel_matmuls(3));
  rules.push_back(commute_avgpool_conv1x1(OpType::Identity, Activation::None));
  for (const auto& [type, act] : kActivations) {
    rules.push_back(commute_avgpool_conv1x1(type, act));
    for (bool bias : {false, true}) rules.push_back(merge_parallel_convs_mixed_activation(type, act, bias));
  }
  rules.push_back(merge_grouped_convs(false));
  rules.push_back(merge_grouped_convs(true));
  for (int rank = 2; rank <= 4; ++rank) {
    rules.push_back(transpose_pair(PairRewrite::Cancel, rank));
    rules.push_back(transpose_pair(PairRewrite::Compose, rank));
    rules.push_back(remove_identity_transpose(rank));
    rules.push_back(reshape_pair(PairRewrite::Cancel, rank));
    rules.push_back(reshape_pair(PairRewrite::Compose, rank));
    rules.push_back(cancel_split_concat(rank));
    rules.push_back(cancel_concat_split(rank));
  }
  // Sibling merges over rank 3 (a transformer's [batch, tokens, features])
  // and rank 4 (a CNN's NCHW maps). Rank 2 (an RNN cell's [batch, hidden]
  // gates) is left out: on NasRNN it opens no path greedy or TASO's search
  // takes (both 12.94% with it and without, --cost gpu), and it multiplies
  // the merge -> cancel -> fuse chains of random play past what the world
  // model predicts (held-out mask F1 0.985 with it, 0.990 without;
  // tests/worldmodel/world_model_test.cc).
  for (int rank = 3; rank <= 4; ++rank) {
    for (OpType type : {OpType::Add, OpType::Mul, OpType::Relu, OpType::Sigmoid, OpType::Tanh})
      rules.push_back(merge_parallel_elementwise(type, rank, false));
    if (rank < 4)
      for (OpType type : {OpType::Add, OpType::Mul}) rules.push_back(merge_parallel_elementwise(type, rank, true));
  }
  rules.push_back(merge_parallel_head_transposes());
  return rules;
}

}  // namespace graphworld
