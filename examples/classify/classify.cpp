// classify — the smallest host program of nnhal: imports a TensorFlow Lite image classifier,
// prepares it, runs it on one input tensor and prints the top class.
//
//   classify MODEL.tflite INPUT.bin [--labels LABELS.txt] [--connect SOCKET] [--cache-dir DIR]
//
// INPUT.bin holds the model's first input tensor as raw bytes (for a quantized MobileNet
// 128x128: 1x128x128x3 uint8, 49152 bytes). Without --connect the model runs in this process
// on the embedded driver (nnhal::driver, createDevice); with --connect it runs in the nnhald
// listening on SOCKET (nnhal::client, connect). Built without NNHAL_EXAMPLE_EMBEDDED (the
// target classify_client) the program links nnhal::client only and --connect is required.
// With --cache-dir the compilation is cached there (nnhal/cache_directory.h): the first start
// compiles and saves, the next ones load, and "cache: ..." says which.
//
// Prints "top class: INDEX (LABEL) score SCORE" and exits 0; on an error, prints the
// ErrorStatus and its message to stderr and exits 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "nnhal/cache_directory.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/memory.h"
#include "nnhal/status.h"
#include "nnhal/tflite_import.h"
#include "nnhal/version.h"

namespace {

struct Args {
  std::string model;
  std::string input;
  std::string labels;
  std::string connect;
  std::string cacheDir;
};

nnhal::Result<std::vector<uint8_t>> readFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return nnhal::invalidArgument("cannot read '" + path + "'");
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

// Bytes of one element of the tensor types an image classifier reads and writes.
nnhal::Result<size_t> elementBytes(nnhal::OperandType type) {
  switch (type) {
    case nnhal::OperandType::TENSOR_FLOAT32:
      return 4;
    case nnhal::OperandType::TENSOR_QUANT8_ASYMM:
    case nnhal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return 1;
    default:
      return nnhal::invalidArgument("classify handles float32 and 8-bit tensors only");
  }
}

nnhal::Result<size_t> tensorBytes(const nnhal::TensorDescription& desc) {
  NNHAL_ASSIGN_OR_RETURN(size_t bytes, elementBytes(desc.type));
  for (uint32_t d : desc.dimensions) bytes *= d;
  return bytes;
}

// The score of element `i` of an output tensor, dequantized.
float score(const nnhal::TensorDescription& desc, const uint8_t* data, size_t i) {
  switch (desc.type) {
    case nnhal::OperandType::TENSOR_FLOAT32: {
      float value = 0;
      std::memcpy(&value, data + 4 * i, 4);
      return value;
    }
    case nnhal::OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return desc.scale * (static_cast<int8_t>(data[i]) - desc.zeroPoint);
    default:
      return desc.scale * (data[i] - desc.zeroPoint);
  }
}

nnhal::Result<std::shared_ptr<nnhal::Device>> openDevice(const Args& args) {
  if (!args.connect.empty()) return nnhal::connect(args.connect);
#ifdef NNHAL_EXAMPLE_EMBEDDED
  nnhal::DeviceOptions options;
  options.stateDirectory = args.cacheDir;  // the embedded driver's token map lives there too
  return nnhal::createDevice(options);
#else
  return nnhal::invalidArgument("this build links nnhal::client only: pass --connect SOCKET");
#endif
}

nnhal::Result<void> classify(const Args& args) {
  NNHAL_ASSIGN_OR_RETURN(nnhal::ImportedModel imported, nnhal::importTfliteFile(args.model));
  const nnhal::TensorDescription inputDesc = imported.inputs.at(0);
  const nnhal::TensorDescription outputDesc = imported.outputs.at(0);
  NNHAL_ASSIGN_OR_RETURN(const std::vector<uint8_t> input, readFile(args.input));
  NNHAL_ASSIGN_OR_RETURN(const size_t inputBytes, tensorBytes(inputDesc));
  NNHAL_ASSIGN_OR_RETURN(const size_t outputBytes, tensorBytes(outputDesc));
  if (input.size() != inputBytes) {
    return nnhal::invalidArgument(args.input + " holds " + std::to_string(input.size()) +
                                  " bytes; the model's input takes " + std::to_string(inputBytes));
  }

  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<nnhal::Device> device, openDevice(args));
  std::shared_ptr<nnhal::PreparedModel> prepared;
  if (args.cacheDir.empty()) {
    NNHAL_ASSIGN_OR_RETURN(prepared, device->prepareModel(std::move(imported.model)));
  } else {
    // The model file's bytes identify the model in the cache (CacheDirectory::tokenFor).
    NNHAL_ASSIGN_OR_RETURN(const std::vector<uint8_t> modelBytes, readFile(args.model));
    NNHAL_ASSIGN_OR_RETURN(const nnhal::CacheDirectory cache,
                           nnhal::CacheDirectory::open(args.cacheDir, device));
    NNHAL_ASSIGN_OR_RETURN(nnhal::CachedPreparation done,
                           cache.prepare(std::move(imported.model), modelBytes));
    prepared = std::move(done.preparedModel);
    std::printf("cache: %s%s%s\n", std::string(nnhal::toString(done.outcome)).c_str(),
                done.why.empty() ? "" : " - ", done.why.c_str());
  }

  // One shared-memory pool for the input, one for the output.
  NNHAL_ASSIGN_OR_RETURN(nnhal::Memory inputPool, nnhal::Memory::create(inputBytes));
  NNHAL_ASSIGN_OR_RETURN(nnhal::Memory outputPool, nnhal::Memory::create(outputBytes));
  std::memcpy(inputPool.data(), input.data(), inputBytes);
  nnhal::Request request;
  request.inputs.push_back({false, {0, 0, static_cast<uint32_t>(inputBytes)}, {}});
  request.outputs.push_back({false, {1, 0, static_cast<uint32_t>(outputBytes)}, {}});
  request.pools = {inputPool, outputPool};
  NNHAL_TRY(prepared->executeSynchronously(request));

  const size_t classes = outputBytes / elementBytes(outputDesc.type).value();
  size_t top = 0;
  for (size_t i = 1; i < classes; ++i) {
    if (score(outputDesc, outputPool.data(), i) > score(outputDesc, outputPool.data(), top)) {
      top = i;
    }
  }
  std::string label;
  if (!args.labels.empty()) {
    std::ifstream labels(args.labels);
    for (size_t i = 0; i <= top && std::getline(labels, label); ++i) {
    }
  }
  std::printf("device: %s\n", device->getVersionString().c_str());
  std::printf("top class: %zu (%s) score %.3f\n", top, label.c_str(),
              score(outputDesc, outputPool.data(), top));
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--labels" || arg == "--connect" || arg == "--cache-dir") && i + 1 < argc) {
      (arg == "--labels"    ? args.labels
       : arg == "--connect" ? args.connect
                            : args.cacheDir) = argv[++i];
    } else if (arg == "--version") {
      std::printf("classify (nnhal %s)\n", std::string(nnhal::kVersion).c_str());
      return 0;
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) {
    std::fprintf(stderr,
                 "usage: classify MODEL.tflite INPUT.bin [--labels LABELS.txt] "
                 "[--connect SOCKET] [--cache-dir DIR]\n");
    return 2;
  }
  args.model = positional[0];
  args.input = positional[1];
  const nnhal::Result<void> done = classify(args);
  if (!done) {
    std::fprintf(stderr, "classify: %s: %s\n", std::string(toString(done.error().status)).c_str(),
                 done.error().message.c_str());
    return 1;
  }
  return 0;
}
