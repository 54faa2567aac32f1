// bench/onednn_baseline.h — runs an nnhal Model with oneDNN's primitives (Debian's libdnnl,
// JIT kernels chosen by oneDNN for the machine), the second yardstick of the MobileNet
// benchmarks next to XNNPACK: the engine OpenVINO, and so Intel's NN HAL driver, runs on.
//
// The network is built the way a oneDNN user would build it, not the way the NN HAL computes
// it, so its outputs differ from nnhal's by a few quantization steps (the benchmark checks
// that the top-1 class agrees and reports the largest difference):
//  - float32 models run in f32 with the memory formats oneDNN picks (format_tag::any, e.g.
//    nChw16c on AVX-512), weights reordered once at creation; reorders only where a
//    consumer wants another format than its producer wrote;
//  - uint8 models run in oneDNN's own int8 scheme: weights s8 per output channel (symmetric,
//    requantized from NNAPI's asymmetric per-tensor uint8), activations u8 where NNAPI's zero
//    point is 0 (after ReLU/ReLU6) and s8 symmetric otherwise, with the real range NNAPI's
//    scale and zero point give; bias s32 in the accumulator's scale; requantization as
//    per-channel output scales; fused activations as eltwise post-ops;
//  - an ADD whose one input is a CONV_2D output read by nothing else is fused into that
//    convolution as a sum post-op writing over the other input (when that input is read by
//    nothing later and is not a model input): MobileNet v2's residual connections;
//  - SOFTMAX runs in f32 between two reorders (Debian's oneDNN 2.6 has no int8 softmax);
//    the model input is converted into the scheme and the output back into NNAPI's
//    quantization inside run(), so the timed run includes them.
// Supported operations: CONV_2D, DEPTHWISE_CONV_2D (NHWC, implicit or explicit padding,
// dilations), FULLY_CONNECTED, ADD, AVERAGE_POOL_2D, MAX_POOL_2D, SOFTMAX (beta 1), RESHAPE
// and SQUEEZE (aliases of their input's buffer); TENSOR_QUANT8_ASYMM and TENSOR_FLOAT32
// tensors with per-tensor weights. Every other operation or type is refused when the
// baseline is created; shapes must be fully known.
//
// Threads: oneDNN's Debian build runs on OpenMP; run() asks for `threads` OpenMP threads (the
// caller's thread is one of them). Kept to the benchmark: OpenMP's pool would compete with
// the driver's TBB arena for the cores.
//
// Thread safety: one thread at a time per baseline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::bench {

/// Time one step of run() took, for the per-layer comparison (bench/layer_compare.cpp).
struct OnednnStepTime {
  /// Index of the NNAPI operation the step computes (several steps may share one: a reorder
  /// before a convolution counts towards the convolution); for the model input's and
  /// output's conversions, the first and the last operation.
  size_t operation = 0;
  /// What runs: the oneDNN primitive kind and its implementation ("convolution jit:avx512_core
  /// ..."), or "input conversion" / "output conversion".
  std::string what;
  double microseconds = 0.0;
};

class OnednnBaseline {
 public:
  /// Builds the primitives of `model` for `threads` OpenMP threads. Errors: INVALID_ARGUMENT
  /// naming the operation for unsupported operations, types, layouts or unknown dimensions,
  /// and for parameters oneDNN refuses (the message carries oneDNN's); GENERAL_FAILURE when
  /// oneDNN cannot allocate. The baseline keeps what it needs of `model`.
  static Result<std::unique_ptr<OnednnBaseline>> create(const Model& model, unsigned threads);
  ~OnednnBaseline();
  OnednnBaseline(const OnednnBaseline&) = delete;
  OnednnBaseline& operator=(const OnednnBaseline&) = delete;

  /// The buffer of model input `index` (Model::main.inputIndexes order), in NNAPI's form: the
  /// operand's bytes, NHWC, uint8 (its scale and zero point) or float32. Write the input here
  /// before run().
  std::span<uint8_t> input(size_t index);
  /// The buffer of model output `index` in NNAPI's form, valid after run().
  std::span<const uint8_t> output(size_t index) const;

  /// Runs every step in order. Errors: GENERAL_FAILURE naming the operation whose primitive
  /// failed (oneDNN's message).
  Result<void> run();
  /// As run(), timing each step (waiting for each primitive: slower than run()).
  Result<std::vector<OnednnStepTime>> profile();

 private:
  struct Impl;
  explicit OnednnBaseline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnhal::bench
