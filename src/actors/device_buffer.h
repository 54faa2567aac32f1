// actors/device_buffer.h — the embedded driver's driver-managed buffers (nnhal/buffer.h) and
// the table that names them by token.
//
// A DeviceBuffer holds its content as an immutable snapshot behind a shared pointer: a reader
// (copyTo, an execution input) takes the current snapshot and reads it without a lock held;
// a writer (copyFrom, an execution output) builds a new snapshot and publishes it. So readers
// never wait for writers, a write never changes bytes a reader is using, and concurrent writes
// leave one of them (the HAL's "unspecified" content).
//
// The BufferTable belongs to the DeviceActor. Tokens count up from 1, skip 0 and every live
// token, and are released when their buffer is destroyed (buffers keep the table alive).
//
// Thread safety: every method of both classes may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "hal/buffer_roles.h"
#include "nnhal/buffer.h"

namespace nnhal::actors {

/// One published content of a buffer: `size` bytes (of `capacity`) and their dimensions.
struct BufferContent {
  explicit BufferContent(size_t capacity);
  std::unique_ptr<uint8_t[]> bytes;
  size_t capacity = 0;
  size_t size = 0;
  std::vector<uint32_t> dimensions;
};

class BufferTable;

class DeviceBuffer final : public Buffer {
 public:
  /// Made by BufferTable::create, which reserved `token` for it.
  DeviceBuffer(hal::BufferShape shape, std::shared_ptr<BufferTable> table, uint32_t token);
  ~DeviceBuffer() override;

  Result<void> copyTo(const Memory& dst) override;
  Result<void> copyFrom(const Memory& src, const std::vector<uint32_t>& dimensions) override;

  /// Type, quantization, dimensions given at allocation (0 = unknown) and roles.
  const hal::BufferShape& shape() const { return shape_; }
  /// True when the buffer serves (prepared model `modelId`, input or output, `ioIndex`).
  bool hasRole(uint64_t modelId, bool input, uint32_t ioIndex) const;
  /// The current content, or null while uninitialized.
  std::shared_ptr<const BufferContent> content() const;
  /// Publishes `content` (null: uninitialized again).
  void publish(std::shared_ptr<const BufferContent> content);

  uint32_t token() const { return token_; }

 private:
  const hal::BufferShape shape_;
  const std::shared_ptr<BufferTable> table_;
  const uint32_t token_;
  mutable std::mutex mutex_;
  std::shared_ptr<const BufferContent> content_;
};

class BufferTable : public std::enable_shared_from_this<BufferTable> {
 public:
  explicit BufferTable(uint32_t maxBuffers) : maxBuffers_(maxBuffers) {}

  /// A new buffer of `shape` with a fresh token. Errors: RESOURCE_EXHAUSTED_TRANSIENT when
  /// maxBuffers buffers are alive; DEVICE_UNAVAILABLE once closed.
  Result<AllocatedBuffer> create(hal::BufferShape shape);
  /// The live buffer named by `token`, or null.
  std::shared_ptr<DeviceBuffer> find(uint32_t token) const;
  /// A new identity for a prepared model of this device (BufferRole resolution).
  uint64_t newModelId() { return nextModelId_.fetch_add(1, std::memory_order_relaxed); }
  /// Refuses new buffers (the device is shutting down); live ones keep working.
  void close();
  size_t size() const;
  /// Frees `token` for reuse (the destructor of its buffer calls it).
  void release(uint32_t token);

 private:
  const uint32_t maxBuffers_;
  std::atomic<uint64_t> nextModelId_{1};
  mutable std::mutex mutex_;
  bool closed_ = false;
  uint32_t next_ = 1;
  std::unordered_map<uint32_t, std::weak_ptr<DeviceBuffer>> buffers_;
};

}  // namespace nnhal::actors
