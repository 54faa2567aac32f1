// The bounds-checked writer/reader: round trips, and garbage that must never make the reader
// read out of bounds (run under ASan in CI).
#include "hal/serialization.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nnhal::hal {
namespace {

TEST(SerializationTest, RoundTripsEveryKind) {
  ByteWriter out;
  out.putU8(7);
  out.putU16(0xBEEF);
  out.putU32(0xDEADBEEF);
  out.putU64(0x0123456789ABCDEFull);
  out.putI32(-5);
  out.putF32(1.5f);
  out.putString("hello");
  out.putU32Vector({1, 2, 3});
  const uint8_t blob[] = {9, 8, 7};
  out.putBlob(blob);
  out.alignTo(16);
  EXPECT_EQ(out.size() % 16, 0u);
  out.putU8(1);

  ByteReader in(out.buffer());
  EXPECT_EQ(in.getU8(), 7);
  EXPECT_EQ(in.getU16(), 0xBEEF);
  EXPECT_EQ(in.getU32(), 0xDEADBEEFu);
  EXPECT_EQ(in.getU64(), 0x0123456789ABCDEFull);
  EXPECT_EQ(in.getI32(), -5);
  EXPECT_EQ(in.getF32(), 1.5f);
  EXPECT_EQ(in.getString(100), "hello");
  EXPECT_EQ(in.getU32Vector(10), (std::vector<uint32_t>{1, 2, 3}));
  const uint64_t length = in.readLength(100);
  ASSERT_EQ(length, 3u);
  const auto bytes = in.getBytes(length);
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.end()), (std::vector<uint8_t>{9, 8, 7}));
  in.alignTo(16);
  EXPECT_EQ(in.getU8(), 1);
  EXPECT_TRUE(in.ok()) << in.error();
  EXPECT_TRUE(in.atEnd());
}

TEST(SerializationTest, ReadingPastTheEndFailsAndLatches) {
  const uint8_t data[] = {1, 2, 3};
  ByteReader in(data);
  EXPECT_EQ(in.getU32(), 0u);
  EXPECT_FALSE(in.ok());
  EXPECT_NE(in.error().find("truncated"), std::string::npos);
  EXPECT_EQ(in.getU8(), 0);  // latched: nothing more is read
  EXPECT_EQ(in.position(), 0u);
}

TEST(SerializationTest, CountsAreCheckedBeforeAnythingIsAllocated) {
  ByteWriter out;
  out.putU32(0xFFFFFFFF);  // a huge count with nothing behind it
  {
    ByteReader in(out.buffer());
    EXPECT_EQ(in.readCount(UINT32_MAX, 4), 0u);
    EXPECT_FALSE(in.ok());
  }
  {
    ByteReader in(out.buffer());
    EXPECT_TRUE(in.getU32Vector(UINT32_MAX).empty());
    EXPECT_FALSE(in.ok());
  }
  ByteWriter small;
  small.putU32(5);
  for (int i = 0; i < 5; ++i) small.putU32(1);
  ByteReader limited(small.buffer());
  EXPECT_EQ(limited.readCount(4, 4), 0u);  // over the caller's limit
  EXPECT_FALSE(limited.ok());
}

TEST(SerializationTest, LengthsAndStringsAreBounded) {
  ByteWriter out;
  out.putU64(1000);
  out.putU8(1);
  ByteReader in(out.buffer());
  EXPECT_EQ(in.readLength(UINT64_MAX), 0u);
  EXPECT_FALSE(in.ok());

  ByteWriter text;
  text.putString(std::string(50, 'x'));
  ByteReader tooLong(text.buffer());
  EXPECT_EQ(tooLong.getString(10), "");
  EXPECT_FALSE(tooLong.ok());
}

TEST(SerializationTest, NonZeroPaddingIsRejected) {
  const uint8_t data[] = {1, 0xFF, 0, 0};
  ByteReader in(data);
  in.getU8();
  in.alignTo(4);
  EXPECT_FALSE(in.ok());
}

}  // namespace
}  // namespace nnhal::hal
