#include "actors/device_buffer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "hal/operand_utils.h"
#include "hal/pool_io.h"

namespace nnhal::actors {

BufferContent::BufferContent(size_t capacity)
    : bytes(new (std::nothrow) uint8_t[std::max<size_t>(capacity, 1)]),
      capacity(bytes ? capacity : 0) {}

DeviceBuffer::DeviceBuffer(hal::BufferShape shape, std::shared_ptr<BufferTable> table,
                           uint32_t token)
    : shape_(std::move(shape)), table_(std::move(table)), token_(token) {}

DeviceBuffer::~DeviceBuffer() { table_->release(token_); }

bool DeviceBuffer::hasRole(uint64_t modelId, bool input, uint32_t ioIndex) const {
  for (const hal::ResolvedRole& role : shape_.roles) {
    if (role.modelId == modelId && role.input == input && role.ioIndex == ioIndex) return true;
  }
  return false;
}

std::shared_ptr<const BufferContent> DeviceBuffer::content() const {
  std::lock_guard lock(mutex_);
  return content_;
}

void DeviceBuffer::publish(std::shared_ptr<const BufferContent> content) {
  std::lock_guard lock(mutex_);
  content_ = std::move(content);
}

Result<void> DeviceBuffer::copyTo(const Memory& dst) {
  const std::shared_ptr<const BufferContent> content = this->content();
  if (!content) return fail(ErrorStatus::GENERAL_FAILURE, "copyTo: the buffer is uninitialized");
  if (!dst.valid()) return invalidArgument("copyTo: dst is not a valid memory");
  if (!dst.writable()) return invalidArgument("copyTo: dst is read-only");
  if (dst.size() != content->size) {
    return invalidArgument(fmt::format("copyTo: dst has {} bytes, the buffer's content {}",
                                       dst.size(), content->size));
  }
  auto written = hal::writePool(dst, 0, {content->bytes.get(), content->size});
  if (!written) return fail(ErrorStatus::GENERAL_FAILURE, "copyTo: " + written.error().message);
  return {};
}

Result<void> DeviceBuffer::copyFrom(const Memory& src, const std::vector<uint32_t>& dimensions) {
  if (!src.valid()) return invalidArgument("copyFrom: src is not a valid memory");
  const bool scalar = hal::isScalarType(shape_.type);
  if (scalar && !dimensions.empty()) {
    return invalidArgument("copyFrom: dimensions given for a scalar buffer");
  }
  if (std::find(dimensions.begin(), dimensions.end(), 0u) != dimensions.end()) {
    return invalidArgument(fmt::format("copyFrom: dimensions [{}] are not fully specified",
                                       fmt::join(dimensions, ", ")));
  }
  const auto combined = hal::combineDimensions(shape_.dimensions, dimensions);
  if (!combined) {
    return invalidArgument(fmt::format("copyFrom: dimensions [{}] conflict with the buffer's [{}]",
                                       fmt::join(dimensions, ", "),
                                       fmt::join(shape_.dimensions, ", ")));
  }
  if (!hal::hasFullySpecifiedShape(shape_.type, *combined)) {
    return invalidArgument(
        fmt::format("copyFrom: dimensions [{}] leave the buffer's shape [{}] not fully specified",
                    fmt::join(dimensions, ", "), fmt::join(*combined, ", ")));
  }
  const auto bytes = hal::byteSize(shape_.type, *combined);
  if (!bytes) return invalidArgument("copyFrom: the data size overflows 32 bits");
  if (src.size() != *bytes) {
    return invalidArgument(fmt::format("copyFrom: src has {} bytes, dimensions [{}] need {}",
                                       src.size(), fmt::join(*combined, ", "), *bytes));
  }
  auto content = std::make_shared<BufferContent>(*bytes);
  if (content->capacity < *bytes) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                fmt::format("copyFrom: cannot allocate {} bytes", *bytes));
  }
  // One read of the client's memory: what is published is what was read, whatever the
  // client writes to `src` meanwhile.
  auto read = hal::readPool(src, 0, {content->bytes.get(), *bytes});
  if (!read) return fail(ErrorStatus::GENERAL_FAILURE, "copyFrom: " + read.error().message);
  content->size = *bytes;
  content->dimensions = *combined;
  publish(std::move(content));
  return {};
}

Result<AllocatedBuffer> BufferTable::create(hal::BufferShape shape) {
  uint32_t token = 0;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the driver is shutting down");
    if (buffers_.size() >= maxBuffers_) {
      // What the device keeps for everyone, never how many others hold.
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  fmt::format("the device keeps at most {} driver-managed buffers for all its "
                              "clients; try again later",
                              maxBuffers_));
    }
    while (next_ == 0 || buffers_.contains(next_)) ++next_;  // never 0, never a live token
    token = next_++;
    buffers_.emplace(token, std::weak_ptr<DeviceBuffer>());
  }
  auto buffer = std::make_shared<DeviceBuffer>(std::move(shape), shared_from_this(), token);
  {
    std::lock_guard lock(mutex_);
    buffers_[token] = buffer;
  }
  return AllocatedBuffer{buffer, token};
}

std::shared_ptr<DeviceBuffer> BufferTable::find(uint32_t token) const {
  std::lock_guard lock(mutex_);
  const auto it = buffers_.find(token);
  return it == buffers_.end() ? nullptr : it->second.lock();
}

void BufferTable::release(uint32_t token) {
  std::lock_guard lock(mutex_);
  buffers_.erase(token);
}

void BufferTable::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

size_t BufferTable::size() const {
  std::lock_guard lock(mutex_);
  return buffers_.size();
}

}  // namespace nnhal::actors
