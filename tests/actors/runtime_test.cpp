// The actor runtime's end (actors/runtime.h): stopped() becomes ready only once its threads
// have been joined and every handler they held is gone, whichever thread dropped the last
// reference, including one of the runtime's own.
#include "actors/runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

namespace nnhal::actors {
namespace {

using namespace std::chrono_literals;

RuntimeOptions smallRuntime() {
  RuntimeOptions options;
  options.threads = 2;
  options.preparationThreads = 1;
  options.arenaIdleRelease = 10ms;  // with its watchdog timer on the pool
  return options;
}

TEST(Runtime, IsStoppedWhenTheLastReferenceIsDroppedOutsideIt) {
  auto runtime = std::make_shared<Runtime>(smallRuntime());
  const std::shared_future<void> stopped = runtime->stopped();
  std::this_thread::sleep_for(30ms);  // the watchdog has fired a few times
  EXPECT_EQ(stopped.wait_for(0ms), std::future_status::timeout);
  runtime.reset();
  EXPECT_EQ(stopped.wait_for(0ms), std::future_status::ready);
}

TEST(Runtime, ReleasedOnItsOwnThreadItStopsLaterAndOnlyAfterItsHandlersAreGone) {
  auto runtime = std::make_shared<Runtime>(smallRuntime());
  const std::shared_future<void> stopped = runtime->stopped();
  // What a handler holds (a session of the embedder, say): gone before stopped() is ready.
  auto held = std::make_shared<int>(7);
  const std::weak_ptr<int> heldWatch = held;
  std::promise<void> releaseNow;
  std::shared_future<void> release = releaseNow.get_future().share();
  std::atomic<bool> handlerDone{false};
  // A later handler that waits a little, then finishes with `held` in its closure.
  boost::asio::post(runtime->executor(), [held = std::move(held), release, &handlerDone] {
    release.wait();
    std::this_thread::sleep_for(50ms);
    handlerDone = true;
  });
  // The last reference, dropped on a pool thread.
  const Executor executor = runtime->executor();
  boost::asio::post(executor, [runtime = std::move(runtime), release]() mutable {
    release.wait();
    runtime.reset();
  });
  releaseNow.set_value();
  ASSERT_EQ(stopped.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(handlerDone.load());
  EXPECT_TRUE(heldWatch.expired()) << "a handler's closure outlived stopped()";
}

}  // namespace
}  // namespace nnhal::actors
