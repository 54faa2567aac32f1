// Driver-managed buffers through nnhald (the MemoryDomainTests themselves run in tests/vts):
// what only the daemon adds. A token works on the connection that allocated it and nowhere
// else, a departed client's buffers are released, the per-client quota holds, and copies from
// memory the daemon cannot use safely are refused.
#define _GNU_SOURCE 1
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "ipc/client/remote_buffer.h"
#include "ipc/client/remote_device.h"
#include "ipc_test_util.h"

namespace nnhal::ipc {
namespace {

using namespace testing;
using namespace std::chrono_literals;

/// A float32 [4] memory holding `values`.
Memory floats(std::vector<float> values) {
  Memory memory = *Memory::create(16);
  std::memcpy(memory.data(), values.data(), 16);
  return memory;
}

class RemoteBuffers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Daemon({"--max-buffers", "3"}); }
  static void TearDownTestSuite() { delete daemon_; }
  void SetUp() override { ASSERT_TRUE(daemon_->running()); }

  std::shared_ptr<Device> connectDevice(const fs::path& socket) {
    auto device = connect(socket);
    EXPECT_TRUE(device) << device.error().message;
    return device ? *device : nullptr;
  }
  static std::shared_ptr<PreparedModel> prepare(Device& device) {
    auto prepared = device.prepareModel(addModel());
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? *prepared : nullptr;
  }

  static Daemon* daemon_;
};

Daemon* RemoteBuffers::daemon_ = nullptr;

TEST_F(RemoteBuffers, ATokenWorksOnlyOnTheConnectionThatAllocatedIt) {
  auto owner = connectDevice(daemon_->socket());
  auto other = connectDevice(daemon_->socket());
  ASSERT_TRUE(owner && other);
  auto ownerModel = prepare(*owner);
  auto otherModel = prepare(*other);
  auto buffer = owner->allocate({}, {ownerModel}, {{0, 0, 1.0f}}, {});
  ASSERT_TRUE(buffer) << buffer.error().message;
  ASSERT_TRUE(buffer->buffer->copyFrom(floats({1, 2, 3, 4}), {}));

  auto run = [&](PreparedModel& model) {
    Memory pool = *Memory::create(64);
    std::memcpy(pool.data(), floats({10, 20, 30, 40}).data(), 16);
    Request request;
    request.pools = {pool, MemoryDomainToken{buffer->token}};
    request.inputs = {{false, {1, 0, 0}, {}}, {false, {0, 0, 16}, {}}};
    request.outputs = {{false, {0, 16, 16}, {}}};
    auto result = model.executeSynchronously(request);
    if (result) {
      EXPECT_EQ(reinterpret_cast<const float*>(pool.data() + 16)[3], 44.0f);
    }
    return result;
  };
  auto own = run(*ownerModel);
  EXPECT_TRUE(own) << own.error().message;
  auto stolen = run(*otherModel);
  ASSERT_FALSE(stolen);
  EXPECT_EQ(stolen.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(stolen.error().message.find("allocated on this connection"), std::string::npos)
      << stolen.error().message;
  // Another connection's prepared model cannot take part in an allocation either.
  auto mixed = owner->allocate({}, {ownerModel, otherModel}, {{0, 0, 1.0f}, {1, 0, 1.0f}}, {});
  ASSERT_FALSE(mixed);
  EXPECT_EQ(mixed.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST_F(RemoteBuffers, AllocateRefusesPreparedModelsThatAreNotThisConnections) {
  auto owner = connectDevice(daemon_->socket());
  ASSERT_NE(owner, nullptr);
  auto embedded = createDevice({});
  ASSERT_TRUE(embedded) << embedded.error().message;
  auto embeddedModel = prepare(**embedded);
  ASSERT_NE(embeddedModel, nullptr);
  // An embedded driver's prepared model: not one of this connection's.
  auto foreign = owner->allocate({}, {embeddedModel}, {{0, 0, 1.0f}}, {});
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(foreign.error().message.find("preparedModels[0]: not a prepared model of this device"),
            std::string::npos)
      << foreign.error().message;
  // A null one.
  auto null = owner->allocate({}, {nullptr}, {{0, 0, 1.0f}}, {});
  ASSERT_FALSE(null);
  EXPECT_NE(null.error().message.find("preparedModels[0]: null"), std::string::npos)
      << null.error().message;
  // A model of this connection released before: its successor at the same connection is
  // found, the released one's handle is not kept.
  auto first = prepare(*owner);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(owner->allocate({}, {first}, {{0, 0, 1.0f}}, {}));
  first.reset();
  auto second = prepare(*owner);
  ASSERT_NE(second, nullptr);
  auto again = owner->allocate({}, {second}, {{0, 0, 1.0f}}, {});
  EXPECT_TRUE(again) << again.error().message;
}

TEST_F(RemoteBuffers, ADepartedClientsBuffersAreReleased) {
  auto observer = connectDevice(daemon_->adminSocket());
  ASSERT_NE(observer, nullptr);
  const uint64_t before = statsOf(observer).buffers;
  {
    auto client = connectDevice(daemon_->socket());
    auto model = prepare(*client);
    auto a = client->allocate({}, {model}, {{0, 0, 1.0f}}, {});
    auto b = client->allocate({}, {model}, {}, {{0, 0, 1.0f}});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(statsOf(observer).buffers, before + 2);
    a->buffer.reset();  // ReleaseBuffer
    for (int i = 0; i < 200 && statsOf(observer).buffers != before + 1; ++i) {
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(statsOf(observer).buffers, before + 1);
    // The client goes away still holding b (its device and the buffer share the connection;
    // dropping the device alone keeps it open, so close everything).
  }
  bool released = false;
  for (int i = 0; i < 400 && !released; ++i) {
    released = statsOf(observer).buffers == before;
    if (!released) std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(released) << "the departed client's buffer is still held";
}

TEST_F(RemoteBuffers, QuotaOfBuffersPerClient) {
  auto client = connectDevice(daemon_->socket());
  auto model = prepare(*client);
  std::vector<AllocatedBuffer> held;
  for (int i = 0; i < 3; ++i) {
    auto buffer = client->allocate({}, {model}, {{0, 0, 1.0f}}, {});
    ASSERT_TRUE(buffer) << buffer.error().message;
    held.push_back(*buffer);
  }
  auto refused = client->allocate({}, {model}, {{0, 0, 1.0f}}, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(refused.error().message.find("quota"), std::string::npos) << refused.error().message;
  // Another client has its own quota.
  auto other = connectDevice(daemon_->socket());
  auto otherModel = prepare(*other);
  EXPECT_TRUE(other->allocate({}, {otherModel}, {{0, 0, 1.0f}}, {}));
  held.pop_back();
  std::this_thread::sleep_for(50ms);  // ReleaseBuffer has no reply
  EXPECT_TRUE(client->allocate({}, {model}, {{0, 0, 1.0f}}, {}));
}

TEST_F(RemoteBuffers, UnknownBufferHandlesAndUnsafeMemoriesAreRefused) {
  auto device = connectDevice(daemon_->socket());
  auto model = prepare(*device);
  auto allocated = device->allocate({}, {model}, {{0, 0, 1.0f}}, {});
  ASSERT_TRUE(allocated);
  // A handle this connection never received.
  RemoteBuffer forged(dynamic_cast<RemoteDevice&>(*device).link(), 999);
  auto copied = forged.copyFrom(floats({1, 2, 3, 4}), {});
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT);
  // An ashmem pool that is not sealed against shrinking could fault the daemon's reads.
  const int fd = memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 16), 0);
  auto unsealed = Memory::fromFd(fd, 16, 0, MemoryKind::ASHMEM);
  ::close(fd);
  ASSERT_TRUE(unsealed) << unsealed.error().message;
  auto refused = allocated->buffer->copyFrom(*unsealed, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::GENERAL_FAILURE) << refused.error().message;
  // The buffer still works.
  EXPECT_TRUE(allocated->buffer->copyFrom(floats({1, 2, 3, 4}), {}));
  const Memory out = *Memory::create(16);
  ASSERT_TRUE(allocated->buffer->copyTo(out));
  EXPECT_EQ(reinterpret_cast<const float*>(out.data())[2], 3.0f);
}

}  // namespace
}  // namespace nnhal::ipc
