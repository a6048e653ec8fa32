#include "env/rules/rule_constant.h"

#include <algorithm>

#include "common/error.h"

namespace graphworld {

namespace {

ConstantFill fill_of(const Attributes& attrs, const std::string& where) {
  const int64_t fill = attrs.get_int(AttrKey::Fill, static_cast<int64_t>(ConstantFill::Value));
  if (fill != static_cast<int64_t>(ConstantFill::Value) && fill != static_cast<int64_t>(ConstantFill::Identity))
    throw GraphError(where + ": unknown constant fill " + std::to_string(fill) + " (0 = value, 1 = identity)");
  return static_cast<ConstantFill>(fill);
}

bool identity_shape_ok(const Shape& s) {
  if (s.size() == 2) return s[0] == s[1] && s[0] > 0;
  if (s.size() == 4) return s[0] == s[1] && s[0] > 0 && s[2] % 2 == 1 && s[3] % 2 == 1;
  return false;
}

}  // namespace

Shape rule_constant_shape(const Attributes& attrs, const std::string& where) {
  Shape shape = attrs.get_ints(AttrKey::Shape, {1});
  for (int64_t d : shape)
    if (d <= 0) throw GraphError(where + ": constant dimension " + std::to_string(d) + " is not positive");
  if (fill_of(attrs, where) == ConstantFill::Identity && !identity_shape_ok(shape))
    throw GraphError(where + ": an identity constant must be [n, n] or [c, c, odd kh, odd kw], not " +
                     shape_to_string(shape));
  return shape;
}

std::vector<int64_t> identity_positions(const Shape& shape) {
  if (!identity_shape_ok(shape)) throw GraphError("no identity of shape " + shape_to_string(shape));
  std::vector<int64_t> out;
  const int64_t n = shape[0];
  const int64_t plane = shape.size() == 4 ? shape[2] * shape[3] : 1;
  const int64_t centre = shape.size() == 4 ? (shape[2] / 2) * shape[3] + shape[3] / 2 : 0;
  for (int64_t i = 0; i < n; ++i) out.push_back((i * n + i) * plane + centre);
  return out;
}

std::shared_ptr<TensorData> make_rule_constant(const Attributes& attrs, const std::string& where) {
  const Shape shape = rule_constant_shape(attrs, where);
  auto data = std::make_shared<TensorData>(DType::Float32, shape);
  if (fill_of(attrs, where) == ConstantFill::Identity) {
    std::fill_n(data->floats(), data->numel(), 0.0f);
    for (int64_t i : identity_positions(shape)) data->floats()[i] = 1.0f;
  } else {
    std::fill_n(data->floats(), data->numel(), static_cast<float>(attrs.get_float(AttrKey::Value, 0.0)));
  }
  return data;
}

}  // namespace graphworld
