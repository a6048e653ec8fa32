// Concrete values for a rule's symbols, and building patterns into graphs.
//
// A RuleBinding gives every dim symbol a size and every parameter a value.
// The matcher fills one from a graph (unify_*), the verifier picks them
// (rule_verifier.h), and either can then build a pattern into a Graph.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "env/graph/graph.h"
#include "env/rules/rule.h"

namespace graphworld {

struct RuleBinding {
  std::vector<int64_t> dims;                     // 0: not bound yet
  std::vector<std::optional<AttrValue>> params;  // nullopt: not bound yet
  RuleBinding() = default;
  explicit RuleBinding(const Rule& rule) : dims(rule.dims.size(), 0), params(rule.params.size()) {}
};

// The value of an attribute expression. Throws GraphError when it uses a
// symbol or parameter the binding lacks, or composes perms of unequal length.
AttrValue evaluate_attr(const AttrExpr& expr, const RuleBinding& binding);
Attributes evaluate_attrs(const PatternOp& op, const RuleBinding& binding);

// The value an op has for `key`, counting ONNX defaults as present: a Conv
// without strides has strides [1,1]. Points at the op's value or a static
// default (matching never copies); nullptr when absent without a default.
const AttrValue* effective_attr(OpType type, const Attributes& attrs, AttrKey key);

// Makes `expr` take `value`, binding parameters and dim symbols it uses that
// are still free. Returns false on a conflict. Expressions that cannot bind
// (same-pads of unbound kernels, composed perms) return true and are checked
// later by attrs_match().
bool unify_attr(const AttrExpr& expr, const AttrValue& value, RuleBinding& binding);
// Binds a variable's symbolic shape to a concrete one; false on conflict.
bool unify_shape(const std::vector<DimTerm>& shape, const Shape& concrete, RuleBinding& binding);

// True when the op's attributes are exactly the pattern op's under a complete
// binding: every pattern attribute has its value, and every other attribute
// of the op is absent or at its default.
bool attrs_match(const PatternOp& pattern, OpType type, const Attributes& attrs, const RuleBinding& binding);

// True when every bound parameter is one its rule admits, every dim symbol
// is in its domain, and the rule's constraints hold.
bool binding_admitted(const Rule& rule, const RuleBinding& binding);

// The group count a grouped-channels constraint's parameter is bound to, or
// 0 when it is unbound or not a positive integer.
int64_t bound_group_count(const RuleConstraint& constraint, const RuleBinding& binding);

// Appends the ops of `ops` to `graph`, reading variable v from
// `var_tensors[v]`. Returns the outputs of each pattern op. Op names are
// `name_prefix` plus the new op's id, so repeated builds never collide.
// Throws GraphError (from shape inference) when the ops do not fit.
std::vector<std::vector<TensorRef>> build_pattern(const std::vector<PatternOp>& ops, const RuleBinding& binding,
                                                  const std::vector<TensorRef>& var_tensors, Graph& graph,
                                                  const std::string& name_prefix);

// The tensor a pattern reference names, once the pattern has been built or matched.
TensorRef resolve_ref(const PatternRef& ref, const std::vector<TensorRef>& var_tensors,
                      const std::vector<std::vector<TensorRef>>& op_outputs);

}  // namespace graphworld
