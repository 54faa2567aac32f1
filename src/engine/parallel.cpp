#include "engine/parallel.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace nnhal::engine {
namespace {

/// The order of a fork-join, told to ThreadSanitizer: oneTBB (Debian's build) is not
/// instrumented, so TSan sees neither that a parallel_for's tasks start after what the caller
/// wrote nor that they end before parallel_for returns (the caller then destroys what they
/// read). No-ops in other builds.
class ForkJoin {
 public:
  void fork() { release(&begin_); }   ///< the caller, before the tasks
  void enter() { acquire(&begin_); }  ///< each task, first
  void leave() { release(&end_); }    ///< each task, last
  void join() { acquire(&end_); }     ///< the caller, after the tasks

 private:
#if defined(__SANITIZE_THREAD__)
  static void acquire(void* address) { __tsan_acquire(address); }
  static void release(void* address) { __tsan_release(address); }
#else
  static void acquire(void*) {}
  static void release(void*) {}
#endif
  char begin_ = 0;
  char end_ = 0;
};

}  // namespace

/// Arenas by width: 2, 4, 8, ... below the total, and the total. A call takes an arena of its
/// own for its duration (one arena is never shared by concurrent calls: its one slot for the
/// calling thread would make them wait for each other); they are made on demand, at most one
/// per concurrent call, and start their threads lazily. oneTBB's workers are shared by every
/// arena, so all arenas together never run more threads than the process may.
struct Parallel::Arenas {
  explicit Arenas(unsigned threads) {
    for (unsigned width = 2; width < threads; width *= 2) widths.push_back(width);
    widths.push_back(threads);
    free.resize(widths.size());
  }
  /// The largest width not above `width`.
  size_t indexFor(unsigned width) const {
    size_t k = 0;
    while (k + 1 < widths.size() && widths[k + 1] <= width) ++k;
    return k;
  }
  std::unique_ptr<tbb::task_arena> take(size_t k) {
    {
      std::lock_guard lock(mutex);
      if (!free[k].empty()) {
        auto arena = std::move(free[k].back());
        free[k].pop_back();
        return arena;
      }
    }
    return std::make_unique<tbb::task_arena>(static_cast<int>(widths[k]));
  }
  void put(size_t k, std::unique_ptr<tbb::task_arena> arena) {
    std::lock_guard lock(mutex);
    free[k].push_back(std::move(arena));
  }
  /// Runs `body` in an arena of at most `width` threads of its own.
  template <typename Body>
  void execute(unsigned width, Body&& body) {
    const size_t k = indexFor(width);
    std::unique_ptr<tbb::task_arena> arena = take(k);
    struct GiveBack {
      Arenas& arenas;
      size_t k;
      std::unique_ptr<tbb::task_arena>& arena;
      ~GiveBack() { arenas.put(k, std::move(arena)); }
    } giveBack{*this, k, arena};
    arena->execute(std::forward<Body>(body));
  }
  std::vector<unsigned> widths;
  std::mutex mutex;
  std::vector<std::vector<std::unique_ptr<tbb::task_arena>>> free;
};

Parallel::Parallel(unsigned threads)
    : threads_(threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency())),
      arenas_(std::make_unique<Arenas>(threads_)) {}

Parallel::~Parallel() = default;

unsigned Parallel::shareFor(unsigned sharing, ExecutionPreference preference) const {
  const unsigned share = std::max(1u, threads_ / std::max(1u, sharing));
  return preference == ExecutionPreference::LOW_POWER ? std::max(1u, share / 2) : share;
}

void Parallel::forRange(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn,
                        unsigned width) const {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  width = width == 0 ? threads_ : std::min(width, threads_);
  if (width <= 1 || n <= grain) {
    fn(0, n);
    return;
  }
  ForkJoin order;
  order.fork();
  arenas_->execute(width, [&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, grain),
                      [&](const tbb::blocked_range<size_t>& r) {
                        order.enter();
                        fn(r.begin(), r.end());
                        order.leave();
                      });
  });
  order.join();
}

void Parallel::forChunks(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn,
                         unsigned width) const {
  if (n == 0) return;
  chunk = std::max<size_t>(chunk, 1);
  width = width == 0 ? threads_ : std::min(width, threads_);
  if (width <= 1 || n <= chunk) {
    for (size_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk));
    return;
  }
  const size_t count = (n + chunk - 1) / chunk;
  ForkJoin order;
  order.fork();
  arenas_->execute(width, [&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, count, 1),
        [&](const tbb::blocked_range<size_t>& r) {
          order.enter();
          for (size_t c = r.begin(); c != r.end(); ++c) {
            fn(c * chunk, std::min(n, (c + 1) * chunk));
          }
          order.leave();
        },
        tbb::simple_partitioner());
  });
  order.join();
}

void Parallel::warmUp() const {
  if (threads_ <= 1) return;
  constexpr auto kLimit = std::chrono::milliseconds(2);
  const auto until = std::chrono::steady_clock::now() + kLimit;
  std::atomic<unsigned> arrived{0};
  ForkJoin order;
  order.fork();
  arenas_->execute(threads_, [&] {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, threads_, 1),
        [&](const tbb::blocked_range<size_t>&) {
          order.enter();
          // Each piece waits for the others, so that every worker must join to finish.
          arrived.fetch_add(1, std::memory_order_relaxed);
          while (arrived.load(std::memory_order_relaxed) < threads_ &&
                 std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
          }
          order.leave();
        },
        tbb::simple_partitioner());
  });
  order.join();
}

bool ExecutionStop::check() const {
  if (stopped_.load(std::memory_order_relaxed)) return true;
  const bool stop = (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) ||
                    (deadline_ && std::chrono::steady_clock::now() > *deadline_);
  if (stop) stopped_.store(true, std::memory_order_relaxed);
  return stop;
}

Error ExecutionStop::error(const std::string& what) const {
  if (cancelled_ != nullptr && cancelled_->load(std::memory_order_relaxed)) {
    return Error{ErrorStatus::DEVICE_UNAVAILABLE, "the execution was cancelled " + what, {}};
  }
  return Error{ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the execution deadline passed " + what, {}};
}

void StoppableParallel::forRange(size_t n, size_t grain,
                                 const std::function<void(size_t, size_t)>& fn) const {
  if (stop_ == nullptr || !stop_->active()) {
    parallel_.forRange(n, grain, fn, width_);
    return;
  }
  if (n == 0 || stop_->check()) return;
  if (n <= std::max<size_t>(grain, 1)) {  // small work: one piece, as Parallel runs it
    fn(0, n);
    return;
  }
  // A small share first, timed on this thread: how long one item takes sizes the chunks.
  const size_t probe = std::max<size_t>(1, n / kProbeShare);
  const auto start = std::chrono::steady_clock::now();
  fn(0, probe);
  const auto took = std::chrono::steady_clock::now() - start;
  const size_t rest = n - probe;
  if (rest == 0 || stop_->check()) return;
  const double itemNs = std::max(
      1.0, static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()) /
               static_cast<double>(probe));
  const double intervalNs = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(kStopInterval).count());
  const size_t byTime =
      static_cast<size_t>(std::min(intervalNs / itemNs, static_cast<double>(rest)));
  const size_t fine = (rest + kMinStopChunks - 1) / kMinStopChunks;
  const size_t chunk = std::max<size_t>(1, std::min(byTime, fine));
  parallel_.forChunks(
      rest, chunk,
      [&](size_t begin, size_t end) {
        if (!stop_->check()) fn(probe + begin, probe + end);
      },
      width_);
}

}  // namespace nnhal::engine
