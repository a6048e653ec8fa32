#include "env/rules/rule_instance.h"

#include <algorithm>

#include "common/error.h"
#include "env/graph/attribute_defaults.h"
#include "env/ops/op_schema.h"
#include "env/rules/rule_constant.h"

namespace graphworld {

namespace {

int64_t dim_value(const DimTerm& d, const RuleBinding& b) {
  if (!d.is_symbol()) return d.literal;
  int64_t v = b.dims.at(static_cast<size_t>(d.symbol));
  if (v <= 0) throw GraphError("dim symbol #" + std::to_string(d.symbol) + " is not bound");
  return v;
}

const AttrValue& param_value(int32_t p, const RuleBinding& b) {
  const auto& v = b.params.at(static_cast<size_t>(p));
  if (!v) throw GraphError("parameter #" + std::to_string(p) + " is not bound");
  return *v;
}

}  // namespace

AttrValue evaluate_attr(const AttrExpr& e, const RuleBinding& b) {
  switch (e.kind) {
    case AttrExprKind::Literal: return e.literal;
    case AttrExprKind::Param: return param_value(e.param, b);
    case AttrExprKind::Dims: {
      std::vector<int64_t> out;
      for (const DimTerm& d : e.dims) out.push_back(dim_value(d, b));
      return out;
    }
    case AttrExprKind::SamePads: {
      std::vector<int64_t> half;
      for (const DimTerm& d : e.dims) half.push_back((dim_value(d, b) - 1) / 2);
      std::vector<int64_t> out = half;
      out.insert(out.end(), half.begin(), half.end());
      return out;
    }
    case AttrExprKind::ComposePerm: {
      const auto* first = std::get_if<std::vector<int64_t>>(&param_value(e.param, b));
      const auto* second = std::get_if<std::vector<int64_t>>(&param_value(e.param2, b));
      if (!first || !second || first->size() != second->size())
        throw GraphError("composed perms must be int lists of equal length");
      // Transposing by p1 then p2 reads input axis p1[p2[i]] into output axis i.
      std::vector<int64_t> out;
      for (int64_t axis : *second) {
        if (axis < 0 || axis >= static_cast<int64_t>(first->size())) throw GraphError("perm axis out of range");
        out.push_back((*first)[static_cast<size_t>(axis)]);
      }
      return out;
    }
  }
  throw GraphError("unknown attribute expression");
}

Attributes evaluate_attrs(const PatternOp& op, const RuleBinding& b) {
  Attributes attrs;
  for (const auto& [key, e] : op.attrs) attrs.set(key, evaluate_attr(e, b));
  return attrs;
}

const AttrValue* effective_attr(OpType type, const Attributes& attrs, AttrKey key) {
  if (const AttrValue* v = attrs.find(key)) return v;
  return attribute_default(type, key);
}

bool unify_attr(const AttrExpr& e, const AttrValue& value, RuleBinding& b) {
  switch (e.kind) {
    case AttrExprKind::Literal: return e.literal == value;
    case AttrExprKind::Param: {
      auto& slot = b.params.at(static_cast<size_t>(e.param));
      if (!slot) {
        slot = value;
        return true;
      }
      return *slot == value;
    }
    case AttrExprKind::Dims: {
      const auto* list = std::get_if<std::vector<int64_t>>(&value);
      if (!list || list->size() != e.dims.size()) return false;
      return unify_shape(e.dims, *list, b);
    }
    case AttrExprKind::SamePads:
    case AttrExprKind::ComposePerm: return true;
  }
  return false;
}

bool unify_shape(const std::vector<DimTerm>& shape, const Shape& concrete, RuleBinding& b) {
  if (shape.size() != concrete.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const DimTerm& d = shape[i];
    if (!d.is_symbol()) {
      if (d.literal != concrete[i]) return false;
      continue;
    }
    int64_t& slot = b.dims.at(static_cast<size_t>(d.symbol));
    if (slot == 0) {
      slot = concrete[i];
    } else if (slot != concrete[i]) {
      return false;
    }
  }
  return true;
}

bool attrs_match(const PatternOp& pattern, OpType type, const Attributes& attrs, const RuleBinding& b) {
  for (const auto& [key, e] : pattern.attrs) {
    const AttrValue* have = effective_attr(type, attrs, key);
    if (!have) return false;
    AttrValue want;
    try {
      want = evaluate_attr(e, b);
    } catch (const GraphError&) {
      return false;
    }
    if (want != *have) return false;
  }
  for (const auto& [key, value] : attrs.items()) {
    if (pattern.find_attr(key)) continue;
    // An attribute the pattern does not name must be at its default, or the
    // rule (verified without it) would silently drop its effect.
    const AttrValue* fallback = attribute_default(type, key);
    if (!fallback || *fallback != value) return false;
  }
  return true;
}

bool binding_admitted(const Rule& rule, const RuleBinding& b) {
  for (size_t p = 0; p < rule.params.size(); ++p) {
    const RuleParam& param = rule.params[p];
    if (!b.params[p] || param.admits.empty()) continue;
    if (std::find(param.admits.begin(), param.admits.end(), *b.params[p]) == param.admits.end()) return false;
  }
  for (size_t d = 0; d < rule.dims.size(); ++d) {
    if (b.dims[d] == 0) continue;
    if (rule.dims[d].domain == DimDomain::OddKernel && b.dims[d] % 2 == 0) return false;
  }
  for (const RuleConstraint& c : rule.constraints) {
    auto perm_of = [&](size_t k) -> const std::vector<int64_t>* {
      const auto& v = b.params.at(static_cast<size_t>(c.params.at(k)));
      return v ? std::get_if<std::vector<int64_t>>(&*v) : nullptr;
    };
    auto is_identity = [](const std::vector<int64_t>& perm) {
      for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] != static_cast<int64_t>(i)) return false;
      return true;
    };
    switch (c.kind) {
      case ConstraintKind::IdentityPerm: {
        const auto* perm = perm_of(0);
        if (!perm || !is_identity(*perm)) return false;
        break;
      }
      case ConstraintKind::InversePerms: {
        const auto* first = perm_of(0);
        const auto* second = perm_of(1);
        if (!first || !second || first->size() != second->size()) return false;
        RuleBinding pair;
        pair.params = {*first, *second};
        try {
          if (!is_identity(std::get<std::vector<int64_t>>(evaluate_attr(AttrExpr::compose_perm(0, 1), pair))))
            return false;
        } catch (const GraphError&) {
          return false;
        }
        break;
      }
      case ConstraintKind::SiblingInputs:
        break;  // about the graph's tensors, not sizes: the matcher checks it (rule_matcher.cc)
      case ConstraintKind::DimProduct: {
        const int64_t whole = b.dims.at(static_cast<size_t>(c.dims.at(0)));
        const int64_t first = b.dims.at(static_cast<size_t>(c.dims.at(1)));
        const int64_t second = b.dims.at(static_cast<size_t>(c.dims.at(2)));
        // A size of zero is unbound: nothing to contradict yet.
        if (whole && first && second && whole != first * second) return false;
        break;
      }
      case ConstraintKind::GroupedChannels: {
        const int64_t groups = bound_group_count(c, b);
        if (groups == 0) return false;
        const int64_t channels = b.dims.at(static_cast<size_t>(c.dims.at(0)));
        const int64_t per_group = b.dims.at(static_cast<size_t>(c.dims.at(1)));
        const int64_t outputs = b.dims.at(static_cast<size_t>(c.dims.at(2)));
        // A size of zero is unbound: nothing to contradict.
        if (channels && per_group && channels != groups * per_group) return false;
        if (outputs && outputs % groups != 0) return false;
        break;
      }
    }
  }
  return true;
}

int64_t bound_group_count(const RuleConstraint& constraint, const RuleBinding& binding) {
  const auto& bound = binding.params.at(static_cast<size_t>(constraint.params.at(0)));
  const int64_t* groups = bound ? std::get_if<int64_t>(&*bound) : nullptr;
  return groups && *groups >= 1 ? *groups : 0;
}

TensorRef resolve_ref(const PatternRef& ref, const std::vector<TensorRef>& var_tensors,
                      const std::vector<std::vector<TensorRef>>& op_outputs) {
  if (ref.is_var()) return var_tensors.at(static_cast<size_t>(ref.var));
  return op_outputs.at(static_cast<size_t>(ref.op)).at(static_cast<size_t>(ref.index));
}

std::vector<std::vector<TensorRef>> build_pattern(const std::vector<PatternOp>& ops, const RuleBinding& b,
                                                  const std::vector<TensorRef>& var_tensors, Graph& graph,
                                                  const std::string& name_prefix) {
  std::vector<std::vector<TensorRef>> outputs;
  outputs.reserve(ops.size());
  for (const PatternOp& op : ops) {
    const std::string name = name_prefix + std::to_string(graph.num_ops());
    Attributes attrs = evaluate_attrs(op, b);
    if (op.type == OpType::Weight) {
      // A constant the rule creates: a BatchNorm epsilon as a tensor, an identity.
      outputs.push_back({TensorRef{graph.add_weight(name, make_rule_constant(attrs, name)), 0}});
      continue;
    }
    std::vector<TensorRef> inputs;
    std::vector<TensorInfo> infos;
    for (const PatternRef& r : op.inputs) {
      inputs.push_back(resolve_ref(r, var_tensors, outputs));
      infos.push_back(graph.info(inputs.back()));
    }
    std::vector<TensorInfo> out_infos = infer_outputs(op.type, attrs, infos, name);
    if (static_cast<int32_t>(out_infos.size()) != op.num_outputs)
      throw GraphError(name + ": pattern expects " + std::to_string(op.num_outputs) + " outputs, op gives " +
                       std::to_string(out_infos.size()));
    OpId id = graph.add_op(op.type, name, std::move(attrs), std::move(inputs), std::move(out_infos));
    std::vector<TensorRef> refs;
    for (int32_t k = 0; k < op.num_outputs; ++k) refs.push_back({id, k});
    outputs.push_back(std::move(refs));
  }
  return outputs;
}

}  // namespace graphworld
