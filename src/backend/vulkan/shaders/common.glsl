// Shared by every nnhal-vulkan shader: one storage buffer holds every tensor of an execution
// (float32 elements; offsets in the push constants are element indexes into it), and the
// workgroup is 64 invocations wide (vulkan_plan.h: kWorkgroupSize).
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Tensors { float data[]; };

// The invocation's index: dispatches wider than the 65,535 workgroups every device allows in
// x are folded into y (vulkan_plan.h, workgroupCounts).
uint invocationIndex() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64 + gl_LocalInvocationID.x;
}
