// The memory every arena of a device may hold (engine/arena_budget.h): arenas are charged per
// application, idle ones are freed by trimIdle after idleRelease, an allocation beyond the
// limit first frees the arenas nobody uses (the heaviest application's first), and arenas in
// use are never taken.
#include "engine/arena_budget.h"

#include <gtest/gtest.h>

#include <thread>

#include "engine/executor.h"

namespace nnhal::engine {
namespace {

using namespace std::chrono_literals;

constexpr hal::ApplicationId kA = 1000;
constexpr hal::ApplicationId kB = 1001;
constexpr size_t kArena = 4096;  // a multiple of kArenaAlignment: charged as is

TEST(ArenaBudget, ChargesPerApplicationAndFreesIdleArenas) {
  ArenaBudget budget(0, 50ms);
  ArenaPool a(kArena, &budget, kA);
  ArenaPool b(kArena, &budget, kB);
  {
    auto first = a.acquire();
    auto second = a.acquire();
    auto third = b.acquire();
    ASSERT_TRUE(first && second && third);
    EXPECT_EQ(budget.held(kA), 2 * kArena);
    EXPECT_EQ(budget.held(kB), kArena);
  }
  EXPECT_EQ(a.freeArenas(), 2u);  // kept for the next executions
  EXPECT_EQ(budget.trimIdle(), 0u) << "not idle long enough yet";
  std::this_thread::sleep_for(80ms);
  auto inUse = b.acquire();  // used again: not idle
  ASSERT_TRUE(inUse);
  EXPECT_EQ(budget.trimIdle(), 2 * kArena);
  EXPECT_EQ(a.freeArenas(), 0u);
  EXPECT_EQ(budget.held(kA), 0u);
  EXPECT_EQ(budget.held(kB), kArena);
  EXPECT_EQ(budget.held(), kArena);
}

TEST(ArenaBudget, BeyondTheLimitIdleArenasGoFirstAndArenasInUseStay) {
  ArenaBudget budget(3 * kArena, 0ms);
  ArenaPool heavy(kArena, &budget, kA);
  ArenaPool light(kArena, &budget, kB);
  {
    auto h1 = heavy.acquire();
    auto h2 = heavy.acquire();
    ASSERT_TRUE(h1 && h2);
  }  // both idle now, still held
  auto l1 = light.acquire();
  ASSERT_TRUE(l1);
  EXPECT_EQ(budget.held(), 3 * kArena);
  // Full: a new arena of the light application frees the heavy one's idle arenas.
  {
    auto l2 = light.acquire();
    ASSERT_TRUE(l2) << l2.error().message;
    EXPECT_EQ(heavy.freeArenas(), 0u);
    EXPECT_EQ(budget.held(kA), 0u);
    // Everything is in use or freed: the heavy application's new arena fits, the next not.
    auto h3 = heavy.acquire();
    ASSERT_TRUE(h3);
    auto refused = heavy.acquire();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
    EXPECT_EQ(budget.held(), 3 * kArena);
  }
}

TEST(ArenaBudget, APoolGivesItsArenasBackWhenDestroyed) {
  ArenaBudget budget(0, 0ms);
  {
    ArenaPool pool(kArena, &budget, kA);
    { auto arena = pool.acquire(); }
    EXPECT_EQ(budget.held(kA), kArena);
  }
  EXPECT_EQ(budget.held(), 0u);
}

}  // namespace
}  // namespace nnhal::engine
