// tests/hal/tflite_test_model.h — builds small TFLite flatbuffers for importer tests with
// the flatc-generated builder API.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tflite_schema_generated.h"

namespace nnhal::testing {

/// Builds one TFLite model with a single subgraph. Buffer 0 is the empty sentinel.
/// Usage: add buffers and tensors, operator codes and operators, then finish().
class TfliteModelMaker {
 public:
  TfliteModelMaker() { buffers_.push_back(::tflite::CreateBuffer(fbb_)); }

  flatbuffers::FlatBufferBuilder& fbb() { return fbb_; }

  /// A buffer holding `bytes`; returns its index.
  uint32_t addBuffer(const std::vector<uint8_t>& bytes) {
    buffers_.push_back(::tflite::CreateBufferDirect(fbb_, &bytes));
    return static_cast<uint32_t>(buffers_.size() - 1);
  }
  /// A buffer whose data lies outside the flatbuffer at file `offset` (files over 2 GB).
  uint32_t addExternalBuffer(uint64_t offset, uint64_t size) {
    buffers_.push_back(::tflite::CreateBuffer(fbb_, 0, offset, size));
    return static_cast<uint32_t>(buffers_.size() - 1);
  }

  struct TensorSpec {
    std::vector<int32_t> shape;
    ::tflite::TensorType type = ::tflite::TensorType_FLOAT32;
    std::string name;
    uint32_t buffer = 0;
    std::vector<float> scales;
    std::vector<int64_t> zeroPoints;
    int32_t quantizedDimension = 0;
    bool sparse = false;
    bool variable = false;  ///< Tensor.is_variable (recurrent state)
  };

  /// A tensor; returns its index.
  int32_t addTensor(const TensorSpec& spec) {
    flatbuffers::Offset<::tflite::QuantizationParameters> quantization = 0;
    if (!spec.scales.empty() || !spec.zeroPoints.empty()) {
      quantization = ::tflite::CreateQuantizationParametersDirect(
          fbb_, nullptr, nullptr, &spec.scales, &spec.zeroPoints,
          ::tflite::QuantizationDetails_NONE, 0, spec.quantizedDimension);
    }
    flatbuffers::Offset<::tflite::SparsityParameters> sparsity = 0;
    if (spec.sparse) sparsity = ::tflite::CreateSparsityParameters(fbb_);
    tensors_.push_back(::tflite::CreateTensorDirect(fbb_, &spec.shape, spec.type, spec.buffer,
                                                    spec.name.c_str(), quantization, spec.variable,
                                                    sparsity));
    return static_cast<int32_t>(tensors_.size() - 1);
  }

  /// A constant tensor holding `values` (raw bytes of T).
  template <typename T>
  int32_t addConstant(TensorSpec spec, const std::vector<T>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    spec.buffer = addBuffer(bytes);
    return addTensor(spec);
  }

  /// An operator code; `deprecatedCode` defaults to min(code, 127) as converters write it.
  uint32_t addOperatorCode(::tflite::BuiltinOperator code, const std::string& custom = "") {
    const auto deprecated = static_cast<int8_t>(code < 127 ? code : 127);
    codes_.push_back(::tflite::CreateOperatorCodeDirect(
        fbb_, deprecated, custom.empty() ? nullptr : custom.c_str(), 1, code));
    return static_cast<uint32_t>(codes_.size() - 1);
  }
  /// An operator code as files older than builtin_code store it (only the byte field).
  uint32_t addLegacyOperatorCode(int8_t deprecatedCode) {
    ::tflite::OperatorCodeBuilder builder(fbb_);
    builder.add_deprecated_builtin_code(deprecatedCode);
    codes_.push_back(builder.Finish());
    return static_cast<uint32_t>(codes_.size() - 1);
  }

  void addOperator(uint32_t opcode, const std::vector<int32_t>& inputs,
                   const std::vector<int32_t>& outputs,
                   ::tflite::BuiltinOptions optionsType = ::tflite::BuiltinOptions_NONE,
                   flatbuffers::Offset<void> options = 0) {
    operators_.push_back(
        ::tflite::CreateOperatorDirect(fbb_, opcode, &inputs, &outputs, optionsType, options));
  }

  /// A FULLY_CONNECTED operator with keep_num_dims = true (no fused activation, the default
  /// weights format): its output keeps the input's leading dimensions.
  void addFullyConnectedKeepingDims(const std::vector<int32_t>& inputs, int32_t output) {
    addOperator(addOperatorCode(::tflite::BuiltinOperator_FULLY_CONNECTED), inputs, {output},
                ::tflite::BuiltinOptions_FullyConnectedOptions,
                ::tflite::CreateFullyConnectedOptions(
                    fbb_, ::tflite::ActivationFunctionType_NONE,
                    ::tflite::FullyConnectedOptionsWeightsFormat_DEFAULT, /*keep_num_dims=*/true)
                    .Union());
  }

  /// A custom operator with its options (a flexbuffer, as converters write them).
  void addCustomOperator(uint32_t opcode, const std::vector<int32_t>& inputs,
                         const std::vector<int32_t>& outputs,
                         const std::vector<uint8_t>& customOptions) {
    operators_.push_back(::tflite::CreateOperatorDirect(
        fbb_, opcode, &inputs, &outputs, ::tflite::BuiltinOptions_NONE, 0, &customOptions));
  }

  /// Finishes the model with these subgraph inputs and outputs; `subgraphCount` 0 writes a
  /// model without subgraphs.
  std::vector<uint8_t> finish(const std::vector<int32_t>& inputs,
                              const std::vector<int32_t>& outputs, int subgraphCount = 1) {
    std::vector<flatbuffers::Offset<::tflite::SubGraph>> subgraphs;
    if (subgraphCount > 0) {
      subgraphs.push_back(
          ::tflite::CreateSubGraphDirect(fbb_, &tensors_, &inputs, &outputs, &operators_, "main"));
    }
    const auto model =
        ::tflite::CreateModelDirect(fbb_, 3, &codes_, &subgraphs, "test model", &buffers_);
    ::tflite::FinishModelBuffer(fbb_, model);
    return {fbb_.GetBufferPointer(), fbb_.GetBufferPointer() + fbb_.GetSize()};
  }

 private:
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<flatbuffers::Offset<::tflite::Buffer>> buffers_;
  std::vector<flatbuffers::Offset<::tflite::Tensor>> tensors_;
  std::vector<flatbuffers::Offset<::tflite::OperatorCode>> codes_;
  std::vector<flatbuffers::Offset<::tflite::Operator>> operators_;
};

}  // namespace nnhal::testing
