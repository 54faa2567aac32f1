// engine/ops/elementwise_common.h — Kernel builders shared by the prepare functions of the
// elementwise family: one-input kernels over the flat elements, and two-input kernels over a
// broadcast layout, both split across the kernel thread pool.
#pragma once

#include <cstddef>
#include <utility>

#include "engine/operation.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/elementwise.h"
#include "nnhal/status.h"

namespace nnhal::engine::ops {

/// A Kernel calling fn(in, out, begin, end) over [0, count) for input 0 / output 0.
template <typename In, typename Out, typename Fn>
PrepareResult makeUnaryKernel(size_t count, Fn fn) {
  return makeKernel([count, fn = std::move(fn)](const RunContext& rc) -> Result<void> {
    const In* in = rc.input<In>(0);
    Out* out = rc.output<Out>(0);
    rc.parallel().forRange(count, kElementGrain,
                           [&](size_t begin, size_t end) { fn(in, out, begin, end); });
    return {};
  });
}

/// A Kernel calling fn(a, b, out, layout, begin, end) over the output elements, with a and b
/// inputs 0 and 1 and out output 0.
template <typename A, typename B, typename Out, typename Fn>
PrepareResult makeBinaryKernel(const kernels::BroadcastLayout& layout, Fn fn) {
  return makeKernel([layout, fn = std::move(fn)](const RunContext& rc) -> Result<void> {
    const A* a = rc.input<A>(0);
    const B* b = rc.input<B>(1);
    Out* out = rc.output<Out>(0);
    rc.parallel().forRange(layout.outputCount, kElementGrain,
                           [&](size_t begin, size_t end) { fn(a, b, out, layout, begin, end); });
    return {};
  });
}

/// A float binary kernel with a fused activation's clamp range (kernels::addFloat32,
/// mulFloat32, subFloat32, divFloat32).
using FloatClampedBinaryFn = void (*)(const float* a, const float* b, float* out,
                                      const kernels::BroadcastLayout& layout, float outMin,
                                      float outMax, size_t begin, size_t end) noexcept;

/// makeBinaryKernel over floats: fn clamps to the range of `activation`.
PrepareResult makeFloatClampedKernel(const kernels::BroadcastLayout& layout,
                                     FusedActivationFunc activation, FloatClampedBinaryFn fn);

/// Broadcasts inputs 0 and 1 (each of rank <= maxRank), sets output 0 to the broadcast shape
/// and returns the layout. Errors: INVALID_ARGUMENT for a rank above maxRank (or above
/// kernels::kMaxBroadcastRank), incompatible shapes, or an output shape mismatch.
Result<kernels::BroadcastLayout> broadcastToOutput(PrepareContext& ctx, size_t maxRank);

/// Sets output 0 to the dimensions of input 0.
Result<void> sameShapeOutput(PrepareContext& ctx);

}  // namespace nnhal::engine::ops
