// A compact way to write a Rule in C++: declare dims, variables and
// parameters, add source and target ops, map outputs, finish().
//
//   RuleWriter w("fuse-conv-relu", "hand-written");
//   auto n = w.dim("n"), c = w.dim("c"), ...;
//   PatternRef x = w.var("x", {n, c, h, wd});
//   PatternRef conv = w.source(OpType::Conv, {x, k}, {{AttrKey::Strides, w.param_expr(s)}});
//   ...
//   Rule rule = w.finish();  // checks every reference
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "env/rules/rule.h"

namespace graphworld {

class RuleWriter {
 public:
  using AttrList = std::vector<std::pair<AttrKey, AttrExpr>>;

  RuleWriter(std::string name, std::string origin);

  DimTerm dim(std::string name, DimDomain domain = DimDomain::Any);
  PatternRef var(std::string name, std::vector<DimTerm> shape);
  PatternRef weight(std::string name, std::vector<DimTerm> shape, bool positive = false);
  int32_t param(std::string name, AttrKey role, std::vector<AttrValue> admits = {});

  // Adds an op; returns output 0 (use out(ref, k) for the others).
  PatternRef source(OpType type, std::vector<PatternRef> inputs, AttrList attrs = {}, int32_t num_outputs = 1);
  PatternRef target(OpType type, std::vector<PatternRef> inputs, AttrList attrs = {}, int32_t num_outputs = 1);
  // A constant the target creates: shape `shape`, every element `value`.
  PatternRef target_constant(AttrExpr value, std::vector<DimTerm> shape);
  // An identity the target creates: [n, n] or a conv kernel [c, c, kh, kw].
  PatternRef target_identity(std::vector<DimTerm> shape);
  static PatternRef out(PatternRef op_output0, int32_t index) { return PatternRef::of_op(op_output0.op, index); }

  void output(PatternRef source_tensor, PatternRef target_tensor);
  void constraint(ConstraintKind kind, std::vector<int32_t> params, std::vector<DimTerm> dims = {});
  // Two variables that must be outputs of one op (ConstraintKind::SiblingInputs).
  void siblings(PatternRef a, PatternRef b);

  // Sorts attributes by key and checks every reference (GraphError if wrong).
  Rule finish();

 private:
  PatternRef add(std::vector<PatternOp>& ops, OpType type, std::vector<PatternRef> inputs, AttrList attrs,
                 int32_t num_outputs);
  Rule rule_;
};

// Shorthands for attribute expressions.
inline AttrExpr lit(AttrValue v) { return AttrExpr::of_literal(std::move(v)); }
inline AttrExpr ints(std::vector<int64_t> v) { return AttrExpr::of_literal(std::move(v)); }
inline AttrExpr par(int32_t p) { return AttrExpr::of_param(p); }

}  // namespace graphworld
