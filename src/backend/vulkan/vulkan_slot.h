// backend/vulkan/vulkan_slot.h — one execution's GPU memory and recorded commands (Slot),
// and the pool of them that a compiled model or a burst keeps (VulkanExecutionMemory).
//
// A slot holds one host-visible buffer with every tensor of one execution of a plan (the
// plan's constants copied in at make()), the descriptor set binding it, and the plan's
// dispatches recorded once, in segments of kDispatchesPerSegment with a fence each, so that
// a run can stop between segments. Executions of one compiled model take a free slot each
// and never share a buffer. The pool charges every slot it keeps to the runtime's
// ArenaBudget, like the CPU engine's arenas.
//
// Thread safety: a Slot is used by one execution at a time; VulkanExecutionMemory's take(),
// give() and drop() may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "backend/backend.h"
#include "backend/vulkan/vulkan_context.h"
#include "backend/vulkan/vulkan_plan.h"
#include "engine/arena_budget.h"

namespace nnhal::backend::vulkan {

/// Dispatches per recorded segment: a deadline or a cancellation stops a run between two
/// segments (the one running and the one queued behind it finish first).
constexpr size_t kDispatchesPerSegment = 16;

/// One execution's buffer with its descriptor set and recorded commands: executions of one
/// compiled model take a free slot each, so they never share a buffer. The dispatches are
/// recorded once, in segments of kDispatchesPerSegment, each with its own fence.
class Slot {
 public:
  explicit Slot(std::shared_ptr<Context> context) : context_(std::move(context)) {}
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  ~Slot() {
    const VkDevice d = context_->device();
    for (const Segment& segment : segments_) {
      if (segment.done != VK_NULL_HANDLE) vkDestroyFence(d, segment.done, nullptr);
    }
    if (commandPool_ != VK_NULL_HANDLE) vkDestroyCommandPool(d, commandPool_, nullptr);
    if (timestamps_ != VK_NULL_HANDLE) vkDestroyQueryPool(d, timestamps_, nullptr);
    if (descriptorPool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(d, descriptorPool_, nullptr);
    if (mapped_ != nullptr) vkUnmapMemory(d, memory_);
    if (buffer_ != VK_NULL_HANDLE) vkDestroyBuffer(d, buffer_, nullptr);
    if (memory_ != VK_NULL_HANDLE) vkFreeMemory(d, memory_, nullptr);
  }

  /// Allocates the buffer (constants copied in) and records `plan`'s dispatches. Errors:
  /// RESOURCE_EXHAUSTED_TRANSIENT when device or host memory runs out, GENERAL_FAILURE.
  Result<void> make(const Plan& plan, const std::vector<VkPipeline>& pipelines);

  uint8_t* bytes() const { return static_cast<uint8_t*>(mapped_); }
  /// Submits the recorded segments, each one queued while the one before it runs, and waits
  /// for them. Between two segments it checks `options`: past the deadline
  /// MISSED_DEADLINE_TRANSIENT, cancelled DEVICE_UNAVAILABLE (the slot stays usable: nothing
  /// is left running), and calls the yield point. Errors: those of Context::submit,
  /// DEVICE_UNAVAILABLE when the device is lost (the slot's state is then unknown).
  Result<void> run(const RunOptions& options);

 private:
  std::shared_ptr<Context> context_;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  VkDescriptorPool descriptorPool_ = VK_NULL_HANDLE;
  VkDescriptorSet set_ = VK_NULL_HANDLE;
  VkCommandPool commandPool_ = VK_NULL_HANDLE;
  /// Two timestamps: before the first dispatch and after the last (null where the queue
  /// writes none).
  VkQueryPool timestamps_ = VK_NULL_HANDLE;
  struct Segment {
    VkCommandBuffer commands = VK_NULL_HANDLE;
    VkFence done = VK_NULL_HANDLE;
  };
  std::vector<Segment> segments_;

  /// Records dispatches [begin, end) of `plan` into `commands`.
  Result<void> record(VkCommandBuffer commands, const Plan& plan,
                      const std::vector<VkPipeline>& pipelines, size_t begin, size_t end) const;
  /// Waits for segment `k`. Errors: DEVICE_UNAVAILABLE (lost), GENERAL_FAILURE.
  Result<void> wait(size_t k) const;
  /// The time between the two timestamps of the last run; negative when unknown.
  std::chrono::nanoseconds deviceTime() const;
};

/// The bytes of one slot's buffer: all tensors of one execution of `plan` (at least 16).
uint64_t slotBytes(const Plan& plan);

/// The slots of one compiled model (or one burst): made on demand, kept for reuse, and
/// charged to the runtime's ArenaBudget like the CPU engine's arenas, so that the memory
/// one application's GPU executions keep counts against its share of the device's.
class VulkanExecutionMemory final : public ExecutionMemory, public engine::BudgetedPool {
 public:
  VulkanExecutionMemory(uint64_t slotBytes, engine::ArenaBudget* budget,
                        hal::ApplicationId application)
      : BudgetedPool(budget, application), slotBytes_(slotBytes) {}
  ~VulkanExecutionMemory() override {
    leaveBudget();
    if (budget() != nullptr && !free_.empty()) {
      budget()->give(application(), free_.size() * slotBytes_);
    }
  }

  /// A free slot, or a new one charged to the budget and made for `plan`. Errors:
  /// RESOURCE_EXHAUSTED_TRANSIENT when the budget or the device's memory is spent, those of
  /// Slot::make.
  Result<std::unique_ptr<Slot>> take(const Plan& plan, const std::vector<VkPipeline>& pipelines,
                                     const std::shared_ptr<Context>& context) {
    {
      std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        std::unique_ptr<Slot> slot = std::move(free_.back().slot);
        free_.pop_back();
        return slot;
      }
    }
    if (budget() != nullptr) NNHAL_TRY(budget()->charge(application(), slotBytes_));
    auto slot = std::make_unique<Slot>(context);
    if (auto made = slot->make(plan, pipelines); !made) {
      drop(std::move(slot));
      return std::unexpected(made.error());
    }
    return slot;
  }
  /// Keeps `slot` for a later execution.
  void give(std::unique_ptr<Slot> slot) {
    std::lock_guard lock(mutex_);
    free_.push_back({std::move(slot), std::chrono::steady_clock::now()});
  }
  /// Destroys `slot` (its state is unknown) and gives its bytes back to the budget.
  void drop(std::unique_ptr<Slot> slot) {
    slot.reset();
    if (budget() != nullptr) budget()->give(application(), slotBytes_);
  }

 private:
  struct FreeSlot {
    std::unique_ptr<Slot> slot;
    TimePoint lastUsed;
  };
  uint64_t trim(TimePoint before) override {
    std::vector<std::unique_ptr<Slot>> freed;
    {
      std::lock_guard lock(mutex_);
      std::erase_if(free_, [&](FreeSlot& entry) {
        if (entry.lastUsed >= before) return false;
        freed.push_back(std::move(entry.slot));
        return true;
      });
    }
    return freed.size() * slotBytes_;  // the slots are destroyed here, outside the mutex
  }

  const uint64_t slotBytes_;
  std::mutex mutex_;
  std::vector<FreeSlot> free_;
};

}  // namespace nnhal::backend::vulkan
