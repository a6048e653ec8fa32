// Checks that a rule's source and target compute the same values.
//
// The rule is instantiated many times: each dim symbol takes at least three
// sizes of its domain (odd ones included), each parameter every value it
// admits (or a set of test values for its attribute when it admits any).
// Both patterns run in float64 with ATen on the same random inputs, and every
// output must agree to a relative error of `tolerance`. Instantiations whose
// shapes do not fit (a kernel larger than its image) are skipped; a rule with
// too few instantiations that fit is rejected, since it was barely tested.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "env/rules/rule.h"
#include "env/rules/rule_instance.h"

namespace graphworld {

struct VerifyOptions {
  double tolerance = 1e-9;
  int max_instantiations = 48;
  int min_instantiations = 3;  // instantiations that fit, below which the rule fails
  uint64_t seed = 1;
};

struct VerifyResult {
  bool passed = false;
  int instantiations = 0;  // run and compared
  int skipped = 0;         // did not fit
  double max_error = 0;    // worst relative error seen
  std::string failure;     // why it failed, with the instantiation that broke it
};

VerifyResult verify_rule(const Rule& rule, const VerifyOptions& options = {});

// Calls `visit(binding, size_variant)` with each binding the verifier tries,
// in its order, until `visit` returns false. Tests use it to instantiate rules.
void for_each_candidate_binding(const Rule& rule, const VerifyOptions& options,
                                const std::function<bool(const RuleBinding&, int)>& visit);

}  // namespace graphworld
