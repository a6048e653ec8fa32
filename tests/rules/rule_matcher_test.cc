// Matching: every rule finds its own source pattern; hand-written rules do
// not match near misses; the incremental re-match always equals a search
// from scratch; and no match would create a cycle.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.h"
#include "env/ops/executor.h"
#include "env/ops/graph_builder.h"
#include "env/rules/graph_rewriter.h"
#include "env/rules/hand_written_rules.h"
#include "env/rules/rule_constant.h"
#include "env/rules/rule_library.h"
#include "env/zoo/zoo.h"
#include "tests/rules/rule_test_support.h"
#include "tests/support/default_rules.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

using testing::default_matcher;
using testing::default_rule_index;
using testing::source_instance;

size_t matches_of(const RuleMatcher& matcher, const Graph& g, int32_t rule) {
  GraphIndex index(g);
  size_t n = 0;
  for (const RuleMatch& m : matcher.find_all(g, index)) n += m.rule == rule;
  return n;
}

// Positive: each rule, generated or hand-written, matches an instance of
// its own source pattern, binding every pattern op.
TEST(RuleMatcher, EveryDefaultRuleMatchesItsOwnSource) {
  const RuleMatcher& matcher = default_matcher();
  size_t checked = 0;
  for (size_t r = 0; r < matcher.num_rules(); ++r) {
    const Rule& rule = matcher.rules()[r];
    std::optional<Graph> g = source_instance(rule);
    ASSERT_TRUE(g) << rule.name << ": no instantiation fits";
    EXPECT_GE(matches_of(matcher, *g, static_cast<int32_t>(r)), 1u) << describe_rule(rule);
    ++checked;
  }
  EXPECT_GE(checked, 500u);
}

// Negatives for every hand-written rule, from its own source instance.
class HandWrittenNegative : public ::testing::TestWithParam<size_t> {};

TEST_P(HandWrittenNegative, NearMissesDoNotMatch) {
  const Rule rule = hand_written_rules()[GetParam()];
  const RuleMatcher matcher({rule});
  std::optional<Graph> base = source_instance(rule);
  ASSERT_TRUE(base);
  ASSERT_GE(matches_of(matcher, *base, 0), 1u);
  int negatives = 0;

  // 1. An intermediate result also used outside the pattern.
  for (OpId id = 0; id < static_cast<OpId>(base->num_ops()); ++id) {
    const Op& op = base->op(id);
    if (op.is_leaf() || op.name == "siblings.split") continue;  // the split is outside the pattern
    bool is_output = false;
    for (const GraphOutput& o : base->outputs()) is_output = is_output || o.ref.op == id;
    if (is_output) continue;
    Graph g = *base;
    g.add_output({id, 0}, "escaped");
    EXPECT_EQ(matches_of(matcher, g, 0), 0u) << rule.name << ": matched although " << op.name << " escapes";
    ++negatives;
  }
  // 2. A weight variable bound to a computed, non-constant tensor.
  for (OpId id = 0; id < static_cast<OpId>(base->num_ops()); ++id) {
    if (base->op(id).type != OpType::Weight) continue;
    Graph g = *base;
    Op& op = g.mutable_op(id);
    op.type = OpType::Input;  // the index now sees a graph input, which is not constant
    op.random.reset();
    EXPECT_EQ(matches_of(matcher, g, 0), 0u) << rule.name << ": weight variable matched a non-constant " << op.name;
    ++negatives;
  }
  // 3. An attribute off by one value (perm, activation or stride).
  for (OpId id = 0; id < static_cast<OpId>(base->num_ops()); ++id) {
    Graph g = *base;
    Op& op = g.mutable_op(id);
    if (op.type == OpType::Transpose) {
      auto perm = op.attrs.get_ints(AttrKey::Perm);
      std::reverse(perm.begin(), perm.end());
      if (perm == op.attrs.get_ints(AttrKey::Perm)) continue;
      op.attrs.set(AttrKey::Perm, perm);
    } else if (op.type == OpType::Conv || op.type == OpType::MatMul) {
      if (rule.name.find("merge") != std::string::npos) continue;  // merges take any shared activation
      op.attrs.set(AttrKey::Activation, int64_t{op.attrs.get_int(AttrKey::Activation, 0) == 0 ? 1 : 0});
    } else {
      continue;
    }
    EXPECT_EQ(matches_of(matcher, g, 0), 0u) << rule.name << ": matched with a changed " << op.name;
    ++negatives;
    break;
  }
  // 4. Sibling inputs taken from two ops instead of one.
  for (OpId id = 0; id < static_cast<OpId>(base->num_ops()); ++id) {
    if (base->op(id).name != "siblings.split") continue;
    Graph g = *base;
    const TensorRef first{g.add_input("apart0", g.info({id, 0})), 0};
    const TensorRef second{g.add_input("apart1", g.info({id, 1})), 0};
    g.replace_uses({id, 0}, first);
    g.replace_uses({id, 1}, second);
    EXPECT_EQ(matches_of(matcher, g, 0), 0u) << rule.name << ": matched inputs that are not siblings";
    ++negatives;
  }
  EXPECT_GE(negatives, 1) << rule.name << " has no negative test";
}

INSTANTIATE_TEST_SUITE_P(AllHandWritten, HandWrittenNegative, ::testing::Range<size_t>(0, hand_written_rules().size()),
                         [](const auto& info) {
                           std::string name = hand_written_rules()[info.param].name;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// A merge of parallel elementwise ops takes sibling inputs only: two
// pieces of one Split match, the same shapes from two ops do not.
TEST(RuleMatcher, SiblingInputsMustComeFromOneOp) {
  const Rule& rule = testing::default_rule("merge-parallel-add-bias-rank3");
  const RuleMatcher matcher({rule});
  auto build = [](bool siblings) {
    GraphBuilder b(1);
    TensorRef x1, x2;
    if (siblings) {
      TensorRef x = b.input("x", {1, 4, 12});
      Attributes attrs = {{AttrKey::Axis, int64_t{2}}, {AttrKey::Split, std::vector<int64_t>{4, 8}}};
      std::vector<TensorRef> pieces = b.add(OpType::Split, {x}, attrs);
      x1 = pieces[0];
      x2 = pieces[1];
    } else {
      x1 = b.input("x1", {1, 4, 4});
      x2 = b.input("x2", {1, 4, 8});
    }
    b.output(b.add1(OpType::Add, {x1, b.random_weight({4}, -1, 1)}), "a");
    b.output(b.add1(OpType::Add, {x2, b.random_weight({8}, -1, 1)}), "b");
    return b.finish();
  };
  EXPECT_GE(matches_of(matcher, build(true), 0), 1u);
  EXPECT_EQ(matches_of(matcher, build(false), 0), 0u);
}

// Merging two convs where one reads the other's result would make the
// merged conv its own input: it must not match.
TEST(RuleMatcher, RejectsMatchesThatWouldCreateACycle) {
  const Rule& rule = testing::default_rule("merge-grouped-convs");
  const RuleMatcher matcher({rule});
  auto build = [](bool dependent) {
    GraphBuilder b(1);
    TensorRef x1 = b.input("x1", {1, 4, 8, 8});
    TensorRef x2 = b.input("x2", {1, 4, 8, 8});
    Attributes attrs = {{AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}};
    TensorRef c1 = b.add1(OpType::Conv, {x1, b.random_weight({4, 4, 3, 3}, -1, 1)}, attrs);
    TensorRef second = dependent ? b.add1(OpType::Relu, {c1}) : x2;
    TensorRef c2 = b.add1(OpType::Conv, {second, b.random_weight({4, 4, 3, 3}, -1, 1)}, attrs);
    b.output(c1, "a");
    b.output(c2, "b");
    return b.finish();
  };
  EXPECT_GE(matches_of(matcher, build(false), 0), 1u);
  EXPECT_EQ(matches_of(matcher, build(true), 0), 0u);
}

// The incremental re-match after each rewrite equals a search from scratch.
TEST(GraphRewriter, IncrementalMatchesEqualAFullSearch) {
  const RuleMatcher& matcher = default_matcher();
  for (const char* name : {"resnet50", "bert", "squeezenet1.1", "inceptionv3", "nasrnn"}) {
    GraphRewriter rewriter(matcher, build_zoo_model(name, {}));
    std::mt19937_64 rng(7);
    for (int step = 0; step < 30 && !rewriter.matches().empty(); ++step) {
      RewriteResult result = rewriter.apply(rng() % rewriter.matches().size());
      EXPECT_FALSE(result.removed.empty()) << name;
      GraphIndex fresh(rewriter.graph());
      std::vector<RuleMatch> expected = matcher.find_all(rewriter.graph(), fresh);
      ASSERT_EQ(rewriter.matches().size(), expected.size()) << name << " after step " << step;
      for (size_t i = 0; i < expected.size(); ++i)
        ASSERT_TRUE(rewriter.matches()[i].same_place(expected[i])) << name << " after step " << step << ", match " << i;
      EXPECT_NO_THROW(rewriter.graph().check_structure()) << name;
    }
  }
}

// Generated rules may create identity constants: `x + conv(x, k)` becomes
// one conv with the kernel `k + I`, which the executor folds. The rewrite
// must keep the outputs and leave no Add on activations.
TEST(GraphRewriter, FoldsAResidualAddIntoTheConvThroughAnIdentity) {
  GraphBuilder b(5);
  TensorRef x = b.input("x", {1, 4, 9, 7});
  Attributes attrs = {{AttrKey::Pads, std::vector<int64_t>{1, 1, 1, 1}}};
  TensorRef conv = b.add1(OpType::Conv, {x, b.random_weight({4, 4, 3, 3}, -1, 1)}, attrs);
  b.output(b.add1(OpType::Add, {x, conv}), "y");
  const Graph original = b.finish();
  const auto inputs = random_inputs(original, 1);
  const auto expected = Executor(original).run(inputs);

  const RuleMatcher& matcher = default_matcher();
  GraphRewriter rewriter(matcher, original);
  int folds = 0;
  for (size_t i = 0; i < rewriter.matches().size(); ++i) {
    const Rule& rule = matcher.rules()[static_cast<size_t>(rewriter.matches()[i].rule)];
    const bool creates_identity = std::any_of(rule.target.begin(), rule.target.end(), [](const PatternOp& op) {
      const AttrExpr* fill = op.find_attr(AttrKey::Fill);
      return op.type == OpType::Weight && fill && fill->literal == AttrValue{static_cast<int64_t>(ConstantFill::Identity)};
    });
    if (!creates_identity || rule_op_set(rule) != "Add+Conv") continue;
    GraphRewriter copy(matcher, original);
    copy.apply(i);
    const Graph rewritten = copy.graph().pruned();
    // Left: k + I, a weight-only Add the executor and exporter fold.
    const GraphIndex index(rewritten);
    size_t computing_adds = 0;
    for (OpId id = 0; id < static_cast<OpId>(rewritten.num_ops()); ++id)
      computing_adds += rewritten.op(id).type == OpType::Add && !index.constant(id);
    EXPECT_EQ(computing_adds, 0u) << describe_rule(rule);
    const auto got = Executor(rewritten).run(inputs);
    for (int64_t e = 0; e < got[0]->numel(); ++e)
      ASSERT_NEAR(got[0]->floats()[e], expected[0]->floats()[e], 1e-4) << describe_rule(rule);
    ++folds;
  }
  EXPECT_GE(folds, 1) << "no default rule folds x + conv(x, k)";
}

// A rewrite may not create a constant past kMaxRuleConstantElements: an
// identity grows as the square of a tensor's width, and for a [1, 16777216]
// Relu it would be 2^48 floats. Narrow tensors still get their identities.
TEST(RuleMatcher, OffersNoMatchWhoseConstantIsTooLarge) {
  const RuleMatcher& matcher = default_matcher();
  auto identity_matches = [&](int64_t width) {
    GraphBuilder b(3);
    TensorRef x = b.input("x", {1, width});
    b.output(b.add1(OpType::Relu, {x}), "y");
    const Graph g = b.finish();
    GraphIndex index(g);
    int64_t largest = 0;
    size_t count = 0;
    for (const RuleMatch& m : matcher.find_all(g, index)) {
      const Rule& rule = matcher.rules()[static_cast<size_t>(m.rule)];
      for (const PatternOp& op : rule.target) {
        if (op.type != OpType::Weight) continue;
        const Shape shape = rule_constant_shape(evaluate_attrs(op, m.binding), "target");
        int64_t elements = 1;
        for (int64_t d : shape) elements *= d;
        largest = std::max(largest, elements);
        ++count;
      }
    }
    return std::make_pair(count, largest);
  };
  const auto [narrow_count, narrow_largest] = identity_matches(1024);
  EXPECT_GT(narrow_count, 0u) << "no rule gives a [1, 1024] Relu a constant: the test no longer tests the bound";
  EXPECT_EQ(narrow_largest, 1024 * 1024);
  const auto [wide_count, wide_largest] = identity_matches(int64_t{1} << 24);
  EXPECT_LE(wide_largest, kMaxRuleConstantElements);
  EXPECT_LT(wide_count, narrow_count) << "a match on the wide Relu would create a constant of 2^48 floats";
}

// BatchNorm folding, bias folding and activation fusion hold per output
// channel, so they apply after grouped (ResNeXt) and depthwise (MobileNet)
// convs too, and the convs keep their group counts.
TEST(GraphRewriter, FoldsAndFusesAfterGroupedAndDepthwiseConvs) {
  GraphBuilder b(7);
  auto batchnorm = [&](TensorRef t, int64_t channels) {
    return b.add1(OpType::BatchNorm,
                  {t, b.random_weight({channels}, 0.5f, 1.5f), b.random_weight({channels}, -1, 1),
                   b.random_weight({channels}, -1, 1), b.random_weight({channels}, 0.5f, 1.5f)},
                  {{AttrKey::Epsilon, 1e-5}});
  };
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  TensorRef x = b.input("x", {1, 8, 9, 7});
  TensorRef grouped = b.add1(OpType::Conv, {x, b.random_weight({12, 2, 3, 3}, -1, 1)},
                             {{AttrKey::Pads, pads}, {AttrKey::Group, int64_t{4}}});
  TensorRef y = b.add1(OpType::Relu, {batchnorm(grouped, 12)});
  TensorRef depthwise = b.add1(OpType::Conv, {y, b.random_weight({12, 1, 3, 3}, -1, 1)},
                               {{AttrKey::Pads, pads}, {AttrKey::Group, int64_t{12}}});
  TensorRef shifted = b.add1(OpType::Add, {depthwise, b.random_weight({1, 12, 1, 1}, -1, 1)});
  b.output(b.add1(OpType::HardSwish, {batchnorm(shifted, 12)}), "y");
  const Graph original = b.finish();
  const auto inputs = random_inputs(original, 3);
  const auto expected = Executor(original).run(inputs);

  const RuleMatcher& matcher = default_matcher();
  Graph current = original;
  std::vector<std::string> applied;
  for (bool changed = true; changed;) {
    changed = false;
    GraphRewriter rewriter(matcher, current);
    for (size_t i = 0; i < rewriter.matches().size() && !changed; ++i) {
      const std::string& name = matcher.rules()[static_cast<size_t>(rewriter.matches()[i].rule)].name;
      if (name.rfind("fold-", 0) != 0 && name.rfind("fuse-conv", 0) != 0) continue;
      rewriter.apply(i);
      current = rewriter.graph().pruned();
      applied.push_back(name);
      changed = true;
    }
  }
  ASSERT_EQ(applied.size(), 5u) << ::testing::PrintToString(applied);
  std::vector<int64_t> groups;
  const GraphIndex index(current);
  for (OpId id = 0; id < static_cast<OpId>(current.num_ops()); ++id) {
    const Op& op = current.op(id);
    if (index.constant(id)) continue;  // the folded weights' arithmetic
    EXPECT_TRUE(op.type != OpType::BatchNorm && op.type != OpType::Relu && op.type != OpType::HardSwish &&
                op.type != OpType::Add)
        << op_type_name(op.type) << " left after the folds";
    if (op.type == OpType::Conv) groups.push_back(op.attrs.get_int(AttrKey::Group, 1));
  }
  EXPECT_EQ(groups, (std::vector<int64_t>{4, 12}));
  const auto got = Executor(current).run(inputs);
  for (int64_t e = 0; e < got[0]->numel(); ++e)
    ASSERT_NEAR(got[0]->floats()[e], expected[0]->floats()[e], 1e-4);
}

// Applies the merge of the two projections of BERT's first layer named
// `first` and `second` ("layer0.q", ...) and returns the rewritten graph.
Graph merge_projections(const Graph& bert, const std::string& first, const std::string& second) {
  GraphRewriter rewriter(default_matcher(), bert);
  const int32_t merge = default_rule_index("merge-parallel-matmuls-rank3");
  for (size_t i = 0; i < rewriter.matches().size(); ++i) {
    const RuleMatch& m = rewriter.matches()[i];
    if (m.rule != merge) continue;
    std::vector<std::string> names;
    for (OpId op : m.ops) names.push_back(bert.op(op).name);
    std::sort(names.begin(), names.end());
    if (names == std::vector<std::string>{first, second}) {
      rewriter.apply(i);
      return rewriter.graph().pruned();
    }
  }
  ADD_FAILURE() << "no merge of " << first << " and " << second;
  return bert;
}

// A layer's q and v are viewed as heads and transposed alike, k is
// transposed further; so one transpose can serve two projections only where
// q merged with v. This is the ordering greedy search misses on BERT.
TEST(GraphRewriter, MergingQAndVFirstLetsTheirHeadTransposesMerge) {
  const Graph bert = build_zoo_model("bert", {});
  const int32_t heads = default_rule_index("merge-parallel-head-transposes");
  EXPECT_EQ(matches_of(default_matcher(), bert, heads), 0u);
  EXPECT_EQ(matches_of(default_matcher(), merge_projections(bert, "layer0.k", "layer0.q"), heads), 0u);

  const Graph merged = merge_projections(bert, "layer0.q", "layer0.v");
  // The pair in both orders: (q, v) and (v, q).
  ASSERT_EQ(matches_of(default_matcher(), merged, heads), 2u);
  GraphRewriter rewriter(default_matcher(), merged);
  size_t applied = 0;
  for (size_t i = 0; i < rewriter.matches().size(); ++i)
    if (rewriter.matches()[i].rule == heads) {
      rewriter.apply(i);
      ++applied;
      break;
    }
  ASSERT_EQ(applied, 1u);
  const Graph rewritten = rewriter.graph().pruned();
  // Two transposes of layer 0's projections became one (k's and the
  // context's remain).
  EXPECT_EQ(testing::op_type_counts(rewritten)[OpType::Transpose],
            testing::op_type_counts(bert)[OpType::Transpose] - 1);
  const auto inputs = random_inputs(bert, 5);
  const auto expected = Executor(bert).run(inputs);
  const auto got = Executor(rewritten).run(inputs);
  EXPECT_LE(testing::relative_error(*expected[0], *got[0]), 1e-4);
}

TEST(GraphRewriter, RejectsAMatchIndexOutOfRange) {
  GraphRewriter rewriter(default_matcher(), build_zoo_model("resnet18", {}));
  EXPECT_THROW(rewriter.apply(rewriter.matches().size()), UsageError);
}

}  // namespace
}  // namespace graphworld
