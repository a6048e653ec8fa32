// TASO's cost-based backtracking search.
//
// Queue entries are (expanded parent, match index) with the child's cost and
// structural hash: a child is built once to price it, then dropped, and
// built again only if it is expanded. Only expanded graphs stay in memory
// (at most `budget` of them), so memory grows with the budget, not with the
// number of children priced.
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
  std::shared_ptr<const SearchState> parent;  // null for the input graph
  int32_t match;
  bool operator<(const Candidate& other) const {
    return cost_ms != other.cost_ms ? cost_ms < other.cost_ms : order < other.order;
  }
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
  // Previously seen graphs by structural hash, each kept as the (parent,
  // match) that builds it: a hash hit is confirmed by structural equality.
  std::unordered_map<uint64_t, std::vector<Candidate>> seen;
  seen[root->rewriter.graph().structural_hash()].push_back({root->cost_ms(), 0, nullptr, -1});
  std::set<Candidate> queue;
  int64_t order = 0;
  auto progress = [&](bool force) {
    ticker.maybe({result.original_cost_ms, best->cost_ms(), result.explored, result.generated, queue.size(),
                  clock.elapsed_s()},
                 force);
  };
  auto graph_of = [&](const Candidate& c, std::shared_ptr<const SearchState>& holder) -> const Graph& {
    holder = c.parent ? std::make_shared<const SearchState>(c.parent->priced_child(static_cast<size_t>(c.match))) : root;
    return holder->rewriter.graph();
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
      std::vector<Candidate>& same_hash = seen[h];
      bool duplicate = false;
      for (const Candidate& other : same_hash) {
        std::shared_ptr<const SearchState> holder;
        if (graph_of(other, holder).structurally_equal(child->rewriter.graph())) {
          duplicate = true;
          break;
        }
      }
      if (duplicate) continue;
      Candidate entry{c, ++order, current, static_cast<int32_t>(i)};
      same_hash.push_back(entry);
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
