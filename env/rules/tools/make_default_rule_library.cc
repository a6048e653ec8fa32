// Build step: writes the default rule library (hand-written rules plus rules
// generated from graphs of up to 3 ops, all verified) to argv[1]. The build
// embeds the file into graphworld (default_rule_library.cc).
#include <cstdio>
#include <exception>

#include "env/rules/rule_generator.h"
#include "env/rules/rule_library.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_default_rule_library OUTPUT\n");
    return 2;
  }
  try {
    graphworld::GeneratorOptions options;
    options.max_ops = 3;
    graphworld::RuleLibraryBuild build = graphworld::build_rule_library(options, true);
    graphworld::save_rule_library(build.library, argv[1]);
    std::printf("default rule library: %zu rules (%zu hand-written, %zu generated) -> %s\n",
                build.library.rules.size(), build.hand_written, build.generated.stats.kept, argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_default_rule_library: %s\n", e.what());
    return 1;
  }
  return 0;
}
