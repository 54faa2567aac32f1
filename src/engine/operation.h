// engine/operation.h — how one operation type plugs into the engine.
//
// Each operation type has an OperationDef in the registry (operation_registry.h) with one
// function, `prepare`. The engine calls prepare once per operation at compilation time
// with a PrepareContext that describes the operation's operands: types, dimensions,
// quantization, and the bytes of constant inputs. prepare must
//   1. check everything about the operation that generic model validation cannot
//      (operand types and ranks allowed for this operation, parameter values), and fail
//      with INVALID_ARGUMENT and a message naming the operation and input otherwise;
//   2. set the dimensions (and for quantized outputs nothing else: output scale/zeroPoint
//      are given by the model) of every output with PrepareContext::setOutputShape;
//   3. return a Kernel holding everything precomputed that execution needs (quantization
//      multipliers, packed weights, loop bounds). All heavy work belongs here.
//
// At execution time the engine calls Kernel::run with a RunContext giving the operand
// buffers. run must not allocate model-sized memory; scratch space it needs is declared
// at prepare time with PrepareContext::requestScratch and handed back in RunContext.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/parallel.h"
#include "engine/prepared_state.h"
#include "engine/yield_point.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// What prepare sees of one operand.
struct OperandInfo {
  OperandType type = OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dimensions;  ///< fully known for inputs at prepare time
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  const SymmPerChannelQuantParams* channelQuant = nullptr;  ///< per-channel operands only
  /// Bytes of the value when it is known at prepare time (constants); null otherwise.
  const uint8_t* constantData = nullptr;
  size_t constantLength = 0;
  bool hasNoValue = false;  ///< NO_VALUE lifetime (omitted optional input)

  bool isConstant() const { return constantData != nullptr; }
  /// Number of elements (product of dimensions; 1 for scalars).
  size_t elementCount() const;
};

/// Gives a Kernel access to operand buffers for one execution.
class RunContext {
 public:
  RunContext(std::span<const void* const> inputs, std::span<void* const> outputs, void* scratch,
             StoppableParallel parallel)
      : inputs_(inputs), outputs_(outputs), scratch_(scratch), parallel_(parallel) {}

  /// Buffer of input `i` (null for an omitted optional input).
  template <typename T>
  const T* input(size_t i) const {
    return static_cast<const T*>(inputs_[i]);
  }
  /// Buffer of output `i`, sized for the dimensions set at prepare time.
  template <typename T>
  T* output(size_t i) const {
    return static_cast<T*>(outputs_[i]);
  }
  size_t inputCount() const { return inputs_.size(); }
  size_t outputCount() const { return outputs_.size(); }
  /// Scratch memory of the size requested at prepare time (64-byte aligned), or null.
  void* scratch() const { return scratch_; }
  /// Runs fn(begin, end) over [0, n) split into chunks on the kernel thread pool; stops
  /// handing out chunks once the execution must stop (engine/parallel.h).
  const StoppableParallel& parallel() const { return parallel_; }

 private:
  std::span<const void* const> inputs_;
  std::span<void* const> outputs_;
  void* scratch_;
  StoppableParallel parallel_;
};

/// A prepared operation: everything computed once, ready to run many times, from many
/// threads at once (run must be const-correct and not mutate shared state).
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Computes the outputs. Errors: GENERAL_FAILURE (e.g. an index input out of range).
  virtual Result<void> run(const RunContext& ctx) const = 0;
};

/// Adapts a lambda `Result<void>(const RunContext&)` into a Kernel.
template <typename Fn>
class LambdaKernel final : public Kernel {
 public:
  explicit LambdaKernel(Fn fn) : fn_(std::move(fn)) {}
  Result<void> run(const RunContext& ctx) const override { return fn_(ctx); }

 private:
  Fn fn_;
};
template <typename Fn>
std::unique_ptr<Kernel> makeKernel(Fn fn) {
  return std::make_unique<LambdaKernel<Fn>>(std::move(fn));
}

/// What prepare sees of one operation.
class PrepareContext {
 public:
  PrepareContext(OperationType type, std::vector<OperandInfo> inputs,
                 std::vector<OperandInfo> outputs, bool relaxedFloat32)
      : type_(type),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)),
        relaxed_(relaxedFloat32) {}

  OperationType type() const { return type_; }
  size_t inputCount() const { return inputs_.size(); }
  size_t outputCount() const { return outputs_.size(); }
  const OperandInfo& input(size_t i) const { return inputs_[i]; }
  const OperandInfo& output(size_t i) const { return outputs_[i]; }
  /// Model allows computing float32 with float16 range and precision.
  bool relaxedFloat32() const { return relaxed_; }

  /// True when input `i` exists and is not an omitted optional input.
  bool hasInput(size_t i) const { return i < inputs_.size() && !inputs_[i].hasNoValue; }

  /// Reads scalar input `i` (INT32, UINT32, FLOAT32, BOOL, FLOAT16 read as its raw
  /// bits via T=uint16_t). Errors: INVALID_ARGUMENT when the input is missing, not
  /// constant, or of a different size than T.
  ///
  /// At compile time only constants have values; when prepare needs the value of an input
  /// that arrives with the Request, reading it marks the context valuesMissing() and the
  /// engine prepares the operation again at execution time, when every value is known.
  template <typename T>
  Result<T> scalar(size_t i) const {
    if (i >= inputs_.size()) return invalidArgument(where(i) + " is missing");
    const OperandInfo& in = inputs_[i];
    if (!in.isConstant()) {
      valuesMissing_ = true;
      return invalidArgument(where(i) + " must be a constant");
    }
    if (in.constantLength != sizeof(T)) return invalidArgument(where(i) + " has the wrong size");
    T value;
    std::memcpy(&value, in.constantData, sizeof(T));
    return value;
  }

  /// The elements of tensor input `i` as T (e.g. int32_t for TENSOR_INT32), when its value
  /// is known (see scalar()). Errors: INVALID_ARGUMENT when unknown or not a whole number of
  /// T. A copy, so it outlives the context.
  template <typename T>
  Result<std::vector<T>> values(size_t i) const {
    if (i >= inputs_.size()) return invalidArgument(where(i) + " is missing");
    const OperandInfo& in = inputs_[i];
    if (in.hasNoValue) return std::vector<T>{};
    if (!in.isConstant()) {
      if (in.elementCount() == 0) return std::vector<T>{};
      valuesMissing_ = true;
      return invalidArgument(where(i) + " must be a constant");
    }
    if (in.constantLength % sizeof(T) != 0) {
      return invalidArgument(where(i) + " has the wrong size");
    }
    std::vector<T> out(in.constantLength / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), in.constantData, in.constantLength);
    return out;
  }

  /// Marks that prepare needed a value not known yet (for ops that read constantData
  /// directly). The engine then prepares again at execution time.
  void markValuesMissing() const { valuesMissing_ = true; }
  /// True once prepare asked for a value that is not known at this time.
  bool valuesMissing() const { return valuesMissing_; }
  /// True when preparing at execution time (every input's value and shape is known).
  bool atExecution() const { return atExecution_; }
  void setAtExecution(bool value) { atExecution_ = value; }
  /// True when the engine only checks the model (engine::checkModel, getSupportedOperations):
  /// the returned Kernel is never run, so prepare may return checkedKernel() as soon as every
  /// check is done and every output shape set, skipping heavy work such as weight packing.
  bool checksOnly() const { return checksOnly_; }
  void setChecksOnly(bool value) { checksOnly_ = value; }

  /// Sets the dimensions of output `i`. If the model gave the output fully known
  /// dimensions, they must match. Errors: INVALID_ARGUMENT on mismatch.
  Result<void> setOutputShape(size_t i, std::vector<uint32_t> dimensions);

  /// Asks for `bytes` of scratch memory per execution (reported back in RunContext).
  void requestScratch(size_t bytes) { scratchBytes_ = bytes; }
  size_t scratchBytes() const { return scratchBytes_; }

  /// "CONV_2D input 3" — prefix for error messages.
  std::string where(size_t input) const;
  /// The operation's name in messages: toString(type()) for a base operation, the name its
  /// extension gives an extension operation ("GATHER_ND") once setName() gave it.
  std::string name() const;
  /// Used by the compiler for extension operations, whose codes toString() cannot name.
  void setName(std::string name) { name_ = std::move(name); }

  /// Final output operand descriptions (dimensions as set by prepare).
  const std::vector<OperandInfo>& outputs() const { return outputs_; }

  // --- compilation caching (optional; see engine/prepared_state.h) -----------------------
  // Operations with heavy precomputation (weight packing) may use these; all others ignore
  // them and are simply prepared again when a model is loaded from a cache.

  /// Precomputed state an earlier compilation saved for this operation, when it is exactly
  /// `expectedBytes` long (kStateAlignment-aligned, alive as long as the plan); an empty span
  /// when there is none. The bytes are untrusted: check every value memory safety depends
  /// on, then call acceptRestoredState(). Without accepting, prepare must compute the state
  /// itself.
  std::span<const uint8_t> restoredState(size_t expectedBytes) const {
    return store_ != nullptr ? store_->restored(stateKey_, expectedBytes)
                             : std::span<const uint8_t>{};
  }
  /// Declares that prepare uses the state restoredState() returned.
  void acceptRestoredState() const {
    if (store_ != nullptr) store_->accept(stateKey_);
  }
  /// True when the compiler records precomputed state (saveState is not a no-op).
  bool savesState() const {
    return store_ != nullptr && store_->mode() == PreparedStateStore::Mode::kSave;
  }
  /// Records the operation's precomputed state for a later restoredState(). `replacedInputs`:
  /// input positions whose constant bytes prepare does not read when it accepts the state
  /// (a cache may leave them out).
  void saveState(std::vector<uint8_t> bytes, std::vector<uint32_t> replacedInputs = {}) const {
    if (savesState()) store_->save(stateKey_, std::move(bytes), std::move(replacedInputs));
  }
  /// Long precomputation (weight packing) calls this every few tens of microseconds of work:
  /// a compilation of lower priority pauses here while more urgent work runs
  /// (engine/yield_point.h). Free when the compiler was given no yield point.
  void yieldPoint() const {
    if (yield_ != nullptr) yield_->yield();
  }
  /// Used by the compiler: the run's yield point (null: none).
  void bindYield(YieldPoint* yield) { yield_ = yield; }

  /// Used by the compiler: binds this context to `key` of `store` (null: no caching).
  void bindState(PreparedStateStore* store, StateKey key) {
    store_ = store;
    stateKey_ = key;
  }

 private:
  OperationType type_;
  std::string name_;
  std::vector<OperandInfo> inputs_;
  std::vector<OperandInfo> outputs_;
  bool relaxed_;
  size_t scratchBytes_ = 0;
  mutable bool valuesMissing_ = false;
  bool atExecution_ = false;
  bool checksOnly_ = false;
  PreparedStateStore* store_ = nullptr;
  StateKey stateKey_;
  YieldPoint* yield_ = nullptr;
};

/// What prepare returns in checksOnly() mode: a Kernel that must never run (it fails with
/// GENERAL_FAILURE if it does).
std::unique_ptr<Kernel> checkedKernel();

/// Prepares one operation: validates, sets output shapes, returns the Kernel.
using PrepareFn = Result<std::unique_ptr<Kernel>> (*)(PrepareContext& ctx);

/// Registry entry for one operation type.
struct OperationDef {
  OperationType type;
  PrepareFn prepare;
};

}  // namespace nnhal::engine
