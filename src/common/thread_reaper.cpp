#include "common/thread_reaper.h"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace nnhal::common {
namespace {

class ThreadReaper {
 public:
  ~ThreadReaper() {
    std::thread worker;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      worker = std::move(worker_);
    }
    cv_.notify_one();
    if (worker.joinable()) worker.join();
    // Threads adopted after the worker stopped (during static destruction).
    for (std::thread& thread : waiting_) {
      if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
    }
  }

  void adopt(std::thread thread) {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.push_back(std::move(thread));
    if (!worker_.joinable() && !stopping_) worker_ = std::thread([this] { run(); });
    cv_.notify_one();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (waiting_.empty()) return;
      std::thread thread = std::move(waiting_.front());
      waiting_.pop_front();
      lock.unlock();
      if (thread.joinable()) thread.join();  // it is on its way out: returns promptly
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::thread> waiting_;
  std::thread worker_;
  bool stopping_ = false;
};

ThreadReaper& reaper() {
  static ThreadReaper instance;
  return instance;
}

}  // namespace

void adoptThread(std::thread thread) {
  if (!thread.joinable()) return;
  reaper().adopt(std::move(thread));
}

}  // namespace nnhal::common
