// Where an ONNX Resize samples its input: the coordinate transformation and
// nearest rounding, shared by the ATen kernel and by the exporter (which
// spells a mode opset 17 lacks as Gathers of these indices).
#pragma once

#include <cstdint>
#include <vector>

#include "env/graph/attributes.h"

namespace graphworld {

// The input coordinate output index `i` of an axis resized from `in` to
// `out` samples, before rounding or interpolation (scale = out / in).
double resize_source_coordinate(ResizeCoordinateMode mode, int64_t i, int64_t in, int64_t out);

// The input index nearest mode picks for coordinate `x`, clamped to the axis.
int64_t resize_nearest_index(ResizeNearestMode mode, double x, int64_t in);

// Every output index's input index along one axis, for nearest resizing.
std::vector<int64_t> resize_nearest_indices(ResizeCoordinateMode coord, ResizeNearestMode nearest, int64_t in,
                                            int64_t out);

}  // namespace graphworld
