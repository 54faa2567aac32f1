#include "common/thread_reaper.h"

#include <condition_variable>
#include <deque>
#include <mutex>

namespace nnhal::common {
namespace {

class ThreadReaper {
 public:
  /// Joins the worker and every thread adopted so far (at process exit). Threads adopted
  /// later stay in waiting_: still owned, never joined, ended with the process.
  void stop() {
    std::thread worker;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
      worker = std::move(worker_);
    }
    cv_.notify_one();
    if (worker.joinable()) worker.join();
    // What the worker left; threads adopted from here on stay in waiting_.
    std::deque<std::thread> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      left.swap(waiting_);
    }
    for (std::thread& thread : left) {
      if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
    }
    for (std::thread& thread : left) {
      if (thread.joinable()) adopt(std::move(thread));  // only this very thread: kept
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
  // Never destroyed: a thread may be released during the process's static destruction (a
  // pool thread dropping the last Runtime reference after main returned), and adopt() must
  // then still find the reaper's memory. StopAtExit joins what it holds at exit.
  static ThreadReaper* const instance = new ThreadReaper;
  return *instance;
}

struct StopAtExit {
  ~StopAtExit() { reaper().stop(); }
};
const StopAtExit stopAtExit;

}  // namespace

void adoptThread(std::thread thread) {
  if (!thread.joinable()) return;
  reaper().adopt(std::move(thread));
}

}  // namespace nnhal::common
