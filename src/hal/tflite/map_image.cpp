// Mapping functions of the image operators with their own parameter handling: the two
// resizes (size tensor -> width and height scalars, corner options -> the NN HAL 1.3
// optional inputs) and TRANSPOSE_CONV (TFLite input order output shape, weights, input
// [, bias] -> TRANSPOSE_CONV_2D's implicit padding form).
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

struct OutputSize {
  int32_t height = 0;
  int32_t width = 0;
};

/// The new [height, width] from the constant size tensor, or else from the output shape.
Result<OutputSize> resizeTarget(const OperatorContext& c, uint32_t size, uint32_t output) {
  if (c.builder().constantBytes(size)) {
    NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> values, constantInt32s(c, size, "size"));
    if (values.size() != 2) {
      return c.error("the size tensor must hold [new_height, new_width], not " +
                     std::to_string(values.size()) + " values");
    }
    return OutputSize{.height = values[0], .width = values[1]};
  }
  const auto& dims = c.operand(output).dimensions;
  if (dims.size() != 4 || dims[1] == 0 || dims[2] == 0) {
    return c.error("the size tensor is not a constant and the output shape does not give it");
  }
  return OutputSize{.height = static_cast<int32_t>(dims[1]),
                    .width = static_cast<int32_t>(dims[2])};
}

/// RESIZE_*: input, width, height [, layout NHWC [, align corners, half pixel centers]].
/// `layoutAlways`: the operation needs the layout input even without the corner options.
Result<void> mapResize(OperatorContext& c, OperationType type, bool alignCorners,
                       bool halfPixelCenters, bool layoutAlways) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t size, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  if (alignCorners && halfPixelCenters) {
    return c.error("align_corners and half_pixel_centers cannot both be true");
  }
  NNHAL_ASSIGN_OR_RETURN(const OutputSize target, resizeTarget(c, size, output));
  NNHAL_TRY(expectPositive(c, target.height, "new height"));
  NNHAL_TRY(expectPositive(c, target.width, "new width"));
  ModelBuilder& b = c.builder();
  std::vector<uint32_t> inputs{input, b.addInt32Scalar(target.width),
                               b.addInt32Scalar(target.height)};
  const bool corners = alignCorners || halfPixelCenters;
  if (layoutAlways || corners) inputs.push_back(b.addBoolScalar(false));
  if (corners) {
    inputs.push_back(b.addBoolScalar(alignCorners));
    inputs.push_back(b.addBoolScalar(halfPixelCenters));
  }
  c.addOperation(type, std::move(inputs), {output});
  return {};
}

}  // namespace

Result<void> mapResizeBilinear(OperatorContext& c) {
  const auto* options = c.options<::tflite::ResizeBilinearOptions>();
  return mapResize(c, OperationType::RESIZE_BILINEAR,
                   options != nullptr && options->align_corners(),
                   options != nullptr && options->half_pixel_centers(), false);
}

Result<void> mapResizeNearestNeighbor(OperatorContext& c) {
  const auto* options = c.options<::tflite::ResizeNearestNeighborOptions>();
  return mapResize(c, OperationType::RESIZE_NEAREST_NEIGHBOR,
                   options != nullptr && options->align_corners(),
                   options != nullptr && options->half_pixel_centers(), true);
}

/// A missing bias becomes a zero constant with one value per output channel (filter
/// dimension 0).
Result<void> mapTransposeConv(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(3, 4, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::TransposeConvOptions>("TransposeConvOptions"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t outputShape, c.int32TensorInput(0, "output shape"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t filter, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(2));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t bias, biasOperand(c, input, filter, 3, 0));
  NNHAL_ASSIGN_OR_RETURN(const WindowSettings w, windowSettings(c, *options));
  ModelBuilder& b = c.builder();
  c.addOperation(
      OperationType::TRANSPOSE_CONV_2D,
      {input, filter, bias, outputShape, b.addInt32Scalar(w.padding), b.addInt32Scalar(w.strideW),
       b.addInt32Scalar(w.strideH), b.addInt32Scalar(w.activation), b.addBoolScalar(false)},
      {output});
  return {};
}

}  // namespace nnhal::hal::tfl
