#include "env/graph/attributes.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace graphworld {
namespace {

TEST(Attributes, OrderIndependentEqualityAndHash) {
  Attributes a{{AttrKey::Strides, std::vector<int64_t>{2, 2}}, {AttrKey::Group, int64_t{4}}};
  Attributes b{{AttrKey::Group, int64_t{4}}, {AttrKey::Strides, std::vector<int64_t>{2, 2}}};
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  b.set(AttrKey::Group, int64_t{2});
  EXPECT_FALSE(a == b);
  EXPECT_NE(a.hash(), b.hash());
}

TEST(Attributes, TypedGettersAndErrors) {
  Attributes a{{AttrKey::Epsilon, 1e-5}, {AttrKey::Axis, int64_t{-1}}};
  EXPECT_DOUBLE_EQ(a.get_float(AttrKey::Epsilon, 0), 1e-5);
  EXPECT_EQ(a.get_int(AttrKey::Axis, 0), -1);
  EXPECT_EQ(a.get_int(AttrKey::Group, 1), 1);
  EXPECT_THROW(a.get_ints(AttrKey::Axis), GraphError);
  EXPECT_THROW(a.require_ints(AttrKey::Perm), GraphError);
  EXPECT_EQ(a.to_string(), "axis=-1 epsilon=1e-05");
}

}  // namespace
}  // namespace graphworld
