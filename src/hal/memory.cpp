// Shared-memory pools backed by memfd (ashmem, hardware_buffer_blob) or a caller's
// descriptor (mmap_fd), and the driver's process-local pools (process_memory.h). One
// mapping per pool, released with the last handle.
#include "nnhal/memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include "hal/pool_io.h"
#include "hal/process_memory.h"

namespace nnhal {

struct Memory::Impl {
  int fd = -1;
  MemoryKind kind = MemoryKind::ASHMEM;
  uint8_t* mapBase = nullptr;  // page-aligned start of the mapping
  size_t mapLength = 0;
  size_t offset = 0;  // region offset inside the fd
  size_t size = 0;
  bool writable = true;
  uint64_t id = 0;
  bool ownsMapping = true;            // false for borrowed bytes (nothing to unmap)
  bool fixedSize = false;             // a descriptor sealed with F_SEAL_SHRINK
  bool fromClient = false;            // adopted from another process (hal/pool_io.h)
  std::shared_ptr<const void> owner;  // borrowed bytes: what keeps them alive

  /// Mapped, or a client file accessed only with pread/pwrite (hal/pool_io.h).
  bool mapped() const { return mapBase != nullptr; }
  uint8_t* data() const { return mapped() ? mapBase + (offset % pageSize()) : nullptr; }

  static size_t pageSize() {
    static const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return kPage;
  }

  ~Impl() {
    if (mapBase != nullptr && ownsMapping) munmap(mapBase, mapLength);
    if (fd >= 0) close(fd);
  }
};

namespace {

uint64_t nextMemoryId() {
  static std::atomic<uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

Result<Memory> Memory::create(size_t size, MemoryKind kind) {
  if (size == 0) return invalidArgument("Memory::create: size must be > 0");
  if (kind == MemoryKind::MMAP_FD) {
    return invalidArgument("Memory::create: mmap_fd memory wraps an existing fd; use fromFd");
  }
  if (kind == MemoryKind::HARDWARE_BUFFER_BLOB && size > std::numeric_limits<uint32_t>::max()) {
    return invalidArgument("Memory::create: a BLOB hardware buffer is at most 4 GiB - 1");
  }
  const char* name = kind == MemoryKind::ASHMEM ? "nnhal-ashmem" : "nnhal-ahwb-blob";
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, errnoText("memfd_create"));
  auto impl = std::make_shared<Impl>();
  impl->fd = fd;
  impl->kind = kind;
  impl->size = size;
  impl->id = nextMemoryId();
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, errnoText("ftruncate"));
  }
  // Like ashmem, the size is fixed once created: nobody may shrink it under a mapping.
  impl->fixedSize = fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0;
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, errnoText("mmap"));
  impl->mapBase = static_cast<uint8_t*>(base);
  impl->mapLength = size;
  return Memory(std::move(impl));
}

Result<Memory> Memory::createSealed(size_t size,
                                    const std::function<void(std::span<uint8_t>)>& fill,
                                    MemoryKind kind) {
  NNHAL_ASSIGN_OR_RETURN(Memory pool, create(size, kind));
  auto impl = std::const_pointer_cast<Impl>(pool.impl_);
  fill(std::span<uint8_t>(impl->mapBase, size));
  // F_SEAL_WRITE is refused while a writable shared mapping exists: drop it first.
  munmap(impl->mapBase, impl->mapLength);
  impl->mapBase = nullptr;
  if (fcntl(impl->fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, errnoText("sealing the pool"));
  }
  void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, impl->fd, 0);
  if (base == MAP_FAILED) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, errnoText("mmap"));
  }
  impl->mapBase = static_cast<uint8_t*>(base);
  impl->writable = false;
  return pool;
}

Result<Memory> Memory::fromFd(int fd, size_t size, size_t offset, MemoryKind kind, bool writable) {
  if (fd < 0) return invalidArgument("Memory::fromFd: invalid file descriptor");
  if (size == 0) return invalidArgument("Memory::fromFd: size must be > 0");
  if (offset > std::numeric_limits<size_t>::max() - size) {
    return invalidArgument("Memory::fromFd: offset + size overflows");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return invalidArgument(errnoText("Memory::fromFd: fstat"));
  // Devices, pipes and sockets have no fixed size and may fault at any offset.
  if (!S_ISREG(st.st_mode)) {
    return invalidArgument("Memory::fromFd: the descriptor is a " + hal::fileTypeName(st.st_mode) +
                           ", not a memfd or a regular file");
  }
  if (offset + size > static_cast<size_t>(st.st_size)) {
    return invalidArgument("Memory::fromFd: offset " + std::to_string(offset) + " + size " +
                           std::to_string(size) + " is past the end of the file (" +
                           std::to_string(st.st_size) + " bytes)");
  }
  int dupFd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dupFd < 0) return invalidArgument(errnoText("Memory::fromFd: dup"));
  auto impl = std::make_shared<Impl>();
  impl->fd = dupFd;
  impl->kind = kind;
  impl->size = size;
  impl->offset = offset;
  impl->writable = writable;
  impl->id = nextMemoryId();
  const size_t page = Impl::pageSize();
  const size_t alignedOffset = offset - offset % page;
  impl->mapLength = size + (offset - alignedOffset);
  const int prot = writable ? (PROT_READ | PROT_WRITE) : PROT_READ;
  void* base =
      mmap(nullptr, impl->mapLength, prot, MAP_SHARED, dupFd, static_cast<off_t>(alignedOffset));
  if (base == MAP_FAILED)
    return fail(ErrorStatus::GENERAL_FAILURE, errnoText("Memory::fromFd: mmap"));
  impl->mapBase = static_cast<uint8_t*>(base);
  const int seals = fcntl(dupFd, F_GET_SEALS);
  impl->fixedSize = seals >= 0 && (seals & F_SEAL_SHRINK) != 0;
  return Memory(std::move(impl));
}

namespace hal {

Memory MemoryAccess::borrowedAs(uint8_t* data, size_t size, bool writable,
                                std::shared_ptr<const void> owner) {
  auto impl = std::make_shared<Memory::Impl>();
  impl->mapBase = data;
  impl->mapLength = size;
  impl->size = size;
  impl->writable = writable;
  impl->id = nextMemoryId();
  impl->ownsMapping = false;  // the bytes belong to `owner`
  impl->owner = std::move(owner);
  return Memory(std::move(impl));
}

Memory MemoryAccess::borrowed(const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  // Read-only: nothing in the driver writes a Model pool or a buffer's published content.
  return borrowedAs(const_cast<uint8_t*>(data), size, false, std::move(owner));
}

Memory MemoryAccess::borrowedWritable(uint8_t* data, size_t size,
                                      std::shared_ptr<const void> owner) {
  return borrowedAs(data, size, true, std::move(owner));
}

Result<Memory> MemoryAccess::lazyZeros(size_t size) {
  if (size == 0) return invalidArgument("lazyZeroPool: size must be > 0");
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, errnoText("mmap"));
  }
  auto impl = std::make_shared<Memory::Impl>();
  impl->mapBase = static_cast<uint8_t*>(base);
  impl->mapLength = size;
  impl->size = size;
  impl->id = nextMemoryId();
  return Memory(std::move(impl));
}

Memory MemoryAccess::clientPool(int fd, MemoryKind kind, size_t size, size_t offset, bool writable,
                                uint8_t* mapBase, size_t mapLength) {
  auto impl = std::make_shared<Memory::Impl>();
  impl->fd = fd;
  impl->kind = kind;
  impl->size = size;
  impl->offset = offset;
  impl->writable = writable;
  impl->mapBase = mapBase;
  impl->mapLength = mapLength;
  impl->id = nextMemoryId();
  impl->fixedSize = mapBase != nullptr;  // mapped only when sealed against shrinking
  impl->fromClient = true;
  return Memory(std::move(impl));
}

bool usableInPlace(const Memory& pool) {
  // The lifetime token shares ownership of the pool's Impl: its pointer is that Impl.
  const std::shared_ptr<const void> token = pool.lifetimeToken().lock();
  const auto* impl = static_cast<const Memory::Impl*>(token.get());
  if (impl == nullptr || !impl->mapped() || impl->fromClient) return false;
  return impl->fd < 0 || impl->fixedSize;
}

Memory borrowedPool(const uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  return MemoryAccess::borrowed(data, size, std::move(owner));
}

Memory writableBorrowedPool(uint8_t* data, size_t size, std::shared_ptr<const void> owner) {
  return MemoryAccess::borrowedWritable(data, size, std::move(owner));
}

Result<Memory> lazyZeroPool(size_t size) { return MemoryAccess::lazyZeros(size); }

}  // namespace hal

MemoryKind Memory::kind() const { return impl_ ? impl_->kind : MemoryKind::ASHMEM; }
size_t Memory::size() const { return impl_ ? impl_->size : 0; }
size_t Memory::offset() const { return impl_ ? impl_->offset : 0; }
int Memory::fd() const { return impl_ ? impl_->fd : -1; }
bool Memory::writable() const { return impl_ && impl_->writable; }
uint8_t* Memory::data() const { return impl_ ? impl_->data() : nullptr; }
uint64_t Memory::id() const { return impl_ ? impl_->id : 0; }

HardwareBufferDesc Memory::hardwareBufferDesc() const {
  HardwareBufferDesc desc;
  desc.width = static_cast<uint32_t>(size());
  return desc;
}

}  // namespace nnhal
