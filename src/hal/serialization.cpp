#include "hal/serialization.h"

#include <utility>

namespace nnhal::hal {

void ByteWriter::putBytes(std::span<const uint8_t> bytes) {
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void ByteWriter::putBlob(std::span<const uint8_t> bytes) {
  putU64(bytes.size());
  putBytes(bytes);
}

void ByteWriter::putString(std::string_view text) {
  putU32(static_cast<uint32_t>(text.size()));
  buffer_.insert(buffer_.end(), text.begin(), text.end());
}

void ByteWriter::putU32Vector(const std::vector<uint32_t>& values) {
  putU32(static_cast<uint32_t>(values.size()));
  for (uint32_t v : values) putU32(v);
}

void ByteWriter::alignTo(size_t alignment) {
  const size_t rest = buffer_.size() % alignment;
  if (rest != 0) buffer_.resize(buffer_.size() + (alignment - rest), 0);
}

void ByteWriter::patchU64(size_t offset, uint64_t value) {
  if (offset + sizeof(value) <= buffer_.size()) {
    std::memcpy(buffer_.data() + offset, &value, sizeof(value));
  }
}

bool ByteReader::needFailed(size_t count) {
  if (!ok()) return false;
  failWith("truncated: needs " + std::to_string(count) + " bytes at offset " + std::to_string(at_) +
           ", " + std::to_string(remaining()) + " left");
  return false;
}

void ByteReader::failWith(std::string why) {
  if (error_.empty()) error_ = why.empty() ? std::string("malformed") : std::move(why);
}

uint32_t ByteReader::readCount(uint32_t limit, size_t minElementBytes) {
  const uint32_t count = getU32();
  if (!ok()) return 0;
  if (count > limit) {
    failWith("count " + std::to_string(count) + " at offset " + std::to_string(at_ - 4) +
             " exceeds the limit " + std::to_string(limit));
    return 0;
  }
  if (minElementBytes > 0 && count > remaining() / minElementBytes) {
    failWith("count " + std::to_string(count) + " at offset " + std::to_string(at_ - 4) +
             " cannot fit in the " + std::to_string(remaining()) + " bytes left");
    return 0;
  }
  return count;
}

uint64_t ByteReader::readLength(uint64_t limit) {
  const uint64_t length = getU64();
  if (!ok()) return 0;
  if (length > limit || length > remaining()) {
    failWith("length " + std::to_string(length) + " at offset " + std::to_string(at_ - 8) +
             " exceeds the limit or the " + std::to_string(remaining()) + " bytes left");
    return 0;
  }
  return length;
}

std::span<const uint8_t> ByteReader::getBytes(uint64_t length) {
  if (length > remaining()) {
    need(remaining() + 1);  // records the failure
    return {};
  }
  if (!ok()) return {};
  const std::span<const uint8_t> out = bytes_.subspan(at_, static_cast<size_t>(length));
  at_ += static_cast<size_t>(length);
  return out;
}

std::string ByteReader::getString(uint32_t limit) {
  const uint32_t length = readCount(limit, 1);
  const std::span<const uint8_t> bytes = getBytes(length);
  return std::string(bytes.begin(), bytes.end());
}

std::vector<uint32_t> ByteReader::getU32Vector(uint32_t limit) {
  const uint32_t count = readCount(limit, sizeof(uint32_t));
  // readCount checked that the values fit in what is left.
  const std::span<const uint8_t> bytes = getBytes(uint64_t{count} * sizeof(uint32_t));
  if (!ok()) return {};
  std::vector<uint32_t> values(count);
  if (count > 0) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

void ByteReader::alignTo(size_t alignment) {
  const size_t rest = at_ % alignment;
  if (rest == 0) return;
  const std::span<const uint8_t> padding = getBytes(alignment - rest);
  for (uint8_t b : padding) {
    if (b != 0) {
      failWith("non-zero padding at offset " + std::to_string(at_));
      return;
    }
  }
}

}  // namespace nnhal::hal
