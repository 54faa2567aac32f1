#include "cache/buffer_recycler.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace nnhal::cache {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

size_t roundUp(size_t value, size_t to) { return (value + to - 1) / to * to; }

/// A private anonymous mapping of `capacity` bytes (a multiple of kHugePage) starting on a
/// huge page boundary, marked for transparent huge pages: filling it then takes one page
/// fault per 2 MiB instead of one per 4 KiB, which is what a first load in a fresh process
/// pays most for. Null when the kernel refuses the mapping.
uint8_t* mapHuge(size_t capacity) {
  void* raw = mmap(nullptr, capacity + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t start = roundUp(base, kHugePage);
  if (start > base) munmap(raw, start - base);
  const size_t tail = kHugePage - (start - base);
  if (tail > 0) munmap(reinterpret_cast<void*>(start + capacity), tail);
  // Only a hint: without transparent huge pages the mapping works the same, page by page.
  (void)madvise(reinterpret_cast<void*>(start), capacity, MADV_HUGEPAGE);
  return reinterpret_cast<uint8_t*>(start);
}

void release(uint8_t* data, size_t capacity) { munmap(data, capacity); }

}  // namespace

std::shared_ptr<BufferRecycler> BufferRecycler::create(Limits limits) {
  return std::shared_ptr<BufferRecycler>(new BufferRecycler(limits));
}

BufferRecycler::~BufferRecycler() {
  for (const Kept& kept : kept_) release(kept.data, kept.capacity);
}

Result<AlignedBuffer> BufferRecycler::allocate(size_t size) {
  if (size < limits_.minBytes) return AlignedBuffer::allocate(size);
  uint8_t* data = nullptr;
  size_t capacity = 0;
  {
    std::lock_guard lock(mutex_);
    // The most recently returned buffer that fits without wasting more than half of it.
    for (size_t i = kept_.size(); i-- > 0;) {
      if (kept_[i].capacity >= size && kept_[i].capacity / 2 <= size) {
        data = kept_[i].data;
        capacity = kept_[i].capacity;
        keptBytes_ -= capacity;
        kept_.erase(kept_.begin() + static_cast<ptrdiff_t>(i));
        break;
      }
    }
  }
  if (data == nullptr) {
    if (size > SIZE_MAX - 2 * kHugePage) {  // the mapping could not even be described
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "cannot map " + std::to_string(size) + " bytes");
    }
    capacity = roundUp(size, kHugePage);
    data = mapHuge(capacity);
    if (data == nullptr) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "cannot map " + std::to_string(size) + " bytes: " + std::strerror(errno));
    }
  }
  std::weak_ptr<BufferRecycler> home = weak_from_this();
  auto owned = std::shared_ptr<uint8_t>(data, [home, capacity](uint8_t* bytes) {
    if (auto recycler = home.lock(); recycler != nullptr && recycler->keep(bytes, capacity)) {
      return;
    }
    release(bytes, capacity);
  });
  return AlignedBuffer::adopt(std::move(owned), size);
}

bool BufferRecycler::keep(uint8_t* data, size_t capacity) {
  std::lock_guard lock(mutex_);
  if (capacity > limits_.maxBytes) return false;
  // Room for this one: forget the oldest kept buffers if needed.
  while (!kept_.empty() &&
         (kept_.size() >= limits_.maxBuffers || keptBytes_ + capacity > limits_.maxBytes)) {
    keptBytes_ -= kept_.front().capacity;
    release(kept_.front().data, kept_.front().capacity);
    kept_.erase(kept_.begin());
  }
  if (kept_.size() >= limits_.maxBuffers) return false;
  kept_.push_back({data, capacity});
  keptBytes_ += capacity;
  return true;
}

size_t BufferRecycler::keptBuffers() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

size_t BufferRecycler::keptBytes() const {
  std::lock_guard lock(mutex_);
  return keptBytes_;
}

}  // namespace nnhal::cache
