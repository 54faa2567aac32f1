// backend/vulkan/vulkan_pipeline_cache.h — the GPU device's pipeline cache on disk: the
// driver's compiled shaders (VkPipelineCache data), kept in the device's state directory so
// that a new process does not compile them again.
//
// The file is the driver's own blob. It lives in the driver's state directory (nnhald's
// cache directory, which no client can write), never in a client's cache files: a blob
// handed to a Vulkan driver is trusted by it. Before use its header
// (VkPipelineCacheHeaderVersionOne) must name this device: header size, version 1, vendor
// and device id, pipelineCacheUUID; a cache from another GPU or driver is ignored (and
// replaced), never a crash. Files over kMaxPipelineCacheBytes are ignored.
//
// Thread safety: free functions; concurrent writers (two processes of one device) each
// write a file of their own and rename it into place, so a reader sees one whole blob.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "backend/vulkan/vulkan_context.h"

namespace nnhal::backend::vulkan {

inline constexpr size_t kMaxPipelineCacheBytes = size_t{64} << 20;
inline constexpr const char* kPipelineCacheFileName = "vulkan_pipeline_cache.bin";

/// Whether `blob` starts with a pipeline cache header of `device`; `why` says why not.
bool pipelineCacheFits(std::span<const uint8_t> blob, const PhysicalDeviceDescription& device,
                       std::string* why);

/// The blob in `file` when it fits `device`, else empty (absent, unreadable, too large or
/// made elsewhere: logged at info level).
std::vector<uint8_t> loadPipelineCache(const std::filesystem::path& file,
                                       const PhysicalDeviceDescription& device);

/// Replaces `file` with `blob` (a file of this process's own, renamed into place). Failures
/// are logged and otherwise ignored: the cache only saves time.
void savePipelineCache(const std::filesystem::path& file, std::span<const uint8_t> blob);

}  // namespace nnhal::backend::vulkan
