// What a graph would cost after one rewrite, priced without building the
// rewritten graph.
//
// GraphRewriter::rewritten_copy copies the whole graph (every op, its
// attributes and shapes) to price one child, and on graphs with hundreds of
// matches those copies were most of greedy search's time. Here only the
// rule's target is built, into a scratch graph whose leaves stand in for the
// matched variables (same shapes, same constness), and the ops the rewrite
// would retire are found from the index's consumer lists, in the order
// GraphRewriter retires them. The sum repeats CostTracker::update's
// arithmetic step for step, so the result is the very double that applying
// the rewrite and updating the tracker gives: a search that compares
// children by cost makes the same choices either way. (TASO's search still
// builds each child: nearly all pass its alpha bound, and it hashes them.)
#pragma once

#include <cstddef>
#include <optional>

#include "env/cost/graph_cost.h"
#include "env/rules/graph_rewriter.h"

namespace graphworld {

// The tracked graph's total cost after applying `rewriter.matches()[match]`;
// `cost` tracks `rewriter.graph()`. nullopt where pricing locally could
// differ from the rewritten graph's cost, and the caller must build it:
// - the cost model prices layouts (a rewrite can change the layout, and so
//   the price, of ops beyond the ones it touches);
// - a consumer of a rewritten output would read a value whose constness
//   differs from the one it read before.
// Throws what building the target throws (GraphError on a shape mismatch),
// as GraphRewriter::apply would.
std::optional<double> price_rewrite(const GraphRewriter& rewriter, size_t match, const CostTracker& cost);

// The same total always: price_rewrite where it can, else by building the
// rewritten copy and updating a copy of the tracker.
double cost_after_rewrite(const GraphRewriter& rewriter, size_t match, const CostTracker& cost);

}  // namespace graphworld
