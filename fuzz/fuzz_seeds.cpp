// fuzz_seeds OUT_DIR: writes the seed corpora of the fuzz targets from ../shared, in the
// layouts of fuzz/fuzz_input.h: OUT_DIR/model (CTS models and their requests), OUT_DIR/cache
// (cache files the driver saved for CTS models), OUT_DIR/tflite (the TFLite models),
// OUT_DIR/session (a client's frames: Hello, SupportedOperations, PrepareModel, Execute).
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/cache_format.h"
#include "engine/compiler.h"
#include "fuzz/fuzz_input.h"
#include "ipc/burst_packets.h"
#include "ipc/frame.h"
#include "ipc/messages.h"
#include "tools/common/cts_model.h"

namespace {

using namespace nnhal;
namespace fs = std::filesystem;

void writeFile(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> bytesOf(ipc::OutMessage& message) { return message.payload.buffer(); }

ipc::WireRequest wireRequest(const Request& request, ipc::OutMessage& out) {
  ipc::WireRequest wire;
  wire.inputs = request.inputs;
  wire.outputs = request.outputs;
  for (const RequestMemoryPool& pool : request.pools) {
    wire.pools.push_back(ipc::poolWithFd(std::get<Memory>(pool), out));
  }
  return wire;
}

/// One frame as a session chunk: [descriptor count][header][payload].
std::vector<uint8_t> frameChunk(ipc::MessageType type, uint64_t callId, ipc::OutMessage& message) {
  ipc::FrameHeader header;
  header.type = static_cast<uint16_t>(type);
  header.callId = callId;
  const std::vector<uint8_t> payload = bytesOf(message);
  header.payloadBytes = static_cast<uint32_t>(payload.size());
  header.fdCount = static_cast<uint32_t>(message.fds.size());
  std::vector<uint8_t> chunk(1 + ipc::kFrameHeaderBytes);
  chunk[0] = static_cast<uint8_t>(message.fds.size());
  ipc::encodeHeader(
      header, std::span<uint8_t, ipc::kFrameHeaderBytes>(chunk.data() + 1, ipc::kFrameHeaderBytes));
  chunk.insert(chunk.end(), payload.begin(), payload.end());
  return chunk;
}

size_t poolBytes(const Model& model) {
  size_t total = 0;
  for (const Memory& pool : model.pools) total += pool.size();
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    spdlog::error("usage: fuzz_seeds OUT_DIR");
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* target : {"model", "cache", "tflite", "session", "burst"}) {
    fs::create_directories(out / target);
  }
  const fs::path shared = NNHAL_SHARED_DIR;
  size_t counts[4] = {};
  size_t index = 0;
  for (const fs::path& file : tools::ctsFiles(shared / "cts")) {
    auto models = tools::loadCtsFile(file);
    if (!models) continue;
    for (const tools::CtsModel& cts : *models) {
      // Every fourth model keeps the corpora small while covering every operation type.
      if (index++ % 4 != 0) continue;
      auto request = tools::ctsRequest(cts);
      if (!request) continue;
      const std::string name = std::to_string(index);
      std::vector<uint8_t> fill;
      if (!cts.model.pools.empty()) {
        const Memory& pool = cts.model.pools[0];
        fill.assign(pool.data(), pool.data() + pool.size());
      }

      ipc::OutMessage modelMessage;
      ipc::encode(ipc::WireModel{cts.model,
                                 [&] {
                                   std::vector<ipc::WirePool> pools;
                                   for (const Memory& m : cts.model.pools) {
                                     pools.push_back(ipc::poolWithFd(m, modelMessage));
                                   }
                                   return pools;
                                 }()},
                  modelMessage);
      ipc::OutMessage executeMessage;
      ipc::Execute execute;
      execute.handle = 1;
      execute.request = wireRequest(*request, executeMessage);
      ipc::encode(execute, executeMessage);
      writeFile(out / "model" / name,
                fuzz::joinParts({bytesOf(modelMessage), bytesOf(executeMessage), fill}));
      ++counts[0];

      engine::PreparedStateStore state(engine::PreparedStateStore::Mode::kSave);
      if (auto plan = engine::compile(cts.model, {&state})) {
        if (auto encoded = cache::encodeCache((*plan)->model, state,
                                              cache::cacheVersion(fuzz::kFuzzDriverVersion))) {
          writeFile(out / "cache" / name, fuzz::joinParts({encoded->model, encoded->data, {0}}));
          ++counts[1];
        }
      }

      if (poolBytes(cts.model) <= 4096 && cts.model.pools.size() <= 3 &&
          request->pools.size() <= 3) {
        std::vector<std::vector<uint8_t>> chunks;
        ipc::OutMessage hello;
        ipc::encode(ipc::Hello{ipc::kProtocolVersion, "fuzz"}, hello);
        chunks.push_back(frameChunk(ipc::MessageType::kHello, 1, hello));
        chunks.push_back(frameChunk(ipc::MessageType::kSupportedOperations, 2, modelMessage));
        ipc::OutMessage prepare;
        ipc::PrepareModel prepareModel;
        for (const Memory& m : cts.model.pools) {
          prepareModel.model.pools.push_back(ipc::poolWithFd(m, prepare));
        }
        prepareModel.model.model = cts.model;
        prepareModel.preference = 1;
        prepareModel.priority = 1;
        ipc::encode(prepareModel, prepare);
        chunks.push_back(frameChunk(ipc::MessageType::kPrepareModel, 3, prepare));
        chunks.push_back(frameChunk(ipc::MessageType::kExecuteSynchronously, 4, executeMessage));
        ipc::OutMessage stats;
        chunks.push_back(frameChunk(ipc::MessageType::kGetStats, 5, stats));
        writeFile(out / "session" / name, fuzz::joinParts(chunks));
        ++counts[3];
      }
    }
  }
  for (const fs::path& model : fs::directory_iterator(shared / "models")) {
    if (model.extension() != ".tflite") continue;
    fs::copy_file(model, out / "tflite" / model.filename(), fs::copy_options::overwrite_existing);
    ++counts[2];
  }
  // Burst packets for fuzz_burst's ADD model: valid ones with and without timing, a
  // deadline, dimensions, an unknown slot, and two packets in one input.
  size_t burstSeeds = 0;
  auto burstPacket = [](MeasureTiming measure, bool deadline, bool dims, int32_t slot) {
    ipc::BurstRequest request;
    request.inputs = {
        {false, {0, 0, 16}, dims ? std::vector<uint32_t>{4} : std::vector<uint32_t>{}},
        {false, {0, 16, 16}, {}}};
    request.outputs = {{false, {0, 32, 16}, {}}};
    request.slots = {slot};
    request.measure = measure;
    if (deadline) request.deadline = std::chrono::steady_clock::now() + std::chrono::hours(24);
    const auto datums = ipc::serialize(request);
    const auto* bytes = reinterpret_cast<const uint8_t*>(datums.data());
    return std::vector<uint8_t>(bytes, bytes + datums.size() * sizeof(ipc::FmqRequestDatum));
  };
  for (auto parts : std::vector<std::vector<std::vector<uint8_t>>>{
           {burstPacket(MeasureTiming::NO, false, false, 0)},
           {burstPacket(MeasureTiming::YES, false, true, 1)},
           {burstPacket(MeasureTiming::YES, true, false, 2)},
           {burstPacket(MeasureTiming::NO, false, false, 9)},
           {burstPacket(MeasureTiming::NO, false, true, 3),
            burstPacket(MeasureTiming::YES, true, false, 0)}}) {
    writeFile(out / "burst" / std::to_string(burstSeeds++), fuzz::joinParts(parts));
  }
  spdlog::info("seeds: {} model, {} cache, {} tflite, {} session, {} burst", counts[0], counts[1],
               counts[2], counts[3], burstSeeds);
  return 0;
}
