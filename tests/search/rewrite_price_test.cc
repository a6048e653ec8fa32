// price_rewrite against building the child: the same double for every match
// of zoo graphs, at the start and after rewrites have made weight-only
// subgraphs, BatchNorm folds and merges, under the analytic and gpu models.
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <random>

#include "env/cost/analytic_cost_model.h"
#include "env/cost/cost_model_factory.h"
#include "env/rules/rule_library.h"
#include "env/search/rewrite_price.h"
#include "env/search/search.h"
#include "env/search/search_state.h"
#include "env/zoo/zoo.h"

namespace graphworld {
namespace {

const RuleMatcher& matcher() {
  static const RuleMatcher m(default_rule_library().rules);
  return m;
}

struct PriceCase {
  const char* model;
  const char* cost;
};

void PrintTo(const PriceCase& c, std::ostream* os) { *os << c.model << " under " << c.cost; }

std::unique_ptr<CostModel> cost_model(const std::string& kind) {
  CostModelOptions options;
  options.kind = kind;
  options.rates_path = "builtin";
  return make_cost_model(options);
}

class PriceRewriteOnZoo : public ::testing::TestWithParam<PriceCase> {};

// Along a random walk of 12 rewrites, every match of every graph on the way
// is priced locally and by building it; both must agree to the bit.
TEST_P(PriceRewriteOnZoo, EqualsTheBuiltChildsCostForEveryMatch) {
  const PriceCase c = GetParam();
  std::unique_ptr<CostModel> model = cost_model(c.cost);
  SearchState state(matcher(), build_zoo_model(c.model, {}), *model);
  std::mt19937_64 rng(7);
  size_t priced = 0, declined = 0;
  for (int step = 0; step < 12 && !state.rewriter.matches().empty(); ++step) {
    for (size_t i = 0; i < state.rewriter.matches().size(); ++i) {
      const std::optional<double> local = price_rewrite(state.rewriter, i, state.cost);
      if (!local) {
        ++declined;
        continue;
      }
      ++priced;
      const SearchState child = state.priced_child(i);
      ASSERT_EQ(*local, child.cost_ms()) << "step " << step << ", match " << i << " (rule "
                                         << matcher().rules()[static_cast<size_t>(state.rewriter.matches()[i].rule)].name
                                         << ")";
      EXPECT_EQ(state.child_cost_ms(i), child.cost_ms());
    }
    state.apply(static_cast<size_t>(rng() % state.rewriter.matches().size()));
  }
  EXPECT_GT(priced, 0u);
  // Declining is the exception (a reader whose input changes constness).
  EXPECT_LE(declined * 20, priced) << declined << " of " << priced + declined << " matches were not priced locally";
}

INSTANTIATE_TEST_SUITE_P(Zoo, PriceRewriteOnZoo,
                         ::testing::Values(PriceCase{"squeezenet1.1", "analytic"}, PriceCase{"squeezenet1.1", "gpu"},
                                           PriceCase{"resnet18", "gpu"}, PriceCase{"resnet50-full", "gpu"},
                                           PriceCase{"bert", "gpu"}, PriceCase{"nasrnn", "analytic"},
                                           PriceCase{"nasrnn", "gpu"}, PriceCase{"inceptionv3", "gpu"},
                                           PriceCase{"vit-base", "gpu"}));

// Greedy search takes the same rewrites whether children are priced locally
// or built: its choice compares the same doubles.
TEST(PriceRewrite, GreedySearchMatchesBuildingEveryChild) {
  std::unique_ptr<CostModel> model = cost_model("gpu");
  const Graph graph = build_zoo_model("resnet18", {});
  SearchOptions options;
  const SearchResult greedy = greedy_search(graph, matcher(), *model, options);
  SearchState current(matcher(), graph, *model);
  std::vector<std::string> applied;
  for (;;) {
    double best = current.cost_ms();
    int64_t best_match = -1;
    for (size_t i = 0; i < current.rewriter.matches().size(); ++i) {
      const double child = current.priced_child(i).cost_ms();
      if (child < best) {
        best = child;
        best_match = static_cast<int64_t>(i);
      }
    }
    if (best_match < 0) break;
    applied.push_back(matcher().rules()[static_cast<size_t>(current.rewriter.matches()[best_match].rule)].name);
    current.apply(static_cast<size_t>(best_match));
  }
  EXPECT_EQ(greedy.applied, applied);
  EXPECT_EQ(greedy.best_cost_ms, current.cost_ms());
}

}  // namespace
}  // namespace graphworld
