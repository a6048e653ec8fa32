// Rewrites a graph with rules and keeps the list of places they apply current.
//
// Construction finds every match (from scratch). apply() builds the match's
// target into the graph, points the matched outputs' uses at the target's,
// and retires the matched ops and anything left without consumers. Then it
// re-matches only the region the rewrite touched: matches that involve a
// touched op are dropped and searched again, anchored on the touched ops.
//
// Op ids never change: new ops are appended and retired ones stay in the
// graph, dead (graph().pruned() gives a compact copy). Weight-only subgraphs
// a target creates (concatenated or enlarged kernels, folded BatchNorm
// scales) are constant: cost models price them at zero and the executor and
// the ONNX exporter fold them once into plain weights.
#pragma once

#include <cstddef>
#include <vector>

#include "env/graph/graph.h"
#include "env/rules/graph_index.h"
#include "env/rules/rule_matcher.h"

namespace graphworld {

struct RewriteResult {
  std::vector<OpId> added;    // ops the target created
  std::vector<OpId> removed;  // ops that died: the matched ones and those left unused
  std::vector<OpId> changed;  // surviving ops whose inputs were rewired

  // added and changed together: the ops a cost tracker must re-price.
  std::vector<OpId> added_or_changed() const;
};

class GraphRewriter {
 public:
  // Keeps a reference to `matcher`, which must outlive the rewriter.
  GraphRewriter(const RuleMatcher& matcher, Graph graph);

  const Graph& graph() const { return graph_; }
  const GraphIndex& index() const { return index_; }
  const RuleMatcher& matcher() const { return *matcher_; }
  // Every current match, in RuleMatch order.
  const std::vector<RuleMatch>& matches() const { return matches_; }

  // Applies matches()[i]. Throws UsageError if i is out of range.
  RewriteResult apply(size_t i);

  // For pricing or comparing a rewrite that will not be rewritten further
  // (search): a copy of this graph with matches()[i] applied, not re-matched
  // (its matches() are empty). `result` receives what the rewrite changed.
  GraphRewriter rewritten_copy(size_t i, RewriteResult& result) const;

 private:
  GraphRewriter(const RuleMatcher* matcher, const Graph& graph, const GraphIndex& index)
      : matcher_(matcher), graph_(graph), index_(index) {}
  // Builds the target, moves the uses and retires dead ops; `dirty` gets the
  // ops whose neighbourhood changed beyond the result's lists.
  RewriteResult rewrite(const RuleMatch& match, std::vector<OpId>& dirty);
  void rematch(const RewriteResult& result, const std::vector<OpId>& also_dirty);

  const RuleMatcher* matcher_;
  Graph graph_;
  GraphIndex index_;
  std::vector<RuleMatch> matches_;
};

}  // namespace graphworld
