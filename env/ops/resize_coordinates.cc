#include "env/ops/resize_coordinates.h"

#include <algorithm>
#include <cmath>

namespace graphworld {

double resize_source_coordinate(ResizeCoordinateMode mode, int64_t i, int64_t in, int64_t out) {
  const double scale = static_cast<double>(out) / static_cast<double>(in);
  const double x = static_cast<double>(i);
  switch (mode) {
    case ResizeCoordinateMode::HalfPixel: return (x + 0.5) / scale - 0.5;
    case ResizeCoordinateMode::PytorchHalfPixel: return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case ResizeCoordinateMode::Asymmetric: return x / scale;
    case ResizeCoordinateMode::AlignCorners:
      return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
    case ResizeCoordinateMode::TfHalfPixelForNearest: return (x + 0.5) / scale;
  }
  return x / scale;
}

int64_t resize_nearest_index(ResizeNearestMode mode, double x, int64_t in) {
  double whole = std::floor(x);
  double frac = x - whole;
  double picked = whole;
  switch (mode) {
    case ResizeNearestMode::RoundPreferFloor: picked = frac <= 0.5 ? whole : whole + 1; break;
    case ResizeNearestMode::RoundPreferCeil: picked = frac < 0.5 ? whole : whole + 1; break;
    case ResizeNearestMode::Floor: picked = whole; break;
    case ResizeNearestMode::Ceil: picked = frac > 0 ? whole + 1 : whole; break;
  }
  return std::clamp(static_cast<int64_t>(picked), int64_t{0}, in - 1);
}

std::vector<int64_t> resize_nearest_indices(ResizeCoordinateMode coord, ResizeNearestMode nearest, int64_t in,
                                            int64_t out) {
  std::vector<int64_t> index(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i)
    index[static_cast<size_t>(i)] = resize_nearest_index(nearest, resize_source_coordinate(coord, i, in, out), in);
  return index;
}

}  // namespace graphworld
