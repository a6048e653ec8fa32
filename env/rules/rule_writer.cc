#include "env/rules/rule_writer.h"

#include <algorithm>

#include "common/error.h"
#include "env/rules/rule_constant.h"

namespace graphworld {

RuleWriter::RuleWriter(std::string name, std::string origin) {
  rule_.name = std::move(name);
  rule_.origin = std::move(origin);
}

DimTerm RuleWriter::dim(std::string name, DimDomain domain) {
  rule_.dims.push_back({std::move(name), domain});
  return DimTerm::of_symbol(static_cast<int32_t>(rule_.dims.size() - 1));
}

PatternRef RuleWriter::var(std::string name, std::vector<DimTerm> shape) {
  rule_.vars.push_back({std::move(name), false, false, std::move(shape)});
  return PatternRef::of_var(static_cast<int32_t>(rule_.vars.size() - 1));
}

PatternRef RuleWriter::weight(std::string name, std::vector<DimTerm> shape, bool positive) {
  rule_.vars.push_back({std::move(name), true, positive, std::move(shape)});
  return PatternRef::of_var(static_cast<int32_t>(rule_.vars.size() - 1));
}

int32_t RuleWriter::param(std::string name, AttrKey role, std::vector<AttrValue> admits) {
  rule_.params.push_back({std::move(name), role, std::move(admits)});
  return static_cast<int32_t>(rule_.params.size() - 1);
}

PatternRef RuleWriter::add(std::vector<PatternOp>& ops, OpType type, std::vector<PatternRef> inputs, AttrList attrs,
                           int32_t num_outputs) {
  sort_pattern_attrs(attrs);
  ops.push_back({type, std::move(attrs), std::move(inputs), num_outputs});
  return PatternRef::of_op(static_cast<int32_t>(ops.size() - 1), 0);
}

PatternRef RuleWriter::source(OpType type, std::vector<PatternRef> inputs, AttrList attrs, int32_t num_outputs) {
  return add(rule_.source, type, std::move(inputs), std::move(attrs), num_outputs);
}

PatternRef RuleWriter::target(OpType type, std::vector<PatternRef> inputs, AttrList attrs, int32_t num_outputs) {
  return add(rule_.target, type, std::move(inputs), std::move(attrs), num_outputs);
}

PatternRef RuleWriter::target_constant(AttrExpr value, std::vector<DimTerm> shape) {
  return add(rule_.target, OpType::Weight, {}, {{AttrKey::Value, std::move(value)}, {AttrKey::Shape, AttrExpr::of_dims(std::move(shape))}}, 1);
}

PatternRef RuleWriter::target_identity(std::vector<DimTerm> shape) {
  return add(rule_.target, OpType::Weight, {},
             {{AttrKey::Fill, AttrExpr::of_literal(static_cast<int64_t>(ConstantFill::Identity))},
              {AttrKey::Shape, AttrExpr::of_dims(std::move(shape))}},
             1);
}

void RuleWriter::output(PatternRef source_tensor, PatternRef target_tensor) {
  rule_.outputs.push_back({source_tensor, target_tensor});
}

void RuleWriter::constraint(ConstraintKind kind, std::vector<int32_t> params, std::vector<DimTerm> dims) {
  std::vector<int32_t> symbols;
  for (const DimTerm& d : dims) {
    if (!d.is_symbol()) throw GraphError("rule '" + rule_.name + "': a constraint relates dim symbols, not literals");
    symbols.push_back(d.symbol);
  }
  rule_.constraints.push_back({kind, std::move(params), std::move(symbols), {}});
}

void RuleWriter::siblings(PatternRef a, PatternRef b) {
  if (!a.is_var() || !b.is_var()) throw GraphError("rule '" + rule_.name + "': sibling inputs must be variables");
  rule_.constraints.push_back({ConstraintKind::SiblingInputs, {}, {}, {a.var, b.var}});
}

Rule RuleWriter::finish() {
  check_rule_references(rule_);
  return rule_;
}

}  // namespace graphworld
