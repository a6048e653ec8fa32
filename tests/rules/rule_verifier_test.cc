// The verifier accepts every shipped rule and rejects unsound ones, saying
// at which instantiation they broke.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "env/rules/hand_written_rules.h"
#include "env/rules/rule_verifier.h"
#include "env/rules/rule_writer.h"

namespace graphworld {
namespace {

using Ints = std::vector<int64_t>;

void expect_rejected(const Rule& rule) {
  VerifyResult v = verify_rule(rule);
  EXPECT_FALSE(v.passed) << rule.name << " passed " << v.instantiations << " instantiations";
  EXPECT_NE(v.failure.find("at "), std::string::npos) << v.failure;
}

TEST(RuleVerifier, EveryHandWrittenRulePasses) {
  for (const Rule& rule : hand_written_rules()) {
    VerifyResult v = verify_rule(rule);
    EXPECT_TRUE(v.passed) << rule.name << ": " << v.failure;
    EXPECT_GE(v.instantiations, 3) << rule.name;
    EXPECT_LE(v.max_error, 1e-9) << rule.name;
  }
}

// Rules over convs of any group count are checked at more than one group
// count: the grouped-channels constraint derives c = g * cg and o from g, so
// grouped instantiations fit instead of being skipped.
TEST(RuleVerifier, ChecksGroupedConvRulesAtSeveralGroupCounts) {
  int checked = 0;
  for (const Rule& rule : hand_written_rules()) {
    if (rule.name != "fold-conv-batchnorm" && rule.name != "fuse-conv-relu") continue;
    ++checked;
    const auto g = std::find_if(rule.params.begin(), rule.params.end(),
                                [](const RuleParam& p) { return p.role == AttrKey::Group; });
    ASSERT_NE(g, rule.params.end()) << rule.name;
    const auto g_index = static_cast<size_t>(g - rule.params.begin());
    std::set<int64_t> admitted_groups;
    for_each_candidate_binding(rule, {}, [&](const RuleBinding& b, int) {
      const int64_t groups = std::get<int64_t>(*b.params[g_index]);
      const RuleConstraint& c = rule.constraints.at(0);
      EXPECT_EQ(b.dims[static_cast<size_t>(c.dims[0])], groups * b.dims[static_cast<size_t>(c.dims[1])]);
      EXPECT_EQ(b.dims[static_cast<size_t>(c.dims[2])] % groups, 0);
      admitted_groups.insert(groups);
      return true;
    });
    EXPECT_EQ(admitted_groups, (std::set<int64_t>{1, 2})) << rule.name;
    // Restricted to two groups, the rule still fits and passes: the grouped
    // instantiations are built and compared, not skipped.
    Rule two_groups = rule;
    two_groups.params[g_index].admits = {int64_t{2}};
    const VerifyResult v = verify_rule(two_groups);
    EXPECT_TRUE(v.passed) << rule.name << ": " << v.failure;
    EXPECT_GE(v.instantiations, VerifyOptions{}.min_instantiations) << rule.name;
  }
  EXPECT_EQ(checked, 2);
}

// A wrong fusion (Relu into a conv as Sigmoid) restricted to two groups is
// caught there: the verifier runs grouped convs, it does not skip them.
TEST(RuleVerifier, RejectsAWrongGroupedConvRuleAtTwoGroups) {
  for (Rule rule : hand_written_rules()) {
    if (rule.name != "fuse-conv-relu") continue;
    for (PatternOp& op : rule.target)
      for (auto& [key, expr] : op.attrs)
        if (key == AttrKey::Activation) expr = AttrExpr::of_literal(static_cast<int64_t>(Activation::Sigmoid));
    for (RuleParam& p : rule.params)
      if (p.role == AttrKey::Group) p.admits = {int64_t{2}};
    const VerifyResult v = verify_rule(rule);
    EXPECT_FALSE(v.passed);
    EXPECT_NE(v.failure.find("$g=2"), std::string::npos) << v.failure;
    return;
  }
  FAIL() << "no fuse-conv-relu rule";
}

// TASO's hand-written mul(conv(x, w), y) -> conv(x, w): it drops the Mul.
TEST(RuleVerifier, RejectsTasosConvMulRule) {
  RuleWriter w("taso-conv-mul", "planted");
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm o = w.dim("o"), kh = w.dim("kh", DimDomain::OddKernel), kw = w.dim("kw", DimDomain::OddKernel);
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k = w.weight("k", {o, c, kh, kw});
  PatternRef y = w.var("y", {DimTerm::of_literal(1)});
  RuleWriter::AttrList attrs = {{AttrKey::Pads, AttrExpr::same_pads({kh, kw})}};
  PatternRef conv = w.source(OpType::Conv, {x, k}, attrs);
  w.output(w.source(OpType::Mul, {conv, y}), w.target(OpType::Conv, {x, k}, attrs));
  VerifyResult v = verify_rule(w.finish());
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.failure.find("relative error"), std::string::npos) << v.failure;
}

TEST(RuleVerifier, RejectsDroppingARelu) {
  RuleWriter w("relu-is-identity", "planted");
  PatternRef x = w.var("x", {w.dim("n"), w.dim("c")});
  w.output(w.source(OpType::Relu, {x}), x);
  expect_rejected(w.finish());
}

TEST(RuleVerifier, RejectsSwappingMatMulOperands) {
  RuleWriter w("matmul-commutes", "planted");
  DimTerm n = w.dim("n");
  PatternRef x = w.var("x", {n, n}), y = w.var("y", {n, n});
  w.output(w.source(OpType::MatMul, {x, y}), w.target(OpType::MatMul, {y, x}));
  expect_rejected(w.finish());
}

// Composing perms in the wrong order is right only for some perms: the
// verifier must find one where it is wrong.
TEST(RuleVerifier, RejectsTransposesComposedInTheWrongOrder) {
  RuleWriter w("compose-backwards", "planted");
  PatternRef x = w.var("x", {w.dim("a"), w.dim("b"), w.dim("c")});
  int32_t p1 = w.param("p1", AttrKey::Perm), p2 = w.param("p2", AttrKey::Perm);
  PatternRef t = w.source(OpType::Transpose, {w.source(OpType::Transpose, {x}, {{AttrKey::Perm, par(p1)}})},
                          {{AttrKey::Perm, par(p2)}});
  w.output(t, w.target(OpType::Transpose, {x}, {{AttrKey::Perm, AttrExpr::compose_perm(p2, p1)}}));
  expect_rejected(w.finish());
}

// Merging a 1x1 conv into a larger one by enlarging it is right only when
// the larger conv's padding centres its kernel; claiming it for any padding
// that keeps the shapes equal (e.g. [0,0,2,2] for 3x3) must fail.
TEST(RuleVerifier, RejectsEnlargeMergeForAnyPadding) {
  RuleWriter w("enlarge-any-pads", "planted");
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm kh = w.dim("kh", DimDomain::OddKernel), kw = w.dim("kw", DimDomain::OddKernel);
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k1 = w.weight("k1", {c, c, DimTerm::of_literal(1), DimTerm::of_literal(1)});
  PatternRef k2 = w.weight("k2", {c, c, kh, kw});
  int32_t p = w.param("p", AttrKey::Pads);
  PatternRef a = w.source(OpType::Conv, {x, k1});
  PatternRef b = w.source(OpType::Conv, {x, k2}, {{AttrKey::Pads, par(p)}});
  PatternRef big = w.target(OpType::EnlargeKernel, {k1}, {{AttrKey::KernelShape, AttrExpr::of_dims({kh, kw})}});
  w.output(w.source(OpType::Add, {a, b}), w.target(OpType::Conv, {x, w.target(OpType::Add, {big, k2})}, {{AttrKey::Pads, par(p)}}));
  expect_rejected(w.finish());
}

// A stride-specific identity claimed for every stride: a 1x1 conv commutes
// with average pooling at stride 1, but at stride 2 subsampling before or
// after the pool differs (same shapes, different values).
TEST(RuleVerifier, RejectsAStrideSpecificRuleClaimedForAnyStride) {
  RuleWriter w("pool-conv-any-stride", "planted");
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k = w.weight("k", {c, c, DimTerm::of_literal(1), DimTerm::of_literal(1)});
  int32_t s = w.param("s", AttrKey::Strides);
  RuleWriter::AttrList pool = {{AttrKey::KernelShape, ints({3, 3})}, {AttrKey::Pads, ints({1, 1, 1, 1})}};
  RuleWriter::AttrList conv = {{AttrKey::Strides, par(s)}};
  PatternRef src = w.source(OpType::AvgPool, {w.source(OpType::Conv, {x, k}, conv)}, pool);
  PatternRef dst = w.target(OpType::Conv, {w.target(OpType::AvgPool, {x}, pool), k}, conv);
  w.output(src, dst);
  Rule rule = w.finish();
  expect_rejected(rule);
  // The same with the stride fixed to 1 is sound.
  rule.params[0].admits = {std::vector<int64_t>{1, 1}};
  EXPECT_TRUE(verify_rule(rule).passed) << verify_rule(rule).failure;
}

// x + conv(x, k) = conv(x, k + I) holds where the identity kernel is
// centred: with "same" pads. Claimed for any pads that keep the shape (such
// as [0,0,2,2] for 3x3), the verifier must find where it breaks.
Rule residual_fold(bool any_pads) {
  RuleWriter w(any_pads ? "residual-fold-any-pads" : "residual-fold", "planted");
  DimTerm n = w.dim("n"), c = w.dim("c"), h = w.dim("h", DimDomain::Spatial), wd = w.dim("w", DimDomain::Spatial);
  DimTerm kh = w.dim("kh", DimDomain::OddKernel), kw = w.dim("kw", DimDomain::OddKernel);
  PatternRef x = w.var("x", {n, c, h, wd});
  PatternRef k = w.weight("k", {c, c, kh, kw});
  RuleWriter::AttrList attrs = {
      {AttrKey::Pads, any_pads ? par(w.param("p", AttrKey::Pads)) : AttrExpr::same_pads({kh, kw})}};
  PatternRef sum = w.source(OpType::Add, {x, w.source(OpType::Conv, {x, k}, attrs)});
  PatternRef kernel = w.target(OpType::Add, {k, w.target_identity({c, c, kh, kw})});
  w.output(sum, w.target(OpType::Conv, {x, kernel}, attrs));
  return w.finish();
}

TEST(RuleVerifier, AcceptsAnIdentityConstantWhereItHolds) {
  VerifyResult v = verify_rule(residual_fold(false));
  EXPECT_TRUE(v.passed) << v.failure;
  EXPECT_GE(v.instantiations, 3);
}

TEST(RuleVerifier, RejectsAnIdentityFoldClaimedForAnyPads) { expect_rejected(residual_fold(true)); }

TEST(RuleVerifier, ReportsRulesThatNeverFit) {
  RuleWriter w("never-fits", "planted");
  DimTerm a = w.dim("a");
  PatternRef x = w.var("x", {a, DimTerm::of_literal(2)}), y = w.var("y", {a, DimTerm::of_literal(3)});
  w.output(w.source(OpType::Add, {x, y}), w.target(OpType::Add, {y, x}));
  VerifyResult v = verify_rule(w.finish());
  EXPECT_FALSE(v.passed);
  EXPECT_NE(v.failure.find("too narrow"), std::string::npos) << v.failure;
}

}  // namespace
}  // namespace graphworld
