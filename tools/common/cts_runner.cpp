#include "tools/common/cts_runner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <map>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "hal/operand_utils.h"
#include "nnhal/buffer.h"
#include "nnhal/burst.h"

namespace nnhal::tools {
namespace {

constexpr double kFloat32Ulp = 1.1920928955078125e-7;
constexpr double kFloat16Tolerance = 5 * 0.0009765625;

template <typename T>
T load(const uint8_t* bytes, size_t index) {
  T value;
  std::memcpy(&value, bytes + index * sizeof(T), sizeof(T));
  return value;
}

bool hasFloat16Operand(const Model& model) {
  auto check = [](const Subgraph& subgraph) {
    for (const Operand& operand : subgraph.operands) {
      if (operand.type == OperandType::TENSOR_FLOAT16) return true;
    }
    return false;
  };
  if (check(model.main)) return true;
  for (const Subgraph& subgraph : model.referenced) {
    if (check(subgraph)) return true;
  }
  return false;
}

std::string dimsText(const std::vector<uint32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

/// Element i of a tensor of `type` as double.
double element(OperandType type, const uint8_t* bytes, size_t i) {
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
      return load<float>(bytes, i);
    case OperandType::TENSOR_FLOAT16:
      return static_cast<double>(load<_Float16>(bytes, i));
    case OperandType::TENSOR_INT32:
    case OperandType::INT32:
      return load<int32_t>(bytes, i);
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_BOOL8:
      return load<uint8_t>(bytes, i);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
      return load<int8_t>(bytes, i);
    case OperandType::TENSOR_QUANT16_ASYMM:
      return load<uint16_t>(bytes, i);
    case OperandType::TENSOR_QUANT16_SYMM:
      return load<int16_t>(bytes, i);
    default:
      return 0.0;
  }
}

size_t elementSize(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_INT32:
    case OperandType::INT32:
      return 4;
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      return 2;
    default:
      return 1;
  }
}

std::string judgeMultinomial(const CtsModel& cts, const std::vector<uint8_t>& samples) {
  const Operand& input = cts.model.main.operands[cts.model.main.inputIndexes[0]];
  const std::vector<uint8_t>& logits = cts.inputs[0];
  const size_t classes = input.dimensions.back();
  std::vector<double> probabilities(classes);
  double sum = 0.0;
  for (size_t c = 0; c < classes; ++c) {
    probabilities[c] = std::exp(element(input.type, logits.data(), c));
    sum += probabilities[c];
  }
  const size_t count = samples.size() / sizeof(int32_t);
  const Operand& output = cts.model.main.operands[cts.model.main.outputIndexes[0]];
  const size_t perBatch = output.dimensions.size() == 2 ? output.dimensions[1] : count;
  std::vector<size_t> histogram(classes, 0);
  for (size_t i = 0; i < perBatch; ++i) {
    const int32_t sample = load<int32_t>(samples.data(), i);
    if (sample < 0 || static_cast<size_t>(sample) >= classes) {
      return "sample " + std::to_string(i) + " is class " + std::to_string(sample) +
             ", outside [0, " + std::to_string(classes) + ")";
    }
    ++histogram[sample];
  }
  for (size_t c = 0; c < classes; ++c) {
    const double share = static_cast<double>(histogram[c]) / static_cast<double>(perBatch);
    const double expected = probabilities[c] / sum;
    if (std::fabs(share - expected) > cts.multinomialTolerance) {
      return "class " + std::to_string(c) + " drawn " + std::to_string(share) +
             " of the time, expected " + std::to_string(expected);
    }
  }
  return "";
}

}  // namespace

std::string_view toString(CtsMode mode) {
  switch (mode) {
    case CtsMode::kSynchronous:
      return "sync";
    case CtsMode::kAsync:
      return "async";
    case CtsMode::kDynamicOutputShape:
      return "dynamic-output-shape";
    case CtsMode::kBurst:
      return "burst";
    case CtsMode::kDeviceBuffers:
      return "device-buffers";
    case CtsMode::kFenced:
      return "fenced";
  }
  return "?";
}

std::string judgeOutputs(const CtsModel& cts, const std::vector<std::vector<uint8_t>>& actual,
                         const std::vector<OutputShape>& shapes) {
  const Model& model = cts.model;
  if (cts.multinomialTolerance > 0.0f) return judgeMultinomial(cts, actual[0]);
  const bool float16Model = hasFloat16Operand(model);
  const bool mobilenet = cts.name.find("mobilenet") != std::string::npos;
  for (size_t k = 0; k < cts.outputs.size(); ++k) {
    if (cts.outputIgnored[k]) continue;
    const Operand& operand = model.main.operands[model.main.outputIndexes[k]];
    if (k < shapes.size() && shapes[k].dimensions != operand.dimensions) {
      return "output " + std::to_string(k) + " shape " + dimsText(shapes[k].dimensions) +
             ", expected " + dimsText(operand.dimensions);
    }
    const std::vector<uint8_t>& expected = cts.outputs[k];
    if (actual[k].size() < expected.size()) {
      return "output " + std::to_string(k) + " has " + std::to_string(actual[k].size()) +
             " bytes, expected " + std::to_string(expected.size());
    }
    double atol = 0.0;
    double rtol = 0.0;
    switch (operand.type) {
      case OperandType::TENSOR_FLOAT32:
        if (cts.isRelaxed || float16Model) {
          atol = rtol = kFloat16Tolerance;
        } else {
          atol = 1e-5;
          rtol = 5 * kFloat32Ulp;
        }
        break;
      case OperandType::TENSOR_FLOAT16:
        atol = rtol = kFloat16Tolerance;
        break;
      case OperandType::TENSOR_INT32:
      case OperandType::INT32:
        atol = 1;
        break;
      case OperandType::TENSOR_QUANT8_ASYMM:
      case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      case OperandType::TENSOR_QUANT8_SYMM:
        atol = mobilenet ? 3 : 1;
        break;
      case OperandType::TENSOR_QUANT16_ASYMM:
      case OperandType::TENSOR_QUANT16_SYMM:
        atol = 1;
        break;
      case OperandType::TENSOR_BOOL8:
        break;
      default:
        return "output " + std::to_string(k) + " has an unsupported type " +
               std::string(toString(operand.type));
    }
    if (k < cts.outputTolerances.size()) {
      atol = cts.outputTolerances[k].atol;
      rtol = cts.outputTolerances[k].rtol;
    }
    const size_t count = expected.size() / elementSize(operand.type);
    for (size_t i = 0; i < count; ++i) {
      const double want = element(operand.type, expected.data(), i);
      const double got = element(operand.type, actual[k].data(), i);
      const bool ok = operand.type == OperandType::TENSOR_BOOL8
                          ? (want != 0) == (got != 0)
                          : std::fabs(got - want) <= atol + rtol * std::fabs(want);
      if (!ok || std::isnan(want)) {
        return fmt::format("output {} element {}: got {:.9g}, expected {:.9g} (atol {}, rtol {})",
                           k, i, got, want, atol, rtol);
      }
    }
  }
  return "";
}

namespace {

/// The driver-managed buffers of one kDeviceBuffers run (null for omitted arguments).
struct DeviceBuffers {
  std::vector<std::shared_ptr<Buffer>> inputs;
  std::vector<std::shared_ptr<Buffer>> outputs;
};

/// Moves every argument of `request` into a driver-managed buffer of its own, inputs copied
/// in with copyFrom.
Result<DeviceBuffers> moveIntoDeviceBuffers(Device& device,
                                            const std::shared_ptr<PreparedModel>& prepared,
                                            Request& request) {
  const Memory pool = std::get<Memory>(request.pools[0]);  // a handle: pools grows below
  DeviceBuffers buffers;
  buffers.inputs.resize(request.inputs.size());
  buffers.outputs.resize(request.outputs.size());
  for (const bool input : {true, false}) {
    std::vector<RequestArgument>& args = input ? request.inputs : request.outputs;
    for (size_t k = 0; k < args.size(); ++k) {
      RequestArgument& arg = args[k];
      if (arg.hasNoValue) continue;
      const BufferRole role{0, static_cast<uint32_t>(k), 1.0f};
      auto allocated = input ? device.allocate({}, {prepared}, {role}, {})
                             : device.allocate({}, {prepared}, {}, {role});
      if (!allocated) {
        return fail(allocated.error().status,
                    std::string(input ? "input " : "output ") + std::to_string(k) +
                        ": allocate failed: " + allocated.error().message);
      }
      if (input) {
        NNHAL_ASSIGN_OR_RETURN(Memory data, Memory::create(arg.location.length));
        std::memcpy(data.data(), pool.data() + arg.location.offset, arg.location.length);
        auto copied = allocated->buffer->copyFrom(data, arg.dimensions);
        if (!copied) {
          return fail(copied.error().status, "input " + std::to_string(k) +
                                                 ": copyFrom failed: " + copied.error().message);
        }
      }
      (input ? buffers.inputs : buffers.outputs)[k] = allocated->buffer;
      arg.location = {static_cast<uint32_t>(request.pools.size()), 0, 0};
      request.pools.emplace_back(MemoryDomainToken{allocated->token});
    }
  }
  return buffers;
}

}  // namespace

namespace {

std::string timingText(const Timing& timing) {
  auto field = [](uint64_t us) {
    return us == kNoTiming ? std::string("none") : std::to_string(us);
  };
  return "{onDevice " + field(timing.timeOnDevice) + " us, inDriver " + field(timing.timeInDriver) +
         " us}";
}

/// The VTS's timing rules for one Timing; "" when they hold.
std::string checkTiming(const Timing& timing, MeasureTiming measure, const std::string& what) {
  if (measure == MeasureTiming::NO) {
    if (timing.timeOnDevice != kNoTiming || timing.timeInDriver != kNoTiming) {
      return what + " " + timingText(timing) + " reported without MeasureTiming::YES";
    }
    return "";
  }
  if (timing.timeOnDevice != kNoTiming && timing.timeInDriver != kNoTiming &&
      timing.timeOnDevice > timing.timeInDriver) {
    return what + " " + timingText(timing) + ": more time on the device than in the driver";
  }
  return "";
}

/// For kFenced: the rules for each Timing, and each fenced time within its launched one.
std::string checkFencedTiming(const FencedExecutionInfo& info, MeasureTiming measure) {
  for (const auto& [timing, what] : {std::pair{&info.timingLaunched, "timingLaunched"},
                                     std::pair{&info.timingFenced, "timingFenced"}}) {
    if (auto why = checkTiming(*timing, measure, what); !why.empty()) return why;
  }
  const Timing& launched = info.timingLaunched;
  const Timing& fenced = info.timingFenced;
  if (fenced.timeOnDevice != kNoTiming && launched.timeOnDevice != kNoTiming &&
      fenced.timeOnDevice > launched.timeOnDevice) {
    return "timingFenced.timeOnDevice " + std::to_string(fenced.timeOnDevice) +
           " us exceeds timingLaunched's " + std::to_string(launched.timeOnDevice) + " us";
  }
  if (fenced.timeInDriver != kNoTiming && launched.timeInDriver != kNoTiming &&
      fenced.timeInDriver > launched.timeInDriver) {
    return "timingFenced.timeInDriver " + std::to_string(fenced.timeInDriver) +
           " us exceeds timingLaunched's " + std::to_string(launched.timeInDriver) + " us";
  }
  return "";
}

bool hasUnknownDimension(const std::vector<uint32_t>& dims) {
  return dims.empty() || std::ranges::find(dims, 0u) != dims.end();
}

/// Runs a fenced execution with no fences to wait for, or with one that is signalled after
/// the call returned (`waitForFence`); the outcome is getExecutionInfo's.
Result<ExecutionResult> executeFenced(PreparedModel& prepared, const Request& request,
                                      const ExecuteOptions& options, bool waitForFence,
                                      std::string* timingProblem) {
  std::vector<SyncFence> waitFor;
  if (waitForFence) {
    NNHAL_ASSIGN_OR_RETURN(SyncFence fence, SyncFence::create());
    waitFor.push_back(std::move(fence));
  }
  NNHAL_ASSIGN_OR_RETURN(FencedExecutionResult fenced,
                         prepared.executeFenced(request, waitFor, options));
  if (waitForFence) {
    if (fenced.syncFence.valid() && fenced.syncFence.state() == SyncFence::State::kSignaled) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "the execution's fence signalled before the fence it waits for");
    }
    NNHAL_TRY(waitFor[0].signal());
  }
  if (fenced.syncFence.valid()) {
    NNHAL_TRY(fenced.syncFence.wait(std::nullopt));
  }
  if (fenced.callback == nullptr) return fail(ErrorStatus::GENERAL_FAILURE, "no fenced callback");
  NNHAL_ASSIGN_OR_RETURN(const FencedExecutionInfo info, fenced.callback->getExecutionInfo());
  if (info.status != ErrorStatus::NONE) {
    return fail(info.status, "getExecutionInfo reported " + std::string(toString(info.status)));
  }
  *timingProblem = checkFencedTiming(info, options.measure);
  return ExecutionResult{};
}

}  // namespace

CtsOutcome runCtsModel(Device& device, const CtsModel& cts, CtsMode mode,
                       const CtsRunOptions& run) {
  const bool infiniteLoop = cts.name.rfind("while_infinite_loop", 0) == 0;
  Model model = cts.model;
  if (mode == CtsMode::kDynamicOutputShape) {
    for (uint32_t index : model.main.outputIndexes) {
      for (uint32_t& d : model.main.operands[index].dimensions) d = 0;
    }
  }
  if (mode == CtsMode::kFenced && !cts.expectFailure) {
    for (uint32_t index : model.main.outputIndexes) {
      const Operand& output = model.main.operands[index];
      if (!hal::isScalarType(output.type) && hasUnknownDimension(output.dimensions)) {
        return {false, "an output of unknown shape: not run fenced", true};
      }
    }
  }
  auto prepared = device.prepareModel(Model(model));
  if (!prepared) {
    if (cts.expectFailure) return {true, ""};
    const std::string why = "preparation failed: " + prepared.error().message + " (" +
                            std::string(nnhal::toString(prepared.error().status)) + ")";
    // The VTS rule: a driver may refuse to prepare a model it reports as not fully supported.
    auto supported = device.getSupportedOperations(model);
    if (supported && std::ranges::find(*supported, false) != supported->end()) {
      return {false, "unsupported operation; " + why, true};
    }
    return {false, why};
  }
  auto request = ctsRequest(cts, run.poolKind);
  if (!request) return {false, "cannot build the request: " + request.error().message};

  // VTS OutputType::INSUFFICIENT: output 0 one element short.
  const Operand& output0 = cts.model.main.operands[cts.model.main.outputIndexes[0]];
  const size_t element0 = elementSize(output0.type);
  const bool shortOutput = run.outputOneElementShort && !cts.expectFailure && !infiniteLoop &&
                           mode != CtsMode::kFenced && mode != CtsMode::kDeviceBuffers &&
                           !cts.outputs.empty() && cts.outputs[0].size() >= 2 * element0;
  if (shortOutput) request->outputs[0].location.length -= static_cast<uint32_t>(element0);

  ExecuteOptions options;
  options.measure = run.measure;
  if (infiniteLoop) options.loopTimeout = run.loopTimeout;
  Result<ExecutionResult> result;
  std::string timingProblem;
  DeviceBuffers deviceBuffers;  // kDeviceBuffers only
  if (mode == CtsMode::kAsync) {
    std::promise<Result<ExecutionResult>> done;
    (*prepared)->execute(*request, options,
                         [&done](Result<ExecutionResult> r) { done.set_value(std::move(r)); });
    result = done.get_future().get();
  } else if (mode == CtsMode::kDeviceBuffers) {
    auto moved = moveIntoDeviceBuffers(device, *prepared, *request);
    if (!moved) return {false, "device buffers: " + moved.error().message};
    deviceBuffers = std::move(*moved);
    result = (*prepared)->executeSynchronously(*request, options);
  } else if (mode == CtsMode::kBurst) {
    auto burst = (*prepared)->configureExecutionBurst();
    if (!burst) return {false, "configureExecutionBurst failed: " + burst.error().message};
    OptionalTimePoint deadline;
    if (infiniteLoop) deadline = std::chrono::steady_clock::now() + run.loopTimeout;
    result = (*burst)->execute(*request, run.measure, deadline);
  } else if (mode == CtsMode::kFenced) {
    result = executeFenced(**prepared, *request, options, run.waitForFence, &timingProblem);
  } else {
    result = (*prepared)->executeSynchronously(*request, options);
  }

  if (infiniteLoop) {
    if (!result && (result.error().status == ErrorStatus::MISSED_DEADLINE_TRANSIENT ||
                    result.error().status == ErrorStatus::MISSED_DEADLINE_PERSISTENT)) {
      return {true, ""};
    }
    return {false, "an infinite WHILE loop did not end with MISSED_DEADLINE_*"};
  }
  if (shortOutput) {
    if (result) return {false, "output 0 one element short, but the execution succeeded"};
    if (result.error().status != ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) {
      return {false,
              "output 0 one element short: " + std::string(nnhal::toString(result.error().status)) +
                  ", expected OUTPUT_INSUFFICIENT_SIZE (" + result.error().message + ")"};
    }
    const std::vector<OutputShape>& shapes = result.error().outputShapes;
    if (shapes.size() != request->outputs.size()) {
      return {false, "OUTPUT_INSUFFICIENT_SIZE with " + std::to_string(shapes.size()) +
                         " output shapes, expected " + std::to_string(request->outputs.size())};
    }
    if (shapes[0].isSufficient) return {false, "output 0 one element short reported sufficient"};
    if (!hasUnknownDimension(output0.dimensions) && shapes[0].dimensions != output0.dimensions) {
      return {false, "output 0 one element short: shape " + dimsText(shapes[0].dimensions) +
                         ", expected " + dimsText(output0.dimensions)};
    }
    return {true, ""};
  }
  if (!result) {
    if (cts.expectFailure) return {true, ""};
    return {false, "execution failed: " + result.error().message + " (" +
                       std::string(nnhal::toString(result.error().status)) + ")"};
  }
  if (cts.expectFailure) return {false, "execution succeeded but the model must fail"};
  if (mode != CtsMode::kFenced) timingProblem = checkTiming(result->timing, run.measure, "timing");
  if (!timingProblem.empty()) return {false, timingProblem};

  const Memory& pool = std::get<Memory>(request->pools[0]);
  std::vector<std::vector<uint8_t>> actual;
  for (size_t k = 0; k < request->outputs.size(); ++k) {
    const RequestArgument& arg = request->outputs[k];
    const std::shared_ptr<Buffer>& buffer =
        k < deviceBuffers.outputs.size() ? deviceBuffers.outputs[k] : nullptr;
    if (buffer && !cts.outputs[k].empty()) {
      auto copy = Memory::create(cts.outputs[k].size());
      if (!copy) return {false, "cannot create a memory for output " + std::to_string(k)};
      auto copied = buffer->copyTo(*copy);
      if (!copied) {
        return {false,
                "output " + std::to_string(k) + ": copyTo failed: " + copied.error().message};
      }
      actual.emplace_back(copy->data(), copy->data() + copy->size());
      continue;
    }
    const uint8_t* begin = pool.data() + arg.location.offset;
    actual.emplace_back(begin, begin + arg.location.length);
  }
  std::string why = judgeOutputs(cts, actual, result->outputShapes);
  if (!why.empty()) return {false, why};
  return {true, ""};
}

Result<std::vector<std::vector<uint8_t>>> computeOutputs(Device& device, const CtsModel& cts) {
  CtsModel sized = cts;
  for (size_t k = 0; k < sized.outputs.size(); ++k) {
    const Operand& output = cts.model.main.operands[cts.model.main.outputIndexes[k]];
    if (hasUnknownDimension(output.dimensions)) {
      return invalidArgument("output " + std::to_string(k) + " has an unknown dimension");
    }
    size_t count = 1;
    for (uint32_t d : output.dimensions) count *= d;
    sized.outputs[k].assign(count * elementSize(output.type), 0);
  }
  NNHAL_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(Model(cts.model)));
  NNHAL_ASSIGN_OR_RETURN(Request request, ctsRequest(sized));
  NNHAL_TRY(prepared->executeSynchronously(request));
  const Memory& pool = std::get<Memory>(request.pools[0]);
  std::vector<std::vector<uint8_t>> outputs;
  for (size_t k = 0; k < sized.outputs.size(); ++k) {
    const uint8_t* begin = pool.data() + request.outputs[k].location.offset;
    outputs.emplace_back(begin, begin + sized.outputs[k].size());
  }
  return outputs;
}

bool hasCoupledQuantization(const CtsModel& cts) {
  const Subgraph& main = cts.model.main;
  if (cts.expectFailure || main.operations.size() != 1 || !cts.model.referenced.empty()) {
    return false;
  }
  // The VTS's exceptions: operations whose quant8 operands are not coupled to their values
  // (a hit mask, raw-byte hashing, an int32 pad value, CAST) or that take unsigned only.
  const Operation& operation = main.operations[0];
  switch (operation.type) {
    case OperationType::HASHTABLE_LOOKUP:
    case OperationType::LSH_PROJECTION:
    case OperationType::PAD_V2:
    case OperationType::CAST:
    case OperationType::QUANTIZED_16BIT_LSTM:
      return false;
    default:
      break;
  }
  auto quant8 = [&](uint32_t index) {
    return main.operands[index].type == OperandType::TENSOR_QUANT8_ASYMM;
  };
  return std::ranges::any_of(operation.inputs, quant8) ||
         std::ranges::any_of(operation.outputs, quant8);
}

CtsModel toSignedQuantization(const CtsModel& cts) {
  CtsModel out = cts;
  out.name += "_signed";
  // The pools are shared with `cts`: the converted constants go into copies.
  for (auto& pool : out.model.pools) {
    if (!pool.valid()) continue;
    auto copy = Memory::create(pool.size());
    if (!copy) continue;  // left shared: the conversion below then skips its constants
    std::memcpy(copy->data(), pool.data(), pool.size());
    pool = std::move(*copy);
  }
  auto flip = [](uint8_t* bytes, size_t count) {
    for (size_t i = 0; i < count; ++i) bytes[i] ^= 0x80;  // u8 x -> s8 x - 128
  };
  auto convert = [&](Subgraph& subgraph, bool isMain) {
    for (size_t i = 0; i < subgraph.operands.size(); ++i) {
      Operand& operand = subgraph.operands[i];
      if (operand.type != OperandType::TENSOR_QUANT8_ASYMM) continue;
      operand.type = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
      operand.zeroPoint -= 128;
      const DataLocation& at = operand.location;
      if (operand.lifetime == OperandLifeTime::CONSTANT_COPY &&
          size_t{at.offset} + at.length <= out.model.operandValues.size()) {
        flip(out.model.operandValues.data() + at.offset, at.length);
      } else if (operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE &&
                 at.poolIndex < out.model.pools.size() &&
                 out.model.pools[at.poolIndex].data() != cts.model.pools[at.poolIndex].data() &&
                 size_t{at.offset} + at.length <= out.model.pools[at.poolIndex].size()) {
        flip(out.model.pools[at.poolIndex].data() + at.offset, at.length);
      }
      if (!isMain) continue;
      for (size_t k = 0; k < subgraph.inputIndexes.size(); ++k) {
        if (subgraph.inputIndexes[k] == i) flip(out.inputs[k].data(), out.inputs[k].size());
      }
      for (size_t k = 0; k < subgraph.outputIndexes.size(); ++k) {
        if (subgraph.outputIndexes[k] == i) flip(out.outputs[k].data(), out.outputs[k].size());
      }
    }
  };
  convert(out.model.main, true);
  for (Subgraph& subgraph : out.model.referenced) convert(subgraph, false);
  return out;
}

}  // namespace nnhal::tools
