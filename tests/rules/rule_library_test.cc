// The rule library file: round trips, and clear errors for every way a file
// can be wrong (corrupt, truncated, old version, unknown op, bad reference).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "common/error.h"
#include "env/rules/hand_written_rules.h"
#include "env/rules/rule_library.h"
#include "env/rules/rule_writer.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

std::string expect_format_error(const std::string& bytes) {
  try {
    parse_rule_library(bytes, "test.rules");
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("test.rules"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the library was accepted";
  return "";
}

// Re-seals a payload edited in place, so the checksum passes and the
// payload's own content is what gets rejected.
void reseal(std::string& bytes);

TEST(RuleLibrary, RoundTripKeepsEveryRule) {
  RuleLibrary library{"hand-written", hand_written_rules()};
  const std::string path = testing::scratch_dir() + "/hand.rules";
  save_rule_library(library, path);
  RuleLibrary back = load_rule_library(path);
  EXPECT_EQ(back.description, library.description);
  ASSERT_EQ(back.rules.size(), library.rules.size());
  for (size_t i = 0; i < back.rules.size(); ++i) {
    EXPECT_EQ(back.rules[i].name, library.rules[i].name);
    EXPECT_EQ(back.rules[i].origin, library.rules[i].origin);
    EXPECT_EQ(rule_identity_key(back.rules[i]), rule_identity_key(library.rules[i])) << library.rules[i].name;
  }
}

TEST(RuleLibrary, DefaultLibraryIsBuiltInAndLarge) {
  const RuleLibrary& library = default_rule_library();
  EXPECT_GE(library.rules.size(), 500u);
  size_t hand = 0;
  for (const Rule& r : library.rules) hand += r.origin == "hand-written";
  EXPECT_EQ(hand, hand_written_rules().size());
}

TEST(RuleLibrary, CorruptByteFailsTheChecksum) {
  std::string bytes = serialize_rule_library({"x", hand_written_rules()});
  bytes[bytes.size() / 2] ^= 0x20;
  EXPECT_NE(expect_format_error(bytes).find("checksum"), std::string::npos);
}

TEST(RuleLibrary, TruncatedFileSaysSo) {
  std::string bytes = serialize_rule_library({"x", hand_written_rules()});
  EXPECT_NE(expect_format_error(bytes.substr(0, bytes.size() - 100)).find("truncated"), std::string::npos);
  EXPECT_NE(expect_format_error(bytes.substr(0, 10)).find("not a graphworld rule library"), std::string::npos);
}

TEST(RuleLibrary, OldVersionAsksToRegenerate) {
  std::string bytes = serialize_rule_library({"x", hand_written_rules()});
  uint32_t old = kRuleLibraryFormatVersion - 1;
  std::memcpy(bytes.data() + 8, &old, sizeof(old));
  std::string message = expect_format_error(bytes);
  EXPECT_NE(message.find("version 0"), std::string::npos) << message;
  EXPECT_NE(message.find("rules generate"), std::string::npos) << message;
}

TEST(RuleLibrary, GarbageAndMissingFilesAreClearErrors) {
  EXPECT_NE(expect_format_error("hello, this is not a rule library at all").find("magic"), std::string::npos);
  EXPECT_THROW(load_rule_library("/nonexistent/lib.rules"), FormatError);
  std::string bytes = serialize_rule_library({"x", hand_written_rules()});
  // A well-sealed payload of random words: Cap'n Proto must reject it cleanly.
  std::string payload(bytes.size() - 32, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>((i * 2654435761u) >> 13);
  bytes.replace(32, payload.size(), payload);
  reseal(bytes);
  EXPECT_NE(expect_format_error(bytes).find("test.rules"), std::string::npos);
}

TEST(RuleLibrary, UnknownOpTypeNamesTheRuleAndTheType) {
  std::string bytes = serialize_rule_library({"x", hand_written_rules()});
  size_t at = bytes.find("BatchNorm", 32);
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 9, "BatchNrom");
  reseal(bytes);
  std::string message = expect_format_error(bytes);
  EXPECT_NE(message.find("unknown op type 'BatchNrom'"), std::string::npos) << message;
  EXPECT_NE(message.find("fold-conv-batchnorm"), std::string::npos) << message;
}

TEST(RuleLibrary, BadReferenceIsRejected) {
  RuleWriter w("dangling", "hand-written");
  PatternRef x = w.var("x", {w.dim("n")});
  w.output(w.source(OpType::Relu, {x}), x);
  Rule rule = w.finish();
  rule.source[0].inputs[0] = PatternRef::of_var(7);  // no variable 7
  std::string message = expect_format_error(serialize_rule_library({"x", {rule}}));
  EXPECT_NE(message.find("dangling"), std::string::npos) << message;
  EXPECT_NE(message.find("variable #7"), std::string::npos) << message;
}

// A grouped-channels constraint relates one group parameter and three dim
// symbols; a file with another arity, or a dim the rule lacks, is refused.
TEST(RuleLibrary, GroupedChannelsConstraintWithBadDimsIsRejected) {
  const std::vector<Rule> rules = hand_written_rules();
  const auto relu = std::find_if(rules.begin(), rules.end(), [](const Rule& r) { return r.name == "fuse-conv-relu"; });
  ASSERT_NE(relu, rules.end());
  ASSERT_EQ(relu->constraints.size(), 1u);
  for (const std::vector<int32_t>& dims : {std::vector<int32_t>{0, 1}, std::vector<int32_t>{0, 1, 99}}) {
    Rule rule = *relu;
    rule.constraints[0].dims = dims;
    std::string message = expect_format_error(serialize_rule_library({"x", {rule}}));
    EXPECT_NE(message.find("fuse-conv-relu"), std::string::npos) << message;
    EXPECT_NE(message.find("grouped-channels"), std::string::npos) << message;
  }
}

void reseal(std::string& bytes) {
  // Header: magic(8) version(4) reserved(4) size(8) checksum(8).
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 32; i < bytes.size(); ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 1099511628211ull;
  }
  std::memcpy(bytes.data() + 24, &h, sizeof(h));
}

}  // namespace
}  // namespace graphworld
