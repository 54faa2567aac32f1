// ipc/client/remote_buffer.h — a driver-managed buffer of nnhald (nnhal/buffer.h) and the
// client side of allocate.
//
// The buffer lives in the daemon, held by this connection: its token is valid in this
// connection's requests only, and it goes when the RemoteBuffer is destroyed (a ReleaseBuffer
// message) or the connection closes. copyTo and copyFrom send the client's Memory with its
// descriptor; the daemon's driver does the copy and its status comes back.
#pragma once

#include <memory>
#include <vector>

#include "ipc/client/remote_device.h"
#include "nnhal/buffer.h"

namespace nnhal::ipc {

class RemoteBuffer final : public Buffer {
 public:
  RemoteBuffer(std::shared_ptr<Link> link, uint64_t handle)
      : link_(std::move(link)), handle_(handle) {}
  ~RemoteBuffer() override;

  Result<void> copyTo(const Memory& dst) override;
  Result<void> copyFrom(const Memory& src, const std::vector<uint32_t>& dimensions) override;

  /// IDevice::allocate over `link`: each prepared model must be a RemotePreparedModel of the
  /// same connection (anything else is INVALID_ARGUMENT, decided here).
  static Result<AllocatedBuffer> allocate(
      const std::shared_ptr<Link>& link, const BufferDesc& desc,
      const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
      const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles);

 private:
  Result<void> copy(MessageType type, const Memory& memory,
                    const std::vector<uint32_t>& dimensions);

  std::shared_ptr<Link> link_;
  const uint64_t handle_;
};

}  // namespace nnhal::ipc
