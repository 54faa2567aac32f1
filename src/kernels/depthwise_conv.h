// kernels/depthwise_conv.h — DEPTHWISE_CONV_2D over NHWC tensors (float32 and 8-bit
// quantized).
//
// Shapes: input [batches, inHeight, inWidth, inDepth], filter [1, filterHeight, filterWidth,
// outDepth], bias [outDepth], output [batches, outHeight, outWidth, outDepth] with
// outDepth = inDepth * depthMultiplier; output channel c reads input channel
// c / depthMultiplier. Geometry (strides, dilation, padding) as in conv.h; positions outside
// the input contribute nothing.
//
// Work is split by output lines: line l = b * outHeight + y covers all x and channels of
// output row y of batch b. The fast paths vectorize across channels (AVX-512, depth
// multiplier 1, src/kernels/x86/); other cases and lower instruction-set levels run the
// portable loops. Every entry point takes the level to run at (kernels/isa.h; default: the
// process's activeIsa()); a filter packed at one level must be run at the same level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"
#include "kernels/quantization.h"
#include "kernels/window_geometry.h"

namespace nnhal::kernels {

struct DepthwiseGeometry : WindowGeometry {
  uint32_t depthMultiplier = 1;  ///< outDepth = inDepth * depthMultiplier

  /// Units of work: batches * outHeight.
  size_t outputLines() const { return size_t{batches} * outHeight; }
};

/// Converts a raw 8-bit filter [filterHeight * filterWidth][outDepth] (count values) to the
/// int16 values w - filterZeroPoint in the same order: the layout depthwiseQuantPortable
/// reads.
void prepareDepthwiseFilter(const uint8_t* filter, size_t count, bool filterSigned,
                            int32_t filterZeroPoint, int16_t* out) noexcept;

/// Channels per block of the paired filter layout.
inline constexpr size_t kDepthwisePairBlock = 32;
/// Most filter taps (and filter rows) the paired layout takes.
inline constexpr size_t kDepthwiseMaxPairedTaps = 64;

/// True when depthwiseQuant at `level` reads the paired filter layout for `g`: AVX2 or
/// above, depth multiplier 1, at most kDepthwiseMaxPairedTaps taps, and not the VNNI layout.
bool depthwisePairedLayout(const DepthwiseGeometry& g, IsaLevel level) noexcept;

/// Channels per block of the VNNI filter layout, and the bytes of its header.
inline constexpr size_t kDepthwiseVnniBlock = 64;
inline constexpr size_t kDepthwiseVnniHeaderBytes = 64;

/// True when depthwiseQuant at `level` reads the VNNI filter layout for `g`: AVX-512 VNNI,
/// depth multiplier 1, at most kDepthwiseMaxPairedTaps taps, and channels filling their
/// blocks of kDepthwiseVnniBlock to at least 7/8.
bool depthwiseVnniLayout(const DepthwiseGeometry& g, IsaLevel level) noexcept;

/// Number of int16 values packDepthwiseFilter writes for `g` at `level`.
size_t depthwisePackedFilterCount(const DepthwiseGeometry& g, IsaLevel level = activeIsa());

/// Converts a raw 8-bit filter to the layout depthwiseQuant reads for `g` at `level`: the
/// prepareDepthwiseFilter layout, or, where depthwisePairedLayout holds, blocks of 32
/// channels holding pairs of taps interleaved per channel in the order of
/// _mm512_unpack{lo,hi}_epi16 ([block][tap pair][lo 32, hi 32], zeros for padding; the
/// AVX2 kernel reads each 32 as two halves of 16 in _mm256_unpack{lo,hi}_epi16's order), or,
/// where depthwiseVnniLayout holds, bytes (the int16 array read as int8): a header of
/// kDepthwiseVnniHeaderBytes holding the int32 e, then per channel (padded to whole blocks)
/// the int32 sum over the taps of w - filterZeroPoint, then per block of 64 channels, per
/// group of four taps, four vectors of 64 bytes d, vector v's dword 4L + j (L, j = 0..3) holding
/// the four taps of channel 16L + 4v + j, so that w - filterZeroPoint = d + e for every tap (d = w
/// - 128 and e = 128 - zero point for uint8 filters, d = w and e = -zero point for int8 ones; zeros
/// for padding).
void packDepthwiseFilter(const DepthwiseGeometry& g, const uint8_t* filter, bool filterSigned,
                         int32_t filterZeroPoint, int16_t* out,
                         IsaLevel level = activeIsa()) noexcept;

struct DepthwiseQuantParams {
  const int16_t* filter = nullptr;        ///< packDepthwiseFilter values (for the portable
                                          ///< kernel: prepareDepthwiseFilter values)
  const uint8_t* zeroPointRow = nullptr;  ///< inDepth bytes equal to the input zero point
                                          ///< (read in place of taps outside the input)
  const int32_t* bias = nullptr;          ///< [outDepth], or null for zero
  const int32_t* multiplier = nullptr;    ///< [outDepth] Q31 multipliers
  const int32_t* shift = nullptr;         ///< [outDepth] shifts (> 0: left)
  bool anyLeftShift = false;
  int32_t inputZeroPoint = 0;
  bool inputSigned = false;  ///< int8 input (uint8 otherwise); output has the same type
  int32_t outputZeroPoint = 0;
  int32_t outputMin = 0;
  int32_t outputMax = 255;
};

/// Quantized depthwise convolution of output lines [lineBegin, lineEnd) at `level` (p.filter
/// packed at the same level); input and output are raw 8-bit values.
void depthwiseQuant(const DepthwiseGeometry& g, const DepthwiseQuantParams& p, const uint8_t* input,
                    size_t lineBegin, size_t lineEnd, uint8_t* output,
                    IsaLevel level = activeIsa()) noexcept;
/// Same result without intrinsics; reads p.filter in the prepareDepthwiseFilter layout (and
/// not p.zeroPointRow).
void depthwiseQuantPortable(const DepthwiseGeometry& g, const DepthwiseQuantParams& p,
                            const uint8_t* input, size_t lineBegin, size_t lineEnd,
                            uint8_t* output) noexcept;

struct DepthwiseFloatParams {
  const float* filter = nullptr;  ///< [taps][outDepth] (the operand as it is)
  const float* bias = nullptr;    ///< [outDepth], or null for zero
  float outputMin = 0.0f;
  float outputMax = 0.0f;
};

/// Float depthwise convolution of output lines [lineBegin, lineEnd) at `level` (depth
/// multiplier 1 takes the AVX-512 variant from kAvx512 up, the AVX2 one at kAvx2).
void depthwiseFloat(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* input,
                    size_t lineBegin, size_t lineEnd, float* output,
                    IsaLevel level = activeIsa()) noexcept;
/// Same result without intrinsics.
void depthwiseFloatPortable(const DepthwiseGeometry& g, const DepthwiseFloatParams& p,
                            const float* input, size_t lineBegin, size_t lineEnd,
                            float* output) noexcept;

/// Plain reference (the NNAPI formula element by element). In/Filter: uint8_t/uint8_t,
/// int8_t/int8_t, or per-channel uint8_t/int8_t, int8_t/int8_t.
template <typename In, typename Filter>
void depthwiseQuantReference(const DepthwiseGeometry& g, const In* input, int32_t inputZeroPoint,
                             const Filter* filter, int32_t filterZeroPoint, const int32_t* bias,
                             const QuantizedMultiplier* multipliers, int32_t outputZeroPoint,
                             int32_t outputMin, int32_t outputMax, In* output) noexcept;

/// Plain reference of the float depthwise convolution; bias may be null.
void depthwiseFloatReference(const DepthwiseGeometry& g, const float* input, const float* filter,
                             const float* bias, float outputMin, float outputMax,
                             float* output) noexcept;

}  // namespace nnhal::kernels
