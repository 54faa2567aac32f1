#include "backend/vulkan/vulkan_slot.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <string>

namespace nnhal::backend::vulkan {
namespace {

std::unexpected<Error> vulkanFailure(const char* what, VkResult r) {
  const bool memory = r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY;
  return fail(memory ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT : ErrorStatus::GENERAL_FAILURE,
              std::string("nnhal-vulkan: ") + what + " failed: " + resultName(r));
}

}  // namespace

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

}  // namespace nnhal::backend::vulkan
