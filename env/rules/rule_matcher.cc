#include "env/rules/rule_matcher.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "common/error.h"
#include "env/ops/op_schema.h"
#include "env/rules/rule_constant.h"

namespace graphworld {

namespace {

bool commutative(OpType type) { return type == OpType::Add || type == OpType::Mul; }

// Graph input slot that pattern slot `s` of a (possibly swapped) op reads.
int32_t graph_slot(int32_t s, bool swapped) { return swapped ? 1 - s : s; }

}  // namespace

bool RuleMatch::operator<(const RuleMatch& other) const {
  return std::tie(rule, ops, vars) < std::tie(other.rule, other.ops, other.vars);
}

RuleMatcher::RuleMatcher(std::vector<Rule> rules)
    : rules_(std::move(rules)), anchors_by_type_(static_cast<size_t>(kNumOpTypes)) {
  plans_.resize(rules_.size());
  for (size_t r = 0; r < rules_.size(); ++r) {
    const Rule& rule = rules_[r];
    const auto n = static_cast<int32_t>(rule.source.size());
    for (int32_t anchor = 0; anchor < n; ++anchor) {
      // Breadth-first from the anchor over the pattern's edges.
      Plan plan;
      std::vector<bool> placed(static_cast<size_t>(n), false);
      std::vector<bool> var_bound(rule.vars.size(), false);
      plan.steps.push_back({anchor, Via::Anchor, -1, -1, 0});
      placed[static_cast<size_t>(anchor)] = true;
      for (size_t next = 0; next < plan.steps.size() || static_cast<int32_t>(plan.steps.size()) < n; ++next) {
        if (next == plan.steps.size()) {
          // Nothing bound reaches the rest: scan for the first unplaced op.
          int32_t p = 0;
          while (placed[static_cast<size_t>(p)]) ++p;
          placed[static_cast<size_t>(p)] = true;
          plan.steps.push_back({p, Via::Scan, -1, -1, 0});
        }
        const int32_t q = plan.steps[next].op;
        const PatternOp& qop = rule.source[static_cast<size_t>(q)];
        for (size_t s = 0; s < qop.inputs.size(); ++s) {
          const PatternRef& in = qop.inputs[s];
          if (in.is_var()) {
            var_bound[static_cast<size_t>(in.var)] = true;
          } else if (!placed[static_cast<size_t>(in.op)]) {
            placed[static_cast<size_t>(in.op)] = true;
            plan.steps.push_back({in.op, Via::Producer, q, static_cast<int32_t>(s), in.index});
          }
        }
        for (int32_t p = 0; p < n; ++p) {
          if (placed[static_cast<size_t>(p)]) continue;
          const PatternOp& pop = rule.source[static_cast<size_t>(p)];
          for (size_t s = 0; s < pop.inputs.size(); ++s) {
            const PatternRef& in = pop.inputs[s];
            if (!in.is_var() && in.op == q) {
              placed[static_cast<size_t>(p)] = true;
              plan.steps.push_back({p, Via::Consumer, q, static_cast<int32_t>(s), in.index});
              break;
            }
            if (in.is_var() && var_bound[static_cast<size_t>(in.var)]) {
              placed[static_cast<size_t>(p)] = true;
              plan.steps.push_back({p, Via::VarUse, in.var, static_cast<int32_t>(s), 0});
              break;
            }
          }
        }
      }
      plans_[r].push_back(std::move(plan));
      anchors_by_type_[static_cast<size_t>(rule.source[static_cast<size_t>(anchor)].type)].emplace_back(
          static_cast<int32_t>(r), anchor);
    }
  }
}

// The state of one search; copied at each branch (patterns are a few ops).
struct RuleMatcher::Search {
  const Graph& graph;
  const GraphIndex& index;
  const Rule& rule;
  const Plan& plan;
  int32_t rule_id;
  std::vector<RuleMatch>& out;

  struct State {
    std::vector<OpId> ops;
    std::vector<uint8_t> swapped;
    std::vector<TensorRef> vars;
    RuleBinding binding;
  };

  void run(OpId anchor_op) {
    State start;
    start.ops.assign(rule.source.size(), -1);
    start.swapped.assign(rule.source.size(), 0);
    start.vars.assign(rule.vars.size(), TensorRef{-1, 0});
    start.binding = RuleBinding(rule);
    try_bind(start, 0, anchor_op);
  }

  // Binds step `k`'s pattern op to graph op `g` in each admissible input order.
  void try_bind(const State& state, size_t k, OpId g) {
    const int32_t p = plan.steps[k].op;
    const PatternOp& pop = rule.source[static_cast<size_t>(p)];
    const bool comm = commutative(pop.type) && pop.inputs.size() == 2;
    for (int order = 0; order < (comm ? 2 : 1); ++order) {
      const bool swapped = order == 1;
      State next = state;
      if (bind(next, p, g, swapped)) extend(next, k + 1);
    }
  }

  void extend(const State& state, size_t k) {
    if (k == plan.steps.size()) {
      finish(state);
      return;
    }
    const Step& step = plan.steps[k];
    const PatternOp& pop = rule.source[static_cast<size_t>(step.op)];
    switch (step.via) {
      case Via::Anchor: return;
      case Via::Producer: {
        const OpId q = state.ops[static_cast<size_t>(step.from)];
        const Op& qop = graph.op(q);
        const TensorRef t = qop.inputs[static_cast<size_t>(graph_slot(step.slot, state.swapped[static_cast<size_t>(step.from)]))];
        if (t.index != step.index) return;
        try_bind(state, k, t.op);
        return;
      }
      case Via::Scan: {
        for (OpId g : index.ops_of_type(pop.type)) try_bind(state, k, g);
        return;
      }
      case Via::Consumer:
      case Via::VarUse: {
        const TensorRef t = step.via == Via::Consumer
                                ? TensorRef{state.ops[static_cast<size_t>(step.from)], step.index}
                                : state.vars[static_cast<size_t>(step.from)];
        for (const TensorConsumer& use : index.consumers(t.op)) {
          if (use.output != t.index) continue;
          if (graph.op(use.op).type != pop.type) continue;
          try_bind(state, k, use.op);
        }
        return;
      }
    }
  }

  bool bind(State& st, int32_t p, OpId g, bool swapped) {
    const PatternOp& pop = rule.source[static_cast<size_t>(p)];
    const Op& op = graph.op(g);
    if (op.type != pop.type || !index.live(g)) return false;
    if (op.inputs.size() != pop.inputs.size() || static_cast<int32_t>(op.outputs.size()) != pop.num_outputs) return false;
    for (OpId used : st.ops)
      if (used == g) return false;
    for (size_t s = 0; s < pop.inputs.size(); ++s) {
      const PatternRef& r = pop.inputs[s];
      const TensorRef t = op.inputs[static_cast<size_t>(graph_slot(static_cast<int32_t>(s), swapped))];
      if (r.is_var()) {
        TensorRef& v = st.vars[static_cast<size_t>(r.var)];
        if (v.op >= 0) {
          if (v != t) return false;
          continue;
        }
        const RuleVar& var = rule.vars[static_cast<size_t>(r.var)];
        if (var.weight && !index.constant(t.op)) return false;
        if (!unify_shape(var.shape, graph.info(t).shape, st.binding)) return false;
        v = t;
      } else {
        const OpId bound = st.ops[static_cast<size_t>(r.op)];
        if (bound >= 0 && (t.op != bound || t.index != r.index)) return false;
      }
    }
    // Consumers already bound must read this op at their own slot.
    for (size_t q = 0; q < rule.source.size(); ++q) {
      if (st.ops[q] < 0) continue;
      const PatternOp& qop = rule.source[q];
      for (size_t s = 0; s < qop.inputs.size(); ++s) {
        const PatternRef& r = qop.inputs[s];
        if (r.is_var() || r.op != p) continue;
        const TensorRef t = graph.op(st.ops[q]).inputs[static_cast<size_t>(graph_slot(static_cast<int32_t>(s), st.swapped[q]))];
        if (t.op != g || t.index != r.index) return false;
      }
    }
    for (const auto& [key, expr] : pop.attrs) {
      const AttrValue* have = effective_attr(op.type, op.attrs, key);
      if (!have || !unify_attr(expr, *have, st.binding)) return false;
    }
    st.ops[static_cast<size_t>(p)] = g;
    st.swapped[static_cast<size_t>(p)] = swapped;
    return true;
  }

  void finish(const State& st) {
    for (size_t p = 0; p < rule.source.size(); ++p) {
      const Op& op = graph.op(st.ops[p]);
      if (!attrs_match(rule.source[p], op.type, op.attrs, st.binding)) return;
    }
    if (!binding_admitted(rule, st.binding)) return;
    if (!siblings_admitted(st)) return;
    if (!outputs_private(st)) return;
    if (!target_fits(st)) return;
    RuleMatch m{rule_id, st.ops, st.vars, st.binding};
    out.push_back(std::move(m));
  }

  // Sibling inputs: two distinct outputs of one (non-leaf) op.
  bool siblings_admitted(const State& st) const {
    for (const RuleConstraint& c : rule.constraints) {
      if (c.kind != ConstraintKind::SiblingInputs) continue;
      const TensorRef a = st.vars[static_cast<size_t>(c.vars[0])], b = st.vars[static_cast<size_t>(c.vars[1])];
      if (a.op != b.op || a.index == b.index || graph.op(a.op).is_leaf()) return false;
    }
    return true;
  }

  // Matched outputs the rule does not map may only feed matched ops.
  bool outputs_private(const State& st) const {
    for (size_t p = 0; p < rule.source.size(); ++p) {
      const OpId g = st.ops[p];
      for (int32_t k = 0; k < rule.source[p].num_outputs; ++k) {
        bool mapped = false;
        for (const RuleOutput& o : rule.outputs)
          if (o.source.op == static_cast<int32_t>(p) && o.source.index == k) mapped = true;
        if (mapped) continue;
        for (const TensorConsumer& use : index.consumers(g))
          if (use.output == k && std::find(st.ops.begin(), st.ops.end(), use.op) == st.ops.end()) return false;
        if (index.is_graph_output(g))
          for (const GraphOutput& go : graph.outputs())
            if (go.ref == TensorRef{g, k}) return false;
      }
    }
    return true;
  }

  // The target's shapes, inferred without touching the graph, must fit and
  // give every mapped output the source's shape.
  bool target_fits(const State& st) const {
    std::vector<std::vector<TensorInfo>> infos;
    infos.reserve(rule.target.size());
    try {
      for (const PatternOp& top : rule.target) {
        Attributes attrs = evaluate_attrs(top, st.binding);
        if (top.type == OpType::Weight) {
          const Shape shape = rule_constant_shape(attrs, "target");
          int64_t elements = 1;
          for (int64_t d : shape) {
            if (d > 0 && elements > kMaxRuleConstantElements / d) return false;
            elements *= d;
          }
          if (elements > kMaxRuleConstantElements) return false;
          infos.push_back({TensorInfo{DType::Float32, shape}});
          continue;
        }
        std::vector<TensorInfo> in;
        for (const PatternRef& r : top.inputs)
          in.push_back(r.is_var() ? graph.info(st.vars[static_cast<size_t>(r.var)])
                                  : infos[static_cast<size_t>(r.op)][static_cast<size_t>(r.index)]);
        infos.push_back(infer_outputs(top.type, attrs, in, "target"));
        if (static_cast<int32_t>(infos.back().size()) != top.num_outputs) return false;
      }
    } catch (const GraphError&) {
      return false;
    }
    for (const RuleOutput& o : rule.outputs) {
      const TensorInfo& have = graph.info({st.ops[static_cast<size_t>(o.source.op)], o.source.index});
      const TensorInfo& want = o.target.is_var() ? graph.info(st.vars[static_cast<size_t>(o.target.var)])
                                                 : infos[static_cast<size_t>(o.target.op)][static_cast<size_t>(o.target.index)];
      if (!(have == want)) return false;
    }
    return true;
  }
};

bool RuleMatcher::acyclic(const Graph& graph, const GraphIndex& index, const RuleMatch& m) const {
  // A cycle appears if a variable's value depends on a matched op: the target
  // would read it while feeding the matched op's consumers. Search backwards
  // from the variables; ops shallower than every matched op cannot lead there.
  int32_t min_depth = INT32_MAX;
  for (OpId g : m.ops) min_depth = std::min(min_depth, index.depth(g));
  std::vector<OpId> work;
  std::vector<OpId> seen;
  for (const TensorRef& v : m.vars) work.push_back(v.op);
  while (!work.empty()) {
    OpId id = work.back();
    work.pop_back();
    if (index.depth(id) < min_depth) continue;
    if (std::find(m.ops.begin(), m.ops.end(), id) != m.ops.end()) return false;
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    seen.push_back(id);
    for (const TensorRef& r : graph.op(id).inputs) work.push_back(r.op);
  }
  return true;
}

void RuleMatcher::search_from(const Graph& graph, const GraphIndex& index, int32_t rule, int32_t anchor, OpId op,
                              std::vector<RuleMatch>& out) const {
  const Plan& plan = plans_[static_cast<size_t>(rule)][static_cast<size_t>(anchor)];
  if (plan.steps.empty()) return;
  // Cheap checks first: most (rule, anchor) pairs fail on arity or a literal
  // attribute, and a full search allocates its state.
  const PatternOp& pop = rules_[static_cast<size_t>(rule)].source[static_cast<size_t>(anchor)];
  const Op& gop = graph.op(op);
  if (gop.inputs.size() != pop.inputs.size() || static_cast<int32_t>(gop.outputs.size()) != pop.num_outputs) return;
  for (const auto& [key, expr] : pop.attrs) {
    if (expr.kind != AttrExprKind::Literal) continue;
    const AttrValue* have = effective_attr(gop.type, gop.attrs, key);
    if (!have || *have != expr.literal) return;
  }
  const size_t before = out.size();
  Search search{graph, index, rules_[static_cast<size_t>(rule)], plan, rule, out};
  search.run(op);
  if (may_create_cycle(rule)) {
    auto cyclic = [&](const RuleMatch& m) { return !acyclic(graph, index, m); };
    out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(), cyclic), out.end());
  }
}

std::vector<RuleMatch> RuleMatcher::find_all(const Graph& graph, const GraphIndex& index) const {
  std::vector<RuleMatch> out;
  for (size_t r = 0; r < rules_.size(); ++r) {
    const Rule& rule = rules_[r];
    int32_t anchor = 0;
    for (int32_t p = 1; p < static_cast<int32_t>(rule.source.size()); ++p)
      if (index.live_count(rule.source[static_cast<size_t>(p)].type) <
          index.live_count(rule.source[static_cast<size_t>(anchor)].type))
        anchor = p;
    for (OpId g : index.ops_of_type(rule.source[static_cast<size_t>(anchor)].type))
      search_from(graph, index, static_cast<int32_t>(r), anchor, g, out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end(), [](const RuleMatch& a, const RuleMatch& b) { return a.same_place(b); }),
            out.end());
  return out;
}

void RuleMatcher::find_at(const Graph& graph, const GraphIndex& index, OpId op, std::vector<RuleMatch>& out) const {
  if (!index.live(op)) return;
  for (const auto& [rule, anchor] : anchors_by_type_[static_cast<size_t>(graph.op(op).type)])
    search_from(graph, index, rule, anchor, op, out);
}

}  // namespace graphworld
