#include "tests/rules/rule_test_support.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "env/ops/validate.h"
#include "env/rules/rule_instance.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_verifier.h"
#include "tests/support/default_rules.h"

namespace graphworld::testing {

std::optional<Graph> source_instance(const Rule& rule) {
  std::optional<Graph> found;
  for_each_candidate_binding(rule, {}, [&](const RuleBinding& b, int) {
    Graph g;
    std::vector<TensorRef> vars;
    auto shape_of = [&](size_t v) {
      Shape shape;
      for (const DimTerm& d : rule.vars[v].shape) shape.push_back(d.is_symbol() ? b.dims[static_cast<size_t>(d.symbol)] : d.literal);
      return shape;
    };
    for (size_t v = 0; v < rule.vars.size(); ++v) {
      TensorInfo info{DType::Float32, shape_of(v)};
      const float low = rule.vars[v].positive ? 0.5f : -1.0f;
      vars.push_back({rule.vars[v].weight ? g.add_random_weight(rule.vars[v].name, info, {v + 1, low, 1.0f})
                                          : g.add_input(rule.vars[v].name, info),
                      0});
    }
    try {
      // Sibling inputs are the two pieces of one Split, split where their
      // shapes differ (the first axis where they do not).
      for (const RuleConstraint& c : rule.constraints) {
        if (c.kind != ConstraintKind::SiblingInputs) continue;
        const size_t a = static_cast<size_t>(c.vars[0]), bv = static_cast<size_t>(c.vars[1]);
        const Shape sa = shape_of(a), sb = shape_of(bv);
        if (sa.size() != sb.size()) return true;
        size_t axis = 0;
        while (axis + 1 < sa.size() && sa[axis] == sb[axis]) ++axis;
        Shape whole = sa;
        whole[axis] += sb[axis];
        const TensorRef joined{g.add_input("siblings", TensorInfo{DType::Float32, whole}), 0};
        Attributes attrs;
        attrs.set(AttrKey::Axis, static_cast<int64_t>(axis));
        attrs.set(AttrKey::Split, std::vector<int64_t>{sa[axis], sb[axis]});
        const OpId split = g.add_op(OpType::Split, "siblings.split", attrs, {joined},
                                    {TensorInfo{DType::Float32, sa}, TensorInfo{DType::Float32, sb}});
        vars[a] = {split, 0};
        vars[bv] = {split, 1};
      }
      auto outs = build_pattern(rule.source, b, vars, g, "src.");
      for (size_t k = 0; k < rule.outputs.size(); ++k)
        g.add_output(resolve_ref(rule.outputs[k].source, vars, outs), "out" + std::to_string(k));
      validate_graph(g);
      // The target must fit too, with the same output shapes (as matching requires).
      Graph scratch = g;
      auto target = build_pattern(rule.target, b, vars, scratch, "dst.");
      for (size_t k = 0; k < rule.outputs.size(); ++k)
        if (!(scratch.info(resolve_ref(rule.outputs[k].source, vars, outs)) ==
              scratch.info(resolve_ref(rule.outputs[k].target, vars, target))))
          return true;
    } catch (const GraphError&) {
      return true;
    }
    found = std::move(g);
    return false;
  });
  return found;
}

const Rule& default_rule(const std::string& name) {
  const int32_t index = default_rule_index(name);  // fails the test when there is none
  static const Rule none;
  return index < 0 ? none : default_matcher().rules()[static_cast<size_t>(index)];
}

}  // namespace graphworld::testing
