// tools/common/cts_model.h — loads the NNAPI CTS/VTS test models (JSON, schema in
// shared/cts/README.md) as nnhal::Model values, for `nnhal cts` and the tests.
//
// Conversion: operand fields map one to one; CONSTANT_COPY data is appended to
// Model::operandValues, CONSTANT_REFERENCE data to one shared-memory pool (Model::pools[0]),
// each value at an 8-byte aligned offset; channelQuant becomes SymmPerChannelQuantParams;
// a SUBGRAPH operand's data (a uint32 index into "referenced") becomes location.offset.
// The main inputs' and outputs' data are kept beside the model, in inputIndexes /
// outputIndexes order, to build Requests.
//
// The writer (ctsModelToJson, writeCtsFile) is the inverse: a model built or received
// anywhere (a random graph, a model a client sent nnhald) becomes a file `nnhal cts` replays.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::tools {

/// How far an output may be from the expected one: |got - want| <= atol + rtol * |want|
/// for each element. {0, 0} asks for the same bits (bool8: the same truth value).
struct OutputTolerance {
  double atol = 0.0;
  double rtol = 0.0;
  bool operator==(const OutputTolerance&) const = default;
};

/// One test model of a CTS JSON file.
struct CtsModel {
  std::string name;     ///< e.g. "conv_float_all_inputs_as_internal"
  std::string spec;     ///< spec file name without ".mod.py"
  std::string version;  ///< "V1_0" ... "V1_3_cts_only"
  Model model;
  bool expectFailure = false;
  bool isRelaxed = false;
  /// > 0 only for RANDOM_MULTINOMIAL models: allowed error of each class's sample share.
  float multinomialTolerance = 0.0f;
  /// Bytes of each main input (empty = omitted input), in main.inputIndexes order.
  std::vector<std::vector<uint8_t>> inputs;
  /// Expected bytes of each main output, in main.outputIndexes order.
  std::vector<std::vector<uint8_t>> outputs;
  /// Per output: true if its values are not to be compared.
  std::vector<bool> outputIgnored;
  /// Per output, replacing the CTS's per-type rules when not empty (nnhal's own field
  /// "nnhalOutputTolerances" of the model, absent from AOSP's files): what a random graph's
  /// outputs are judged by (tools/common/random_graph.h), bit-exact where the computation is.
  std::vector<OutputTolerance> outputTolerances;
};

/// Decodes standard base64 (with padding). Errors: INVALID_ARGUMENT on a bad character or
/// length.
Result<std::vector<uint8_t>> decodeBase64(std::string_view text);

/// Encodes bytes as standard base64 with padding, on one line.
std::string encodeBase64(std::span<const uint8_t> bytes);

/// Converts one entry of a CTS file's "tests" array ({"name", "model"}).
/// Errors: INVALID_ARGUMENT naming the field for a missing/mistyped field or unknown enum
/// name; RESOURCE_EXHAUSTED_PERSISTENT if the constant pool cannot be allocated.
Result<CtsModel> ctsModelFromJson(const nlohmann::json& test, std::string_view spec,
                                  std::string_view version);

/// Loads every test model of one CTS JSON file.
Result<std::vector<CtsModel>> loadCtsFile(const std::filesystem::path& path);

/// The CTS JSON test entry ({"name", "model"}) of `cts`, the inverse of ctsModelFromJson:
/// loading it back gives the same operands, operations, constant bytes (at the same offsets
/// when `cts` was itself loaded from JSON), inputs and outputs. Constants are read from the
/// model's operandValues and pools; an input or output without data is written empty (a
/// model received without a request). Operand names are not kept by the loader and are
/// written as "". Errors: INVALID_ARGUMENT for what the format cannot hold (an extension or
/// OEM operand or operation type) or a constant outside its pool or operandValues.
Result<nlohmann::json> ctsModelToJson(const CtsModel& cts);

/// Writes one CTS JSON file ({"spec", "version", "tests"}, a test per line, as in
/// ../shared/cts) that loadCtsFile reads back. Errors: INVALID_ARGUMENT when the file cannot
/// be written.
Result<void> writeCtsFile(const std::filesystem::path& path, std::string_view spec,
                          std::string_view version, const std::vector<nlohmann::json>& tests);

/// Every "*.json" file under `root` (a file is returned as is), sorted.
std::vector<std::filesystem::path> ctsFiles(const std::filesystem::path& root);

/// A Request for `cts`: one shared-memory pool holding every input (with its data) and every
/// output (sized for the expected data, at least 1 byte), each at an 8-byte aligned offset;
/// inputs with no data are passed with hasNoValue. Dimensions are left empty. The pool is of
/// `kind`: ASHMEM and HARDWARE_BUFFER_BLOB from Memory::create; MMAP_FD a region of a
/// regular file (an unnamed temporary file) that starts 4,112 bytes in, as
/// ANeuralNetworksMemory_createFromFd may give one. Errors: RESOURCE_EXHAUSTED_PERSISTENT
/// or GENERAL_FAILURE when the pool cannot be made.
Result<Request> ctsRequest(const CtsModel& cts, MemoryKind kind = MemoryKind::ASHMEM);

}  // namespace nnhal::tools
