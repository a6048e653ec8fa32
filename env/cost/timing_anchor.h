// Which already-priced configuration a new one is timed against.
//
// On a shared machine an op's speed drifts from moment to moment by tens of
// percent, so two configurations timed seconds apart can come out in the
// wrong order even when they differ by a few percent. Yet a search decides
// exactly such questions: a conv with a bias against the same conv without
// one, one merged MatMul against two halves. MeasuredCostModel therefore
// times a new configuration interleaved with its nearest known relative (its
// anchor) and prices it as anchor_cost * time(new) / time(anchor): the drift
// hits both alike and cancels in the ratio.
#pragma once

#include <limits>
#include <vector>

#include "env/cost/op_cost_key.h"

namespace graphworld {

// How unlike two configurations are, or infinity when they cannot anchor each
// other: they must share the op type, the dtype and rank of every shared input
// position, and which inputs are constant. Otherwise the distance sums
// |ln(size ratio)| over inputs and outputs, plus 0.5 for each input only one
// has (a bias), 0.5 for each differing parameter and 0.5 for each input that
// arrives in a different layout.
double anchor_distance(const OpCostKey& a, const OpCostKey& b);

// Configurations further apart than this are timed on their own: a ratio
// between ops of very different sizes mixes cache regimes and measures
// little more than an absolute time does.
inline constexpr double kMaxAnchorDistance = 3.0;

// Index of the nearest candidate within kMaxAnchorDistance of `key`, or -1.
// Ties go to the earliest candidate, so the choice is deterministic.
int nearest_anchor(const OpCostKey& key, const std::vector<OpCostKey>& candidates);

}  // namespace graphworld
