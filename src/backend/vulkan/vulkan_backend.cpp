#include "backend/vulkan/vulkan_backend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "backend/vulkan_factory.h"
#include "cache/cache_format.h"
#include "common/calibration.h"
#include "engine/arena_budget.h"
#include "engine/prepared_state.h"
#include "hal/pool_io.h"
#include "hal/validation.h"
#include "nnhal/version.h"

namespace nnhal::backend::vulkan {
namespace {

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

std::unexpected<Error> vulkanFailure(const char* what, VkResult r) {
  const bool memory = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY;
  return fail(memory ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT : ErrorStatus::GENERAL_FAILURE,
              std::string("nnhal-vulkan: ") + what + " failed: " + resultName(r));
}

/// The bytes of one slot's buffer: all tensors of one execution of `plan`.
uint64_t slotBytes(const Plan& plan) {
  return std::max<uint64_t>(plan.bufferElements * sizeof(float), 16);
}

Result<void> Slot::make(const Plan& plan, const std::vector<VkPipeline>& pipelines) {
  const VkDevice d = context_->device();
  const VkDeviceSize size = slotBytes(plan);
  VkBufferCreateInfo bufferInfo{};
  bufferInfo.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bufferInfo.size = size;
  bufferInfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = vkCreateBuffer(d, &bufferInfo, nullptr, &buffer_); r != VK_SUCCESS) {
    return vulkanFailure("vkCreateBuffer", r);
  }
  VkMemoryRequirements needs{};
  vkGetBufferMemoryRequirements(d, buffer_, &needs);
  if ((needs.memoryTypeBits & (1u << context_->bufferMemoryType())) == 0) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "nnhal-vulkan: the device cannot place a storage buffer in host-visible memory");
  }
  VkMemoryAllocateInfo allocation{};
  allocation.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  allocation.allocationSize = needs.size;
  allocation.memoryTypeIndex = context_->bufferMemoryType();
  if (VkResult r = vkAllocateMemory(d, &allocation, nullptr, &memory_); r != VK_SUCCESS) {
    return vulkanFailure("vkAllocateMemory", r);
  }
  if (VkResult r = vkBindBufferMemory(d, buffer_, memory_, 0); r != VK_SUCCESS) {
    return vulkanFailure("vkBindBufferMemory", r);
  }
  if (VkResult r = vkMapMemory(d, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_); r != VK_SUCCESS) {
    mapped_ = nullptr;
    return vulkanFailure("vkMapMemory", r);
  }
  if (!plan.constantImage.empty()) {
    std::memcpy(mapped_, plan.constantImage.data(), plan.constantImage.size() * sizeof(float));
  }

  VkDescriptorPoolSize poolSize{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
  VkDescriptorPoolCreateInfo poolInfo{};
  poolInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  poolInfo.maxSets = 1;
  poolInfo.poolSizeCount = 1;
  poolInfo.pPoolSizes = &poolSize;
  if (VkResult r = vkCreateDescriptorPool(d, &poolInfo, nullptr, &descriptorPool_);
      r != VK_SUCCESS) {
    return vulkanFailure("vkCreateDescriptorPool", r);
  }
  const VkDescriptorSetLayout layout = context_->setLayout();
  VkDescriptorSetAllocateInfo setInfo{};
  setInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  setInfo.descriptorPool = descriptorPool_;
  setInfo.descriptorSetCount = 1;
  setInfo.pSetLayouts = &layout;
  if (VkResult r = vkAllocateDescriptorSets(d, &setInfo, &set_); r != VK_SUCCESS) {
    return vulkanFailure("vkAllocateDescriptorSets", r);
  }
  VkDescriptorBufferInfo described{buffer_, 0, VK_WHOLE_SIZE};
  VkWriteDescriptorSet write{};
  write.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
  write.dstSet = set_;
  write.dstBinding = 0;
  write.descriptorCount = 1;
  write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  write.pBufferInfo = &described;
  vkUpdateDescriptorSets(d, 1, &write, 0, nullptr);

  VkCommandPoolCreateInfo commandPoolInfo{};
  commandPoolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  commandPoolInfo.queueFamilyIndex = context_->queueFamily();
  if (VkResult r = vkCreateCommandPool(d, &commandPoolInfo, nullptr, &commandPool_);
      r != VK_SUCCESS) {
    return vulkanFailure("vkCreateCommandPool", r);
  }
  if (context_->timestampPeriod() > 0) {
    VkQueryPoolCreateInfo queryInfo{};
    queryInfo.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    queryInfo.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queryInfo.queryCount = 2;
    if (VkResult r = vkCreateQueryPool(d, &queryInfo, nullptr, &timestamps_); r != VK_SUCCESS) {
      timestamps_ = VK_NULL_HANDLE;
      return vulkanFailure("vkCreateQueryPool", r);
    }
  }
  const size_t count = std::max<size_t>(
      1, (plan.dispatches.size() + kDispatchesPerSegment - 1) / kDispatchesPerSegment);
  std::vector<VkCommandBuffer> buffers(count);
  VkCommandBufferAllocateInfo commandInfo{};
  commandInfo.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  commandInfo.commandPool = commandPool_;
  commandInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  commandInfo.commandBufferCount = static_cast<uint32_t>(count);
  if (VkResult r = vkAllocateCommandBuffers(d, &commandInfo, buffers.data()); r != VK_SUCCESS) {
    return vulkanFailure("vkAllocateCommandBuffers", r);
  }
  for (size_t k = 0; k < count; ++k) {
    Segment& segment = segments_.emplace_back();
    segment.commands = buffers[k];
    VkFenceCreateInfo fenceInfo{};
    fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (VkResult r = vkCreateFence(d, &fenceInfo, nullptr, &segment.done); r != VK_SUCCESS) {
      segment.done = VK_NULL_HANDLE;
      return vulkanFailure("vkCreateFence", r);
    }
    const size_t begin = k * kDispatchesPerSegment;
    NNHAL_TRY(record(segment.commands, plan, pipelines, begin,
                     std::min(plan.dispatches.size(), begin + kDispatchesPerSegment)));
  }
  return {};
}

Result<void> Slot::record(VkCommandBuffer commands, const Plan& plan,
                          const std::vector<VkPipeline>& pipelines, size_t begin,
                          size_t end) const {
  VkCommandBufferBeginInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  vkBeginCommandBuffer(commands, &info);
  vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, context_->pipelineLayout(), 0,
                          1, &set_, 0, nullptr);
  if (begin == 0 && timestamps_ != VK_NULL_HANDLE) {
    vkCmdResetQueryPool(commands, timestamps_, 0, 2);
    vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, timestamps_, 0);
  }
  // Every dispatch reads what the ones before it wrote, in this segment or an earlier one
  // (a barrier covers all commands submitted before it on the queue).
  VkMemoryBarrier between{};
  between.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  between.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
  between.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
  for (size_t k = begin; k < end; ++k) {
    if (k > 0) {
      vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &between, 0, nullptr, 0,
                           nullptr);
    }
    const Dispatch& dispatch = plan.dispatches[k];
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE,
                      pipelines[static_cast<size_t>(dispatch.shader)]);
    vkCmdPushConstants(commands, context_->pipelineLayout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(dispatch.push.size() * sizeof(uint32_t)),
                       dispatch.push.data());
    const auto [x, y] = workgroupCounts(dispatch.invocations);
    vkCmdDispatch(commands, x, y, 1);
  }
  if (end == plan.dispatches.size()) {
    // The outputs become visible to the host once the last fence signals.
    VkMemoryBarrier toHost{};
    toHost.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    toHost.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    toHost.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &toHost, 0, nullptr, 0, nullptr);
    if (timestamps_ != VK_NULL_HANDLE) {
      vkCmdWriteTimestamp(commands, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timestamps_, 1);
    }
  }
  if (VkResult r = vkEndCommandBuffer(commands); r != VK_SUCCESS) {
    return vulkanFailure("vkEndCommandBuffer", r);
  }
  return {};
}

Result<void> Slot::wait(size_t k) const {
  const VkResult r = vkWaitForFences(context_->device(), 1, &segments_[k].done, VK_TRUE,
                                     std::numeric_limits<uint64_t>::max());
  if (r == VK_ERROR_DEVICE_LOST) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the Vulkan device was lost");
  }
  if (r != VK_SUCCESS) return vulkanFailure("vkWaitForFences", r);
  return {};
}

std::chrono::nanoseconds Slot::deviceTime() const {
  if (timestamps_ == VK_NULL_HANDLE) return std::chrono::nanoseconds(-1);
  std::array<uint64_t, 2> ticks{};
  const VkResult r =
      vkGetQueryPoolResults(context_->device(), timestamps_, 0, 2, sizeof ticks, ticks.data(),
                            sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  if (r != VK_SUCCESS) return std::chrono::nanoseconds(-1);
  const uint32_t bits = context_->timestampBits();
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t elapsed = ((ticks[1] & mask) - (ticks[0] & mask)) & mask;
  return std::chrono::nanoseconds(
      static_cast<int64_t>(static_cast<double>(elapsed) * context_->timestampPeriod()));
}

Result<void> Slot::run(const RunOptions& options) {
  const VkDevice d = context_->device();
  const auto submit = [&](size_t k) {
    vkResetFences(d, 1, &segments_[k].done);
    return context_->submit(segments_[k].commands, segments_[k].done);
  };
  NNHAL_TRY(submit(0));
  for (size_t k = 0; k < segments_.size(); ++k) {
    const bool queued = k + 1 < segments_.size();
    if (queued) {
      if (auto next = submit(k + 1); !next) {
        NNHAL_TRY(wait(k));
        return next;
      }
    }
    NNHAL_TRY(wait(k));
    if (!queued || k + 2 >= segments_.size()) continue;
    // Between segments: the next one runs while this thread looks at the clock.
    Result<void> stop;
    if (options.cancelled != nullptr && options.cancelled->load()) {
      stop = fail(ErrorStatus::DEVICE_UNAVAILABLE, "the execution was cancelled");
    } else if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
      stop = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                  "the deadline passed while the GPU ran the model: stopped after segment " +
                      std::to_string(k + 2) + " of " + std::to_string(segments_.size()));
    }
    if (!stop) {
      NNHAL_TRY(wait(k + 1));
      return stop;
    }
    if (options.yield != nullptr) options.yield->yield();
  }
  if (options.timeOnDevice != nullptr) *options.timeOnDevice = deviceTime();
  return {};
}

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

class VulkanCompiledModel final : public CompiledModel {
 public:
  VulkanCompiledModel(Model model, Plan plan, std::vector<VkPipeline> pipelines,
                      std::shared_ptr<Context> context)
      : model_(std::move(model)),
        plan_(std::move(plan)),
        pipelines_(std::move(pipelines)),
        context_(std::move(context)) {}

  const Model& model() const override { return model_; }
  uint64_t executionBytes() const override { return slotBytes(plan_); }
  bool dataIndependent() const override { return true; }
  std::vector<size_t> outputBytes() const override {
    std::vector<size_t> bytes;
    for (const TensorRange& r : plan_.outputs) bytes.push_back(r.requestBytes());
    return bytes;
  }
  Result<std::unique_ptr<ExecutionMemory>> createMemory(
      engine::ArenaBudget* budget, hal::ApplicationId application) const override {
    return std::make_unique<VulkanExecutionMemory>(slotBytes(plan_), budget, application);
  }
  Result<std::vector<OutputShape>> execute(const Request& request, ExecutionMemory& memory,
                                           const RunOptions& options) const override;
  std::string operationName(OperationType type) const override {
    return std::string(toString(type));
  }

 private:
  Model model_;
  Plan plan_;
  std::vector<VkPipeline> pipelines_;  ///< per Shader; owned by the context
  std::shared_ptr<Context> context_;
};

/// Element e of request bytes of `storage` as the buffer's float32.
float widen(Storage storage, const uint8_t* bytes, size_t e) {
  switch (storage) {
    case Storage::kFloat16: {
      _Float16 half{};
      std::memcpy(&half, bytes + e * sizeof half, sizeof half);
      return static_cast<float>(half);
    }
    case Storage::kUint8:
      return static_cast<float>(bytes[e]);
    case Storage::kInt8:
      return static_cast<float>(static_cast<int8_t>(bytes[e]));
    case Storage::kInt32: {
      int32_t whole = 0;
      std::memcpy(&whole, bytes + e * sizeof whole, sizeof whole);
      return static_cast<float>(whole);
    }
    case Storage::kFloat32:
    case Storage::kWords:
      break;
  }
  float value = 0;
  std::memcpy(&value, bytes + e * sizeof value, sizeof value);
  return value;
}

/// Stores the buffer's `value` as element e of request bytes of `storage` (float16 rounded
/// to nearest; 8-bit values are already whole and in range: QUANTIZE saturated them; int32
/// values are indices, whole and below 2^24).
void narrow(Storage storage, float value, uint8_t* bytes, size_t e) {
  switch (storage) {
    case Storage::kFloat16: {
      const auto half = static_cast<_Float16>(value);
      std::memcpy(bytes + e * sizeof half, &half, sizeof half);
      return;
    }
    case Storage::kUint8:
      bytes[e] = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
      return;
    case Storage::kInt8:
      bytes[e] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(value, -128.0f, 127.0f)));
      return;
    case Storage::kInt32: {
      const auto whole = static_cast<int32_t>(std::clamp(value, -16777216.0f, 16777216.0f));
      std::memcpy(bytes + e * sizeof whole, &whole, sizeof whole);
      return;
    }
    case Storage::kFloat32:
    case Storage::kWords:
      std::memcpy(bytes + e * sizeof value, &value, sizeof value);
      return;
  }
}

float* rangeIn(uint8_t* base, const TensorRange& r) {
  return reinterpret_cast<float*>(base) + r.offset;
}

/// Copies request input `a` into the buffer range `r` (float16 widened). Errors: readPool's.
Result<void> readInput(const Memory& pool, const RequestArgument& a, const TensorRange& r,
                       uint8_t* base) {
  float* to = rangeIn(base, r);
  if (r.storage == Storage::kFloat32 || r.storage == Storage::kWords) {
    return hal::readPool(pool, a.location.offset,
                         {reinterpret_cast<uint8_t*>(to), r.requestBytes()});
  }
  std::vector<uint8_t> bytes(r.requestBytes());
  NNHAL_TRY(hal::readPool(pool, a.location.offset, bytes));
  for (size_t e = 0; e < r.elements; ++e) to[e] = widen(r.storage, bytes.data(), e);
  return {};
}

/// Copies the buffer range `r` to request output `a` (float16 rounded to nearest). Errors:
/// writePool's.
Result<void> writeOutput(const Memory& pool, const RequestArgument& a, const TensorRange& r,
                         uint8_t* base) {
  const float* from = rangeIn(base, r);
  if (r.storage == Storage::kFloat32 || r.storage == Storage::kWords) {
    return hal::writePool(pool, a.location.offset,
                          {reinterpret_cast<const uint8_t*>(from), r.requestBytes()});
  }
  std::vector<uint8_t> bytes(r.requestBytes());
  for (size_t e = 0; e < r.elements; ++e) narrow(r.storage, from[e], bytes.data(), e);
  return hal::writePool(pool, a.location.offset, bytes);
}

Result<std::vector<OutputShape>> VulkanCompiledModel::execute(const Request& request,
                                                              ExecutionMemory& memory,
                                                              const RunOptions& options) const {
  std::vector<OutputShape> shapes;
  bool sufficient = true;
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    const bool fits = request.outputs[k].hasNoValue ||
                      request.outputs[k].location.length >= plan_.outputs[k].requestBytes();
    shapes.push_back({plan_.outputDimensions[k], fits});
    sufficient = sufficient && fits;
  }
  if (!sufficient) {
    return std::unexpected(Error{ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                                 "an output's memory is smaller than the output", shapes});
  }
  if (options.cancelled != nullptr && options.cancelled->load()) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the execution was cancelled");
  }
  if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
    return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the deadline passed before the run");
  }
  auto& slots = static_cast<VulkanExecutionMemory&>(memory);
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<Slot> slot, slots.take(plan_, pipelines_, context_));
  const auto pool = [&](const RequestArgument& a) -> const Memory& {
    return std::get<Memory>(request.pools[a.location.poolIndex]);
  };
  for (size_t k = 0; k < plan_.inputs.size(); ++k) {
    const RequestArgument& a = request.inputs[k];
    if (a.hasNoValue) {
      std::fill_n(rangeIn(slot->bytes(), plan_.inputs[k]), plan_.inputs[k].elements, 0.0f);
      continue;
    }
    if (auto read = readInput(pool(a), a, plan_.inputs[k], slot->bytes()); !read) {
      slots.give(std::move(slot));
      return std::unexpected(read.error());
    }
  }
  if (options.yield != nullptr) options.yield->yield();
  auto ran = slot->run(options);
  if (!ran) {
    slots.drop(std::move(slot));  // its state is unknown
    return std::unexpected(ran.error());
  }
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    const RequestArgument& a = request.outputs[k];
    if (a.hasNoValue) continue;
    if (auto written = writeOutput(pool(a), a, plan_.outputs[k], slot->bytes()); !written) {
      slots.give(std::move(slot));
      return std::unexpected(written.error());
    }
  }
  slots.give(std::move(slot));
  return shapes;
}

constexpr float kUnmeasured = 10.0f;

}  // namespace

VulkanBackend::VulkanBackend(std::shared_ptr<Context> context, std::string version,
                             std::optional<PerformanceInfo> measured)
    : context_(std::move(context)), version_(std::move(version)), measured_(measured) {}

Capabilities VulkanBackend::capabilities() const {
  const PerformanceInfo unmeasured = measured_.value_or(PerformanceInfo{kUnmeasured, kUnmeasured});
  Capabilities c;
  c.relaxedFloat32toFloat16PerformanceScalar = unmeasured;
  c.relaxedFloat32toFloat16PerformanceTensor = unmeasured;
  for (OperandType type :
       {OperandType::FLOAT32, OperandType::INT32, OperandType::UINT32, OperandType::TENSOR_FLOAT32,
        OperandType::TENSOR_INT32, OperandType::TENSOR_QUANT8_ASYMM, OperandType::BOOL,
        OperandType::TENSOR_QUANT16_SYMM, OperandType::TENSOR_FLOAT16, OperandType::TENSOR_BOOL8,
        OperandType::FLOAT16, OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL,
        OperandType::TENSOR_QUANT16_ASYMM, OperandType::TENSOR_QUANT8_SYMM,
        OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
    const bool runs = type == OperandType::TENSOR_FLOAT32 || type == OperandType::FLOAT32 ||
                      type == OperandType::TENSOR_FLOAT16 || type == OperandType::FLOAT16 ||
                      type == OperandType::INT32 || type == OperandType::BOOL;
    // 8-bit tensors only enter and leave through DEQUANTIZE and QUANTIZE: not reported.
    c.operandPerformance.push_back({type, runs ? unmeasured : PerformanceInfo{}});
  }
  std::sort(c.operandPerformance.begin(), c.operandPerformance.end(),
            [](const auto& a, const auto& b) { return a.type < b.type; });
  return c;  // IF and WHILE keep the "not supported" maximum
}

Result<void> VulkanBackend::checkModel(const Model& model) const {
  if (!model.referenced.empty()) {
    return invalidArgument("nnhal-vulkan runs no control flow (the model references subgraphs)");
  }
  return checkPlan(model);
}

Result<std::vector<std::string>> VulkanBackend::explainSupport(const Model& model) const {
  return vulkan::explainSupport(model);
}

Result<std::unique_ptr<CompiledModel>> VulkanBackend::build(Model model) const {
  NNHAL_ASSIGN_OR_RETURN(Plan plan, buildPlan(model));
  std::vector<VkPipeline> pipelines(kShaderCount, VK_NULL_HANDLE);
  for (const Dispatch& d : plan.dispatches) {
    VkPipeline& p = pipelines[static_cast<size_t>(d.shader)];
    if (p == VK_NULL_HANDLE) {
      NNHAL_ASSIGN_OR_RETURN(p, context_->pipeline(d.shader));
    }
  }
  return std::unique_ptr<CompiledModel>(std::make_unique<VulkanCompiledModel>(
      std::move(model), std::move(plan), std::move(pipelines), context_));
}

Result<Compiled> VulkanBackend::compile(Model model, const CompileOptions& options) const {
  if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
    return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the deadline passed before compiling");
  }
  Compiled compiled;
  NNHAL_ASSIGN_OR_RETURN(compiled.model, build(std::move(model)));
  if (options.cache != nullptr) {
    auto images = encodeCache(*compiled.model, *options.cache);
    if (images) {
      compiled.cache = std::move(*images);
    } else {
      compiled.cacheSkipped = images.error().message;
    }
  }
  return compiled;
}

Result<std::unique_ptr<CompiledModel>> VulkanBackend::compileFromCache(
    const CacheImages& images, const CacheSettings& settings) const {
  auto decoded = cache::decodeCache(images.model, images.modelDigest, images.data, settings.version,
                                    settings.options);
  if (!decoded) {
    return fail(decoded.error().status == ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                    ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                    : ErrorStatus::GENERAL_FAILURE,
                decoded.error().message);
  }
  if (auto valid = hal::validateModel(decoded->model); !valid) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "the cached model is invalid: " + valid.error().message);
  }
  auto built = build(std::move(decoded->model));
  if (!built) return fail(ErrorStatus::GENERAL_FAILURE, built.error().message);
  return built;
}

Result<cache::EncodedCache> VulkanBackend::encodeCache(const CompiledModel& model,
                                                       const CacheSettings& settings) const {
  // The plan is rebuilt from the model alone: no operation state to keep.
  const engine::PreparedStateStore none(engine::PreparedStateStore::Mode::kSave);
  return cache::encodeCache(model.model(), none, settings.version, settings.options);
}

}  // namespace nnhal::backend::vulkan

namespace nnhal::backend {

Result<VulkanBackendMade> createVulkanBackend(const VulkanOptions& options) {
  NNHAL_ASSIGN_OR_RETURN(
      std::shared_ptr<vulkan::Context> context,
      vulkan::Context::create(options.physicalDevice, options.validation, options.stateDirectory));
  const vulkan::PhysicalDeviceDescription& d = context->description();
  std::string uuid;
  for (uint8_t byte : d.pipelineCacheUuid) uuid += fmt::format("{:02x}", byte);
  // The device, its driver and the pipeline cache's identity: a cache made elsewhere misses.
  const std::string version =
      options.versionOverride.empty()
          ? fmt::format("{}+{} (vulkan: {} {:04x}:{:04x}, driver {:#x}, {})", kDriverVersion,
                        buildId(), d.name, d.vendorId, d.deviceId, d.driverVersion, uuid)
          : options.versionOverride;
  spdlog::info("nnhal-vulkan: {} ({})", d.name, d.kind);
  std::optional<PerformanceInfo> measured;
  if (!options.stateDirectory.empty()) {
    auto calibration = common::applicableCalibration(options.stateDirectory, version,
                                                     common::kVulkanCalibrationLevel);
    if (calibration) {
      measured = calibration->float32;
    } else {
      spdlog::info("nnhal-vulkan capabilities: unmeasured ({})", calibration.error().message);
    }
  }
  VulkanDeviceInfo device{d.index, d.name, d.kind, d.usable, d.unusableReason};
  return VulkanBackendMade{
      std::make_shared<vulkan::VulkanBackend>(std::move(context), version, measured),
      std::move(device)};
}

Result<std::vector<VulkanDeviceInfo>> listVulkanDevices() {
  NNHAL_ASSIGN_OR_RETURN(const auto all, vulkan::vulkanDevices());
  std::vector<VulkanDeviceInfo> out;
  for (const auto& d : all) out.push_back({d.index, d.name, d.kind, d.usable, d.unusableReason});
  return out;
}

}  // namespace nnhal::backend
