#include "env/rules/rule_verifier.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>

#include "common/error.h"
#include "env/ops/aten_kernels.h"
#include "env/rules/rule_instance.h"

namespace graphworld {

namespace {

using Ints = std::vector<int64_t>;

std::vector<int64_t> domain_sizes(DimDomain domain) {
  switch (domain) {
    case DimDomain::Any: return {2, 3, 5};
    case DimDomain::Spatial: return {5, 7, 8};
    case DimDomain::Kernel: return {1, 2, 3};
    case DimDomain::OddKernel: return {1, 3, 5};
  }
  return {2, 3, 5};
}

void add_perms(std::vector<AttrValue>& out, int64_t rank) {
  Ints perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  do out.emplace_back(perm);
  while (std::next_permutation(perm.begin(), perm.end()));
}

// Values a parameter takes in verification: the ones it admits, or when it
// admits any, a set that exercises its attribute (uneven strides, asymmetric
// pads, every activation...). Reshape targets depend on the instantiated
// sizes and come from shape_candidates() instead.
std::vector<AttrValue> test_values(const Rule& rule, const RuleParam& p) {
  if (!p.admits.empty()) return p.admits;
  std::vector<AttrValue> v;
  switch (p.role) {
    case AttrKey::Strides: return {Ints{1, 1}, Ints{2, 2}, Ints{1, 2}};
    case AttrKey::Dilations: return {Ints{1, 1}, Ints{2, 2}, Ints{2, 1}};
    case AttrKey::Pads:
      return {Ints{0, 0, 0, 0}, Ints{1, 1, 1, 1}, Ints{0, 1, 1, 0}, Ints{2, 2, 2, 2}, Ints{0, 0, 2, 2}};
    case AttrKey::Group: return {int64_t{1}, int64_t{2}};
    case AttrKey::Activation:
      return {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{6}};
    case AttrKey::OutputPadding: return {Ints{0, 0}, Ints{1, 1}, Ints{0, 1}};
    case AttrKey::KernelShape: return {Ints{3, 3}, Ints{2, 2}, Ints{3, 1}};
    case AttrKey::Epsilon: return {1e-5, 1e-3, 0.5};
    case AttrKey::Axis: return {int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}};
    case AttrKey::CeilMode:
    case AttrKey::CountIncludePad:
    case AttrKey::KeepDims:
    case AttrKey::TransA:
    case AttrKey::TransB: return {int64_t{0}, int64_t{1}};
    case AttrKey::Value:
    case AttrKey::Alpha:
    case AttrKey::Beta:
    case AttrKey::Min:
    case AttrKey::Max: return {0.5, 2.0, -1.5};
    case AttrKey::Axes: return {Ints{0}, Ints{1}, Ints{-1}, Ints{0, 1}};
    case AttrKey::Perm:
      for (int64_t rank = 1; rank <= 4; ++rank) add_perms(v, rank);
      return v;
    case AttrKey::Shape:
    case AttrKey::Split: return {};  // filled per instantiation by derived_candidates()
    default:
      throw GraphError("rule '" + rule.name + "': parameter $" + p.name + " (" + std::string(attr_key_name(p.role)) +
                       ") admits any value, but there are no test values for that attribute; list the values it "
                       "admits");
  }
}

// Values that depend on the instantiated sizes, from the first variable's
// shape: reshape targets (itself, flat, splits of its element count) and
// split sizes (uneven and even halves of each dimension).
std::vector<AttrValue> derived_candidates(AttrKey role, const Shape& shape) {
  std::vector<AttrValue> out;
  if (role == AttrKey::Split) {
    for (int64_t d : shape) {
      if (d < 2) continue;
      out.emplace_back(Ints{1, d - 1});
      if (d / 2 != 1) out.emplace_back(Ints{d / 2, d - d / 2});
    }
    return out;
  }
  int64_t n = num_elements(shape);
  out = {shape, Ints{n}, Ints{1, n}};
  if (shape.size() >= 2) {
    out.emplace_back(Ints{shape.front(), n / shape.front()});
    out.emplace_back(Ints{n / shape.back(), shape.back()});
    Shape reversed(shape.rbegin(), shape.rend());
    out.emplace_back(reversed);
  }
  return out;
}

std::string binding_text(const Rule& rule, const RuleBinding& b) {
  std::string out;
  for (size_t d = 0; d < rule.dims.size(); ++d) out += (out.empty() ? "" : " ") + rule.dims[d].name + "=" + std::to_string(b.dims[d]);
  for (size_t p = 0; p < rule.params.size(); ++p)
    if (b.params[p])
      out += (out.empty() ? "$" : " $") + rule.params[p].name + "=" + attr_value_to_string(rule.params[p].role, *b.params[p]);
  return out;
}

at::Tensor random_values(const Shape& shape, bool positive, std::mt19937_64& rng) {
  at::Tensor t = at::empty(shape, at::kDouble);
  double* p = t.data_ptr<double>();
  std::uniform_real_distribution<double> dist(positive ? 0.5 : -1.0, positive ? 1.5 : 1.0);
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

enum class Outcome { Equal, Unequal, DoesNotFit };

struct Trial {
  Outcome outcome = Outcome::DoesNotFit;
  double error = 0;
  std::string detail;
};

// Builds both patterns over shared inputs and compares them in float64.
Trial run_instantiation(const Rule& rule, const RuleBinding& b, double tolerance, std::mt19937_64& rng) {
  Graph graph;
  std::vector<TensorRef> vars;
  std::vector<Shape> var_shapes;
  std::vector<std::vector<TensorRef>> src, dst;
  try {
    for (const RuleVar& v : rule.vars) {
      Shape shape;
      for (const DimTerm& d : v.shape) shape.push_back(d.is_symbol() ? b.dims[static_cast<size_t>(d.symbol)] : d.literal);
      var_shapes.push_back(shape);
      vars.push_back({graph.add_input(v.name, {DType::Float32, shape}), 0});
    }
    src = build_pattern(rule.source, b, vars, graph, "source.");
    dst = build_pattern(rule.target, b, vars, graph, "target.");
  } catch (const GraphError&) {
    return {};
  }
  for (size_t k = 0; k < rule.outputs.size(); ++k) {
    const TensorInfo& a = graph.info(resolve_ref(rule.outputs[k].source, vars, src));
    const TensorInfo& t = graph.info(resolve_ref(rule.outputs[k].target, vars, dst));
    // The matcher applies a rule only where both sides have the same output
    // shapes, so other instantiations are outside the rule, not against it.
    if (!(a == t)) return {};
  }

  std::vector<std::vector<at::Tensor>> values(graph.num_ops());
  for (size_t v = 0; v < rule.vars.size(); ++v)
    values[static_cast<size_t>(vars[v].op)] = {random_values(var_shapes[v], rule.vars[v].positive, rng)};
  for (OpId id = 0; id < static_cast<OpId>(graph.num_ops()); ++id) {
    const Op& op = graph.op(id);
    if (op.type == OpType::Input) continue;
    if (op.type == OpType::Weight) {
      values[static_cast<size_t>(id)] = {weight_tensor(op).to(at::kDouble)};
      continue;
    }
    std::vector<at::Tensor> in;
    for (const TensorRef& r : op.inputs) in.push_back(values[static_cast<size_t>(r.op)][static_cast<size_t>(r.index)]);
    try {
      values[static_cast<size_t>(id)] = run_aten_op(op, in);
    } catch (const std::exception& e) {
      // Shape inference admitted it but the kernel did not (ATen has a few
      // limits ONNX lacks): treat as not fitting rather than as a proof.
      return {};
    }
  }
  Trial trial{Outcome::Equal, 0, ""};
  for (size_t k = 0; k < rule.outputs.size(); ++k) {
    TensorRef a = resolve_ref(rule.outputs[k].source, vars, src);
    TensorRef t = resolve_ref(rule.outputs[k].target, vars, dst);
    at::Tensor va = values[static_cast<size_t>(a.op)][static_cast<size_t>(a.index)].to(at::kDouble);
    at::Tensor vt = values[static_cast<size_t>(t.op)][static_cast<size_t>(t.index)].to(at::kDouble);
    double scale = std::max({va.abs().max().item<double>(), vt.abs().max().item<double>(), 1e-300});
    double error = (va - vt).abs().max().item<double>() / scale;
    if (std::isnan(error)) error = INFINITY;
    trial.error = std::max(trial.error, error);
    if (!(error <= tolerance)) {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.3g", error);
      trial.outcome = Outcome::Unequal;
      trial.detail = "output " + std::to_string(k) + " differs: relative error " + buf;
      return trial;
    }
  }
  return trial;
}

// How many size variants (see for_each_candidate_binding) a rule gets: a rule
// with few parameter combinations gets more, so every rule runs about
// max_instantiations times. Size-derived values (empty lists) count as 6.
int size_variant_count(const std::vector<std::vector<AttrValue>>& fixed_values, const VerifyOptions& options) {
  size_t param_combos = 1;
  for (const auto& values : fixed_values)
    param_combos = std::min<size_t>(4096, param_combos * (values.empty() ? 6 : values.size()));
  return static_cast<int>(std::clamp<size_t>(static_cast<size_t>(options.max_instantiations) / param_combos, 6,
                                             static_cast<size_t>(std::max(6, options.max_instantiations))));
}

// Sizes that a constraint ties to others. Grouped channels: the input
// channels become g * (channels per group) and the output channels g times
// the size drawn for them, so every group count tried fits. A dim product:
// n becomes a * b, so every view tried fits.
void derive_constrained_dims(const Rule& rule, RuleBinding& b) {
  for (const RuleConstraint& c : rule.constraints) {
    if (c.kind == ConstraintKind::DimProduct) {
      b.dims[static_cast<size_t>(c.dims[0])] =
          b.dims[static_cast<size_t>(c.dims[1])] * b.dims[static_cast<size_t>(c.dims[2])];
      continue;
    }
    if (c.kind != ConstraintKind::GroupedChannels) continue;
    const int64_t groups = bound_group_count(c, b);
    if (groups == 0) continue;
    b.dims[static_cast<size_t>(c.dims[0])] = groups * b.dims[static_cast<size_t>(c.dims[1])];
    b.dims[static_cast<size_t>(c.dims[2])] *= groups;
  }
}

}  // namespace

void for_each_candidate_binding(const Rule& rule, const VerifyOptions& options,
                                const std::function<bool(const RuleBinding&, int)>& visit) {
  std::vector<std::vector<AttrValue>> fixed_values;
  for (const RuleParam& p : rule.params) fixed_values.push_back(test_values(rule, p));
  std::mt19937_64 rng(options.seed);
  const int variants = size_variant_count(fixed_values, options);
  for (int variant = 0; variant < variants; ++variant) {
    RuleBinding base(rule);
    for (size_t d = 0; d < rule.dims.size(); ++d) {
      auto sizes = domain_sizes(rule.dims[d].domain);
      // 0-2: each symbol a different size; 3-5: all symbols alike (square
      // kernels, equal channels); then at random.
      size_t pick = variant < 3   ? (static_cast<size_t>(variant) + d) % sizes.size()
                    : variant < 6 ? static_cast<size_t>(variant - 3)
                                  : rng() % sizes.size();
      base.dims[d] = sizes[pick];
    }
    // Reshape targets and split sizes depend on the sizes just picked.
    std::vector<std::vector<AttrValue>> values = fixed_values;
    for (size_t p = 0; p < values.size(); ++p) {
      if (!values[p].empty() || rule.vars.empty()) continue;
      Shape first;
      for (const DimTerm& d : rule.vars[0].shape)
        first.push_back(d.is_symbol() ? base.dims[static_cast<size_t>(d.symbol)] : d.literal);
      values[p] = derived_candidates(rule.params[p].role, first);
    }
    constexpr size_t kMaxCombos = 4096;
    size_t combos = 1;
    for (const auto& list : values) combos = std::min(kMaxCombos, combos * std::max<size_t>(1, list.size()));
    std::vector<size_t> order(combos);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(options.seed + static_cast<uint64_t>(variant)));
    for (size_t combo : order) {
      RuleBinding b = base;
      size_t rest = combo;
      for (size_t p = 0; p < rule.params.size(); ++p) {
        if (values[p].empty()) continue;
        b.params[p] = values[p][rest % values[p].size()];
        rest /= values[p].size();
      }
      derive_constrained_dims(rule, b);
      if (!binding_admitted(rule, b)) continue;
      if (!visit(b, variant)) return;
    }
  }
}

VerifyResult verify_rule(const Rule& rule, const VerifyOptions& options) {
  check_rule_references(rule);
  VerifyResult result;
  std::mt19937_64 rng(options.seed);
  // Spread the budget over the size variants: a few fitting instantiations each.
  std::vector<std::vector<AttrValue>> fixed_values;
  for (const RuleParam& p : rule.params) fixed_values.push_back(test_values(rule, p));
  const int variants = size_variant_count(fixed_values, options);
  const int per_variant = std::max(1, options.max_instantiations / variants);
  int current_variant = -1, fitted = 0;
  bool failed = false;
  for_each_candidate_binding(rule, options, [&](const RuleBinding& b, int variant) {
    if (variant != current_variant) {
      current_variant = variant;
      fitted = 0;
    }
    if (fitted >= per_variant) return true;
    Trial trial = run_instantiation(rule, b, options.tolerance, rng);
    if (trial.outcome == Outcome::DoesNotFit) {
      ++result.skipped;
      return true;
    }
    ++fitted;
    ++result.instantiations;
    result.max_error = std::max(result.max_error, trial.error);
    if (trial.outcome == Outcome::Unequal) {
      char tolerance[32];
      std::snprintf(tolerance, sizeof(tolerance), "%g", options.tolerance);
      result.failure = "at " + binding_text(rule, b) + ": " + trial.detail + " (tolerance " + tolerance + ")";
      failed = true;
      return false;
    }
    return true;
  });
  if (failed) return result;
  if (result.instantiations < options.min_instantiations) {
    result.failure = "only " + std::to_string(result.instantiations) + " of " +
                     std::to_string(result.instantiations + result.skipped) +
                     " instantiations fit the patterns; the rule is too narrow to check";
    return result;
  }
  result.passed = true;
  return result;
}

}  // namespace graphworld
