// Generates rules by enumerating small graphs and pairing equal ones.
//
// Each *world* fixes a few input variables with symbolic shapes (activations
// and weights) and an op menu: MatMul, Add, Mul, scalar Mul, Conv (1x1, 3x3,
// 1x3 and 3x1 kernels with "same" padding, strides 1 and 2, no activation or
// Relu), Relu, Concat, Split, Transpose, average and max pooling, kernel
// enlargement and the constant identities (an identity matrix and identity
// conv kernels, rule_constant.h), which only targets may contain. Every graph of up to `max_ops` menu ops is built once (common
// subexpressions and re-orderings are skipped), evaluated on random integers
// modulo a prime (modular_eval.h), and bucketed by the values of its outputs.
//
// Within a bucket every graph is paired with the bucket's smallest, in both
// directions. Pairs are pruned when one side merely renames the other, when
// both contain the same op over the same inputs (a smaller rule covers it),
// when their outputs come from the same op over equal operands, when the
// target adds an identity constant and more computing ops than the source
// removes (`conv(x, k) -> conv(conv(x, k), I)` helps no search), and when
// they duplicate a rule already kept. Each survivor is made as general as
// the verifier allows: strides and activation become parameters and kernel
// sizes symbols where that verifies, and stay literal where it does not.
// Pairs that fail even literally are rejected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "env/rules/rule.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_verifier.h"

namespace graphworld {

struct GeneratorOptions {
  int max_ops = 3;
  // Enumeration stops (and says so) past this many graphs per world, which
  // bounds memory: about 1 KiB per graph.
  size_t max_graphs_per_world = 4'000'000;
  VerifyOptions verify;
  std::function<void(const std::string&)> progress;  // one line per stage and periodic counts
};

struct GeneratorStats {
  size_t graphs = 0;             // distinct graphs enumerated
  size_t buckets = 0;            // fingerprint classes with two or more graphs
  size_t pairs = 0;              // candidate (source, target) pairs, both directions
  size_t pruned_common = 0;      // same op over the same inputs on both sides
  size_t pruned_output_op = 0;   // both outputs from the same op over equal operands
  size_t pruned_duplicate = 0;   // renamings and duplicates of a kept rule
  size_t pruned_unbound = 0;     // the target needs a size or parameter the source does not fix
  size_t pruned_identity_growth = 0;  // the target adds an identity and computing ops
  size_t rejected = 0;           // failed verification even with literal parameters
  size_t kept = 0;
  size_t generic_kernel = 0;     // kept rules valid for any (odd) kernel size
  size_t generic_strides = 0;    // kept rules valid for any stride
  bool truncated = false;        // a world hit max_graphs_per_world
};

struct GeneratorResult {
  std::vector<Rule> rules;
  GeneratorStats stats;
  std::vector<std::string> rejections;  // "<rule>: <why>" for each rejected pair
};

GeneratorResult generate_rules(const GeneratorOptions& options);

// The hand-written rules (each verified; a failure throws Error) followed by
// generated ones, as `graphworld rules generate` and the build write them.
struct RuleLibraryBuild {
  RuleLibrary library;
  GeneratorResult generated;  // its rules moved into `library`
  size_t hand_written = 0;
};
RuleLibraryBuild build_rule_library(const GeneratorOptions& options, bool include_hand_written);

}  // namespace graphworld
