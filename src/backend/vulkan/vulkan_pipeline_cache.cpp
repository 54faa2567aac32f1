#include "backend/vulkan/vulkan_pipeline_cache.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <system_error>

namespace nnhal::backend::vulkan {

bool pipelineCacheFits(std::span<const uint8_t> blob, const PhysicalDeviceDescription& device,
                       std::string* why) {
  VkPipelineCacheHeaderVersionOne header{};
  if (blob.size() < sizeof header) {
    *why = "shorter than a pipeline cache header";
    return false;
  }
  std::memcpy(&header, blob.data(), sizeof header);
  if (header.headerSize < sizeof header || header.headerSize > blob.size() ||
      header.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
    *why = "not a version-one pipeline cache header";
    return false;
  }
  if (header.vendorID != device.vendorId || header.deviceID != device.deviceId ||
      std::memcmp(header.pipelineCacheUUID, device.pipelineCacheUuid.data(), VK_UUID_SIZE) != 0) {
    *why = "made by another device or driver";
    return false;
  }
  return true;
}

std::vector<uint8_t> loadPipelineCache(const std::filesystem::path& file,
                                       const PhysicalDeviceDescription& device) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return {};  // none yet
  if (size > kMaxPipelineCacheBytes) {
    spdlog::info("nnhal-vulkan: {} ignored: {} bytes, more than {}", file.string(), size,
                 kMaxPipelineCacheBytes);
    return {};
  }
  std::vector<uint8_t> blob(static_cast<size_t>(size));
  std::ifstream in(file, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(blob.data()), static_cast<std::streamsize>(blob.size()))) {
    spdlog::info("nnhal-vulkan: {} ignored: cannot read it", file.string());
    return {};
  }
  std::string why;
  if (!pipelineCacheFits(blob, device, &why)) {
    spdlog::info("nnhal-vulkan: {} ignored: {}", file.string(), why);
    return {};
  }
  return blob;
}

void savePipelineCache(const std::filesystem::path& file, std::span<const uint8_t> blob) {
  std::error_code made;
  std::filesystem::create_directories(file.parent_path(), made);
  const std::filesystem::path temporary =
      file.string() + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(blob.data()),
              static_cast<std::streamsize>(blob.size()));
    if (!out) {
      spdlog::warn("nnhal-vulkan: cannot write the pipeline cache {}", temporary.string());
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      return;
    }
  }
  std::error_code ec;
  // Private to the driver, like the compilation cache's files.
  std::filesystem::permissions(
      temporary, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    spdlog::warn("nnhal-vulkan: cannot replace {}: {}", file.string(), ec.message());
    std::filesystem::remove(temporary, ec);
  }
}

}  // namespace nnhal::backend::vulkan
