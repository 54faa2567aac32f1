// tools/cpu_reference/xnnpack_baseline.h — runs an nnhal Model with XNNPACK's operators: the
// reference CPU path (the kernels of TFLite's CPU path) that `nnhal calibrate` measures the
// driver's capabilities against, and that the MobileNet benchmarks compare nnhal with, in the
// same process and on the same input.
//
// Every operation of Model::main becomes one XNNPACK operator (operator API, NHWC), created
// with the model's own weights, pads and quantization, and set up once on buffers the
// baseline owns; run() executes them in order on a pthreadpool. Supported:
//  - CONV_2D, DEPTHWISE_CONV_2D (filters [O, H, W, I] and [1, H, W, O], which are XNNPACK's
//    OHWI and, with XNN_FLAG_DEPTHWISE_CONVOLUTION, HWGo layouts), FULLY_CONNECTED
//    (weights [O, I]), ADD, AVERAGE_POOL_2D, SOFTMAX (beta 1 in float; folded into the
//    input scale in uint8), RESHAPE and SQUEEZE (aliases of their input's buffer);
//  - TENSOR_QUANT8_ASYMM tensors (XNNPACK qu8, per-tensor weights) and TENSOR_FLOAT32
//    tensors (XNNPACK f32), with fused activations clamped as NNAPI does.
// Every other operation or type is refused when the baseline is created. Shapes are the
// model's: every tensor dimension must be known.
//
// Thread safety: one thread at a time per baseline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::cpu_reference {

class XnnpackBaseline {
 public:
  /// Builds the operators of `model` on a pool of `threads` threads (the caller's thread is
  /// one of them). Errors: INVALID_ARGUMENT naming the operation for unsupported operations,
  /// types, layouts or unknown dimensions, and for parameters XNNPACK refuses (e.g. a uint8
  /// softmax output scale other than 1/256); GENERAL_FAILURE when XNNPACK cannot initialize
  /// or allocate. The baseline keeps what it needs of `model` (its pools are shared).
  static Result<std::unique_ptr<XnnpackBaseline>> create(const Model& model, unsigned threads);
  ~XnnpackBaseline();
  XnnpackBaseline(const XnnpackBaseline&) = delete;
  XnnpackBaseline& operator=(const XnnpackBaseline&) = delete;

  /// The buffer of model input `index` (Model::main.inputIndexes order): the operand's bytes,
  /// NHWC, uint8 or float32. Write the input here before run().
  std::span<uint8_t> input(size_t index);
  /// The buffer of model output `index`, valid after run().
  std::span<const uint8_t> output(size_t index) const;

  /// Runs every operator in order. Errors: GENERAL_FAILURE naming the operation XNNPACK
  /// failed to run.
  Result<void> run();

 private:
  struct Impl;
  explicit XnnpackBaseline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnhal::cpu_reference
