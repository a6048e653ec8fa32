// Helpers for the rules tests: graphs that hold one instance of a rule.
#pragma once

#include <optional>

#include "env/graph/graph.h"
#include "env/rules/rule.h"

namespace graphworld::testing {

// A graph computing the rule's source pattern at the first instantiation the
// verifier would try that fits: activation variables become graph inputs,
// weight variables random weights, the mapped outputs graph outputs.
std::optional<Graph> source_instance(const Rule& rule);

// The rule in the default library with this name (fails the test if absent).
const Rule& default_rule(const std::string& name);

}  // namespace graphworld::testing
