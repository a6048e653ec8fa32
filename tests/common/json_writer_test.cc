#include "common/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace graphworld {
namespace {

TEST(JsonWriter, WritesNestedObjectsInOrder) {
  JsonWriter json;
  json.begin_object().key("b").value(int64_t{1}).key("a").begin_array().value("x").value(2.5).end_array();
  json.key("ok").value(true).key("dims").value(std::vector<int64_t>{1, 3}).end_object();
  EXPECT_EQ(json.str(), R"({"b":1,"a":["x",2.5],"ok":true,"dims":[1,3]})");
}

TEST(JsonWriter, EscapesStringsAndWritesNonFiniteAsNull) {
  JsonWriter json;
  json.begin_object().key("s").value("a\"b\\c\n").key("n").value(std::nan("")).end_object();
  EXPECT_EQ(json.str(), R"({"s":"a\"b\\c\n","n":null})");
}

}  // namespace
}  // namespace graphworld
