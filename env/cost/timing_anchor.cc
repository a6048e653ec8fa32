#include "env/cost/timing_anchor.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace graphworld {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double size_distance(const TensorInfo& a, const TensorInfo& b) {
  double na = static_cast<double>(std::max<int64_t>(a.numel(), 1));
  double nb = static_cast<double>(std::max<int64_t>(b.numel(), 1));
  return std::fabs(std::log(na / nb));
}

// Parameters set in one and not the other, or set to different values.
int differing_parameters(const Attributes& a, const Attributes& b) {
  int differing = 0;
  for (const auto& [key, value] : a.items()) {
    const AttrValue* other = b.find(key);
    if (other == nullptr || !(*other == value)) ++differing;
  }
  for (const auto& [key, value] : b.items())
    if (!a.has(key)) ++differing;
  return differing;
}

}  // namespace

double anchor_distance(const OpCostKey& a, const OpCostKey& b) {
  if (a.type != b.type || a.outputs.size() != b.outputs.size()) return kInfinity;
  size_t shared = std::min(a.inputs.size(), b.inputs.size());
  double distance = 0.5 * static_cast<double>(std::max(a.inputs.size(), b.inputs.size()) - shared);
  for (size_t k = 0; k < shared; ++k) {
    if (a.input_is_constant(k) != b.input_is_constant(k) || a.inputs[k].dtype != b.inputs[k].dtype ||
        a.inputs[k].rank() != b.inputs[k].rank())
      return kInfinity;
    distance += size_distance(a.inputs[k], b.inputs[k]);
  }
  for (size_t k = 0; k < a.outputs.size(); ++k) {
    if (a.outputs[k].rank() != b.outputs[k].rank()) return kInfinity;
    distance += size_distance(a.outputs[k], b.outputs[k]);
  }
  int differing_layouts = std::popcount(a.blocked_inputs ^ b.blocked_inputs);
  return distance + 0.5 * (differing_parameters(a.attrs, b.attrs) + differing_layouts);
}

int nearest_anchor(const OpCostKey& key, const std::vector<OpCostKey>& candidates) {
  int best = -1;
  double best_distance = kMaxAnchorDistance;
  for (size_t i = 0; i < candidates.size(); ++i) {
    double distance = anchor_distance(key, candidates[i]);
    if (distance <= best_distance && (best < 0 || distance < best_distance)) {
      best = static_cast<int>(i);
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace graphworld
