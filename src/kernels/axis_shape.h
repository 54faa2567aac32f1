// kernels/axis_shape.h — how the operations along one axis (SOFTMAX, LOG_SOFTMAX, the
// normalizations) view a tensor: [outer, axisSize, inner], row-major, the operation running
// over the middle index for each (outer, inner) pair. Work item w in [0, items()) is the
// vector with outer = w / inner, inner index = w % inner.
#pragma once

#include <cstddef>

namespace nnhal::kernels {

struct AxisShape {
  size_t outer = 1, axisSize = 1, inner = 1;
  size_t items() const { return outer * inner; }
  /// Index of work item w's first element; its elements are inner apart.
  size_t first(size_t w) const { return (w / inner) * axisSize * inner + w % inner; }
};

}  // namespace nnhal::kernels
