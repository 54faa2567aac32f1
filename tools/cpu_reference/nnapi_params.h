// tools/cpu_reference/nnapi_params.h — reads the scalar parameters of NNAPI convolutions and
// poolings from an nnhal Model, with implicit padding turned into explicit pads exactly as NNAPI
// computes them (nn/common/OperationsUtils.h calculateExplicitPadding).
//
// Used by the XNNPACK baseline, which must build the same geometry as nnhal's kernels.
// Only NHWC is read: a layout operand set to true (NCHW) is refused.
//
// Thread safety: pure functions over a Model the caller keeps alive.
#pragma once

#include <cstdint>
#include <span>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::cpu_reference {

/// Geometry of a 2-D window (convolution filter or pooling window), NHWC. Pads are in
/// input pixels, strides and dilations in pixels; `depthMultiplier` is set for
/// DEPTHWISE_CONV_2D only.
struct Window2d {
  uint32_t padTop = 0;
  uint32_t padBottom = 0;
  uint32_t padLeft = 0;
  uint32_t padRight = 0;
  uint32_t strideHeight = 1;
  uint32_t strideWidth = 1;
  uint32_t dilationHeight = 1;
  uint32_t dilationWidth = 1;
  uint32_t filterHeight = 0;
  uint32_t filterWidth = 0;
  uint32_t depthMultiplier = 0;
  FusedActivationFunc activation = FusedActivationFunc::NONE;
};

/// Bytes of a CONSTANT_COPY or CONSTANT_REFERENCE operand. Errors: INVALID_ARGUMENT for a
/// non-constant operand or a location outside operandValues or its pool.
Result<std::span<const uint8_t>> constantBytes(const Model& model, uint32_t operand);

/// The value of a constant INT32 / FLOAT32 / BOOL scalar operand. Errors: INVALID_ARGUMENT
/// for another type or a non-constant operand.
Result<int32_t> int32Scalar(const Model& model, uint32_t operand);
Result<float> float32Scalar(const Model& model, uint32_t operand);
Result<bool> boolScalar(const Model& model, uint32_t operand);
/// A constant INT32 fused activation code (0-3). Errors: INVALID_ARGUMENT otherwise.
Result<FusedActivationFunc> fusedActivation(const Model& model, uint32_t operand);

/// Explicit pads (front, back) of implicit padding `code` (1 = SAME, 2 = VALID) along one
/// dimension of `inSize` pixels: SAME pads (out - 1) * stride + (filter - 1) * dilation + 1
/// - in pixels (at least 0), the front getting the smaller half; VALID pads nothing.
struct Pads {
  uint32_t front = 0;
  uint32_t back = 0;
};
Pads explicitPadding(int32_t code, uint32_t inSize, uint32_t stride, uint32_t filter,
                     uint32_t dilation);

/// Reads CONV_2D or DEPTHWISE_CONV_2D (implicit or explicit padding, optional layout and
/// dilations); the filter size comes from the filter operand ([O, H, W, I] or [1, H, W, O]).
/// Errors: INVALID_ARGUMENT for another operation, non-constant parameters, NCHW layout,
/// or an input or filter that is not 4-D.
Result<Window2d> readConvolution(const Model& model, const Operation& operation);

/// Reads AVERAGE_POOL_2D, MAX_POOL_2D or L2_POOL_2D (implicit or explicit padding,
/// optional layout). Errors as readConvolution.
Result<Window2d> readPooling(const Model& model, const Operation& operation);

/// Output size along one dimension: (in + padFront + padBack - effective filter) / stride
/// + 1, effective filter = (filter - 1) * dilation + 1; 0 when the window does not fit.
uint32_t windowOutputSize(uint32_t inSize, uint32_t padFront, uint32_t padBack, uint32_t filter,
                          uint32_t stride, uint32_t dilation);

/// Elements of a tensor operand (the product of its dimensions; 1 for a scalar).
size_t elementCount(const Operand& operand);

/// True for CONSTANT_COPY and CONSTANT_REFERENCE operands.
bool isConstant(const Operand& operand);

/// True for operations whose output is their input's bytes under another shape (RESHAPE,
/// SQUEEZE): a baseline gives them no operator, the output aliases the input's buffer.
bool isAlias(OperationType type);

/// Checks an alias operation: same type, scale, zero point and element count on both sides.
/// Errors: INVALID_ARGUMENT otherwise.
Result<void> checkAlias(const Model& model, const Operation& operation);

}  // namespace nnhal::cpu_reference
