// The memory every arena of a device may hold (engine/arena_budget.h): arenas are charged per
// application, idle ones are freed by trimIdle after idleRelease, an allocation beyond the
// limit first frees the arenas nobody uses (the heaviest application's first), arenas in
// use are never taken, and beside other applications each holds at most its share.
#include "engine/arena_budget.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

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
  // Five applications: each may hold a quarter (2 arenas) of the 8.
  ArenaBudget budget(8 * kArena, 0ms);
  ArenaPool heavy(kArena, &budget, 1);
  ArenaPool light(kArena, &budget, 2);
  ArenaPool busy1(kArena, &budget, 3);
  ArenaPool busy2(kArena, &budget, 4);
  ArenaPool late(kArena, &budget, 5);
  {
    auto h1 = heavy.acquire();
    auto h2 = heavy.acquire();
    auto l1 = light.acquire();
    ASSERT_TRUE(h1 && h2 && l1);
  }  // idle now, still held
  auto b1 = busy1.acquire(), b2 = busy1.acquire(), b3 = busy2.acquire(), b4 = busy2.acquire();
  ASSERT_TRUE(b1 && b2 && b3 && b4);
  auto e1 = late.acquire();
  ASSERT_TRUE(e1);
  EXPECT_EQ(budget.held(), 8 * kArena);
  // Full: a new arena frees idle arenas, the heaviest application's first.
  auto e2 = late.acquire();
  ASSERT_TRUE(e2) << e2.error().message;
  EXPECT_EQ(heavy.freeArenas(), 0u);
  EXPECT_EQ(budget.held(1), 0u);
  EXPECT_EQ(light.freeArenas(), 1u) << "the lighter application keeps its idle arena";
  // One arena fits; then everything left is in use or the light one's: its arena goes for
  // the next, then nothing more fits.
  auto h3 = heavy.acquire();
  ASSERT_TRUE(h3) << h3.error().message;
  EXPECT_EQ(light.freeArenas(), 1u);
  auto h4 = heavy.acquire();
  ASSERT_TRUE(h4) << h4.error().message;
  EXPECT_EQ(light.freeArenas(), 0u);
  auto refused = light.acquire();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_EQ(budget.held(), 8 * kArena);
}

// One application alone may use the whole budget; beside another, at most its share, so the
// other's executions still get memory.
TEST(ArenaBudget, EachApplicationHoldsAtMostItsShare) {
  {
    ArenaBudget budget(4 * kArena, 0ms);
    ArenaPool alone(kArena, &budget, kA);
    std::vector<ArenaPool::Lease> leases;
    for (int i = 0; i < 4; ++i) {
      auto lease = alone.acquire();
      ASSERT_TRUE(lease) << lease.error().message;
      leases.push_back(std::move(*lease));
    }
    EXPECT_FALSE(alone.acquire());
  }
  ArenaBudget budget(4 * kArena, 0ms);
  ArenaPool greedy(kArena, &budget, kA);
  ArenaPool victim(kArena, &budget, kB);
  auto g1 = greedy.acquire(), g2 = greedy.acquire();
  ASSERT_TRUE(g1 && g2);
  auto g3 = greedy.acquire();
  ASSERT_FALSE(g3);
  EXPECT_EQ(g3.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(g3.error().message.find("your application"), std::string::npos) << g3.error().message;
  EXPECT_EQ(budget.held(kA), 2 * kArena);
  auto v1 = victim.acquire(), v2 = victim.acquire();
  EXPECT_TRUE(v1 && v2);
  EXPECT_EQ(budget.held(kB), 2 * kArena);
}

// A prepared model faults in one arena at preparation (ArenaPool::warm): charged to its
// application like any other, kept for the first execution, never a second one, and quietly
// not made when its application is at its share: warming takes nothing from another
// application.
TEST(ArenaBudget, WarmKeepsOneChargedArenaWithinItsApplicationsShare) {
  ArenaBudget budget(2 * kArena, 0ms);
  ArenaPool a(kArena, &budget, kA);
  ArenaPool b(kArena, &budget, kB);
  a.warm();
  EXPECT_EQ(a.freeArenas(), 1u);
  EXPECT_EQ(budget.held(kA), kArena);
  a.warm();
  EXPECT_EQ(a.freeArenas(), 1u) << "one warm arena is enough";
  EXPECT_EQ(budget.held(kA), kArena);
  auto victim = b.acquire();
  ASSERT_TRUE(victim) << victim.error().message;
  auto first = a.acquire();  // the first execution takes the warm arena
  ASSERT_TRUE(first);
  EXPECT_EQ(a.freeArenas(), 0u);
  EXPECT_EQ(budget.held(kA), kArena);
  ArenaPool another(kArena, &budget, kA);
  another.warm();  // A is at its share and has nothing idle: no arena, no error
  EXPECT_EQ(another.freeArenas(), 0u);
  EXPECT_EQ(budget.held(kA), kArena);
  EXPECT_EQ(budget.held(kB), kArena);
  ArenaPool empty(0, &budget, kA);
  empty.warm();
  EXPECT_EQ(empty.freeArenas(), 0u);
}

// Past its share, an application's own idle arenas (of its other prepared models) are freed
// for its new one; nobody else's are.
TEST(ArenaBudget, PastItsShareAnApplicationFreesItsOwnIdleArenas) {
  ArenaBudget budget(4 * kArena, 0ms);
  ArenaPool first(kArena, &budget, kA);
  ArenaPool second(kArena, &budget, kA);
  ArenaPool other(kArena, &budget, kB);
  {
    auto o1 = other.acquire();
    ASSERT_TRUE(o1);
  }  // B's idle arena
  {
    auto f1 = first.acquire(), f2 = first.acquire();
    ASSERT_TRUE(f1 && f2);
  }  // A's two idle arenas: its whole share
  auto s1 = second.acquire();
  ASSERT_TRUE(s1) << s1.error().message;
  EXPECT_EQ(first.freeArenas(), 0u);
  EXPECT_EQ(other.freeArenas(), 1u);
  EXPECT_EQ(budget.held(kA), kArena);
  EXPECT_EQ(budget.held(kB), kArena);
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
