#include "cache/filling_buffer.h"

#include <algorithm>
#include <chrono>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace nnhal::cache {
namespace {

/// How long a waiter spins before it sleeps: about one chunk of a data cache read.
constexpr auto kSpinFor = std::chrono::microseconds(50);

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

Result<std::shared_ptr<FillingBuffer>> FillingBuffer::allocate(size_t size) {
  NNHAL_ASSIGN_OR_RETURN(AlignedBuffer bytes, AlignedBuffer::allocate(size));
  return toFill(std::move(bytes));
}

std::shared_ptr<FillingBuffer> FillingBuffer::toFill(AlignedBuffer bytes) {
  auto buffer = std::shared_ptr<FillingBuffer>(new FillingBuffer(std::move(bytes)));
  if (buffer->size() == 0) buffer->finish();
  return buffer;
}

std::shared_ptr<FillingBuffer> FillingBuffer::complete(AlignedBuffer bytes) {
  auto buffer = std::shared_ptr<FillingBuffer>(new FillingBuffer(std::move(bytes)));
  buffer->finish();
  return buffer;
}

void FillingBuffer::store(uint64_t state) {
  state_.store(state, std::memory_order_release);
  state_.notify_all();
}

uint64_t FillingBuffer::await(uint64_t seen) const {
  // Spin first: the producer publishes a chunk every few microseconds, and a futex sleep
  // and wake-up cost more than that. Bounded, and yielding, so that a producer sharing
  // this core still runs.
  const auto until = std::chrono::steady_clock::now() + kSpinFor;
  for (unsigned i = 1;; ++i) {
    const uint64_t now = state_.load(std::memory_order_acquire);
    if (now != seen) return now;
    if (i % 64 != 0) {
      relax();
      continue;
    }
    if (std::chrono::steady_clock::now() >= until) break;
    std::this_thread::yield();
  }
  state_.wait(seen, std::memory_order_acquire);
  return state_.load(std::memory_order_acquire);
}

Result<void> FillingBuffer::waitFor(size_t end) const {
  end = std::min(end, size());
  uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    if ((state & kCountMask) >= end || (state & kDone) != 0) return {};
    if ((state & kFailed) != 0) return nnhal::fail(ErrorStatus::GENERAL_FAILURE, failure_);
    state = await(state);
  }
}

Result<void> FillingBuffer::waitDone() const {
  uint64_t state = state_.load(std::memory_order_acquire);
  for (;;) {
    if ((state & kDone) != 0) return {};
    if ((state & kFailed) != 0) return nnhal::fail(ErrorStatus::GENERAL_FAILURE, failure_);
    state = await(state);
  }
}

void FillingBuffer::publish(size_t filled) {
  const uint64_t state = state_.load(std::memory_order_relaxed);
  if ((state & (kDone | kFailed)) != 0) return;
  filled = std::min(filled, size());
  if (filled <= (state & kCountMask)) return;
  store(filled);
}

void FillingBuffer::finish() {
  const uint64_t state = state_.load(std::memory_order_relaxed);
  if ((state & (kDone | kFailed)) != 0) return;
  store(kDone | size());
}

void FillingBuffer::fail(std::string why) {
  const uint64_t state = state_.load(std::memory_order_relaxed);
  if ((state & (kDone | kFailed)) != 0) return;
  failure_ = std::move(why);
  store(kFailed | (state & kCountMask));
}

Result<void> fillFromFile(int fd, FillingBuffer& buffer, size_t chunkBytes) {
  const auto failWith = [&buffer](Error error) -> Result<void> {
    buffer.fail(error.message);
    return std::unexpected(std::move(error));
  };
  chunkBytes = std::max<size_t>(chunkBytes, 1);
  for (size_t done = 0; done < buffer.size();) {
    const size_t length = std::min(chunkBytes, buffer.size() - done);
    if (auto read = readExactlyAt(fd, {buffer.unfilled() + done, length}, done); !read) {
      return failWith(std::move(read).error());
    }
    done += length;
    buffer.publish(done);
  }
  if (auto end = expectEndAt(fd, buffer.size()); !end) return failWith(std::move(end).error());
  buffer.finish();
  return {};
}

}  // namespace nnhal::cache
