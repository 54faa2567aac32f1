// bench/bench_mobilenet.h — MobileNet v2 1.0 224 quant and its grace_hopper input, as the
// benchmarks that run it through nnhald load them.
#pragma once

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "nnhal/memory.h"
#include "nnhal/tflite_import.h"
#include "nnhal/types.h"

namespace nnhal::bench {

/// ../shared/models, or $NNHAL_SHARED_DIR/models (to run a benchmark on another machine).
inline std::string modelsFolder() {
  const char* shared = std::getenv("NNHAL_SHARED_DIR");
  return std::string(shared != nullptr ? shared : NNHAL_SHARED_DIR) + "/models/";
}

struct MobileNet {
  Model model;
  std::vector<char> input;
};

/// Loaded once; null when the model is missing.
inline const MobileNet* mobileNet() {
  static const auto loaded = []() -> std::optional<MobileNet> {
    const std::string models = modelsFolder();
    auto imported = importTfliteFile(models + "mobilenet_v2_1.0_224_quant.tflite");
    if (!imported) return std::nullopt;
    std::ifstream in(models + "inputs/mobilenet_v2_1.0_224_quant__grace_hopper.input.bin",
                     std::ios::binary);
    std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return MobileNet{std::move(imported->model), std::move(input)};
  }();
  return loaded ? &*loaded : nullptr;
}

/// A request over one fresh pool: the input, then the 1001 class scores.
inline Request mobileNetRequest(const MobileNet& net) {
  Memory pool = *Memory::create(net.input.size() + 1001);
  std::memcpy(pool.data(), net.input.data(), net.input.size());
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, static_cast<uint32_t>(net.input.size())}, {}}};
  request.outputs = {{false, {0, static_cast<uint32_t>(net.input.size()), 1001}, {}}};
  return request;
}

}  // namespace nnhal::bench
