#include "env/rules/rule_generator.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "common/error.h"
#include "env/graph/hashing.h"
#include "env/ops/op_schema.h"
#include "env/rules/hand_written_rules.h"
#include "env/rules/modular_eval.h"
#include "env/rules/rule_constant.h"
#include "env/rules/rule_instance.h"

namespace graphworld {

namespace {

using Ints = std::vector<int64_t>;
const DimTerm kUnknown = DimTerm::of_literal(0);  // a size no symbol names (concat sums, strided outputs)

bool known(const DimTerm& d) { return d.is_symbol() || d.literal > 0; }

// ---- worlds ---------------------------------------------------------------

enum class WorldKind { Conv, MatMul };

struct World {
  std::string name;
  WorldKind kind;
  int rank;  // of activations
  std::vector<DimSymbol> dims;
  std::vector<int64_t> sizes;  // per dim symbol, for fingerprints
  std::vector<RuleVar> vars;
  std::vector<int32_t> kernel_dims;  // conv worlds: the kernel symbols (kah, kaw, kbh, kbw)
};

DimTerm sym(int32_t s) { return DimTerm::of_symbol(s); }

World conv_world(const std::string& name, int64_t kah, int64_t kaw, int64_t kbh, int64_t kbw) {
  World w{name, WorldKind::Conv, 4, {}, {}, {}, {}};
  auto add_dim = [&](const char* n, DimDomain d, int64_t size) {
    w.dims.push_back({n, d});
    w.sizes.push_back(size);
    return static_cast<int32_t>(w.dims.size() - 1);
  };
  int32_t n = add_dim("n", DimDomain::Any, 1), c = add_dim("c", DimDomain::Any, 3);
  int32_t h = add_dim("h", DimDomain::Spatial, 6), wd = add_dim("w", DimDomain::Spatial, 7);
  int32_t ah = add_dim("kh1", DimDomain::OddKernel, kah), aw = add_dim("kw1", DimDomain::OddKernel, kaw);
  int32_t bh = add_dim("kh2", DimDomain::OddKernel, kbh), bw = add_dim("kw2", DimDomain::OddKernel, kbw);
  w.kernel_dims = {ah, aw, bh, bw};
  w.vars = {{"x", false, false, {sym(n), sym(c), sym(h), sym(wd)}},
            {"y", false, false, {sym(n), sym(c), sym(h), sym(wd)}},
            {"k1", true, false, {sym(c), sym(c), sym(ah), sym(aw)}},
            {"k2", true, false, {sym(c), sym(c), sym(bh), sym(bw)}},
            {"s", true, false, {DimTerm::of_literal(1)}}};
  return w;
}

World matmul_world(const std::string& name, int rank) {
  World w{name, WorldKind::MatMul, rank, {}, {}, {}, {}};
  auto add_dim = [&](const char* n, int64_t size) {
    w.dims.push_back({n, DimDomain::Any});
    w.sizes.push_back(size);
    return static_cast<int32_t>(w.dims.size() - 1);
  };
  std::vector<DimTerm> act;
  if (rank == 3) act.push_back(sym(add_dim("b", 2)));
  act.push_back(sym(add_dim("m", 3)));
  DimTerm k = sym(add_dim("k", 4));
  act.push_back(k);
  w.vars = {{"x", false, false, act},
            {"y", false, false, act},
            {"w1", true, false, {k, k}},
            {"w2", true, false, {k, k}},
            {"s", true, false, {DimTerm::of_literal(1)}}};
  return w;
}

// ---- enumeration ------------------------------------------------------------

struct Tensor {
  PatternRef ref;
  std::vector<DimTerm> sym;
  TensorInfo info;
  bool weight_only = false;
  std::string expr;
  uint64_t hash = 0;
  int uses = 0;
};

struct GraphRecord {
  std::vector<PatternOp> ops;
  std::vector<PatternRef> sinks;  // sorted by hash
  std::vector<uint64_t> sink_hashes;
  std::vector<std::string> op_exprs;
  std::vector<uint64_t> output_operands;  // single-output graphs: value hashes of the output op's inputs
  uint32_t var_mask = 0;
  size_t computing_ops = 0;  // ops whose outputs are not weight-only (weight-only ops fold away)
};

std::string attr_text(const World& world, const PatternOp& op) {
  std::string s;
  for (const auto& [key, e] : op.attrs) {
    s += std::string(attr_key_name(key)) + "=";
    if (e.kind == AttrExprKind::Literal) {
      s += attr_value_to_string(key, e.literal);
    } else {
      for (const DimTerm& d : e.dims) s += d.is_symbol() ? world.dims[static_cast<size_t>(d.symbol)].name : std::to_string(d.literal);
    }
    s += ";";
  }
  return s;
}

class Enumerator {
 public:
  Enumerator(const World& world, const GeneratorOptions& options, GeneratorStats& stats)
      : world_(world), options_(options), stats_(stats) {
    binding_.dims = world.sizes;
    std::mt19937_64 rng(0x5eed ^ std::hash<std::string>{}(world.name));
    for (size_t v = 0; v < world.vars.size(); ++v) {
      Tensor t;
      t.ref = PatternRef::of_var(static_cast<int32_t>(v));
      t.sym = world.vars[v].shape;
      for (const DimTerm& d : t.sym) t.info.shape.push_back(d.is_symbol() ? world.sizes[static_cast<size_t>(d.symbol)] : d.literal);
      t.weight_only = world.vars[v].weight;
      t.expr = world.vars[v].name;
      ModTensor value{t.info.shape, std::vector<int64_t>(static_cast<size_t>(t.info.numel()))};
      for (int64_t& x : value.values) x = static_cast<int64_t>(rng() % static_cast<uint64_t>(kFingerprintPrime));
      t.hash = mod_tensor_hash(value);
      tensors_.push_back(t);
      values_.push_back(std::move(value));
      // The bare variable is a 0-op graph: rules may rewrite to it.
      if (!t.weight_only) {
        GraphRecord r;
        r.sinks = {t.ref};
        r.sink_hashes = {t.hash};
        r.var_mask = 1u << v;
        buckets_[t.hash].push_back(std::move(r));
      }
    }
  }

  void run() {
    extend(0);
  }

  std::unordered_map<uint64_t, std::vector<GraphRecord>>& buckets() { return buckets_; }

 private:
  void extend(int depth) {
    if (depth >= options_.max_ops || stop_) return;
    for (const Candidate& c : candidates()) {
      if (stop_) return;
      if (!push(c)) continue;
      const std::string key = graph_key();
      if (visited_.insert(key).second) {
        ++stats_.graphs;
        if (stats_.graphs % 200000 == 0 && options_.progress)
          options_.progress("  " + world_.name + ": " + std::to_string(stats_.graphs) + " graphs");
        if (visited_.size() >= options_.max_graphs_per_world) {
          stop_ = true;
          stats_.truncated = true;
        }
        record();
        extend(depth + 1);
      }
      pop();
    }
  }

  struct Candidate {
    PatternOp op;
    std::vector<std::vector<DimTerm>> out_syms;
  };

  bool is_act(const Tensor& t) const { return !t.weight_only && t.info.rank() == world_.rank; }

  static void add_candidate(std::vector<Candidate>& out, OpType type, std::vector<PatternRef> in,
                     std::vector<std::pair<AttrKey, AttrExpr>> attrs, std::vector<std::vector<DimTerm>> syms) {
    PatternOp op{type, std::move(attrs), std::move(in), static_cast<int32_t>(syms.size())};
    sort_pattern_attrs(op.attrs);
    out.push_back({std::move(op), std::move(syms)});
  }

  std::vector<Candidate> candidates() const {
    std::vector<Candidate> out;
    // The constant identities: a square matrix, and a conv kernel at each of
    // the world's two kernel sizes (targets only; see make_rule).
    auto identity = [&](std::vector<DimTerm> shape) {
      add_candidate(out, OpType::Weight, {},
                    {{AttrKey::Fill, AttrExpr::of_literal(static_cast<int64_t>(ConstantFill::Identity))},
                     {AttrKey::Shape, AttrExpr::of_dims(shape)}},
                    {shape});
    };
    if (world_.kind == WorldKind::Conv) {
      const DimTerm c = world_.vars[0].shape[1];
      const auto& k = world_.kernel_dims;
      identity({c, c, sym(k[0]), sym(k[1])});
      identity({c, c, sym(k[2]), sym(k[3])});
    } else {
      identity(world_.vars[2].shape);
    }
    const size_t n = tensors_.size();
    for (size_t i = 0; i < n; ++i) {
      const Tensor& a = tensors_[i];
      const bool a_act = is_act(a);
      // Unary ops on activations.
      if (a_act) {
        add_candidate(out, OpType::Relu, {a.ref}, {}, {a.sym});
        if (world_.kind == WorldKind::Conv)
          for (OpType pool : {OpType::AvgPool, OpType::MaxPool})
            add_candidate(out, pool, {a.ref},
                          {{AttrKey::KernelShape, AttrExpr::of_literal(Ints{3, 3})},
                           {AttrKey::Strides, AttrExpr::of_literal(Ints{1, 1})},
                           {AttrKey::Pads, AttrExpr::of_literal(Ints{1, 1, 1, 1})}},
                          {a.sym});
      }
      // Weight transforms; an identity transposed or enlarged is another
      // identity, already on the menu.
      const bool a_identity = a.ref.op >= 0 && ops_[static_cast<size_t>(a.ref.op)].type == OpType::Weight;
      if (a.weight_only && !a_identity && world_.kind == WorldKind::Conv && a.info.rank() == 4 && known(a.sym[2]) && known(a.sym[3])) {
        const auto& k = world_.kernel_dims;
        std::vector<DimTerm> to = {sym(k[0]), sym(k[1])};
        if (a.sym[2] != to[0] || a.sym[3] != to[1])
          add_candidate(out, OpType::EnlargeKernel, {a.ref}, {{AttrKey::KernelShape, AttrExpr::of_dims(to)}},
                        {{a.sym[0], a.sym[1], to[0], to[1]}});
      }
      if (a.weight_only && !a_identity && world_.kind == WorldKind::MatMul && a.info.rank() == 2)
        add_candidate(out, OpType::Transpose, {a.ref}, {{AttrKey::Perm, AttrExpr::of_literal(Ints{1, 0})}},
                      {{a.sym[1], a.sym[0]}});
      // Split of a two-input Concat in this graph, at the concat's sizes.
      if (a.ref.op >= 0) {
        const PatternOp& producer = ops_[static_cast<size_t>(a.ref.op)];
        if (producer.type == OpType::Concat && producer.inputs.size() == 2) {
          const int64_t axis = std::get<int64_t>(producer.attrs[0].second.literal);
          const Tensor& l = tensor_of(producer.inputs[0]);
          const Tensor& r = tensor_of(producer.inputs[1]);
          if (known(l.sym[static_cast<size_t>(axis)]) && known(r.sym[static_cast<size_t>(axis)]))
            add_candidate(out, OpType::Split, {a.ref},
                          {{AttrKey::Axis, AttrExpr::of_literal(axis)},
                           {AttrKey::Split, AttrExpr::of_dims({l.sym[static_cast<size_t>(axis)], r.sym[static_cast<size_t>(axis)]})}},
                          {l.sym, r.sym});
        }
      }
      for (size_t j = 0; j < n; ++j) {
        // An op reading one tensor twice only specialises the rules of the
        // same op over two tensors, which match it anyway.
        if (j == i) continue;
        const Tensor& b = tensors_[j];
        // Elementwise: same kind, same shape (commutative: each pair once), or a scalar.
        const bool same = a.weight_only == b.weight_only && a.info.shape == b.info.shape && i <= j &&
                          (a_act || a.weight_only) && a.info.rank() > 1;
        if (same) {
          add_candidate(out, OpType::Add, {a.ref, b.ref}, {}, {a.sym});
          add_candidate(out, OpType::Mul, {a.ref, b.ref}, {}, {a.sym});
        }
        if (a.info.rank() > 1 && b.info.shape == Shape{1} && b.weight_only && (a_act || a.weight_only))
          add_candidate(out, OpType::Mul, {a.ref, b.ref}, {}, {a.sym});
        if (a.info.rank() < 2 || b.info.rank() < 2) continue;
        // Concat: activations on channels / features, weights on either axis.
        if (a.weight_only == b.weight_only && a.info.rank() == b.info.rank()) {
          // Activations on channels / features; weights on either axis.
          const int64_t act_axis = world_.kind == WorldKind::Conv ? 1 : world_.rank - 1;
          const int num_axes = a.weight_only ? 2 : (a_act && is_act(b)) ? 1 : 0;
          for (int e = 0; e < num_axes; ++e) {
            const int64_t axis = a.weight_only ? e : act_axis;
            std::vector<DimTerm> s = a.sym;
            s[static_cast<size_t>(axis)] = kUnknown;
            add_candidate(out, OpType::Concat, {a.ref, b.ref}, {{AttrKey::Axis, AttrExpr::of_literal(axis)}}, {s});
          }
        }
        if (world_.kind == WorldKind::Conv && a_act && b.weight_only && b.info.rank() == 4 && known(b.sym[2]) &&
            known(b.sym[3])) {
          for (int64_t stride : {1, 2})
            for (Activation act : {Activation::None, Activation::Relu}) {
              std::vector<DimTerm> s = {a.sym[0], b.sym[0], stride == 1 ? a.sym[2] : kUnknown,
                                        stride == 1 ? a.sym[3] : kUnknown};
              add_candidate(out, OpType::Conv, {a.ref, b.ref},
                            {{AttrKey::Strides, AttrExpr::of_literal(Ints{stride, stride})},
                             {AttrKey::Pads, AttrExpr::same_pads({b.sym[2], b.sym[3]})},
                             {AttrKey::Activation, AttrExpr::of_literal(static_cast<int64_t>(act))}},
                            {s});
            }
        }
        if (world_.kind == WorldKind::MatMul && b.weight_only && b.info.rank() == 2 && (a_act || a.weight_only)) {
          std::vector<DimTerm> s = a.sym;
          s.back() = b.sym[1];
          for (Activation act : {Activation::None, Activation::Relu}) {
            if (a.weight_only && act != Activation::None) continue;
            add_candidate(out, OpType::MatMul, {a.ref, b.ref},
                          {{AttrKey::Activation, AttrExpr::of_literal(static_cast<int64_t>(act))}}, {s});
          }
        }
      }
    }
    return out;
  }

  const Tensor& tensor_of(const PatternRef& r) const {
    if (r.is_var()) return tensors_[static_cast<size_t>(r.var)];
    return tensors_[static_cast<size_t>(op_first_tensor_[static_cast<size_t>(r.op)] + r.index)];
  }

  bool push(const Candidate& c) {
    const PatternOp& op = c.op;
    std::vector<TensorInfo> in;
    std::vector<const ModTensor*> in_values;
    std::vector<std::string> in_exprs;
    bool weight_only = true;
    for (const PatternRef& r : op.inputs) {
      const Tensor& t = tensor_of(r);
      in.push_back(t.info);
      in_values.push_back(&values_[static_cast<size_t>(&t - tensors_.data())]);
      in_exprs.push_back(t.expr);
      weight_only = weight_only && t.weight_only;
    }
    Attributes attrs;
    std::vector<TensorInfo> out;
    try {
      attrs = evaluate_attrs(op, binding_);
      out = op.type == OpType::Weight ? std::vector<TensorInfo>{{DType::Float32, rule_constant_shape(attrs, "generated")}}
                                      : infer_outputs(op.type, attrs, in, "generated");
    } catch (const GraphError&) {
      return false;
    }
    if (op.type == OpType::Add || op.type == OpType::Mul) std::sort(in_exprs.begin(), in_exprs.end());
    std::string expr = std::string(op_type_name(op.type)) + "[" + attr_text(world_, op) + "](";
    for (const auto& e : in_exprs) expr += e + ",";
    expr += ")";
    for (const Tensor& t : tensors_)
      if (t.expr == expr || t.expr == expr + "#0") return false;  // a common subexpression
    std::vector<ModTensor> values = evaluate_mod(op.type, attrs, in_values, out);
    const auto op_index = static_cast<int32_t>(ops_.size());
    op_first_tensor_.push_back(static_cast<int32_t>(tensors_.size()));
    ops_.push_back(op);
    for (const PatternRef& r : op.inputs) ++tensors_[static_cast<size_t>(&tensor_of(r) - tensors_.data())].uses;
    for (size_t k = 0; k < out.size(); ++k) {
      Tensor t;
      t.ref = PatternRef::of_op(op_index, static_cast<int32_t>(k));
      t.sym = c.out_syms[k];
      t.info = out[k];
      t.weight_only = weight_only;
      t.expr = out.size() > 1 ? expr + "#" + std::to_string(k) : expr;
      t.hash = mod_tensor_hash(values[k]);
      tensors_.push_back(std::move(t));
      values_.push_back(std::move(values[k]));
    }
    return true;
  }

  void pop() {
    const PatternOp& op = ops_.back();
    const auto first = static_cast<size_t>(op_first_tensor_.back());
    tensors_.resize(first);
    values_.resize(first);
    for (const PatternRef& r : op.inputs) --tensors_[static_cast<size_t>(&tensor_of(r) - tensors_.data())].uses;
    ops_.pop_back();
    op_first_tensor_.pop_back();
  }

  std::vector<const Tensor*> sinks() const {
    std::vector<const Tensor*> out;
    for (size_t i = world_.vars.size(); i < tensors_.size(); ++i)
      if (tensors_[i].uses == 0) out.push_back(&tensors_[i]);
    return out;
  }

  std::string graph_key() const {
    std::vector<std::string> exprs;
    for (const Tensor* t : sinks()) exprs.push_back(t->expr);
    std::sort(exprs.begin(), exprs.end());
    std::string key;
    for (const auto& e : exprs) key += e + "|";
    return key;
  }

  // Keeps the graph as a rule side if it is connected, has at most two
  // outputs and computes at least one activation.
  void record() {
    auto out = sinks();
    if (out.empty() || out.size() > 2) return;
    for (const Tensor* t : out)
      if (t->weight_only) return;
    // Connected through ops or shared variables (union-find over ops).
    std::vector<int> parent(ops_.size());
    for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
    auto find = [&](int x) {
      while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
      return x;
    };
    std::vector<int> var_owner(world_.vars.size(), -1);
    uint32_t mask = 0;
    for (size_t i = 0; i < ops_.size(); ++i)
      for (const PatternRef& r : ops_[i].inputs) {
        int other;
        if (r.is_var()) {
          mask |= 1u << r.var;
          int& owner = var_owner[static_cast<size_t>(r.var)];
          if (owner < 0) owner = static_cast<int>(i);
          other = owner;
        } else {
          other = r.op;
        }
        parent[static_cast<size_t>(find(static_cast<int>(i)))] = find(other);
      }
    for (size_t i = 1; i < ops_.size(); ++i)
      if (find(static_cast<int>(i)) != find(0)) return;
    GraphRecord r;
    r.ops = ops_;
    std::sort(out.begin(), out.end(), [](const Tensor* a, const Tensor* b) { return a->hash < b->hash; });
    uint64_t fingerprint = 0x2545f4914f6cdd1dull;
    for (const Tensor* t : out) {
      r.sinks.push_back(t->ref);
      r.sink_hashes.push_back(t->hash);
      fingerprint = hash_combine(fingerprint, t->hash);
    }
    for (size_t i = world_.vars.size(); i < tensors_.size(); ++i)
      if (tensors_[i].ref.index == 0) {
        r.op_exprs.push_back(tensors_[i].expr);
        if (!tensors_[i].weight_only) ++r.computing_ops;
      }
    std::sort(r.op_exprs.begin(), r.op_exprs.end());
    r.var_mask = mask;
    if (out.size() == 1 && !out[0]->ref.is_var()) {
      const PatternOp& last = ops_[static_cast<size_t>(out[0]->ref.op)];
      for (const PatternRef& in : last.inputs) r.output_operands.push_back(tensor_of(in).hash);
      if (last.type == OpType::Add || last.type == OpType::Mul) std::sort(r.output_operands.begin(), r.output_operands.end());
    }
    buckets_[fingerprint].push_back(std::move(r));
  }

  const World& world_;
  const GeneratorOptions& options_;
  GeneratorStats& stats_;
  RuleBinding binding_;
  std::vector<Tensor> tensors_;
  std::vector<ModTensor> values_;
  std::vector<PatternOp> ops_;
  std::vector<int32_t> op_first_tensor_;
  std::unordered_set<std::string> visited_;
  std::unordered_map<uint64_t, std::vector<GraphRecord>> buckets_;
  bool stop_ = false;
};

// ---- pairs to rules -----------------------------------------------------------

bool share_an_op(const GraphRecord& a, const GraphRecord& b) {
  std::vector<std::string> common;
  std::set_intersection(a.op_exprs.begin(), a.op_exprs.end(), b.op_exprs.begin(), b.op_exprs.end(),
                        std::back_inserter(common));
  return !common.empty();
}

bool has_constant(const GraphRecord& g) {
  return std::any_of(g.ops.begin(), g.ops.end(), [](const PatternOp& op) { return op.type == OpType::Weight; });
}

// Builds the rule source -> target over the world's symbols, keeping only the
// variables and dims it uses, renumbered in order of first use.
std::optional<Rule> make_rule(const World& world, const GraphRecord& src, const GraphRecord& dst) {
  if (src.ops.empty() || (dst.var_mask & ~src.var_mask) != 0 || src.sinks.size() != dst.sinks.size()) return std::nullopt;
  // A constant in a source would have to be found in the graph by value;
  // rules only create constants.
  if (has_constant(src)) return std::nullopt;
  Rule rule;
  rule.origin = "generated";
  std::vector<int32_t> var_map(world.vars.size(), -1), dim_map(world.dims.size(), -1);
  auto map_dim = [&](DimTerm d) {
    if (!d.is_symbol()) return d;
    int32_t& m = dim_map[static_cast<size_t>(d.symbol)];
    if (m < 0) {
      m = static_cast<int32_t>(rule.dims.size());
      rule.dims.push_back(world.dims[static_cast<size_t>(d.symbol)]);
    }
    return DimTerm::of_symbol(m);
  };
  auto map_ref = [&](PatternRef r) {
    if (!r.is_var()) return r;
    int32_t& m = var_map[static_cast<size_t>(r.var)];
    if (m < 0) {
      m = static_cast<int32_t>(rule.vars.size());
      RuleVar v = world.vars[static_cast<size_t>(r.var)];
      for (DimTerm& d : v.shape) d = map_dim(d);
      rule.vars.push_back(std::move(v));
    }
    return PatternRef::of_var(m);
  };
  auto map_ops = [&](const std::vector<PatternOp>& ops) {
    std::vector<PatternOp> out = ops;
    for (PatternOp& op : out) {
      for (PatternRef& r : op.inputs) r = map_ref(r);
      for (auto& [key, e] : op.attrs)
        for (DimTerm& d : e.dims) d = map_dim(d);
    }
    return out;
  };
  rule.source = map_ops(src.ops);
  rule.target = map_ops(dst.ops);
  std::vector<bool> used(dst.sinks.size(), false);
  for (size_t k = 0; k < src.sinks.size(); ++k) {
    size_t j = 0;
    while (j < dst.sinks.size() && (used[j] || dst.sink_hashes[j] != src.sink_hashes[k])) ++j;
    if (j == dst.sinks.size()) return std::nullopt;
    used[j] = true;
    rule.outputs.push_back({src.sinks[k], map_ref(dst.sinks[j])});
  }
  return rule;
}

// Both sides' single output comes from the same op with the same parameters
// over operands of equal value: the pair of operands is the smaller rule.
bool same_output_op(const GraphRecord& a, const GraphRecord& b) {
  if (a.sinks.size() != 1 || b.sinks.size() != 1 || a.sinks[0].is_var() || b.sinks[0].is_var()) return false;
  const PatternOp& x = a.ops[static_cast<size_t>(a.sinks[0].op)];
  const PatternOp& y = b.ops[static_cast<size_t>(b.sinks[0].op)];
  return x.type == y.type && x.attrs == y.attrs && x.num_outputs == 1 && y.num_outputs == 1 &&
         a.output_operands == b.output_operands;
}

// Generalisations, most general first: strides and the fused activation as
// parameters (when every op in the rule agrees on them), kernel sizes as
// symbols; then progressively more literal.
Rule lift(const Rule& rule, bool strides, bool activation) {
  Rule out = rule;
  std::optional<AttrValue> stride_value, act_value;
  bool strides_agree = true, acts_agree = true;
  for (const auto* side : {&out.source, &out.target})
    for (const PatternOp& op : *side) {
      if (op.type != OpType::Conv && op.type != OpType::MatMul) continue;
      for (const auto& [key, e] : op.attrs) {
        if (e.kind != AttrExprKind::Literal) continue;
        auto check = [&](std::optional<AttrValue>& seen, bool& agree) {
          if (seen && *seen != e.literal) agree = false;
          seen = e.literal;
        };
        if (key == AttrKey::Strides) check(stride_value, strides_agree);
        if (key == AttrKey::Activation) check(act_value, acts_agree);
      }
    }
  auto replace = [&](AttrKey key, const char* name) {
    const auto p = static_cast<int32_t>(out.params.size());
    out.params.push_back({name, key, {}});
    for (auto* side : {&out.source, &out.target})
      for (PatternOp& op : *side)
        if (op.type == OpType::Conv || op.type == OpType::MatMul)
          for (auto& [k, e] : op.attrs)
            if (k == key) e = AttrExpr::of_param(p);
  };
  if (strides && stride_value && strides_agree) replace(AttrKey::Strides, "s");
  if (activation && act_value && acts_agree) replace(AttrKey::Activation, "a");
  return out;
}

Rule with_literal_kernels(const Rule& rule, const World& world) {
  Rule out = rule;
  std::vector<int64_t> literal(out.dims.size(), 0);
  for (size_t d = 0; d < out.dims.size(); ++d)
    for (int32_t k : world.kernel_dims)
      if (world.dims[static_cast<size_t>(k)].name == out.dims[d].name) literal[d] = world.sizes[static_cast<size_t>(k)];
  auto fix = [&](DimTerm& t) {
    if (t.is_symbol() && literal[static_cast<size_t>(t.symbol)] > 0) t = DimTerm::of_literal(literal[static_cast<size_t>(t.symbol)]);
  };
  for (RuleVar& v : out.vars)
    for (DimTerm& d : v.shape) fix(d);
  for (auto* side : {&out.source, &out.target})
    for (PatternOp& op : *side)
      for (auto& [key, e] : op.attrs)
        for (DimTerm& d : e.dims) fix(d);
  return out;
}

bool has_kernel_symbol(const Rule& rule) {
  for (const DimSymbol& d : rule.dims)
    if (d.domain == DimDomain::OddKernel) return true;
  return false;
}

bool has_param(const Rule& rule, AttrKey role) {
  for (const RuleParam& p : rule.params)
    if (p.role == role) return true;
  return false;
}

std::string rule_name(const Rule& rule) {
  uint64_t h = 0;
  for (char ch : rule_identity_key(rule)) h = hash_combine(h, static_cast<uint64_t>(static_cast<unsigned char>(ch)));
  std::string set = rule_op_set(rule);
  for (char& ch : set) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%08x", static_cast<unsigned>(h & 0xffffffffu));
  return "gen-" + set + "-" + suffix;
}

}  // namespace

GeneratorResult generate_rules(const GeneratorOptions& options) {
  if (options.max_ops < 1 || options.max_ops > 5)
    throw UsageError("--max-ops must be between 1 and 5 (got " + std::to_string(options.max_ops) + ")");
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  GeneratorResult result;
  GeneratorStats& stats = result.stats;
  const std::vector<World> worlds = {conv_world("conv 3x3+1x1", 3, 3, 1, 1), conv_world("conv 1x3+3x1", 1, 3, 3, 1),
                                     matmul_world("matmul rank 3", 3), matmul_world("matmul rank 2", 2)};
  std::unordered_set<std::string> kept_keys;
  for (const World& world : worlds) {
    say("enumerating " + world.name + " graphs of up to " + std::to_string(options.max_ops) + " ops");
    Enumerator enumerator(world, options, stats);
    enumerator.run();
    // Deterministic bucket order, whatever the hash map's.
    std::vector<std::pair<uint64_t, std::vector<GraphRecord>*>> buckets;
    for (auto& [fingerprint, records] : enumerator.buckets())
      if (records.size() > 1) buckets.emplace_back(fingerprint, &records);
    std::sort(buckets.begin(), buckets.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    stats.buckets += buckets.size();
    say("  " + world.name + ": " + std::to_string(stats.graphs) + " graphs so far, " + std::to_string(buckets.size()) +
        " classes of equal graphs");

    size_t verified_here = 0;
    for (auto& [fingerprint, records] : buckets) {
      // The representative: free of constants (so it can be a source), then
      // fewest ops, then the smallest expression.
      auto smaller = [](const GraphRecord& a, const GraphRecord& b) {
        return std::make_tuple(has_constant(a), a.ops.size(), std::cref(a.op_exprs)) <
               std::make_tuple(has_constant(b), b.ops.size(), std::cref(b.op_exprs));
      };
      std::sort(records->begin(), records->end(), smaller);
      const GraphRecord& rep = records->front();
      for (size_t i = 1; i < records->size(); ++i) {
        const GraphRecord& other = (*records)[i];
        for (int direction = 0; direction < 2; ++direction) {
          const GraphRecord& src = direction == 0 ? other : rep;
          const GraphRecord& dst = direction == 0 ? rep : other;
          std::optional<Rule> rule = make_rule(world, src, dst);
          if (!rule) continue;
          ++stats.pairs;
          if (!target_is_determined(*rule)) {
            ++stats.pruned_unbound;
            continue;
          }
          if (has_constant(dst) && dst.computing_ops > src.computing_ops) {
            ++stats.pruned_identity_growth;
            continue;
          }
          if (share_an_op(src, dst)) {
            ++stats.pruned_common;
            continue;
          }
          if (same_output_op(src, dst)) {
            ++stats.pruned_output_op;
            continue;
          }
          // Most general form that verifies wins.
          std::vector<Rule> forms = {lift(*rule, true, true), lift(*rule, true, false), lift(*rule, false, true), *rule};
          if (has_kernel_symbol(*rule)) forms.push_back(with_literal_kernels(*rule, world));
          std::optional<Rule> accepted;
          std::string failure;
          std::set<std::string> tried;
          bool duplicate = false;
          for (Rule& form : forms) {
            // A parameter lifted from target ops alone would be unbound.
            if (!target_is_determined(form)) continue;
            std::string key = rule_identity_key(form);
            if (!tried.insert(key).second) continue;
            if (kept_keys.count(key)) {
              duplicate = true;
              break;
            }
            form.name = rule_name(form);
            VerifyResult v = verify_rule(form, options.verify);
            if (v.passed) {
              accepted = std::move(form);
              break;
            }
            failure = v.failure;
          }
          if (duplicate) {
            ++stats.pruned_duplicate;
            continue;
          }
          if (!accepted) {
            ++stats.rejected;
            std::vector<PatternRef> src_roots, dst_roots;
            for (const RuleOutput& o : rule->outputs) {
              src_roots.push_back(o.source);
              dst_roots.push_back(o.target);
            }
            result.rejections.push_back(describe_pattern(*rule, rule->source, src_roots) + " => " +
                                        describe_pattern(*rule, rule->target, dst_roots) + ": " + failure);
            continue;
          }
          kept_keys.insert(rule_identity_key(*accepted));
          if (has_kernel_symbol(*accepted)) ++stats.generic_kernel;
          if (has_param(*accepted, AttrKey::Strides)) ++stats.generic_strides;
          result.rules.push_back(std::move(*accepted));
          ++stats.kept;
          if (++verified_here % 100 == 0) say("  " + world.name + ": " + std::to_string(verified_here) + " rules verified");
        }
      }
    }
    say("  " + world.name + ": " + std::to_string(verified_here) + " rules kept");
  }
  say("generated " + std::to_string(stats.kept) + " rules from " + std::to_string(stats.graphs) + " graphs (" +
      std::to_string(stats.pairs) + " pairs; pruned " + std::to_string(stats.pruned_common) + " sharing an op, " +
      std::to_string(stats.pruned_output_op) + " with the same output op, " +
      std::to_string(stats.pruned_identity_growth) + " growing by an identity, " + std::to_string(stats.pruned_duplicate) +
      " duplicates; rejected " + std::to_string(stats.rejected) + ")");
  return result;
}

RuleLibraryBuild build_rule_library(const GeneratorOptions& options, bool include_hand_written) {
  RuleLibraryBuild build;
  if (include_hand_written) {
    if (options.progress) options.progress("verifying the hand-written rules");
    for (Rule& rule : hand_written_rules()) {
      VerifyResult v = verify_rule(rule, options.verify);
      if (!v.passed) throw Error("hand-written rule '" + rule.name + "' failed verification " + v.failure);
      build.library.rules.push_back(std::move(rule));
      ++build.hand_written;
    }
  }
  build.generated = generate_rules(options);
  for (Rule& rule : build.generated.rules) build.library.rules.push_back(std::move(rule));
  build.generated.rules.clear();
  build.library.description = "graphworld rules generate --max-ops " + std::to_string(options.max_ops) + ": " +
                              std::to_string(build.hand_written) + " hand-written and " +
                              std::to_string(build.generated.stats.kept) +
                              " generated rules, each verified in float64 to a relative error of 1e-9";
  return build;
}

}  // namespace graphworld
