// tools/tflite_reference_ops.h — TFLite's reference integer arithmetic for the quantized
// operations of real models, written for the test from TFLite's definitions
// (tensorflow/lite/kernels/internal/reference, kernel_util.cc), independent of nnhal's
// kernels: it shares no code with src/kernels, so an error in nnhal's fixed-point helpers
// cannot hide here.
//
// Layouts: NHWC activations, OHWI convolution filters, [1, H, W, O] depthwise filters,
// [units, inputSize] fully connected weights. Quantized values are held as int32 (the raw
// uint8 or int8 value); real = scale * (q - zeroPoint).
//
// The one formula where TFLite and the NNAPI CPU reference differ, and nnhal follows NNAPI:
// the requantization multiplier of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED. TFLite
// (PopulateConvolutionQuantizationParams) computes input scale * filter scale in double;
// NNAPI (GetQuantizedConvolutionMultipler in its CPU reference, which the NNAPI delegate's
// driver runs) multiplies the two floats in float first. Both are offered here
// (Formula), so a test can tell that documented difference from any other.
#pragma once

#include <cstdint>
#include <vector>

namespace nnhal::tflite_reference {

/// A real multiplier as TFLite's QuantizeMultiplier splits it: real = multiplier *
/// 2^(shift - 31), multiplier in [2^30, 2^31), or 0 for a multiplier too small to represent.
struct Multiplier {
  int32_t multiplier = 0;
  int shift = 0;
  bool operator==(const Multiplier&) const = default;
};

/// QuantizeMultiplier (quantization_util.cc): frexp, round to Q31, a significand that rounds
/// up to 2^31 halves it; a shift below -31 flushes to zero; one above 30 saturates.
Multiplier quantizeMultiplier(double real);

/// gemmlowp's RoundingDivideByPOT: x / 2^exponent (0 <= exponent < 32), ties away from zero.
int32_t roundingDivideByPowerOfTwo(int32_t x, int exponent);

/// MultiplyByQuantizedMultiplier (common.h): saturating rounding doubling high multiply by
/// the significand, then a rounding (half away from zero) right shift.
int32_t multiplyByQuantizedMultiplier(int32_t x, Multiplier m);

/// The activation range of a quantized output (CalculateActivationRangeQuantized): the
/// activation's real bounds quantized with float division and TfLiteRound, within the
/// type's [qmin, qmax]. `activation`: 0 NONE, 1 RELU, 2 RELU1, 3 RELU6.
struct Range {
  int32_t min = 0;
  int32_t max = 0;
};
Range activationRange(int32_t activation, float scale, int32_t zeroPoint, int32_t qmin,
                      int32_t qmax);

/// Whose formula: TFLite's, or the NNAPI CPU reference's where the two differ (the file
/// comment; and QUANTIZE, which TFLite divides by the scale in double, NNAPI in float).
enum class Formula {
  kTflite,  ///< double(input scale) * double(filter scale) / double(output scale)
  kNnapi,   ///< double(input scale * filter scale in float) / double(output scale)
};
Multiplier convolutionMultiplier(float inputScale, float filterScale, float outputScale,
                                 Formula formula);

/// A quantized tensor: raw values, shape, and its quantization (per-channel scales along
/// the last filter dimension, or the first for convolution filters, when not empty).
struct QuantTensor {
  std::vector<int32_t> values;
  std::vector<uint32_t> dims;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  std::vector<float> channelScales;
};

/// The output's quantization and range.
struct OutputQuant {
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  Range range;
};

/// A convolution window on NHWC data.
struct Window {
  int32_t padTop = 0, padLeft = 0;
  int32_t strideHeight = 1, strideWidth = 1;
  int32_t dilationHeight = 1, dilationWidth = 1;
};

/// CONV_2D (reference_ops::Conv / reference_integer_ops::ConvPerChannel): for each output
/// element, sum (input - inputZeroPoint) * (filter - filterZeroPoint) over the window
/// (positions in the padding contribute nothing), add the bias, requantize with the
/// channel's multiplier, add the output zero point, clamp. Output [N, outH, outW, O].
std::vector<int32_t> conv2d(const QuantTensor& input, const QuantTensor& filter,
                            const std::vector<int32_t>& bias, const Window& window,
                            uint32_t outHeight, uint32_t outWidth, const OutputQuant& out,
                            Formula formula);

/// DEPTHWISE_CONV_2D: output channel c = ic * depthMultiplier + m reads input channel ic.
std::vector<int32_t> depthwiseConv2d(const QuantTensor& input, const QuantTensor& filter,
                                     const std::vector<int32_t>& bias, const Window& window,
                                     uint32_t depthMultiplier, uint32_t outHeight,
                                     uint32_t outWidth, const OutputQuant& out, Formula formula);

/// FULLY_CONNECTED: input flattened to [batches, inputSize], weights [units, inputSize].
std::vector<int32_t> fullyConnected(const QuantTensor& input, const QuantTensor& weights,
                                    const std::vector<int32_t>& bias, const OutputQuant& out,
                                    Formula formula);

/// ADD or SUB (reference_ops::Add / Sub on quantized data): both inputs shifted left by 20
/// bits, scaled to twice the larger input scale, summed, requantized; broadcast as numpy.
std::vector<int32_t> addOrSub(const QuantTensor& a, const QuantTensor& b,
                              const std::vector<uint32_t>& outDims, const OutputQuant& out,
                              bool subtract);

/// MUL: (a - za) * (b - zb) requantized by sa * sb / so; broadcast as numpy.
std::vector<int32_t> mul(const QuantTensor& a, const QuantTensor& b,
                         const std::vector<uint32_t>& outDims, const OutputQuant& out);

/// AVERAGE_POOL_2D (quantized): the sum of the raw values of the window's valid cells,
/// divided by their count rounding half away from zero, clamped. MAX_POOL_2D: the largest
/// raw value of the valid cells, clamped.
std::vector<int32_t> pool2d(const QuantTensor& input, const Window& window, uint32_t filterHeight,
                            uint32_t filterWidth, uint32_t outHeight, uint32_t outWidth,
                            Range range, bool average);

/// QUANTIZE from float (AffineQuantize): TfLiteRound(x / scale) + zeroPoint, clamped to
/// [qmin, qmax]; TFLite divides in double (QuantizationParams::scale is a double), NNAPI in
/// float.
std::vector<int32_t> quantize(const std::vector<float>& input, float scale, int32_t zeroPoint,
                              int32_t qmin, int32_t qmax, Formula formula);

/// DEQUANTIZE (reference_ops::Dequantize): float(double(scale) * (q - zeroPoint)).
std::vector<float> dequantize(const QuantTensor& input);

/// CONCATENATION of quantized inputs along `axis`: an input with the output's scale and
/// zero point is copied; another is rescaled as ConcatenationWithScaling does (float
/// scale = input scale / output scale, round, add the output zero point, clamp).
std::vector<int32_t> concatenation(const std::vector<QuantTensor>& inputs, uint32_t axis,
                                   const std::vector<uint32_t>& outDims, const OutputQuant& out,
                                   int32_t qmin, int32_t qmax);

/// LOGISTIC of quantized data as TFLite's kernels compute it (PopulateLookupTable): for
/// every input level, dequantize in float, 1 / (1 + exp(-x)) in float, times the inverse
/// output scale, rounded, plus the output zero point, clamped.
std::vector<int32_t> logistic(const QuantTensor& input, float outScale, int32_t outZeroPoint,
                              int32_t qmin, int32_t qmax);

/// SOFTMAX of quantized data along `axis` as TFLite's kernels compute it on x86
/// (PopulateSoftmaxLookupTable, optimized_ops::Softmax; LiteRT runs the same): a float table
/// of expf(-inputScale * beta * d) for d = 0..255 steps below the vector's maximum, the table
/// values summed in float in element order, each times 1 / (sum * 1/256) in float, rounded
/// (uint8: +0.5 and truncation; int8: half away from zero), plus the output zero point (0 or
/// -128), clamped. TFLite's own kernels take the last axis only; any axis works here.
std::vector<int32_t> softmax(const QuantTensor& input, float beta, uint32_t axis, bool isUnsigned);

/// MEAN of quantized data as TFLite's reference kernels compute it (EvalMeanReferenceOps in
/// kernels/reduce.cc), which takes one of three paths:
/// - a 4-D input, keep_dims, and the axes exactly {1, 2} or {2, 1}: for uint8
///   (reference_ops::Mean) the sum of the raw values times QuantizeMultiplier(float(input
///   scale / (count * output scale))) plus output zero point - trunc(float(input zero point *
///   input scale / output scale)); for int8 (reference_integer_ops::Mean) the sum of (q - input
///   zero point) times QuantizeMultiplier(input scale / output scale in double), divided by the
///   count rounding half away from zero, plus the output zero point;
/// - the same scale and zero point in and out (reference_ops::Mean<T, int>): the integer sum
///   divided by the count, truncated toward zero;
/// - otherwise (QuantizedMeanOrSum): the float mean times the float scale ratio, plus
///   -input zero point * ratio + 0.5, TfLiteRound, plus the output zero point, clamped.
/// `axes` as the operation gives them (negative ones count from the end, repeats allowed).
std::vector<int32_t> mean(const QuantTensor& input, const std::vector<int32_t>& axes, bool keepDims,
                          float outScale, int32_t outZeroPoint, int32_t qmin, int32_t qmax);

/// MEAN rounded once, as XNNPACK (what LiteRT runs) and nnhal compute it: the exact mean of
/// (q - input zero point) times input scale / output scale (in double), rounded half away from
/// zero, plus the output zero point, clamped. Each of TFLite's paths is within one step of it.
std::vector<int32_t> meanRoundedOnce(const QuantTensor& input, const std::vector<int32_t>& axes,
                                     float outScale, int32_t outZeroPoint, int32_t qmin,
                                     int32_t qmax);

/// RESIZE_BILINEAR of quantized data, NHWC, to [N, outHeight, outWidth, C].
/// uint8 (reference_ops::ResizeBilinear): source position in float (dst * scale, or
/// (dst + 0.5) * scale - 0.5 with half-pixel centers), each corner value times its row
/// weight times its column weight, summed, plus 0.5, truncated.
/// int8 (reference_ops::ResizeBilinearInteger): the same in fixed point with 10 fractional
/// bits, the 20-bit sum rounded half away from zero.
std::vector<int32_t> resizeBilinear(const QuantTensor& input, uint32_t outHeight, uint32_t outWidth,
                                    bool alignCorners, bool halfPixelCenters, bool isUnsigned);

}  // namespace nnhal::tflite_reference
