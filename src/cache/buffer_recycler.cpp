#include "cache/buffer_recycler.h"

#include <new>
#include <string>

namespace nnhal::cache {
namespace {

constexpr std::align_val_t kAlign{AlignedBuffer::kAlignment};

void release(uint8_t* data) { ::operator delete(data, kAlign); }

}  // namespace

std::shared_ptr<BufferRecycler> BufferRecycler::create(Limits limits) {
  return std::shared_ptr<BufferRecycler>(new BufferRecycler(limits));
}

BufferRecycler::~BufferRecycler() {
  for (const Kept& kept : kept_) release(kept.data);
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
    data = static_cast<uint8_t*>(::operator new(size, kAlign, std::nothrow));
    if (data == nullptr) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "cannot allocate " + std::to_string(size) + " bytes");
    }
    capacity = size;
  }
  std::weak_ptr<BufferRecycler> home = weak_from_this();
  auto owned = std::shared_ptr<uint8_t>(data, [home, capacity](uint8_t* bytes) {
    if (auto recycler = home.lock(); recycler != nullptr && recycler->keep(bytes, capacity)) {
      return;
    }
    release(bytes);
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
    release(kept_.front().data);
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
