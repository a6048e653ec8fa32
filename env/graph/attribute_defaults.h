// The values ONNX (and graphworld's fused activation) gives an attribute an op
// does not set: a Conv without strides has strides [1,1].
//
// Graph::add_op drops attributes equal to their default, so one operator has
// one spelling whether it came from an importer that writes every attribute,
// a zoo builder that writes none, or a rule that copies a bound value. Equal
// ops then hash, compare and key the cost cache equally.
#pragma once

#include "env/graph/attributes.h"
#include "env/graph/op_type.h"

namespace graphworld {

// The default of `key` on `type`, or nullptr when the attribute has none.
// Points at a static (callers on hot matching paths never allocate).
const AttrValue* attribute_default(OpType type, AttrKey key);

// `attrs` without the entries equal to their default for `type`.
Attributes without_defaults(OpType type, Attributes attrs);

}  // namespace graphworld
