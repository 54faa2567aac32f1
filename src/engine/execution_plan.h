// engine/execution_plan.h — a compiled Model, ready to execute many times.
//
// Produced by compile() (compiler.h). A plan holds one SubgraphPlan per subgraph (index 0 =
// main, i + 1 = Model::referenced[i]). Each lists its operands with their compile-time
// shapes and where their bytes live during an execution, and its steps in execution order.
//
// A step is *static* when its input shapes and the values it needs were known at compile
// time: its Kernel was prepared then, and its outputs live in the subgraph's arena, whose
// layout is planned at compile time (operands whose lifetimes do not overlap share bytes).
// A step is *dynamic* when it needs shapes or values that only an execution provides
// (unknown dimensions, parameters passed as inputs): it is prepared during the execution
// and its outputs are allocated then. IF and WHILE steps run other subgraphs.
//
// A plan whose main subgraph is fully static runs on the fast path: one arena, no
// allocation besides it, no shape bookkeeping.
//
// Thread safety: immutable after compile; executions may share one plan concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/operation.h"
#include "engine/request_staging.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// Alignment in bytes of every arena operand and of the arena itself.
inline constexpr size_t kArenaAlignment = 64;

/// Where an operand's bytes live during one execution.
enum class Storage : uint8_t {
  kArena,     ///< at `offset` in the subgraph invocation's arena (static temporaries)
  kDynamic,   ///< allocated when produced (temporaries of dynamic or control-flow steps)
  kConstant,  ///< at `constant`, owned by the plan (or by a Model pool the plan keeps)
  kInput,     ///< subgraph input `ioIndex` (main: Request input `ioIndex`)
  kOutput,    ///< subgraph output `ioIndex` (main: Request output `ioIndex`)
  kNoValue,   ///< omitted optional operand: a null pointer
  kSubgraph,  ///< names subgraph `subgraph` of the plan (IF/WHILE operands)
};

struct PlannedOperand {
  const Operand* source = nullptr;  ///< the model operand (type, quantization, ...)
  OperandType type = OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dimensions;  ///< compile-time shape (0 = unknown)
  bool shapeKnown = false;           ///< dimensions fully known at compile time
  Storage storage = Storage::kArena;
  size_t offset = 0;                  ///< kArena: byte offset in the arena
  const uint8_t* constant = nullptr;  ///< kConstant: the bytes
  uint32_t ioIndex = 0;               ///< kInput/kOutput: position in inputs/outputs
  uint32_t subgraph = 0;              ///< kSubgraph: index into ExecutionPlan::subgraphs
  size_t byteSize = 0;                ///< bytes with `dimensions` (when shapeKnown)
};

enum class StepKind : uint8_t { kStatic, kDynamic, kIf, kWhile };

struct PlannedStep {
  OperationType type = OperationType::ADD;
  StepKind kind = StepKind::kStatic;
  std::vector<uint32_t> inputs;    ///< operand indexes
  std::vector<uint32_t> outputs;   ///< operand indexes
  std::unique_ptr<Kernel> kernel;  ///< kStatic only
  size_t scratchOffset = 0;        ///< kStatic: arena offset of the step's scratch memory
  size_t scratchBytes = 0;
};

struct SubgraphPlan {
  std::vector<PlannedOperand> operands;
  std::vector<PlannedStep> steps;
  std::vector<uint32_t> inputOperands;   ///< operand index of subgraph input i
  std::vector<uint32_t> outputOperands;  ///< operand index of subgraph output i
  size_t arenaBytes = 0;
  /// Every step static and every input shape known: eligible for the fast path.
  bool fullyStatic = true;
  /// The request arguments the fast path may use where they lie (request_staging.h).
  InPlaceArguments inPlace;
};

struct ExecutionPlan {
  /// Buffers that restored precomputed state points into (compilation caching); declared
  /// first so that they outlive the kernels using them.
  std::vector<std::shared_ptr<const void>> retained;
  std::vector<SubgraphPlan> subgraphs;  ///< [0] = main
  /// Aligned copies of CONSTANT_COPY values (and of misaligned CONSTANT_REFERENCE ones).
  std::vector<std::unique_ptr<uint8_t[]>> constantStorage;
  /// The model, kept for its pools (CONSTANT_REFERENCE operands point into them), for the
  /// operand descriptions dynamic steps are prepared from, and for Request validation.
  Model model;

  const SubgraphPlan& main() const { return subgraphs[0]; }
  bool relaxed() const { return model.relaxComputationFloat32toFloat16; }
};

}  // namespace nnhal::engine
