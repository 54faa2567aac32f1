// bench/onednn_network.h — the oneDNN baseline's network under construction: the tensors'
// oneDNN memories and int8 scales, the buffers they live in (reused once every operand in a
// buffer is dead), and the steps run() executes. The operation translators
// (bench/onednn_operations.h) build on it; bench/onednn_baseline.h says what is supported.
//
// Thread safety: one thread at a time.
#pragma once

#include <dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::bench::onednn {

using dnnl::memory;

/// lastUse of an operand that must outlive the run (model inputs and outputs).
constexpr size_t kKeep = std::numeric_limits<size_t>::max();

/// How a tensor is stored in oneDNN's scheme: its element type and, for int8, the real value
/// of one step (real = scale * q, no zero point); 1 for f32.
struct Quantization {
  memory::data_type type = memory::data_type::f32;
  float scale = 1.0f;
};

/// The scheme's quantization of an NNAPI tensor: f32 stays f32; a uint8 tensor with zero
/// point 0 stays u8 with its scale; any other uint8 tensor becomes s8 symmetric over the real
/// range its scale and zero point give. Errors: INVALID_ARGUMENT for other types.
Result<Quantization> schemeOf(const Operand& operand);

/// The logical oneDNN dims of an NNAPI tensor and its dense row-major format: rank 4
/// [N, H, W, C] is {N, C, H, W} in nhwc; other ranks keep their order (a, ab, abc, ...).
memory::desc plainDesc(const Operand& operand, memory::data_type type);

/// One thing run() does.
struct Step {
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  /// Runs instead of `primitive` when set (conversions done by plain loops).
  std::function<void()> custom;
  size_t operation = 0;
  std::string what;
};

class Network {
 public:
  Network(const Model& model, dnnl::engine engine);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const Model& model() const { return model_; }
  const Subgraph& graph() const { return model_.main; }
  const Operand& operand(uint32_t index) const { return model_.main.operands[index]; }
  const dnnl::engine& engine() const { return engine_; }
  /// Index of the operation being built (for the steps' operation field).
  size_t current() const { return current_; }

  /// Operations that read `operand`, in order; lastUse(operand) is the last of them (kKeep
  /// for model inputs and outputs).
  const std::vector<size_t>& readers(uint32_t operand) const { return readers_[operand]; }
  size_t lastUse(uint32_t operand) const { return lastUse_[operand]; }
  bool isModelInput(uint32_t operand) const;
  bool isModelOutput(uint32_t operand) const;

  /// True once `operand` has a memory (written by an earlier step or a constant's own).
  bool placed(uint32_t operand) const { return static_cast<bool>(tensors_[operand].stored); }
  const memory& memoryOf(uint32_t operand) const { return tensors_[operand].stored; }
  const Quantization& quantizationOf(uint32_t operand) const { return tensors_[operand].quant; }

  /// The memory of `operand` in `wanted`'s format and type: its own when they match, else a
  /// reorder into a buffer that lives until the current operation ends, scaling by `scale`.
  Result<memory> readAs(uint32_t operand, const memory::desc& wanted, float scale = 1.0f);
  /// Places `operand` in a new buffer of `desc`'s size.
  memory place(uint32_t operand, const memory::desc& desc, Quantization quant);
  /// Places `operand` in the buffer of `existing` (already placed) under `desc`: an alias
  /// (RESHAPE) or the output of a fused ADD written over its other input.
  memory placeOver(uint32_t operand, uint32_t existing, const memory::desc& desc,
                   Quantization quant);
  /// Gives `operand` a memory on bytes the caller owns (a model input in NNAPI's form that
  /// needs no conversion).
  memory placeExternal(uint32_t operand, const memory::desc& desc, void* bytes, Quantization quant);
  /// A buffer that lives until the current operation ends.
  memory scratch(const memory::desc& desc);

  /// Appends a step of the current operation.
  void add(dnnl::primitive primitive, std::unordered_map<int, memory> args, std::string what);
  void addCustom(std::function<void()> run, std::string what);

  /// Makes `k` the current operation; finish() then frees the buffers of operands dead after
  /// it and the operation's scratch buffers.
  void begin(size_t k) { current_ = k; }
  void finish();

  std::vector<Step>& steps() { return steps_; }
  dnnl::stream& stream() { return stream_; }

 private:
  struct FreeDeleter {
    void operator()(uint8_t* bytes) const;
  };
  struct Buffer {
    std::unique_ptr<uint8_t, FreeDeleter> bytes;
    size_t size = 0;
    /// Operands whose memory lives here; empty when the buffer is free.
    std::vector<uint32_t> holders;
    bool scratch = false;
  };
  struct Tensor {
    memory stored;
    Quantization quant;
    int32_t buffer = -1;
  };

  int32_t takeBuffer(size_t bytes);

  Model model_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::vector<Tensor> tensors_;
  std::vector<std::vector<size_t>> readers_;
  std::vector<size_t> lastUse_;
  std::vector<Buffer> buffers_;
  std::vector<Step> steps_;
  size_t current_ = 0;
};

/// "kind impl" of a primitive descriptor, e.g. "convolution jit_int8:avx512_core_vnni".
std::string describe(const dnnl::primitive_desc_base& pd, const char* kind);

/// Runs `body`, turning oneDNN's exceptions into INVALID_ARGUMENT (unimplemented or invalid
/// parameters) or GENERAL_FAILURE (out of memory, runtime errors) with oneDNN's message.
Result<void> guarded(const std::function<Result<void>()>& body);

}  // namespace nnhal::bench::onednn
