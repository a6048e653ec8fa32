// Finds where rules apply in a graph.
//
// A match binds every source pattern op to a live graph op (injectively),
// every variable to a tensor and every dim symbol and parameter to a value,
// such that types, wiring, attributes, shapes, weight-only variables,
// parameter admissions and constraints all agree; the matched ops' outputs
// that the rule does not map are used by no op outside the match; the target
// builds with the same output shapes; and (for rules with several outputs)
// the rewrite would not create a cycle; and no constant the target creates
// exceeds kMaxRuleConstantElements (rule_constant.h). Add and Mul match
// either input order.
//
// Search anchors on one pattern op and grows the match along the pattern's
// edges (to producers, to consumers, and through shared variables); a part
// of the pattern linked to the rest only through sizes (two convs on two
// inputs, to be merged) is found by scanning the ops of its type. A full
// search anchors every rule on its rarest op type in the graph; an
// incremental one anchors on the ops a rewrite touched.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "env/rules/graph_index.h"
#include "env/rules/rule.h"
#include "env/rules/rule_instance.h"

namespace graphworld {

struct RuleMatch {
  int32_t rule = -1;
  std::vector<OpId> ops;         // graph op of each source pattern op
  std::vector<TensorRef> vars;   // graph tensor of each variable
  RuleBinding binding;
  // Deterministic order: by rule, then matched ops, then variables.
  bool operator<(const RuleMatch& other) const;
  bool same_place(const RuleMatch& other) const {
    return rule == other.rule && ops == other.ops && vars == other.vars;
  }
};

class RuleMatcher {
 public:
  explicit RuleMatcher(std::vector<Rule> rules);

  const std::vector<Rule>& rules() const { return rules_; }
  size_t num_rules() const { return rules_.size(); }

  // Every match of every rule, sorted.
  std::vector<RuleMatch> find_all(const Graph& graph, const GraphIndex& index) const;
  // Matches that bind some source op to `op` (any rule), appended unsorted.
  void find_at(const Graph& graph, const GraphIndex& index, OpId op, std::vector<RuleMatch>& out) const;
  // Re-checks that a multi-output match still cannot create a cycle.
  bool acyclic(const Graph& graph, const GraphIndex& index, const RuleMatch& match) const;
  bool may_create_cycle(int32_t rule) const { return rules_[static_cast<size_t>(rule)].outputs.size() > 1; }

 private:
  // How the search reaches a pattern op from ops already bound.
  enum class Via : uint8_t {
    Anchor,    // the op the search starts from
    Producer,  // it produces input `slot` of bound op `from` (output `index`)
    Consumer,  // its input `slot` reads output `index` of bound op `from`
    VarUse,    // its input `slot` reads bound variable `from`
    Scan,      // shares nothing with the ops bound so far: every live op of its type
  };
  struct Step {
    int32_t op;
    Via via;
    int32_t from;
    int32_t slot;
    int32_t index;
  };
  struct Plan {
    std::vector<Step> steps;
  };
  struct Search;
  void search_from(const Graph& graph, const GraphIndex& index, int32_t rule, int32_t anchor, OpId op,
                   std::vector<RuleMatch>& out) const;

  std::vector<Rule> rules_;
  std::vector<std::vector<Plan>> plans_;  // [rule][anchor pattern op]
  std::vector<std::vector<std::pair<int32_t, int32_t>>> anchors_by_type_;  // [type] -> (rule, pattern op)
};

}  // namespace graphworld
