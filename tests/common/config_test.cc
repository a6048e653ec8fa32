// Typed configuration: YAML files and key=value overrides against a schema,
// with errors that name the file, the key and the closest valid key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/config.h"
#include "tests/support/test_env.h"

namespace graphworld {
namespace {

ConfigSchema schema() {
  ConfigSchema s;
  s.add_int("ppo.epochs", 4, 1, 100, "passes over each batch")
      .add_double("ppo.clip", 0.2, 0.0, 1.0, "clip range")
      .add_bool("deterministic", false, "single-threaded, seeded")
      .add_string("cost.model", "analytic", "cost model", {"analytic", "measured"})
      .add_string_list("graphs", {"nasrnn"}, "training graphs");
  return s;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path, const std::vector<std::string>& overrides) {
  try {
    load_config(schema(), path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Config, DefaultsFileAndOverridesApplyInOrder) {
  const std::string path = write("good.yaml", "ppo:\n  epochs: 8\n  clip: 0.1\ngraphs: [bert, 'a, b.onnx']\n");
  const Config c = load_config(schema(), path, {"ppo.clip=0.3", "deterministic=true"});
  EXPECT_EQ(c.get_int("ppo.epochs"), 8);
  EXPECT_DOUBLE_EQ(c.get_double("ppo.clip"), 0.3);
  EXPECT_TRUE(c.get_bool("deterministic"));
  EXPECT_EQ(c.get_string("cost.model"), "analytic");
  EXPECT_EQ(c.get_string_list("graphs"), (std::vector<std::string>{"bert", "a, b.onnx"}));
  EXPECT_EQ(load_config(schema(), "", {"graphs=x,y"}).get_string_list("graphs"), (std::vector<std::string>{"x", "y"}));
}

TEST(Config, ResolvedConfigRoundTripsThroughYaml) {
  const Config c = load_config(schema(), "", {"ppo.epochs=7", "graphs=[p, q]", "cost.model=measured"});
  const std::string saved = write("resolved.yaml", c.to_yaml());
  const Config back = load_config(schema(), saved, {});
  EXPECT_EQ(back.get_int("ppo.epochs"), 7);
  EXPECT_DOUBLE_EQ(back.get_double("ppo.clip"), 0.2);
  EXPECT_EQ(back.get_string("cost.model"), "measured");
  EXPECT_EQ(back.get_string_list("graphs"), (std::vector<std::string>{"p", "q"}));
  EXPECT_NE(c.to_yaml().find("ppo:"), std::string::npos) << "dotted keys nest: " << c.to_yaml();
  EXPECT_NE(c.to_yaml().find("clip: 0.2\n"), std::string::npos) << "numbers in their shortest form: " << c.to_yaml();
  ConfigSchema clash;
  clash.add_int("ppo", 1, 0, 2, "a value");
  EXPECT_THROW(clash.add_int("ppo.clip", 1, 0, 2, "and a section"), Error);
}

TEST(Config, BadInputNamesTheFileTheKeyAndTheFix) {
  const std::string typo = write("typo.yaml", "ppo:\n  clp: 0.1\n");
  EXPECT_EQ(error_of(typo, {}), typo + ": unknown key 'ppo.clp'; did you mean 'ppo.clip'?");
  const std::string wrong_type = write("type.yaml", "ppo:\n  epochs: 2.5\n");
  EXPECT_EQ(error_of(wrong_type, {}), wrong_type + ": 'ppo.epochs' must be an integer, got '2.5'");
  EXPECT_EQ(error_of("", {"ppo.clip=3"}), "override 'ppo.clip=3': 'ppo.clip' must be in [0, 1], got 3");
  EXPECT_NE(error_of("", {"cost.model=cuda"}).find("must be one of analytic, measured"), std::string::npos);
  EXPECT_NE(error_of("", {"deterministic=maybe"}).find("must be true or false"), std::string::npos);
  EXPECT_NE(error_of("", {"ppo.clip"}).find("write it as key=value"), std::string::npos);
  const std::string list_for_scalar = write("list.yaml", "ppo:\n  epochs: [1, 2]\n");
  EXPECT_NE(error_of(list_for_scalar, {}).find("takes one value, not a list"), std::string::npos);
  const std::string empty_value = write("empty.yaml", "ppo:\n  epochs:\n");
  EXPECT_NE(error_of(empty_value, {}).find("'ppo.epochs' has no value"), std::string::npos);
  const std::string broken = write("broken.yaml", "ppo: [unclosed\n");
  EXPECT_NE(error_of(broken, {}).find("not valid YAML at line"), std::string::npos);
  EXPECT_NE(error_of(testing::scratch_dir() + "/missing.yaml", {}).find("cannot read the config file"),
            std::string::npos);
}

}  // namespace
}  // namespace graphworld
