// TASO's cost-based backtracking search.
//
// Queue entries are (expanded parent, match index) with the child's cost and
// structural hash: a child is built once to price it, then dropped, and
// built again only if it is expanded. An expanded graph stays in memory only
// while a queued child needs it (or it is the best so far), so memory is
// bounded by the queue, not by the budget: the record of graphs already seen
// points at parents weakly. A new graph whose hash was seen is checked for
// structural equality against the earlier one while that one's parent is
// alive, and counted as a duplicate by its 64-bit hash once it is not.
#include <memory>
#include <set>
#include <unordered_map>

#include "common/error.h"
#include "env/search/search_state.h"

namespace graphworld {

namespace {

struct Candidate {
  double cost_ms;
  int64_t order;  // ties break by arrival: deterministic
  std::shared_ptr<const SearchState> parent;
  int32_t match;
  bool operator<(const Candidate& other) const {
    return cost_ms != other.cost_ms ? cost_ms < other.cost_ms : order < other.order;
  }
};

// A graph seen before: the input (no parent), or match `match` of `parent`.
struct Seen {
  bool is_input = false;
  std::weak_ptr<const SearchState> parent;
  int32_t match = -1;
};

std::shared_ptr<SearchState> build(const Candidate& c) {
  auto state = std::make_shared<SearchState>(*c.parent);
  state->apply(static_cast<size_t>(c.match));
  return state;
}

}  // namespace

SearchResult taso_search(const Graph& graph, const RuleMatcher& matcher, CostModel& cost, const SearchOptions& options) {
  Stopwatch clock;
  ProgressTicker ticker(options);
  SearchResult result;
  result.algorithm = "taso";
  auto root = std::make_shared<const SearchState>(matcher, graph, cost);
  result.original_cost_ms = root->cost_ms();
  std::shared_ptr<const SearchState> best = root;
  // Previously seen graphs by structural hash, each as the (parent, match)
  // that builds it.
  std::unordered_map<uint64_t, std::vector<Seen>> seen;
  seen[root->rewriter.graph().structural_hash()].push_back({true, {}, -1});
  std::set<Candidate> queue;
  int64_t order = 0;
  auto progress = [&](bool force) {
    ticker.maybe({result.original_cost_ms, best->cost_ms(), result.explored, result.generated, queue.size(),
                  clock.elapsed_s()},
                 force);
  };
  // True when `other` is structurally `graph`; when its parent is gone, the
  // equal hash decides.
  auto same_graph = [&](const Seen& other, const Graph& graph) {
    if (other.is_input) return root->rewriter.graph().structurally_equal(graph);
    std::shared_ptr<const SearchState> parent = other.parent.lock();
    if (!parent) return true;
    RewriteResult unused;
    return parent->rewriter.rewritten_copy(static_cast<size_t>(other.match), unused).graph().structurally_equal(graph);
  };

  std::shared_ptr<const SearchState> current = root;
  while (result.explored < options.budget) {
    ++result.explored;
    for (size_t i = 0; i < current->rewriter.matches().size(); ++i) {
      auto child = std::make_shared<SearchState>(current->priced_child(i));
      ++result.generated;
      const double c = child->cost_ms();
      if (!(c < options.alpha * best->cost_ms())) continue;
      const uint64_t h = child->rewriter.graph().structural_hash();
      std::vector<Seen>& same_hash = seen[h];
      bool duplicate = false;
      for (const Seen& other : same_hash) {
        if (same_graph(other, child->rewriter.graph())) {
          duplicate = true;
          break;
        }
      }
      if (duplicate) continue;
      Candidate entry{c, ++order, current, static_cast<int32_t>(i)};
      same_hash.push_back({false, current, static_cast<int32_t>(i)});
      if (c < best->cost_ms()) best = child;
      queue.insert(entry);
      if (queue.size() > options.max_queue) queue.erase(std::prev(queue.end()));
    }
    progress(false);
    if (queue.empty()) break;
    Candidate next = *queue.begin();
    queue.erase(queue.begin());
    current = build(next);
  }
  progress(true);
  finish_result(result, *best, matcher, clock);
  return result;
}

}  // namespace graphworld
