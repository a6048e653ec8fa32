#include "env/cost/graph_cost.h"

#include <algorithm>

#include "env/ops/blocked_layout.h"

namespace graphworld {
namespace {

// True when every op's inputs have smaller ids, which is how builders and the
// importer lay graphs out; then one forward pass needs no sort.
bool ids_are_topological(const Graph& graph) {
  for (size_t i = 0; i < graph.num_ops(); ++i)
    for (const TensorRef& ref : graph.ops()[i].inputs)
      if (static_cast<size_t>(ref.op) >= i) return false;
  return true;
}

// A slice of `in` to `out` reads one contiguous block of memory when only
// one axis shrinks, with step 1, every axis after it is whole and every axis
// before it has size 1.
bool contiguous_slice(const Shape& in, const Shape& out, bool unit_steps) {
  if (!unit_steps || in.size() != out.size()) return false;
  size_t d = 0;
  while (d < in.size() && out[d] == in[d]) ++d;
  if (d == in.size()) return true;  // nothing sliced
  for (size_t before = 0; before < d; ++before)
    if (in[before] != 1) return false;
  for (size_t after = d + 1; after < in.size(); ++after)
    if (out[after] != in[after]) return false;
  return true;
}

// Whether op `id` leaves its output blocked, given its inputs' classes. A
// constant is folded into a plain tensor before the first run.
bool output_blocked(const Graph& graph, OpId id, const std::vector<uint8_t>& constant,
                    const std::vector<uint8_t>& blocked) {
  const Op& op = graph.op(id);
  return !op.is_leaf() && !constant[id] &&
         output_is_blocked(graph, op, constant_input_mask(graph, id, constant), blocked_input_mask(op, blocked));
}

}  // namespace

bool is_metadata_only(const Graph& graph, const Op& op) {
  if (is_shape_only_op(op.type)) return true;
  switch (op.type) {
    case OpType::Transpose: {
      const Shape& shape = graph.info(op.inputs[0]).shape;
      std::vector<int64_t> perm = op.attrs.get_ints(AttrKey::Perm);
      if (perm.empty())
        for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) perm.push_back(d);
      // Free when the axes of size > 1 keep their relative order.
      int64_t last = -1;
      for (int64_t axis : perm) {
        if (axis < 0 || axis >= static_cast<int64_t>(shape.size())) return false;
        if (shape[static_cast<size_t>(axis)] == 1) continue;
        if (axis < last) return false;
        last = axis;
      }
      return true;
    }
    case OpType::Slice: {
      std::vector<int64_t> steps = op.attrs.get_ints(AttrKey::Steps);
      bool unit = std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s == 1; });
      return contiguous_slice(graph.info(op.inputs[0]).shape, op.outputs[0].shape, unit);
    }
    case OpType::Split: {
      const Shape& in = graph.info(op.inputs[0]).shape;
      for (const TensorInfo& out : op.outputs)
        if (!contiguous_slice(in, out.shape, true)) return false;
      return true;
    }
    default:
      return false;
  }
}

OpClasses classify_ops(const Graph& graph) {
  size_t n = graph.num_ops();
  OpClasses classes{std::vector<uint8_t>(n, 0), std::vector<uint8_t>(n, 0), std::vector<uint8_t>(n, 0)};
  std::vector<OpId> order;
  bool by_id = ids_are_topological(graph);
  if (!by_id) order = graph.topological_order();
  auto visit_forward = [&](OpId id) {
    const Op& op = graph.op(id);
    if (op.type == OpType::Weight) {
      classes.constant[id] = 1;
    } else if (op.type != OpType::Input) {
      bool all = true;
      for (const TensorRef& ref : op.inputs) all = all && classes.constant[ref.op];
      classes.constant[id] = all;
      classes.blocked[id] = output_blocked(graph, id, classes.constant, classes.blocked);
    }
  };
  if (by_id) {
    for (size_t i = 0; i < n; ++i) visit_forward(static_cast<OpId>(i));
  } else {
    for (OpId id : order) visit_forward(id);
  }
  for (const GraphOutput& out : graph.outputs()) classes.live[out.ref.op] = 1;
  auto visit_backward = [&](OpId id) {
    if (!classes.live[id]) return;
    for (const TensorRef& ref : graph.op(id).inputs) classes.live[ref.op] = 1;
  };
  if (by_id) {
    for (size_t i = n; i-- > 0;) visit_backward(static_cast<OpId>(i));
  } else {
    for (auto it = order.rbegin(); it != order.rend(); ++it) visit_backward(*it);
  }
  return classes;
}

bool is_free_op(const Graph& graph, OpId id, const std::vector<uint8_t>& constant, const std::vector<uint8_t>& live,
                const std::vector<uint8_t>& blocked) {
  const Op& op = graph.op(id);
  if (op.is_leaf() || constant[id] || !live[id]) return true;
  // A view of a blocked value is a conversion to plain NCHW in the executor
  // (say, the Split after two merged convs).
  return is_metadata_only(graph, op) && blocked_input_mask(op, blocked) == 0;
}

std::vector<OpCostKey> priced_op_keys(const Graph& graph, bool with_layouts) {
  OpClasses classes = classify_ops(graph);
  if (!with_layouts) std::fill(classes.blocked.begin(), classes.blocked.end(), 0);
  std::vector<OpCostKey> keys;
  for (size_t i = 0; i < graph.num_ops(); ++i) {
    OpId id = static_cast<OpId>(i);
    if (!is_free_op(graph, id, classes.constant, classes.live, classes.blocked))
      keys.push_back(make_op_cost_key(graph, id, constant_input_mask(graph, id, classes.constant),
                                      blocked_input_mask(graph.op(id), classes.blocked)));
  }
  return keys;
}

GraphCost graph_cost(const Graph& graph, CostModel& model) {
  CostTracker tracker(model);
  GraphCost cost;
  cost.total_ms = tracker.reset(graph);
  cost.op_ms.resize(graph.num_ops());
  for (size_t i = 0; i < graph.num_ops(); ++i) cost.op_ms[i] = tracker.op_ms(static_cast<OpId>(i));
  return cost;
}

double CostTracker::price(const Graph& graph, OpId id) {
  if (is_free_op(graph, id, constant_, live_, blocked_)) return 0;
  return model_->op_cost_ms(graph, id, constant_input_mask(graph, id, constant_),
                            blocked_input_mask(graph.op(id), blocked_));
}

bool CostTracker::settle_blocked(const Graph& graph, OpId id) {
  if (!layouts_) return false;
  bool blocked = output_blocked(graph, id, constant_, blocked_);
  bool changed = blocked_[id] != static_cast<uint8_t>(blocked);
  blocked_[id] = blocked;
  return changed;
}

double CostTracker::reset(const Graph& graph) {
  OpClasses classes = classify_ops(graph);
  constant_ = std::move(classes.constant);
  live_ = std::move(classes.live);
  blocked_ = std::move(classes.blocked);
  if (!layouts_) std::fill(blocked_.begin(), blocked_.end(), 0);
  op_ms_.assign(graph.num_ops(), 0.0);
  total_ms_ = 0;
  for (size_t i = 0; i < graph.num_ops(); ++i) {
    op_ms_[i] = price(graph, static_cast<OpId>(i));
    total_ms_ += op_ms_[i];
  }
  return total_ms_;
}

double CostTracker::update(const Graph& graph, std::span<const OpId> removed, std::span<const OpId> changed) {
  size_t n = graph.num_ops();
  size_t previous = op_ms_.size();
  if (op_ms_.size() < n) {
    op_ms_.resize(n, 0.0);
    constant_.resize(n, 0);
    live_.resize(n, 0);
    blocked_.resize(n, 0);
  }
  for (OpId id : removed) {
    total_ms_ -= op_ms_.at(static_cast<size_t>(id));
    op_ms_[id] = 0;
    live_[id] = 0;
    constant_[id] = 0;
    blocked_[id] = 0;
  }
  // Changed ops may feed each other (new ops are appended, rewired survivors
  // have smaller ids), so their constness and layout are settled inputs-first.
  // A rewired survivor whose layout changed is remembered: its readers may be
  // outside `changed`.
  std::vector<OpId> layout_changed;
  std::vector<uint8_t> state(changed.size(), 0);  // 0 pending, 1 visiting, 2 done
  auto index_of = [&](OpId id) -> ptrdiff_t {
    auto it = std::find(changed.begin(), changed.end(), id);
    return it == changed.end() ? -1 : it - changed.begin();
  };
  auto settle = [&](auto&& self, size_t k) -> void {
    if (state[k] != 0) return;
    state[k] = 1;
    OpId id = changed[k];
    const Op& op = graph.op(id);
    for (const TensorRef& ref : op.inputs) {
      ptrdiff_t j = index_of(ref.op);
      if (j >= 0) self(self, static_cast<size_t>(j));
    }
    if (op.type == OpType::Weight) {
      constant_[id] = 1;
    } else if (op.type == OpType::Input) {
      constant_[id] = 0;
    } else {
      bool all = true;
      for (const TensorRef& ref : op.inputs) all = all && constant_[ref.op];
      constant_[id] = all;
    }
    if (settle_blocked(graph, id) && static_cast<size_t>(id) < previous) layout_changed.push_back(id);
    // New ops are live; survivors keep their state (a rewired op that was
    // already dead stays dead).
    if (static_cast<size_t>(id) >= previous) live_[id] = 1;
    state[k] = 2;
  };
  for (size_t k = 0; k < changed.size(); ++k) settle(settle, k);
  std::vector<OpId> reprice(changed.begin(), changed.end());
  if (!layout_changed.empty()) {
    // Rare (a rewired Relu that now reads a Concat instead of a conv, say),
    // so the reader lists are built only here.
    auto consumers = graph.consumers();
    while (!layout_changed.empty()) {
      OpId id = layout_changed.back();
      layout_changed.pop_back();
      for (const auto& uses : consumers[static_cast<size_t>(id)])
        for (const TensorUse& use : uses) {
          if (std::find(reprice.begin(), reprice.end(), use.op) == reprice.end()) reprice.push_back(use.op);
          if (settle_blocked(graph, use.op)) layout_changed.push_back(use.op);
        }
    }
  }
  for (OpId id : reprice) {
    total_ms_ -= op_ms_[id];
    op_ms_[id] = price(graph, id);
    total_ms_ += op_ms_[id];
  }
  return total_ms_;
}

}  // namespace graphworld
