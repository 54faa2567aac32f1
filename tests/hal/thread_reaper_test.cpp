// common/thread_reaper.h: threads handed over, including a thread handing over itself, are
// joined promptly (the process's thread count returns to where it was).
#include "common/thread_reaper.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>

namespace nnhal::common {
namespace {

using namespace std::chrono_literals;

size_t threadCount() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ++count;
  }
  return count;
}

bool threadCountReaches(size_t want) {
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until) {
    if (threadCount() <= want) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

TEST(ThreadReaper, JoinsThreadsThatHandThemselvesOver) {
  adoptThread(std::thread([] {}));  // starts the reaper's own thread
  ASSERT_TRUE(threadCountReaches(2));
  const size_t baseline = threadCount();
  for (int round = 0; round < 20; ++round) {
    // A thread whose only handle is given to the reaper by the thread itself.
    auto handle = std::make_shared<std::thread>();
    auto assigned = std::make_shared<std::promise<void>>();
    std::shared_future<void> ready = assigned->get_future().share();
    *handle = std::thread([handle, ready] {
      ready.wait();  // until the handle holds this very thread
      adoptThread(std::move(*handle));
    });
    assigned->set_value();
  }
  EXPECT_TRUE(threadCountReaches(baseline))
      << threadCount() << " threads, " << baseline << " before";
}

}  // namespace
}  // namespace nnhal::common
