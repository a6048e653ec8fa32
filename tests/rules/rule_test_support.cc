#include "tests/rules/rule_test_support.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "env/ops/validate.h"
#include "env/rules/rule_instance.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_verifier.h"

namespace graphworld::testing {

std::optional<Graph> source_instance(const Rule& rule) {
  std::optional<Graph> found;
  for_each_candidate_binding(rule, {}, [&](const RuleBinding& b, int) {
    Graph g;
    std::vector<TensorRef> vars;
    for (size_t v = 0; v < rule.vars.size(); ++v) {
      Shape shape;
      for (const DimTerm& d : rule.vars[v].shape) shape.push_back(d.is_symbol() ? b.dims[static_cast<size_t>(d.symbol)] : d.literal);
      TensorInfo info{DType::Float32, shape};
      const float low = rule.vars[v].positive ? 0.5f : -1.0f;
      vars.push_back({rule.vars[v].weight ? g.add_random_weight(rule.vars[v].name, info, {v + 1, low, 1.0f})
                                          : g.add_input(rule.vars[v].name, info),
                      0});
    }
    try {
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
  for (const Rule& r : default_rule_library().rules)
    if (r.name == name) return r;
  ADD_FAILURE() << "no rule '" << name << "' in the default library";
  static Rule none;
  return none;
}

}  // namespace graphworld::testing
