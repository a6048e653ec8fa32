#include "env/graph/attribute_defaults.h"

namespace graphworld {
namespace {

bool has_window(OpType type) {
  return type == OpType::Conv || type == OpType::ConvTranspose || type == OpType::MaxPool || type == OpType::AvgPool;
}

}  // namespace

const AttrValue* attribute_default(OpType type, AttrKey key) {
  static const AttrValue kZero = int64_t{0}, kOne = int64_t{1};
  static const AttrValue kOnes2 = std::vector<int64_t>{1, 1}, kZeros4 = std::vector<int64_t>{0, 0, 0, 0};
  static const AttrValue kZeros2 = std::vector<int64_t>{0, 0};
  switch (key) {
    case AttrKey::Activation:
      if (type == OpType::Conv || type == OpType::ConvTranspose || type == OpType::MatMul || type == OpType::Gemm)
        return &kZero;
      break;
    case AttrKey::Group:
      if (type == OpType::Conv || type == OpType::ConvTranspose) return &kOne;
      break;
    case AttrKey::OutputPadding:
      if (type == OpType::ConvTranspose) return &kZeros2;
      break;
    case AttrKey::Strides:
    case AttrKey::Dilations:
      if (has_window(type)) return &kOnes2;
      break;
    case AttrKey::Pads:
      if (has_window(type)) return &kZeros4;
      break;
    case AttrKey::Axis:
      if (type == OpType::Split) return &kZero;
      break;
    case AttrKey::CeilMode:
    case AttrKey::CountIncludePad:
      if (type == OpType::MaxPool || type == OpType::AvgPool) return &kZero;
      break;
    default: break;
  }
  return nullptr;
}

Attributes without_defaults(OpType type, Attributes attrs) {
  bool any = false;
  for (const auto& [key, value] : attrs.items()) {
    const AttrValue* fallback = attribute_default(type, key);
    any = any || (fallback && *fallback == value);
  }
  if (!any) return attrs;
  Attributes kept;
  for (const auto& [key, value] : attrs.items()) {
    const AttrValue* fallback = attribute_default(type, key);
    if (!(fallback && *fallback == value)) kept.set(key, value);
  }
  return kept;
}

}  // namespace graphworld
