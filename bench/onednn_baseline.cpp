#include "bench/onednn_baseline.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <dnnl.hpp>
#include <utility>

#include "bench/onednn_network.h"
#include "bench/onednn_operations.h"
#include "tools/cpu_reference/nnapi_params.h"

namespace nnhal::bench {
namespace {

using onednn::Network;
using onednn::Quantization;
using dt = dnnl::memory::data_type;

std::string operationName(size_t index, OperationType type) {
  return "operation " + std::to_string(index) + " (" + std::string(toString(type)) + ")";
}

Result<size_t> nnapiBytes(const Operand& operand, uint32_t index) {
  if (operand.dimensions.empty() || std::find(operand.dimensions.begin(), operand.dimensions.end(),
                                              0u) != operand.dimensions.end()) {
    return invalidArgument("operand " + std::to_string(index) + " has unknown dimensions");
  }
  const size_t element = operand.type == OperandType::TENSOR_FLOAT32 ? sizeof(float) : 1;
  return cpu_reference::elementCount(operand) * element;
}

}  // namespace

struct OnednnBaseline::Impl {
  Impl(const Model& model, unsigned threadCount)
      : network(model, dnnl::engine(dnnl::engine::kind::cpu, 0)), threads(threadCount) {}

  Network network;
  unsigned threads;
  /// Model inputs and outputs in NNAPI's form.
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<std::vector<uint8_t>> outputs;

  Result<void> planInputs();
  Result<void> planOutputs();
  Result<void> build();
  Result<void> runSteps(std::vector<OnednnStepTime>* times);
};

/// Each model input gets its NNAPI-form buffer; one in the scheme's form already (float32,
/// uint8 with zero point 0) is the tensor itself, any other is converted by a first step.
Result<void> OnednnBaseline::Impl::planInputs() {
  const Subgraph& graph = network.graph();
  network.begin(0);
  for (const uint32_t index : graph.inputIndexes) {
    const Operand& operand = network.operand(index);
    NNHAL_ASSIGN_OR_RETURN(const size_t bytes, nnapiBytes(operand, index));
    NNHAL_ASSIGN_OR_RETURN(const Quantization quant, onednn::schemeOf(operand));
    inputs.emplace_back(bytes);
    uint8_t* source = inputs.back().data();
    if (quant.type != dt::s8) {
      network.placeExternal(index, onednn::plainDesc(operand, quant.type), source, quant);
      continue;
    }
    const dnnl::memory tensor = network.place(index, onednn::plainDesc(operand, quant.type), quant);
    auto* target = static_cast<int8_t*>(tensor.get_data_handle());
    const float factor = operand.scale / quant.scale;
    const int32_t zero = operand.zeroPoint;
    network.addCustom(
        [source, target, bytes, factor, zero] {
          for (size_t i = 0; i < bytes; ++i) {
            const float value = std::nearbyint(static_cast<float>(source[i] - zero) * factor);
            target[i] = static_cast<int8_t>(std::clamp(value, -128.0f, 127.0f));
          }
        },
        "input conversion");
  }
  return {};
}

/// A last step brings each model output into NNAPI's form: a reorder into plain float32 (into
/// the output itself for a float32 output), then for uint8 a requantization loop.
Result<void> OnednnBaseline::Impl::planOutputs() {
  const Subgraph& graph = network.graph();
  network.begin(graph.operations.empty() ? 0 : graph.operations.size() - 1);
  for (const uint32_t index : graph.outputIndexes) {
    const Operand& operand = network.operand(index);
    NNHAL_ASSIGN_OR_RETURN(const size_t bytes, nnapiBytes(operand, index));
    outputs.emplace_back(bytes);
    if (!network.placed(index)) {
      return invalidArgument("model output " + std::to_string(index) + " is never written");
    }
    const Quantization quant = network.quantizationOf(index);
    const dnnl::memory::desc reals = onednn::plainDesc(operand, dt::f32);
    if (operand.type == OperandType::TENSOR_FLOAT32) {
      const dnnl::memory target(reals, network.engine(), outputs.back().data());
      const dnnl::memory& source = network.memoryOf(index);
      const dnnl::reorder::primitive_desc pd(source, target);
      network.add(dnnl::reorder(pd), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, target}},
                  onednn::describe(pd, "reorder"));
      continue;
    }
    NNHAL_ASSIGN_OR_RETURN(const dnnl::memory values, network.readAs(index, reals, quant.scale));
    const auto* source = static_cast<const float*>(values.get_data_handle());
    uint8_t* target = outputs.back().data();
    const float scale = operand.scale;
    const float zero = static_cast<float>(operand.zeroPoint);
    network.addCustom(
        [source, target, bytes, scale, zero] {
          for (size_t i = 0; i < bytes; ++i) {
            const float value = std::nearbyint(source[i] / scale) + zero;
            target[i] = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
          }
        },
        "output conversion");
  }
  network.finish();
  return {};
}

Result<void> OnednnBaseline::Impl::build() {
  omp_set_num_threads(static_cast<int>(threads));
  return onednn::guarded([&]() -> Result<void> {
    NNHAL_TRY(planInputs());
    const onednn::Fusions fusions = onednn::planFusions(network);
    const auto& operations = network.graph().operations;
    for (size_t k = 0; k < operations.size(); ++k) {
      network.begin(k);
      if (auto added = onednn::addOperation(network, k, fusions); !added) {
        return fail(added.error().status,
                    operationName(k, operations[k].type) + ": " + added.error().message);
      }
      network.finish();
    }
    return planOutputs();
  });
}

Result<void> OnednnBaseline::Impl::runSteps(std::vector<OnednnStepTime>* times) {
  using Clock = std::chrono::steady_clock;
  omp_set_num_threads(static_cast<int>(threads));
  for (onednn::Step& step : network.steps()) {
    const auto start = Clock::now();
    try {
      if (step.custom) {
        step.custom();
      } else {
        step.primitive.execute(network.stream(), step.args);
      }
      if (times != nullptr) network.stream().wait();
    } catch (const dnnl::error& error) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  operationName(step.operation, network.graph().operations[step.operation].type) +
                      ": " + error.what());
    }
    if (times != nullptr) {
      times->push_back({step.operation, step.what,
                        std::chrono::duration<double, std::micro>(Clock::now() - start).count()});
    }
  }
  network.stream().wait();
  return {};
}

OnednnBaseline::OnednnBaseline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OnednnBaseline::~OnednnBaseline() = default;

Result<std::unique_ptr<OnednnBaseline>> OnednnBaseline::create(const Model& model,
                                                               unsigned threads) {
  if (!model.referenced.empty()) {
    return invalidArgument("the oneDNN baseline does not run referenced subgraphs");
  }
  if (model.main.operations.empty()) return invalidArgument("the model has no operations");
  std::unique_ptr<Impl> impl;
  NNHAL_TRY(onednn::guarded([&]() -> Result<void> {
    impl = std::make_unique<Impl>(model, std::max(1u, threads));
    return {};
  }));
  NNHAL_TRY(impl->build());
  return std::unique_ptr<OnednnBaseline>(new OnednnBaseline(std::move(impl)));
}

std::span<uint8_t> OnednnBaseline::input(size_t index) { return impl_->inputs.at(index); }

std::span<const uint8_t> OnednnBaseline::output(size_t index) const {
  return impl_->outputs.at(index);
}

Result<void> OnednnBaseline::run() { return impl_->runSteps(nullptr); }

Result<std::vector<OnednnStepTime>> OnednnBaseline::profile() {
  std::vector<OnednnStepTime> times;
  NNHAL_TRY(impl_->runSteps(&times));
  return times;
}

}  // namespace nnhal::bench
