// hal/serialization.h — a small, bounds-checked little-endian binary writer and reader.
//
// ByteWriter appends fixed-size integers, floats, length-prefixed byte strings and zero
// padding to a growing buffer. ByteReader reads them back from a span and never reads past
// its end: every read checks the remaining bytes first, and every count or length read with
// readCount/readLength is checked against the bytes left (given a minimum size per element)
// and against a caller-supplied limit before anything is allocated. The first failure
// latches: later reads return zero values and ok() stays false, so a parser may read a
// whole structure and check once.
//
// Thread safety: plain objects; one thread at a time.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

static_assert(std::endian::native == std::endian::little,
              "the cache format is little-endian; add byte swapping for big-endian hosts");

namespace nnhal::hal {

class ByteWriter {
 public:
  ByteWriter() = default;
  /// Reserves room for `bytes` more bytes.
  void reserve(size_t bytes) { buffer_.reserve(buffer_.size() + bytes); }

  /// Appends the bytes of an arithmetic value (little-endian).
  template <typename T>
  requires std::is_arithmetic_v<T>
  void put(T value) {
    const size_t at = buffer_.size();
    buffer_.resize(at + sizeof(T));
    std::memcpy(buffer_.data() + at, &value, sizeof(T));
  }
  void putU8(uint8_t v) { put(v); }
  void putU16(uint16_t v) { put(v); }
  void putU32(uint32_t v) { put(v); }
  void putU64(uint64_t v) { put(v); }
  void putI32(int32_t v) { put(v); }
  void putF32(float v) { put(v); }
  /// Appends raw bytes (no length).
  void putBytes(std::span<const uint8_t> bytes);
  /// Appends a u64 length and the bytes.
  void putBlob(std::span<const uint8_t> bytes);
  /// Appends a u32 length and the characters.
  void putString(std::string_view text);
  /// Appends a u32 count and the values as u32.
  void putU32Vector(const std::vector<uint32_t>& values);
  /// Appends zero bytes until size() is a multiple of `alignment`.
  void alignTo(size_t alignment);
  /// Overwrites 8 bytes at `offset` (for lengths known only later).
  void patchU64(size_t offset, uint64_t value);

  size_t size() const { return buffer_.size(); }
  std::vector<uint8_t>& buffer() { return buffer_; }
  std::vector<uint8_t> take() { return std::move(buffer_); }

 private:
  std::vector<uint8_t> buffer_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  /// Reads an arithmetic value; zero (and failure) past the end.
  template <typename T>
  requires std::is_arithmetic_v<T> T get() {
    T value{};
    if (!need(sizeof(T))) return value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  uint8_t getU8() { return get<uint8_t>(); }
  uint16_t getU16() { return get<uint16_t>(); }
  uint32_t getU32() { return get<uint32_t>(); }
  uint64_t getU64() { return get<uint64_t>(); }
  int32_t getI32() { return get<int32_t>(); }
  float getF32() { return get<float>(); }

  /// Reads a u32 count of elements that each take at least `minElementBytes` bytes further
  /// on; fails (returning 0) when the count exceeds `limit` or cannot fit in what is left.
  uint32_t readCount(uint32_t limit, size_t minElementBytes);
  /// Reads a u64 byte length; fails when above `limit` or longer than what is left.
  uint64_t readLength(uint64_t limit);
  /// Returns the next `length` bytes (a view into the input) and skips them.
  std::span<const uint8_t> getBytes(uint64_t length);
  /// Reads a u32-length string of at most `limit` characters.
  std::string getString(uint32_t limit);
  /// Reads a u32 count (at most `limit`) and that many u32 values.
  std::vector<uint32_t> getU32Vector(uint32_t limit);
  /// Skips zero padding up to the next multiple of `alignment` (fails on non-zero padding).
  void alignTo(size_t alignment);

  /// Marks the reader failed with `why` (the first reason is kept).
  void failWith(std::string why);

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t position() const { return at_; }
  size_t remaining() const { return bytes_.size() - at_; }
  bool atEnd() const { return at_ == bytes_.size(); }

 private:
  /// True when `count` more bytes can be read; otherwise records why (once) and fails.
  bool need(size_t count) {
    if (error_.empty() && count <= remaining()) [[likely]] {
      return true;
    }
    return needFailed(count);
  }
  bool needFailed(size_t count);
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
  std::string error_;
};

}  // namespace nnhal::hal
