#include "env/rules/rule.h"

#include <algorithm>
#include <set>

#include "common/error.h"
#include "env/ops/op_schema.h"
#include "env/rules/rule_constant.h"

namespace graphworld {

std::string_view dim_domain_name(DimDomain domain) {
  switch (domain) {
    case DimDomain::Any: return "any";
    case DimDomain::Spatial: return "spatial";
    case DimDomain::Kernel: return "kernel";
    case DimDomain::OddKernel: return "odd-kernel";
  }
  return "?";
}

std::string_view constraint_kind_name(ConstraintKind kind) {
  switch (kind) {
    case ConstraintKind::IdentityPerm: return "identity-perm";
    case ConstraintKind::InversePerms: return "inverse-perms";
    case ConstraintKind::GroupedChannels: return "grouped-channels";
    case ConstraintKind::SiblingInputs: return "sibling-inputs";
    case ConstraintKind::DimProduct: return "dim-product";
  }
  return "?";
}

AttrExpr AttrExpr::of_literal(AttrValue v) {
  AttrExpr e;
  e.kind = AttrExprKind::Literal;
  e.literal = std::move(v);
  return e;
}

AttrExpr AttrExpr::of_param(int32_t p) {
  AttrExpr e;
  e.kind = AttrExprKind::Param;
  e.param = p;
  return e;
}

AttrExpr AttrExpr::of_dims(std::vector<DimTerm> d) {
  AttrExpr e;
  e.kind = AttrExprKind::Dims;
  e.dims = std::move(d);
  return e;
}

AttrExpr AttrExpr::same_pads(std::vector<DimTerm> kernel) {
  AttrExpr e;
  e.kind = AttrExprKind::SamePads;
  e.dims = std::move(kernel);
  return e;
}

AttrExpr AttrExpr::compose_perm(int32_t first, int32_t second) {
  AttrExpr e;
  e.kind = AttrExprKind::ComposePerm;
  e.param = first;
  e.param2 = second;
  return e;
}

const AttrExpr* PatternOp::find_attr(AttrKey key) const {
  for (const auto& [k, e] : attrs)
    if (k == key) return &e;
  return nullptr;
}

void sort_pattern_attrs(std::vector<std::pair<AttrKey, AttrExpr>>& attrs) {
  // Insertion sort: a handful of entries, and std::sort on variants trips
  // GCC 12's maybe-uninitialized false positive.
  for (size_t i = 1; i < attrs.size(); ++i)
    for (size_t j = i; j > 0 && attrs[j].first < attrs[j - 1].first; --j) std::swap(attrs[j], attrs[j - 1]);
}

namespace {

[[noreturn]] void bad_rule(const Rule& rule, const std::string& what) {
  throw GraphError("rule '" + rule.name + "': " + what);
}

void check_dims(const Rule& rule, const std::vector<DimTerm>& dims, const std::string& where) {
  for (const DimTerm& d : dims) {
    if (d.is_symbol() && d.symbol >= static_cast<int32_t>(rule.dims.size()))
      bad_rule(rule, where + " uses dim symbol #" + std::to_string(d.symbol) + ", but the rule has " +
                         std::to_string(rule.dims.size()));
    if (!d.is_symbol() && d.literal <= 0)
      bad_rule(rule, where + " has a non-positive literal size " + std::to_string(d.literal));
  }
}

void check_param(const Rule& rule, int32_t p, const std::string& where) {
  if (p < 0 || p >= static_cast<int32_t>(rule.params.size()))
    bad_rule(rule, where + " uses parameter #" + std::to_string(p) + ", but the rule has " +
                       std::to_string(rule.params.size()));
}

void check_ref(const Rule& rule, const std::vector<PatternOp>& ops, const PatternRef& ref, size_t before,
               const std::string& where) {
  if (ref.is_var()) {
    if (ref.var >= static_cast<int32_t>(rule.vars.size()))
      bad_rule(rule, where + " uses variable #" + std::to_string(ref.var) + ", but the rule has " +
                         std::to_string(rule.vars.size()));
    return;
  }
  if (ref.op < 0 || static_cast<size_t>(ref.op) >= before)
    bad_rule(rule, where + " refers to op #" + std::to_string(ref.op) + ", which does not come before it");
  if (ref.index < 0 || ref.index >= ops[static_cast<size_t>(ref.op)].num_outputs)
    bad_rule(rule, where + " uses output " + std::to_string(ref.index) + " of op #" + std::to_string(ref.op) +
                       ", which has " + std::to_string(ops[static_cast<size_t>(ref.op)].num_outputs));
}

void check_pattern(const Rule& rule, const std::vector<PatternOp>& ops, const char* side) {
  if (ops.empty() && std::string(side) == "source") bad_rule(rule, "the source pattern is empty");
  for (size_t i = 0; i < ops.size(); ++i) {
    const PatternOp& op = ops[i];
    const std::string where = std::string(side) + " op #" + std::to_string(i) + " (" +
                              std::string(op_type_name(op.type)) + ")";
    if (op.type == OpType::Input || op.type == OpType::kCount || (op.type == OpType::Weight && side[0] == 's'))
      bad_rule(rule, where + " has a type a pattern cannot contain");
    if (op.type != OpType::Weight) {
      OpArity arity = op_arity(op.type);
      int n = static_cast<int>(op.inputs.size());
      if (n < arity.min_inputs || (arity.max_inputs >= 0 && n > arity.max_inputs))
        bad_rule(rule, where + " has " + std::to_string(n) + " inputs");
    } else if (!op.inputs.empty()) {
      bad_rule(rule, where + " is a constant and takes no inputs");
    }
    if (op.num_outputs < 1) bad_rule(rule, where + " has no outputs");
    for (size_t k = 0; k < op.inputs.size(); ++k)
      check_ref(rule, ops, op.inputs[k], i, where + " input " + std::to_string(k));
    for (const auto& [key, e] : op.attrs) {
      const std::string attr_where = where + " attribute '" + std::string(attr_key_name(key)) + "'";
      switch (e.kind) {
        case AttrExprKind::Literal: break;
        case AttrExprKind::Param: check_param(rule, e.param, attr_where); break;
        case AttrExprKind::Dims:
        case AttrExprKind::SamePads: check_dims(rule, e.dims, attr_where); break;
        case AttrExprKind::ComposePerm:
          check_param(rule, e.param, attr_where);
          check_param(rule, e.param2, attr_where);
          break;
      }
    }
  }
}

}  // namespace

void check_rule_references(const Rule& rule) {
  for (size_t v = 0; v < rule.vars.size(); ++v)
    check_dims(rule, rule.vars[v].shape, "variable '" + rule.vars[v].name + "'");
  check_pattern(rule, rule.source, "source");
  check_pattern(rule, rule.target, "target");
  if (rule.outputs.empty()) bad_rule(rule, "has no outputs");
  for (size_t k = 0; k < rule.outputs.size(); ++k) {
    const std::string where = "output #" + std::to_string(k);
    if (rule.outputs[k].source.is_var()) bad_rule(rule, where + " maps a variable, not a source op output");
    check_ref(rule, rule.source, rule.outputs[k].source, rule.source.size(), where + " source");
    check_ref(rule, rule.target, rule.outputs[k].target, rule.target.size(), where + " target");
  }
  for (const RuleConstraint& c : rule.constraints) {
    const std::string where = "constraint " + std::string(constraint_kind_name(c.kind));
    for (int32_t p : c.params) check_param(rule, p, where);
    for (int32_t d : c.dims)
      if (d < 0 || d >= static_cast<int32_t>(rule.dims.size()))
        bad_rule(rule, where + " uses dim symbol #" + std::to_string(d) + ", but the rule has " +
                           std::to_string(rule.dims.size()));
    for (int32_t v : c.vars)
      if (v < 0 || v >= static_cast<int32_t>(rule.vars.size()))
        bad_rule(rule, where + " uses variable #" + std::to_string(v) + ", but the rule has " +
                           std::to_string(rule.vars.size()));
    const size_t params = c.kind == ConstraintKind::InversePerms                                           ? 2
                          : c.kind == ConstraintKind::SiblingInputs || c.kind == ConstraintKind::DimProduct ? 0
                                                                                                            : 1;
    const size_t dims =
        c.kind == ConstraintKind::GroupedChannels || c.kind == ConstraintKind::DimProduct ? 3 : 0;
    const size_t vars = c.kind == ConstraintKind::SiblingInputs ? 2 : 0;
    if (c.params.size() != params || c.dims.size() != dims || c.vars.size() != vars)
      bad_rule(rule, where + " takes " + std::to_string(params) + " parameter(s), " + std::to_string(dims) +
                         " dim symbol(s) and " + std::to_string(vars) + " variable(s), not " +
                         std::to_string(c.params.size()) + ", " + std::to_string(c.dims.size()) + " and " +
                         std::to_string(c.vars.size()));
    if (c.kind == ConstraintKind::GroupedChannels &&
        rule.params[static_cast<size_t>(c.params[0])].role != AttrKey::Group)
      bad_rule(rule, where + " relates a group count, but parameter $" +
                         rule.params[static_cast<size_t>(c.params[0])].name + " stands for " +
                         std::string(attr_key_name(rule.params[static_cast<size_t>(c.params[0])].role)));
  }
  if (!target_is_determined(rule))
    bad_rule(rule, "the target uses a variable, dim symbol or parameter that matching the source does not bind");
}

bool target_is_determined(const Rule& rule) {
  std::vector<bool> var_bound(rule.vars.size()), dim_bound(rule.dims.size()), param_bound(rule.params.size());
  auto bind_dims = [&](const std::vector<DimTerm>& dims) {
    for (const DimTerm& d : dims)
      if (d.is_symbol()) dim_bound[static_cast<size_t>(d.symbol)] = true;
  };
  for (const PatternOp& op : rule.source) {
    for (const PatternRef& r : op.inputs)
      if (r.is_var()) {
        var_bound[static_cast<size_t>(r.var)] = true;
        bind_dims(rule.vars[static_cast<size_t>(r.var)].shape);
      }
    for (const auto& [key, e] : op.attrs) {
      if (e.kind == AttrExprKind::Param) param_bound[static_cast<size_t>(e.param)] = true;
      if (e.kind == AttrExprKind::Dims) bind_dims(e.dims);
    }
  }
  auto dims_bound = [&](const std::vector<DimTerm>& dims) {
    for (const DimTerm& d : dims)
      if (d.is_symbol() && !dim_bound[static_cast<size_t>(d.symbol)]) return false;
    return true;
  };
  for (const PatternOp& op : rule.target) {
    for (const PatternRef& r : op.inputs)
      if (r.is_var() && !var_bound[static_cast<size_t>(r.var)]) return false;
    for (const auto& [key, e] : op.attrs) {
      if ((e.kind == AttrExprKind::Param || e.kind == AttrExprKind::ComposePerm) && !param_bound[static_cast<size_t>(e.param)])
        return false;
      if (e.kind == AttrExprKind::ComposePerm && !param_bound[static_cast<size_t>(e.param2)]) return false;
      if (!dims_bound(e.dims)) return false;
    }
  }
  for (const RuleOutput& o : rule.outputs)
    if (o.target.is_var() && !var_bound[static_cast<size_t>(o.target.var)]) return false;
  for (const RuleConstraint& c : rule.constraints)
    for (int32_t p : c.params)
      if (!param_bound[static_cast<size_t>(p)]) return false;
  return true;
}

// ---- readable forms -------------------------------------------------------

namespace {

std::string dims_text(const Rule& rule, const std::vector<DimTerm>& dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ',';
    out += dims[i].is_symbol() ? rule.dims[static_cast<size_t>(dims[i].symbol)].name : std::to_string(dims[i].literal);
  }
  return out;
}

std::string expr_text(const Rule& rule, AttrKey key, const AttrExpr& e) {
  switch (e.kind) {
    case AttrExprKind::Literal: return attr_value_to_string(key, e.literal);
    case AttrExprKind::Param: return "$" + rule.params[static_cast<size_t>(e.param)].name;
    case AttrExprKind::Dims: return "[" + dims_text(rule, e.dims) + "]";
    case AttrExprKind::SamePads: return "same(" + dims_text(rule, e.dims) + ")";
    case AttrExprKind::ComposePerm:
      return "compose($" + rule.params[static_cast<size_t>(e.param)].name + ",$" +
             rule.params[static_cast<size_t>(e.param2)].name + ")";
  }
  return "?";
}

std::string attrs_text(const Rule& rule, const PatternOp& op) {
  std::string out;
  for (const auto& [key, e] : op.attrs) {
    if (!out.empty()) out += ' ';
    out += std::string(attr_key_name(key)) + "=" + expr_text(rule, key, e);
  }
  return out;
}

std::string ref_text(const Rule& rule, const std::vector<PatternOp>& ops, const PatternRef& ref) {
  if (ref.is_var()) return rule.vars[static_cast<size_t>(ref.var)].name;
  std::string out = "%" + std::to_string(ref.op);
  if (ops[static_cast<size_t>(ref.op)].num_outputs > 1) out += "." + std::to_string(ref.index);
  return out;
}

std::string nested_text(const Rule& rule, const std::vector<PatternOp>& ops, const PatternRef& ref) {
  if (ref.is_var()) return rule.vars[static_cast<size_t>(ref.var)].name;
  const PatternOp& op = ops[static_cast<size_t>(ref.op)];
  if (op.type == OpType::Weight) {
    // Rule-made constants read as what they are: I[c,c,kh,kw], const(1e-05).
    const AttrExpr* fill = op.find_attr(AttrKey::Fill);
    const AttrExpr* shape = op.find_attr(AttrKey::Shape);
    if (fill && fill->kind == AttrExprKind::Literal &&
        fill->literal == AttrValue{static_cast<int64_t>(ConstantFill::Identity)} && shape)
      return "I" + expr_text(rule, AttrKey::Shape, *shape);
    const AttrExpr* value = op.find_attr(AttrKey::Value);
    return "const(" + (value ? expr_text(rule, AttrKey::Value, *value) : std::string("0")) + ")";
  }
  std::string out(op_type_name(op.type));
  if (op.num_outputs > 1) out += "[" + std::to_string(ref.index) + "]";
  out += '(';
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    if (k) out += ", ";
    out += nested_text(rule, ops, op.inputs[k]);
  }
  out += ')';
  return out;
}

void append_pattern(std::string& out, const Rule& rule, const std::vector<PatternOp>& ops, const char* label) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const PatternOp& op = ops[i];
    out += "    ";
    out += i == 0 ? label : "      ";
    out += " %" + std::to_string(i) + " = " + std::string(op_type_name(op.type)) + "(";
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      if (k) out += ", ";
      out += ref_text(rule, ops, op.inputs[k]);
    }
    out += ")";
    std::string attrs = attrs_text(rule, op);
    if (!attrs.empty()) out += " " + attrs;
    out += '\n';
  }
  if (ops.empty()) out += std::string("    ") + label + " (none)\n";
}

}  // namespace

std::string describe_pattern(const Rule& rule, const std::vector<PatternOp>& ops,
                             const std::vector<PatternRef>& roots) {
  std::string out;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (i) out += "; ";
    out += nested_text(rule, ops, roots[i]);
  }
  return out;
}

std::string describe_rule(const Rule& rule) {
  std::string out = rule.name + "  [" + rule.origin + "]\n";
  std::vector<PatternRef> src_roots, dst_roots;
  for (const RuleOutput& o : rule.outputs) {
    src_roots.push_back(o.source);
    dst_roots.push_back(o.target);
  }
  out += "    " + describe_pattern(rule, rule.source, src_roots) + "  =>  " +
         describe_pattern(rule, rule.target, dst_roots) + "\n";
  out += "    vars  ";
  for (size_t v = 0; v < rule.vars.size(); ++v) {
    if (v) out += "  ";
    out += rule.vars[v].name + ":" + (rule.vars[v].weight ? "weight" : "") + "[" +
           dims_text(rule, rule.vars[v].shape) + "]";
  }
  out += '\n';
  std::string domains;
  for (const DimSymbol& d : rule.dims)
    if (d.domain != DimDomain::Any) domains += "  " + d.name + ":" + std::string(dim_domain_name(d.domain));
  if (!domains.empty()) out += "    dims " + domains + "\n";
  for (const RuleParam& p : rule.params) {
    out += "    param $" + p.name + " (" + std::string(attr_key_name(p.role)) + ")";
    if (!p.admits.empty()) {
      out += " in {";
      for (size_t i = 0; i < p.admits.size(); ++i) out += (i ? ", " : "") + attr_value_to_string(p.role, p.admits[i]);
      out += "}";
    }
    out += '\n';
  }
  for (const RuleConstraint& c : rule.constraints) {
    out += "    where " + std::string(constraint_kind_name(c.kind)) + "(";
    for (size_t i = 0; i < c.params.size(); ++i)
      out += (i ? ",$" : "$") + rule.params[static_cast<size_t>(c.params[i])].name;
    for (int32_t d : c.dims) out += "," + rule.dims[static_cast<size_t>(d)].name;
    for (size_t i = 0; i < c.vars.size(); ++i) out += (i ? "," : "") + rule.vars[static_cast<size_t>(c.vars[i])].name;
    out += ")\n";
  }
  append_pattern(out, rule, rule.source, "source");
  append_pattern(out, rule, rule.target, "target");
  out += "    outputs ";
  for (size_t k = 0; k < rule.outputs.size(); ++k) {
    if (k) out += ", ";
    out += ref_text(rule, rule.source, rule.outputs[k].source) + " -> " +
           ref_text(rule, rule.target, rule.outputs[k].target);
  }
  out += '\n';
  return out;
}

std::string rule_identity_key(const Rule& rule) {
  // Names of variables, params and dims do not matter, only their positions
  // and properties, so print those by index.
  std::string out;
  auto dims = [&](const std::vector<DimTerm>& ds) {
    std::string s = "[";
    for (const DimTerm& d : ds) s += d.is_symbol() ? "d" + std::to_string(d.symbol) + "," : std::to_string(d.literal) + ",";
    return s + "]";
  };
  for (const DimSymbol& d : rule.dims) out += std::string(dim_domain_name(d.domain)) + ";";
  out += "|";
  for (const RuleVar& v : rule.vars) out += (v.weight ? "w" : "t") + dims(v.shape) + ";";
  out += "|";
  for (const RuleParam& p : rule.params) {
    out += std::string(attr_key_name(p.role)) + "{";
    for (const AttrValue& a : p.admits) out += attr_value_to_string(p.role, a) + ",";
    out += "};";
  }
  auto pattern = [&](const std::vector<PatternOp>& ops) {
    std::string s;
    for (const PatternOp& op : ops) {
      s += std::string(op_type_name(op.type)) + "(";
      for (const PatternRef& r : op.inputs)
        s += r.is_var() ? "v" + std::to_string(r.var) + "," : "o" + std::to_string(r.op) + "." + std::to_string(r.index) + ",";
      s += ")";
      for (const auto& [key, e] : op.attrs) {
        s += std::string(attr_key_name(key)) + "=";
        switch (e.kind) {
          case AttrExprKind::Literal: s += attr_value_to_string(key, e.literal); break;
          case AttrExprKind::Param: s += "p" + std::to_string(e.param); break;
          case AttrExprKind::Dims: s += "dims" + dims(e.dims); break;
          case AttrExprKind::SamePads: s += "same" + dims(e.dims); break;
          case AttrExprKind::ComposePerm: s += "compose" + std::to_string(e.param) + "," + std::to_string(e.param2); break;
        }
        s += ' ';
      }
      s += "/" + std::to_string(op.num_outputs) + ";";
    }
    return s;
  };
  out += "|" + pattern(rule.source) + "|" + pattern(rule.target) + "|";
  for (const RuleOutput& o : rule.outputs)
    out += std::to_string(o.source.op) + "." + std::to_string(o.source.index) + ">" +
           (o.target.is_var() ? "v" + std::to_string(o.target.var) : std::to_string(o.target.op) + "." +
                                                                          std::to_string(o.target.index)) +
           ";";
  for (const RuleConstraint& c : rule.constraints) {
    out += std::string(constraint_kind_name(c.kind));
    for (int32_t p : c.params) out += "," + std::to_string(p);
    // Dims are keyed apart from params; a constraint without dims keeps its old key.
    for (int32_t d : c.dims) out += ",d" + std::to_string(d);
    for (int32_t v : c.vars) out += ",v" + std::to_string(v);
    out += ";";
  }
  return out;
}

std::string rule_op_set(const Rule& rule) {
  std::set<std::string_view> types;
  for (const PatternOp& op : rule.source) types.insert(op_type_name(op.type));
  std::string out;
  for (std::string_view t : types) {
    if (!out.empty()) out += '+';
    out += t;
  }
  return out;
}

}  // namespace graphworld
