// A substitution rule: a source pattern, a target pattern that computes the
// same values, and what they share.
//
// Both patterns are small op graphs over the rule's *variables* (input
// tensors) and *parameters* (attribute values). A rule says how general it is:
//   - every variable has a symbolic shape whose dimensions are *dim symbols*
//     (shared symbols mean "equal sizes") or literals; a symbol's domain can
//     restrict it (e.g. odd kernel sizes);
//   - an attribute is a literal, a parameter (bound when matched, equal
//     wherever the same parameter appears), or an expression of dim symbols
//     and parameters (kernel sizes, "same" pads, split sizes, composed perms);
//   - a parameter may list the values it admits; empty means any value;
//   - constraints add relations no single attribute states.
// A rule valid for any stride uses a parameter; one valid only for stride 1
// uses the literal or a parameter that admits only [1,1].
//
// Source patterns match graphs (rule_matcher.h); target patterns are built
// into graphs (rule_instance.h). The verifier (rule_verifier.h) checks that
// both compute the same outputs at many instantiations.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "env/graph/attributes.h"
#include "env/graph/op_type.h"

namespace graphworld {

// What sizes a dim symbol may take. The verifier instantiates each domain
// with at least three sizes, odd ones included.
enum class DimDomain : uint8_t {
  Any,        // batch, channels, features
  Spatial,    // image height and width: large enough for the kernels
  Kernel,     // conv kernel height or width
  OddKernel,  // a kernel that can be centred ("same" padding, enlargement)
};
std::string_view dim_domain_name(DimDomain domain);

struct DimSymbol {
  std::string name;
  DimDomain domain = DimDomain::Any;
};

// One dimension of a symbolic shape: a dim symbol or a literal size.
struct DimTerm {
  int32_t symbol = -1;  // index into Rule::dims, or -1 for a literal
  int64_t literal = 0;
  static DimTerm of_symbol(int32_t s) { return {s, 0}; }
  static DimTerm of_literal(int64_t v) { return {-1, v}; }
  bool is_symbol() const { return symbol >= 0; }
  bool operator==(const DimTerm& other) const = default;
};

struct RuleVar {
  std::string name;
  // A weight variable matches only tensors computed from weights alone, so a
  // target that transforms it (concat, enlarge, fold) costs nothing to run.
  bool weight = false;
  // The verifier draws this variable's values from [0.5, 1.5) instead of
  // [-1, 1): for operands only meaningful when positive (BatchNorm variance).
  bool positive = false;
  std::vector<DimTerm> shape;
  bool operator==(const RuleVar& other) const = default;
};

struct RuleParam {
  std::string name;
  AttrKey role = AttrKey::Strides;  // the attribute it stands for
  std::vector<AttrValue> admits;    // empty: any value the ops accept
  bool operator==(const RuleParam& other) const = default;
};

// A tensor inside a pattern: variable `var`, or output `index` of pattern op `op`.
struct PatternRef {
  int32_t var = -1;
  int32_t op = -1;
  int32_t index = 0;
  static PatternRef of_var(int32_t v) { return {v, -1, 0}; }
  static PatternRef of_op(int32_t o, int32_t i = 0) { return {-1, o, i}; }
  bool is_var() const { return var >= 0; }
  bool operator==(const PatternRef& other) const = default;
};

enum class AttrExprKind : uint8_t {
  Literal,      // `literal`
  Param,        // the value bound to parameter `param`
  Dims,         // an int list, one entry per term of `dims`
  SamePads,     // pads centring a kernel whose sizes are `dims`: (k-1)/2 each side
  ComposePerm,  // the perm of transposing by `param` and then by `param2`
};

struct AttrExpr {
  AttrExprKind kind = AttrExprKind::Literal;
  AttrValue literal;
  int32_t param = -1;
  int32_t param2 = -1;
  std::vector<DimTerm> dims;
  static AttrExpr of_literal(AttrValue v);
  static AttrExpr of_param(int32_t p);
  static AttrExpr of_dims(std::vector<DimTerm> d);
  static AttrExpr same_pads(std::vector<DimTerm> kernel);
  static AttrExpr compose_perm(int32_t first, int32_t second);
  bool operator==(const AttrExpr& other) const = default;
};

// An op of a pattern. In a target pattern an op of type Weight is a constant
// the rule creates: a tensor of shape `Shape` filled with `Value`.
struct PatternOp {
  OpType type = OpType::Identity;
  std::vector<std::pair<AttrKey, AttrExpr>> attrs;  // sorted by key
  std::vector<PatternRef> inputs;
  int32_t num_outputs = 1;
  const AttrExpr* find_attr(AttrKey key) const;
  bool operator==(const PatternOp& other) const = default;
};

// Orders a pattern op's attributes by key (the order PatternOp keeps).
void sort_pattern_attrs(std::vector<std::pair<AttrKey, AttrExpr>>& attrs);

// Source output `source` is replaced by target tensor `target`.
struct RuleOutput {
  PatternRef source;
  PatternRef target;
  bool operator==(const RuleOutput& other) const = default;
};

enum class ConstraintKind : uint8_t {
  IdentityPerm,  // params[0] is a perm that leaves its input as it is
  InversePerms,  // transposing by params[0] and then by params[1] restores the input
  // A conv's channel groups: params[0] is the group count g, dims are
  // {c, cg, o} with c = g * cg input channels and o output channels that g
  // divides. The verifier derives c and o from g, cg and a size for o / g,
  // so grouped instantiations fit (free sizes would almost never agree).
  GroupedChannels,
  // vars[0] and vars[1] are outputs of one op (the pieces of one Split, or
  // of one merged op): a match-time restriction that keeps a merge of two
  // parallel ops to siblings, where the Concat it adds can meet the op that
  // split them. It does not change what the rule computes, so the verifier
  // needs no instance of it.
  SiblingInputs,
  // dims are {n, a, b} with n = a * b: a view that splits an axis of n into
  // [a, b] (a transformer's features into heads). The verifier derives n
  // from a and b, so every drawn instantiation fits the view.
  DimProduct,
};
std::string_view constraint_kind_name(ConstraintKind kind);

struct RuleConstraint {
  ConstraintKind kind = ConstraintKind::IdentityPerm;
  std::vector<int32_t> params;
  std::vector<int32_t> dims;  // dim symbols it relates (GroupedChannels)
  std::vector<int32_t> vars;  // variables it relates (SiblingInputs)
  bool operator==(const RuleConstraint& other) const = default;
};

struct Rule {
  std::string name;
  std::string origin;  // "generated" or "hand-written"
  std::vector<DimSymbol> dims;
  std::vector<RuleVar> vars;
  std::vector<RuleParam> params;
  std::vector<PatternOp> source;  // topological order
  std::vector<PatternOp> target;  // topological order
  std::vector<RuleOutput> outputs;
  std::vector<RuleConstraint> constraints;
};

// Throws GraphError naming the rule and the bad reference when a pattern
// refers to a variable, op, output, parameter or dim symbol that does not
// exist, refers forward, or when an output pair, a pattern op's arity or an
// op the source may not contain (leaves) is wrong.
void check_rule_references(const Rule& rule);

// True when matching the source binds everything the target reads: every
// variable, dim symbol and parameter the target uses appears in the source
// (in a variable the source reads, or in a source attribute). A rule that
// fails this describes a family of targets, and no match could pick one.
bool target_is_determined(const Rule& rule);

// Readable multi-line form:
//   conv-add-merge  [hand-written]
//     vars   x:[n,c,h,w]  w1:weight[o,c,kh,kw] ...
//     source %0 = Conv(x, w1) strides=$s pads=same(kh,kw)
//     ...
std::string describe_rule(const Rule& rule);
// One-line form of a pattern: "Add(Conv(x,w1), Conv(x,w2))".
std::string describe_pattern(const Rule& rule, const std::vector<PatternOp>& ops,
                             const std::vector<PatternRef>& roots);

// A canonical text of everything that defines the rule except its name and
// origin: two rules with equal keys are duplicates.
std::string rule_identity_key(const Rule& rule);

// The sorted, de-duplicated op type names of the source pattern, joined with
// '+': the "op set" `graphworld rules stats` counts by.
std::string rule_op_set(const Rule& rule);

}  // namespace graphworld
