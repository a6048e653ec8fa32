#include "env/graph/attributes.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "common/error.h"
#include "env/graph/hashing.h"

namespace graphworld {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(AttrKey::kCount)> kAttrNames = {
    "activation", "alpha",       "axes",    "axis",   "beta",   "ceil_mode",
    "count_include_pad",         "dilations", "ends", "epsilon", "group",
    "keepdims",   "kernel_shape", "max",    "min",    "pads",   "perm",
    "shape",      "split",       "starts",  "steps",  "strides", "transA",
    "transB",     "value",       "fill",    "output_padding", "repeats", "mode",
    "coordinate_transformation_mode", "nearest_mode", "activation_alpha", "activation_beta"};

[[noreturn]] void wrong_type(AttrKey key, const char* wanted) {
  throw GraphError("attribute '" + std::string(attr_key_name(key)) + "' is not " + wanted);
}

}  // namespace

std::string_view attr_key_name(AttrKey key) {
  auto index = static_cast<size_t>(key);
  return index < kAttrNames.size() ? kAttrNames[index] : std::string_view("?");
}

std::optional<AttrKey> attr_key_from_name(std::string_view name) {
  for (size_t i = 0; i < kAttrNames.size(); ++i)
    if (kAttrNames[i] == name) return static_cast<AttrKey>(i);
  return std::nullopt;
}

std::string_view activation_name(Activation act) {
  switch (act) {
    case Activation::None: return "none";
    case Activation::Relu: return "relu";
    case Activation::Sigmoid: return "sigmoid";
    case Activation::Tanh: return "tanh";
    case Activation::HardSigmoid: return "hard_sigmoid";
    case Activation::HardSwish: return "hard_swish";
    case Activation::LeakyRelu: return "leaky_relu";
  }
  return "?";
}

std::string_view resize_mode_name(ResizeMode mode) { return mode == ResizeMode::Linear ? "linear" : "nearest"; }

std::string_view resize_coordinate_mode_name(ResizeCoordinateMode mode) {
  switch (mode) {
    case ResizeCoordinateMode::HalfPixel: return "half_pixel";
    case ResizeCoordinateMode::PytorchHalfPixel: return "pytorch_half_pixel";
    case ResizeCoordinateMode::Asymmetric: return "asymmetric";
    case ResizeCoordinateMode::AlignCorners: return "align_corners";
    case ResizeCoordinateMode::TfHalfPixelForNearest: return "tf_half_pixel_for_nn";
  }
  return "?";
}

std::string_view resize_nearest_mode_name(ResizeNearestMode mode) {
  switch (mode) {
    case ResizeNearestMode::RoundPreferFloor: return "round_prefer_floor";
    case ResizeNearestMode::RoundPreferCeil: return "round_prefer_ceil";
    case ResizeNearestMode::Floor: return "floor";
    case ResizeNearestMode::Ceil: return "ceil";
  }
  return "?";
}

Attributes::Attributes(std::initializer_list<std::pair<AttrKey, AttrValue>> items) {
  for (const auto& [key, value] : items) set(key, value);
}

void Attributes::set(AttrKey key, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), key,
                             [](const auto& item, AttrKey k) { return item.first < k; });
  if (it != items_.end() && it->first == key) {
    it->second = std::move(value);
  } else {
    items_.insert(it, {key, std::move(value)});
  }
}

const AttrValue* Attributes::find(AttrKey key) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), key,
                             [](const auto& item, AttrKey k) { return item.first < k; });
  return (it != items_.end() && it->first == key) ? &it->second : nullptr;
}

int64_t Attributes::get_int(AttrKey key, int64_t fallback) const {
  const AttrValue* v = find(key);
  if (!v) return fallback;
  if (auto* i = std::get_if<int64_t>(v)) return *i;
  wrong_type(key, "an integer");
}

double Attributes::get_float(AttrKey key, double fallback) const {
  const AttrValue* v = find(key);
  if (!v) return fallback;
  if (auto* d = std::get_if<double>(v)) return *d;
  if (auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  wrong_type(key, "a float");
}

std::vector<int64_t> Attributes::get_ints(AttrKey key, std::vector<int64_t> fallback) const {
  const AttrValue* v = find(key);
  if (!v) return fallback;
  if (auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  wrong_type(key, "an integer list");
}

int64_t Attributes::require_int(AttrKey key) const {
  const AttrValue* v = find(key);
  if (!v) throw GraphError("missing attribute '" + std::string(attr_key_name(key)) + "'");
  if (auto* i = std::get_if<int64_t>(v)) return *i;
  wrong_type(key, "an integer");
}

const std::vector<int64_t>& Attributes::require_ints(AttrKey key) const {
  const AttrValue* v = find(key);
  if (!v) throw GraphError("missing attribute '" + std::string(attr_key_name(key)) + "'");
  if (auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  wrong_type(key, "an integer list");
}

uint64_t Attributes::hash() const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (const auto& [key, value] : items_) {
    h = hash_combine(h, static_cast<uint64_t>(key));
    h = hash_combine(h, value.index());
    if (auto* i = std::get_if<int64_t>(&value)) {
      h = hash_combine(h, static_cast<uint64_t>(*i));
    } else if (auto* d = std::get_if<double>(&value)) {
      h = hash_combine(h, hash_double(*d));
    } else {
      for (int64_t x : std::get<std::vector<int64_t>>(value)) h = hash_combine(h, static_cast<uint64_t>(x));
    }
  }
  return h;
}

std::string attr_value_to_string(AttrKey key, const AttrValue& value) {
  if (auto* i = std::get_if<int64_t>(&value)) {
    return key == AttrKey::Activation ? std::string(activation_name(static_cast<Activation>(*i))) : std::to_string(*i);
  }
  if (auto* d = std::get_if<double>(&value)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", *d);
    return buf;
  }
  std::string out = "[";
  const auto& list = std::get<std::vector<int64_t>>(value);
  for (size_t k = 0; k < list.size(); ++k) {
    if (k) out += ',';
    out += std::to_string(list[k]);
  }
  return out + ']';
}

std::string Attributes::to_string() const {
  std::string out;
  for (const auto& [key, value] : items_) {
    if (!out.empty()) out += ' ';
    out += attr_key_name(key);
    out += '=';
    out += attr_value_to_string(key, value);
  }
  return out;
}

}  // namespace graphworld
