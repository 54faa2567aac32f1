// tests/engine/op_test_harness.h — the harness of the ops_*_test.cpp files: describes the
// operands of one operation (OpBuilder), calls its prepare function (prepare), runs the
// prepared Kernel (runKernel, runAll, run, prepareAndRun) and checks rejections
// (expectRejected).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/operation.h"
#include "engine/ops/ops.h"
#include "engine/parallel.h"
#include "hal/operand_utils.h"

namespace nnhal::engine::testing {

/// An ops::prepareXxx function.
using PrepareFn = ops::PrepareResult (*)(PrepareContext&);

/// Describes the inputs and outputs of one operation and owns every value it was given.
/// Inputs that are not constants are TEMPORARY_VARIABLE (computed by an earlier operation);
/// a test that needs a model input sets input(i).lifetime itself. Move-only: constants point
/// into the builder.
class OpBuilder {
 public:
  explicit OpBuilder(OperationType type) : type_(type) {}
  /// An extension operation, named `name` in messages (as the compiler names it).
  OpBuilder(OperationType type, std::string name) : type_(type), name_(std::move(name)) {}
  OpBuilder(OpBuilder&&) = default;
  OpBuilder& operator=(OpBuilder&&) = default;
  OpBuilder(const OpBuilder&) = delete;
  OpBuilder& operator=(const OpBuilder&) = delete;

  /// A tensor input whose value is given at execution.
  OpBuilder& tensor(OperandType type, std::vector<uint32_t> dims, float scale = 0.0f,
                    int32_t zeroPoint = 0) {
    return add(tensorInfo(type, std::move(dims), scale, zeroPoint));
  }
  /// A tensor input that is not a constant; `values` is what prepareAndRun() feeds it.
  template <typename T>
  OpBuilder& tensor(OperandType type, std::vector<uint32_t> dims, const std::vector<T>& values,
                    float scale = 0.0f, int32_t zeroPoint = 0) {
    return addWithValue(tensorInfo(type, std::move(dims), scale, zeroPoint), values, false);
  }
  /// A TENSOR_FLOAT32 input that is not a constant, with `values` (see above).
  OpBuilder& floats(std::vector<uint32_t> dims, const std::vector<float>& values) {
    return tensor(OperandType::TENSOR_FLOAT32, std::move(dims), values);
  }
  /// A constant tensor input holding `values`.
  template <typename T>
  OpBuilder& constTensor(OperandType type, std::vector<uint32_t> dims, const std::vector<T>& values,
                         float scale = 0.0f, int32_t zeroPoint = 0) {
    return addWithValue(tensorInfo(type, std::move(dims), scale, zeroPoint), values, true);
  }
  /// Gives the last input per-channel quantization along `channelDim`.
  OpBuilder& perChannel(std::vector<float> scales, uint32_t channelDim) {
    channelQuant_.push_back(SymmPerChannelQuantParams{std::move(scales), channelDim});
    inputs_.back().channelQuant = &channelQuant_.back();
    return *this;
  }
  /// An omitted optional input.
  OpBuilder& omitted(OperandType type = OperandType::TENSOR_FLOAT32) {
    OperandInfo info;
    info.type = type;
    info.lifetime = OperandLifeTime::NO_VALUE;
    info.hasNoValue = true;
    return add(std::move(info));
  }

  /// Constant scalar inputs.
  OpBuilder& int32(int32_t value) { return scalar(OperandType::INT32, value); }
  OpBuilder& float32(float value) { return scalar(OperandType::FLOAT32, value); }
  OpBuilder& boolean(bool value) {
    return scalar(OperandType::BOOL, static_cast<uint8_t>(value ? 1 : 0));
  }
  template <typename T>
  OpBuilder& scalar(OperandType type, T value) {
    OperandInfo info;
    info.type = type;
    add(std::move(info));
    setValue(inputs_.size() - 1, &value, sizeof(T), true);
    return *this;
  }
  /// An INT32 scalar input that is not a constant.
  OpBuilder& int32Input() {
    OperandInfo info;
    info.type = OperandType::INT32;
    return add(std::move(info));
  }
  /// Replaces the value of input `i` by the constant INT32 `value`.
  OpBuilder& setInt32(size_t i, int32_t value) {
    setValue(i, &value, sizeof(value), true);
    return *this;
  }

  /// An output; empty `dims` lets prepare compute them.
  OpBuilder& output(OperandType type, std::vector<uint32_t> dims = {}, float scale = 0.0f,
                    int32_t zeroPoint = 0) {
    OperandInfo info = tensorInfo(type, std::move(dims), scale, zeroPoint);
    info.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
    outputs_.push_back(std::move(info));
    return *this;
  }

  /// Input `i` / output `o`, to change one property of a valid description.
  OperandInfo& input(size_t i) { return inputs_[i]; }
  OperandInfo& outputAt(size_t o) { return outputs_[o]; }
  size_t inputCount() const { return inputs_.size(); }
  /// The value the builder holds for input `i` (constants and valued tensors); null otherwise.
  const void* inputValue(size_t i) const {
    const Value& v = values_[i];
    return inputs_[i].hasNoValue || v.size == 0 ? nullptr : v.bytes.data();
  }

  /// What prepare sees; `atExecution` as when the engine prepares again at execution.
  PrepareContext context(bool atExecution = false) const {
    PrepareContext ctx(type_, inputs_, outputs_, false);
    if (!name_.empty()) ctx.setName(name_);
    ctx.setAtExecution(atExecution);
    return ctx;
  }

 private:
  struct Value {
    std::vector<uint8_t> bytes;  // the value and one spare byte: data() is never null
    size_t size = 0;
  };

  static OperandInfo tensorInfo(OperandType type, std::vector<uint32_t> dims, float scale,
                                int32_t zeroPoint) {
    OperandInfo info;
    info.type = type;
    info.dimensions = std::move(dims);
    info.scale = scale;
    info.zeroPoint = zeroPoint;
    return info;
  }
  template <typename T>
  OpBuilder& addWithValue(OperandInfo info, const std::vector<T>& values, bool constant) {
    add(std::move(info));
    setValue(inputs_.size() - 1, values.data(), values.size() * sizeof(T), constant);
    return *this;
  }
  OpBuilder& add(OperandInfo info) {
    inputs_.push_back(std::move(info));
    values_.emplace_back();
    return *this;
  }
  void setValue(size_t i, const void* bytes, size_t size, bool constant) {
    Value& v = values_[i];
    v.bytes.assign(size + 1, 0);
    if (size > 0) std::memcpy(v.bytes.data(), bytes, size);
    v.size = size;
    if (constant) {
      inputs_[i].constantData = v.bytes.data();
      inputs_[i].constantLength = size;
      inputs_[i].lifetime = OperandLifeTime::CONSTANT_COPY;
    }
  }

  OperationType type_;
  std::string name_;
  std::vector<OperandInfo> inputs_;
  std::vector<OperandInfo> outputs_;
  std::deque<Value> values_;  // one per input; stable addresses
  std::deque<SymmPerChannelQuantParams> channelQuant_;
};

/// An operation after prepare: its context (final output shapes, scratch) and kernel.
struct Prepared {
  std::unique_ptr<PrepareContext> ctx;
  Result<std::unique_ptr<Kernel>> kernel;

  const std::vector<uint32_t>& outputDims(size_t o = 0) const {
    return ctx->outputs()[o].dimensions;
  }
};

/// Calls `fn` on the context `builder` describes.
inline Prepared prepare(const OpBuilder& builder, PrepareFn fn, bool atExecution = false) {
  auto ctx = std::make_unique<PrepareContext>(builder.context(atExecution));
  auto kernel = fn(*ctx);
  return Prepared{std::move(ctx), std::move(kernel)};
}

/// Expects `p` to have been rejected with INVALID_ARGUMENT and a message containing `text`.
inline void expectRejected(const Prepared& p, const std::string& text) {
  ASSERT_FALSE(p.kernel) << "expected a rejection containing: " << text;
  EXPECT_EQ(p.kernel.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(p.kernel.error().message.find(text), std::string::npos) << p.kernel.error().message;
}

/// Expects prepare of `builder` to be rejected (see above).
inline void expectRejected(const OpBuilder& builder, PrepareFn fn, const std::string& text) {
  expectRejected(prepare(builder, fn), text);
}

/// Expects prepare to have succeeded and produced `dims` for output `o`.
inline void expectDims(const Prepared& p, const std::vector<uint32_t>& dims, size_t o = 0) {
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(o), dims);
}

/// Runs `kernel`, prepared in `ctx`, over caller buffers with the scratch memory prepare
/// requested. `inputs`: one per input, null where the kernel does not read it (constants,
/// omitted inputs); missing trailing entries are null. `outputs`: one per output.
inline Result<void> runKernel(const Kernel& kernel, const PrepareContext& ctx,
                              std::vector<const void*> inputs, std::vector<void*> outputs,
                              unsigned threads = 2) {
  constexpr size_t kAlignment = 64;
  inputs.resize(std::max(inputs.size(), ctx.inputCount()), nullptr);
  std::vector<uint8_t> scratch(ctx.scratchBytes() + kAlignment);
  const auto address = reinterpret_cast<uintptr_t>(scratch.data());
  void* aligned = scratch.data() + (kAlignment - address % kAlignment) % kAlignment;
  const Parallel parallel(threads);
  const RunContext rc(inputs, outputs, ctx.scratchBytes() > 0 ? aligned : nullptr, parallel);
  return kernel.run(rc);
}

/// The output values of one run, as bytes (sized by the prepared dimensions; rank 0: one
/// element).
struct Outputs {
  std::vector<std::vector<uint8_t>> bytes;

  /// Output `o` as T values.
  template <typename T>
  std::vector<T> as(size_t o) const {
    const std::vector<uint8_t>& b = bytes.at(o);
    std::vector<T> values(b.size() / sizeof(T));
    if (!values.empty()) std::memcpy(values.data(), b.data(), values.size() * sizeof(T));
    return values;
  }
};

/// Runs prepared `p` over `inputs` (see runKernel) into buffers it allocates for every output,
/// filled with 0xCD beforehand so that values the kernel does not write show.
inline Result<Outputs> runAll(const Prepared& p, std::vector<const void*> inputs,
                              unsigned threads = 2) {
  if (!p.kernel) return std::unexpected(p.kernel.error());
  Outputs out;
  std::vector<void*> pointers;
  for (const OperandInfo& info : p.ctx->outputs()) {
    const size_t size =
        size_t{hal::elementCount(info.dimensions).value_or(0)} * hal::sizeOfElement(info.type);
    out.bytes.emplace_back(size + 1, uint8_t{0xCD});  // a spare byte: never a null buffer
    pointers.push_back(out.bytes.back().data());
  }
  NNHAL_TRY(runKernel(**p.kernel, *p.ctx, std::move(inputs), pointers, threads));
  for (auto& b : out.bytes) b.pop_back();
  return out;
}

/// Runs prepared `p` (see runAll) and returns output `o` as T values.
template <typename T>
Result<std::vector<T>> run(const Prepared& p, std::vector<const void*> inputs, size_t o = 0,
                           unsigned threads = 2) {
  NNHAL_ASSIGN_OR_RETURN(const Outputs out, runAll(p, std::move(inputs), threads));
  return out.as<T>(o);
}

/// An operation prepared and run once by prepareAndRun().
struct Executed : Prepared {
  Outputs outputs;

  /// Output `o` as T values.
  template <typename T>
  std::vector<T> output(size_t o) const {
    return outputs.as<T>(o);
  }
};

/// Prepares the operation `builder` describes and runs it on the values the builder holds;
/// a failure of either step is a test failure.
inline Executed prepareAndRun(const OpBuilder& builder, PrepareFn fn, unsigned threads = 2) {
  Executed e;
  static_cast<Prepared&>(e) = prepare(builder, fn);
  if (!e.kernel) {
    ADD_FAILURE() << "prepare failed: " << e.kernel.error().message;
    return e;
  }
  std::vector<const void*> inputs;
  for (size_t i = 0; i < builder.inputCount(); ++i) inputs.push_back(builder.inputValue(i));
  auto outputs = runAll(e, std::move(inputs), threads);
  if (!outputs) {
    ADD_FAILURE() << "run failed: " << outputs.error().message;
    return e;
  }
  e.outputs = std::move(*outputs);
  return e;
}

}  // namespace nnhal::engine::testing
