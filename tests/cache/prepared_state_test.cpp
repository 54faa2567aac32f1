// The engine's precomputed-state hook (engine/prepared_state.h) as the GEMM and depthwise
// kernels use it: what they save, that restored state gives identical results and is
// actually used, and that wrong-sized or out-of-range state is rejected.
#include "engine/prepared_state.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "cache/file_io.h"
#include "cache_test_util.h"
#include "engine/compiler.h"
#include "engine/executor.h"
#include "kernels/depthwise_conv.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"

namespace nnhal::engine {
namespace {

using cachetest::buildModel;
using cachetest::kOutputUnits;
using cachetest::runPlan;

/// Copies saved states into one aligned buffer and offers them to a restore-mode store.
struct Restored {
  std::unique_ptr<PreparedStateStore> store =
      std::make_unique<PreparedStateStore>(PreparedStateStore::Mode::kRestore);
  cache::AlignedBuffer buffer;
};

Restored restore(const PreparedStateStore& saved, bool required = false,
                 const std::function<void(StateKey, std::vector<uint8_t>&)>& tamper = {}) {
  Restored r;
  size_t total = 0;
  for (const auto& [key, entry] : saved.saved()) total += (entry.bytes.size() + 63) / 64 * 64 + 64;
  r.buffer = *cache::AlignedBuffer::allocate(total);
  size_t at = 0;
  for (const auto& [key, entry] : saved.saved()) {
    std::vector<uint8_t> bytes = entry.bytes;
    if (tamper) tamper(key, bytes);
    std::memcpy(r.buffer.data() + at, bytes.data(), bytes.size());
    r.store->addRestored(key, {r.buffer.data() + at, bytes.size()}, required);
    at += (bytes.size() + 63) / 64 * 64;
  }
  r.store->retain(r.buffer.owner());
  return r;
}

class PreparedStateTest : public ::testing::TestWithParam<OperandType> {};

TEST_P(PreparedStateTest, GemmAndDepthwiseSaveTheirPackedWeights) {
  const Model model = buildModel(GetParam(), 1);
  PreparedStateStore saved(PreparedStateStore::Mode::kSave);
  auto plan = compile(model, {&saved});
  ASSERT_TRUE(plan) << plan.error().message;
  const bool quant = GetParam() == OperandType::TENSOR_QUANT8_ASYMM;
  ASSERT_EQ(saved.saved().size(), quant ? 3u : 2u);
  // CONV_2D: 3 output channels, k = 3*3*2 = 18.
  const auto& conv = saved.saved().at({0, 0});
  EXPECT_EQ(conv.replacedInputs, std::vector<uint32_t>{1});
  const size_t convBytes = quant ? kernels::quantPackedWeightsBytes(3, 18) + 16 * 4
                                 : kernels::floatPackedWeightsCount(3, 18) * 4;
  EXPECT_EQ(conv.bytes.size(), convBytes);
  // FULLY_CONNECTED: 5 units, k = 48.
  const auto& fc = saved.saved().at({0, 3});
  const size_t fcBytes = quant ? kernels::quantPackedWeightsBytes(5, 48) + 16 * 4
                               : kernels::floatPackedWeightsCount(5, 48) * 4;
  EXPECT_EQ(fc.bytes.size(), fcBytes);
  // DEPTHWISE_CONV_2D packs (and saves) only when quantized.
  EXPECT_EQ(saved.saved().contains({0, 1}), quant);
  EXPECT_FALSE(saved.saved().contains({0, 2}));  // ADD saves nothing
}

TEST_P(PreparedStateTest, RestoredStateIsUsedAndGivesIdenticalResults) {
  const Model model = buildModel(GetParam(), 1);
  auto reference = compile(model);
  ASSERT_TRUE(reference);
  const std::vector<uint8_t> expected = runPlan(**reference, GetParam());

  PreparedStateStore saved(PreparedStateStore::Mode::kSave);
  ASSERT_TRUE(compile(model, {&saved}));
  Restored r = restore(saved, true);
  auto plan = compile(model, {r.store.get()});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(r.store->missingRequired().empty());
  EXPECT_EQ((*plan)->retained.size(), 1u);
  EXPECT_EQ(runPlan(**plan, GetParam()), expected);
}

TEST_P(PreparedStateTest, RestoredStateReplacesTheWeights) {
  // With the raw weights zeroed, only the restored packed weights can give the right result.
  const Model model = buildModel(GetParam(), 1);
  auto reference = compile(model);
  ASSERT_TRUE(reference);
  const std::vector<uint8_t> expected = runPlan(**reference, GetParam());
  PreparedStateStore saved(PreparedStateStore::Mode::kSave);
  ASSERT_TRUE(compile(model, {&saved}));

  Model stripped = model;
  Memory pool = *Memory::create(model.pools[0].size());
  std::memcpy(pool.data(), model.pools[0].data(), pool.size());
  for (const auto& [key, entry] : saved.saved()) {
    const Operand& w = model.main.operands[model.main.operations[key.step].inputs[1]];
    std::memset(pool.data() + w.location.offset, 0, w.location.length);
  }
  stripped.pools = {pool};
  Restored r = restore(saved, true);
  auto plan = compile(stripped, {r.store.get()});
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(runPlan(**plan, GetParam()), expected);
}

TEST_P(PreparedStateTest, WrongSizedStateIsRepacked) {
  const Model model = buildModel(GetParam(), 1);
  auto reference = compile(model);
  const std::vector<uint8_t> expected = runPlan(**reference, GetParam());
  PreparedStateStore saved(PreparedStateStore::Mode::kSave);
  ASSERT_TRUE(compile(model, {&saved}));
  Restored r = restore(saved, false, [](StateKey, std::vector<uint8_t>& bytes) {
    for (int i = 0; i < 4 && !bytes.empty(); ++i) bytes.pop_back();
  });
  auto plan = compile(model, {r.store.get()});
  ASSERT_TRUE(plan) << plan.error().message;  // not required: prepared as usual
  EXPECT_EQ(runPlan(**plan, GetParam()), expected);

  Restored required = restore(saved, true, [](StateKey, std::vector<uint8_t>& bytes) {
    for (int i = 0; i < 4 && !bytes.empty(); ++i) bytes.pop_back();
  });
  auto failed = compile(model, {required.store.get()});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(PreparedStateQuantTest, OutOfRangeValuesAreRejected) {
  const Model model = buildModel(OperandType::TENSOR_QUANT8_ASYMM, 1);
  PreparedStateStore saved(PreparedStateStore::Mode::kSave);
  ASSERT_TRUE(compile(model, {&saved}));
  // GEMM: a column sum outside [-128 k, 127 k]; depthwise: a tap outside [-255, 255].
  Restored r = restore(saved, true, [](StateKey key, std::vector<uint8_t>& bytes) {
    if (key.step == 1) {
      const int16_t big = 4000;
      std::memcpy(bytes.data(), &big, 2);
    } else {
      const int32_t huge = INT32_MAX;
      std::memcpy(bytes.data() + bytes.size() - 16 * 4, &huge, 4);
    }
  });
  auto plan = compile(model, {r.store.get()});
  ASSERT_FALSE(plan);
  EXPECT_EQ(r.store->missingRequired().size(), 3u);
}

// 64 channels take the depthwise kernel's VNNI filter layout wherever the CPU has VNNI: its
// restored bytes may be any int8, but its constant e and its per-channel tap sums must be
// ones packDepthwiseFilter produces (e in [-127, 128], sums within 255 per tap).
TEST(PreparedStateQuantTest, AVnniDepthwiseConstantOutOfRangeIsRejected) {
  if (kernels::activeIsa() < kernels::IsaLevel::kVnni) GTEST_SKIP() << "no AVX-512 VNNI here";
  constexpr auto kQuant = OperandType::TENSOR_QUANT8_ASYMM;
  cachetest::ModelBuilder b;
  const uint32_t x = b.tensor(kQuant, {1, 4, 4, 64}, 0.05f, 100, OperandLifeTime::SUBGRAPH_INPUT);
  std::vector<uint8_t> filter(9 * 64);
  for (size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<uint8_t>(i * 37 % 251);
  const uint32_t w = b.constant(kQuant, {1, 3, 3, 64}, 0.02f, 120, filter.data(),
                                static_cast<uint32_t>(filter.size()));
  const std::vector<int32_t> bias(64, 7);
  const uint32_t bv =
      b.constant(OperandType::TENSOR_INT32, {64}, 0.05f * 0.02f, 0, bias.data(), 64 * 4);
  const uint32_t y = b.tensor(kQuant, {1, 4, 4, 64}, 0.1f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::DEPTHWISE_CONV_2D,
              {x, w, bv, b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(3)}, {y});
  b.model.main.inputIndexes = {x};
  b.model.main.outputIndexes = {y};
  const Model model = b.finish();
  PreparedStateStore saved(PreparedStateStore::Mode::kSave);
  ASSERT_TRUE(compile(model, {&saved})) << "the model compiles";
  ASSERT_EQ(saved.saved().size(), 1u);
  for (const int32_t e : {-127, 128}) {
    Restored valid = restore(saved, true, [e](StateKey, std::vector<uint8_t>& bytes) {
      std::memcpy(bytes.data(), &e, sizeof e);
    });
    EXPECT_TRUE(compile(model, {valid.store.get()})) << e;
  }
  for (const int32_t e : {-128, 129, INT32_MIN}) {
    Restored tampered = restore(saved, true, [e](StateKey, std::vector<uint8_t>& bytes) {
      std::memcpy(bytes.data(), &e, sizeof e);
    });
    EXPECT_FALSE(compile(model, {tampered.store.get()})) << e;
  }
  // A channel's tap sum of w - zw beyond 255 per tap (9 taps) is refused too.
  for (const int32_t sum : {9 * 255 + 1, -9 * 255 - 1}) {
    Restored tampered = restore(saved, true, [sum](StateKey, std::vector<uint8_t>& bytes) {
      std::memcpy(bytes.data() + kernels::kDepthwiseVnniHeaderBytes + 4 * 5, &sum, sizeof sum);
    });
    EXPECT_FALSE(compile(model, {tampered.store.get()})) << sum;
  }
}

TEST(PreparedStateStoreTest, SavingTwiceForOneStepDropsIt) {
  PreparedStateStore store(PreparedStateStore::Mode::kSave);
  store.save({0, 1}, {1, 2}, {1});
  store.save({0, 1}, {3, 4}, {1});
  store.save({0, 1}, {5, 6}, {1});
  store.save({0, 2}, {7}, {});
  EXPECT_FALSE(store.saved().contains({0, 1}));
  EXPECT_TRUE(store.saved().contains({0, 2}));
}

TEST(PreparedStateStoreTest, RestoredStateIsHandedOutOnceAlignedAndSized) {
  PreparedStateStore store(PreparedStateStore::Mode::kRestore);
  auto buffer = *cache::AlignedBuffer::allocate(256);
  store.addRestored({0, 0}, {buffer.data(), 128}, true);
  store.addRestored({0, 1}, {buffer.data() + 1, 64}, false);  // misaligned
  EXPECT_TRUE(store.restored({0, 0}, 64).empty());            // wrong size (and now used up)
  EXPECT_TRUE(store.restored({0, 0}, 128).empty());           // only handed out once
  EXPECT_TRUE(store.restored({0, 1}, 64).empty());
  EXPECT_TRUE(store.restored({0, 9}, 64).empty());
  EXPECT_EQ(store.missingRequired().size(), 1u);

  PreparedStateStore ok(PreparedStateStore::Mode::kRestore);
  ok.addRestored({1, 2}, {buffer.data() + 64, 128}, true);
  EXPECT_EQ(ok.restored({1, 2}, 128).data(), buffer.data() + 64);
  EXPECT_EQ(ok.missingRequired().size(), 1u);  // not accepted yet
  ok.accept({1, 2});
  EXPECT_TRUE(ok.missingRequired().empty());
}

TEST(PreparedStateStoreTest, StateNotYetAvailableWaitsAndStateThatNeverArrivesIsNotOffered) {
  auto buffer = *cache::AlignedBuffer::allocate(256);
  PreparedStateStore store(PreparedStateStore::Mode::kRestore);
  store.addRestored({0, 0}, {buffer.data(), 64}, true);
  store.addRestored({0, 1}, {buffer.data() + 64, 128}, true);
  std::vector<std::pair<const uint8_t*, size_t>> asked;
  store.setAvailability([&](std::span<const uint8_t> bytes) {
    asked.emplace_back(bytes.data(), bytes.size());
    return bytes.data() == buffer.data();  // the second state's bytes never arrive
  });
  EXPECT_EQ(store.restored({0, 0}, 64).data(), buffer.data());
  EXPECT_TRUE(store.restored({0, 1}, 128).empty());
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[1], std::make_pair(static_cast<const uint8_t*>(buffer.data() + 64), size_t{128}));
  store.accept({0, 0});
  store.accept({0, 1});  // never handed out: stays missing
  EXPECT_EQ(store.missingRequired(), (std::vector<StateKey>{{0, 1}}));
  // Wrong-sized requests are refused before anyone waits for their bytes.
  PreparedStateStore sized(PreparedStateStore::Mode::kRestore);
  sized.addRestored({0, 0}, {buffer.data(), 64}, false);
  bool waited = false;
  sized.setAvailability([&](std::span<const uint8_t>) { return waited = true; });
  EXPECT_TRUE(sized.restored({0, 0}, 128).empty());
  EXPECT_FALSE(waited);
}

TEST(PreparedStateStoreTest, ContextsWithoutAStoreIgnoreTheHook) {
  PrepareContext ctx(OperationType::ADD, {}, {}, false);
  EXPECT_FALSE(ctx.savesState());
  EXPECT_TRUE(ctx.restoredState(16).empty());
  ctx.saveState({1, 2, 3});   // no-op
  ctx.acceptRestoredState();  // no-op
}

INSTANTIATE_TEST_SUITE_P(Types, PreparedStateTest,
                         ::testing::Values(OperandType::TENSOR_FLOAT32,
                                           OperandType::TENSOR_QUANT8_ASYMM),
                         [](const auto& info) {
                           return info.param == OperandType::TENSOR_FLOAT32 ? "Float32" : "Quant8";
                         });

}  // namespace
}  // namespace nnhal::engine
