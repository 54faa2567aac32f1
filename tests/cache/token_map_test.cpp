// The persistent token -> digest map: durability, resets on version change and damage,
// several maps on one directory, and consistency after a process is killed mid-update.
#include "cache/token_map.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "cache_test_util.h"

namespace nnhal::cache {
namespace {

using cachetest::TempDir;

Token token(uint32_t i) {
  Token t{};
  for (size_t k = 0; k < t.size(); ++k) t[k] = static_cast<uint8_t>((i >> (8 * (k % 4))) + k);
  return t;
}

/// The digest the tests record for a token (so any entry can be checked).
Digest digestOf(const Token& t) { return sha256(t); }

std::unique_ptr<TokenMap> openMap(const TempDir& dir, const std::string& version = "v1",
                                  size_t maxEntries = TokenMap::kDefaultMaxEntries) {
  auto map = TokenMap::open(dir.path() / "state", version, maxEntries);
  EXPECT_TRUE(map) << map.error().message;
  return map ? std::move(*map) : nullptr;
}

TEST(TokenMapTest, CreatesTheDirectoryAndStartsEmpty) {
  TempDir dir;
  auto map = openMap(dir);
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(map->opened(), TokenMap::Opened::kCreated);
  EXPECT_EQ(map->size(), 0u);
  EXPECT_FALSE(map->find(token(1)));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "state"));
}

TEST(TokenMapTest, PutIsDurableAcrossReopen) {
  TempDir dir;
  {
    auto map = openMap(dir);
    for (uint32_t i = 0; i < 10; ++i) ASSERT_TRUE(map->put(token(i), digestOf(token(i))));
    ASSERT_TRUE(map->put(token(3), digestOf(token(99))));  // replaces
  }
  auto map = openMap(dir);
  EXPECT_EQ(map->opened(), TokenMap::Opened::kLoaded);
  EXPECT_EQ(map->size(), 10u);
  EXPECT_EQ(map->find(token(3)), digestOf(token(99)));
  EXPECT_EQ(map->find(token(7)), digestOf(token(7)));
  ASSERT_TRUE(map->erase(token(7)));
  EXPECT_FALSE(map->find(token(7)));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state" / TokenMap::kTemporaryName));
}

TEST(TokenMapTest, ForgetsTheOldestBeyondTheLimit) {
  TempDir dir;
  auto map = openMap(dir, "v1", 4);
  for (uint32_t i = 0; i < 6; ++i) ASSERT_TRUE(map->put(token(i), digestOf(token(i))));
  EXPECT_EQ(map->size(), 4u);
  EXPECT_FALSE(map->find(token(0)));
  EXPECT_FALSE(map->find(token(1)));
  EXPECT_TRUE(map->find(token(5)));
}

TEST(TokenMapTest, ResetsOnDriverVersionChange) {
  TempDir dir;
  {
    auto map = openMap(dir, "v1");
    ASSERT_TRUE(map->put(token(1), digestOf(token(1))));
  }
  auto map = openMap(dir, "v2");
  EXPECT_EQ(map->opened(), TokenMap::Opened::kResetVersion);
  EXPECT_EQ(map->size(), 0u);
  map.reset();
  // The reset is durable: the old version does not get its entries back.
  auto old = openMap(dir, "v1");
  EXPECT_EQ(old->opened(), TokenMap::Opened::kResetVersion);
  EXPECT_FALSE(old->find(token(1)));
}

TEST(TokenMapTest, ResetsWhenDamaged) {
  TempDir dir;
  {
    auto map = openMap(dir);
    for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(map->put(token(i), digestOf(token(i))));
  }
  const auto file = dir.path() / "state" / TokenMap::kFileName;
  const std::vector<uint8_t> good = cachetest::readAll(file);
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<uint8_t> bad = good;
    if (trial % 3 == 0) {
      bad.resize(rng() % bad.size());  // truncated
    } else if (trial % 3 == 1) {
      bad.push_back(static_cast<uint8_t>(rng()));  // extended
    } else {
      const size_t bit = rng() % (bad.size() * 8);
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    }
    cachetest::writeAll(file, bad);
    auto map = openMap(dir);
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->opened(), TokenMap::Opened::kResetCorrupt) << trial;
    EXPECT_EQ(map->size(), 0u);
  }
}

TEST(TokenMapTest, ChecksumCoversAWellFormedButForgedFile) {
  TempDir dir;
  { openMap(dir); }
  // A forged map with a valid layout but a wrong checksum is rejected.
  std::vector<uint8_t> forged = TokenMap::encode("v1", {{0, token(1), digestOf(token(2))}});
  forged.back() ^= 1;
  cachetest::writeAll(dir.path() / "state" / TokenMap::kFileName, forged);
  auto map = openMap(dir);
  EXPECT_EQ(map->opened(), TokenMap::Opened::kResetCorrupt);
  EXPECT_FALSE(map->find(token(1)));
}

TEST(TokenMapTest, SeesUpdatesOfAnotherMapOnTheSameDirectory) {
  TempDir dir;
  auto a = openMap(dir);
  auto b = openMap(dir);
  ASSERT_TRUE(a->put(token(1), digestOf(token(1))));
  EXPECT_EQ(b->find(token(1)), digestOf(token(1)));
  ASSERT_TRUE(b->put(token(2), digestOf(token(2))));  // keeps a's entry
  EXPECT_EQ(a->find(token(1)), digestOf(token(1)));
  EXPECT_EQ(a->find(token(2)), digestOf(token(2)));
}

TEST(TokenMapTest, ConcurrentPutsFromThreadsAndMaps) {
  TempDir dir;
  auto a = openMap(dir);
  auto b = openMap(dir);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      TokenMap& map = t % 2 == 0 ? *a : *b;
      for (uint32_t i = 0; i < 10; ++i) {
        const Token k = token(t * 100 + i);
        EXPECT_TRUE(map.put(k, digestOf(k)));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  auto reopened = openMap(dir);
  EXPECT_EQ(reopened->size(), 40u);
  for (uint32_t t = 0; t < 4; ++t) {
    for (uint32_t i = 0; i < 10; ++i) {
      EXPECT_EQ(reopened->find(token(t * 100 + i)), digestOf(token(t * 100 + i)));
    }
  }
}

TEST(TokenMapTest, ProcessKilledWhileUpdatingLeavesAConsistentMap) {
  TempDir dir;
  { openMap(dir); }
  std::mt19937 rng(11);
  for (int round = 0; round < 12; ++round) {
    int firstPut[2];
    ASSERT_EQ(::pipe(firstPut), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Child: update as fast as possible until killed. Every entry maps a token to the
      // digest of that token, so the parent can check each entry it finds. It says when its
      // first put is on disk (a slow start, under a sanitizer, must not look like a lost map).
      ::close(firstPut[0]);
      auto map = TokenMap::open(dir.path() / "state", "v1");
      if (!map) _exit(2);
      for (uint32_t i = 0;; ++i) {
        const Token k = token(static_cast<uint32_t>(round) * 100000 + i);
        if (!(*map)->put(k, digestOf(k))) _exit(3);
        if (i == 0) (void)!::write(firstPut[1], "x", 1);
      }
    }
    ::close(firstPut[1]);
    char byte = 0;
    ASSERT_EQ(::read(firstPut[0], &byte, 1), 1);
    ::close(firstPut[0]);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40000));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);

    auto map = openMap(dir);
    ASSERT_NE(map, nullptr);
    EXPECT_EQ(map->opened(), TokenMap::Opened::kLoaded) << "round " << round;
    // Every entry is exactly what some put wrote, and the puts of this round form a prefix.
    const auto entries = map->entries();
    size_t fromThisRound = 0;
    for (const TokenEntry& entry : entries) {
      EXPECT_EQ(entry.owner, 0u);
      EXPECT_EQ(entry.digest, digestOf(entry.token));
      fromThisRound += entry.token == token(static_cast<uint32_t>(round) * 100000 +
                                            static_cast<uint32_t>(fromThisRound));
    }
    if (round == 0) {
      EXPECT_EQ(fromThisRound, entries.size());
    }
  }
}

// Entries belong to their owner: another owner neither finds nor replaces them.
// tryPut never waits for another process: while the lock file is held elsewhere it says
// busy and changes nothing; once free, it records like put.
TEST(TokenMapTest, TryPutIsBusyWhileAnotherProcessHoldsTheLock) {
  TempDir dir;
  auto map = openMap(dir);
  ASSERT_NE(map, nullptr);
  const std::filesystem::path lockPath = dir.path() / "state" / TokenMap::kLockName;
  const int held = ::open(lockPath.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  const TokenEntry entry{7, token(1), digestOf(token(1))};
  bool busy = false;
  const auto start = std::chrono::steady_clock::now();
  auto refused = map->tryPut(entry, busy);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  ASSERT_FALSE(refused);
  EXPECT_TRUE(busy);
  EXPECT_EQ(refused.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_FALSE(map->find(token(1), 7));
  EXPECT_EQ(map->size(), 0u);

  ::flock(held, LOCK_UN);
  ::close(held);
  busy = true;
  ASSERT_TRUE(map->tryPut(entry, busy));
  EXPECT_FALSE(busy);
  EXPECT_EQ(map->find(token(1), 7), digestOf(token(1)));
  EXPECT_EQ(openMap(dir)->find(token(1), 7), digestOf(token(1)));  // durable
}

TEST(TokenMapTest, OwnersSeeOnlyTheirOwnTokens) {
  TempDir dir;
  auto map = openMap(dir);
  ASSERT_TRUE(map->put(token(1), digestOf(token(1)), /*owner=*/1000));
  EXPECT_EQ(map->find(token(1), 1000), digestOf(token(1)));
  EXPECT_FALSE(map->find(token(1), 1001));
  EXPECT_FALSE(map->find(token(1)));
  ASSERT_TRUE(map->put(token(1), digestOf(token(9)), 1001));  // its own entry, same token
  EXPECT_EQ(map->find(token(1), 1000), digestOf(token(1)));
  EXPECT_EQ(map->find(token(1), 1001), digestOf(token(9)));
  ASSERT_TRUE(map->erase(token(1), 1001));
  EXPECT_EQ(map->find(token(1), 1000), digestOf(token(1)));
  // And so after a restart.
  map.reset();
  auto again = openMap(dir);
  EXPECT_EQ(again->find(token(1), 1000), digestOf(token(1)));
  EXPECT_FALSE(again->find(token(1), 1001));
}

// A full map evicts from the owner holding the most entries: an owner saving many tokens
// pushes out only its own, never the few of another.
TEST(TokenMapTest, AFullMapEvictsTheHeaviestOwnersOldestEntry) {
  TempDir dir;
  auto map = openMap(dir, "v1", 8);
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(map->put(token(i), digestOf(token(i)), 1));
  for (uint32_t i = 100; i < 140; ++i) ASSERT_TRUE(map->put(token(i), digestOf(token(i)), 2));
  for (uint32_t i = 0; i < 3; ++i) EXPECT_TRUE(map->find(token(i), 1)) << i;
  EXPECT_EQ(map->size(), 8u);
  EXPECT_TRUE(map->find(token(139), 2));
  EXPECT_FALSE(map->find(token(100), 2));
  // Once the other owner holds more, the first one's oldest entry goes next.
  for (uint32_t i = 3; i < 12; ++i) ASSERT_TRUE(map->put(token(i), digestOf(token(i)), 1));
  EXPECT_EQ(map->size(), 8u);
  EXPECT_FALSE(map->find(token(0), 1));
  EXPECT_TRUE(map->find(token(139), 2));
}

}  // namespace
}  // namespace nnhal::cache
