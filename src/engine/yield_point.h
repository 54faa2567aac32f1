// engine/yield_point.h — where a long run lets more urgent work go first.
//
// The executor and the interpreter call yield() between steps (operations). The driver's
// scheduler (actors/scheduler.h) implements it: a run of lower priority pauses there while
// work of higher priority waits or runs, and goes on where it stopped.
#pragma once

namespace nnhal::engine {

class YieldPoint {
 public:
  virtual ~YieldPoint() = default;
  /// Returns when the run may continue (at once, unless more urgent work is pending).
  virtual void yield() = 0;
  /// How many runs share the kernel threads now, this one included (at least 1): the
  /// executor gives each step its share of them (engine/parallel.h).
  virtual unsigned runsSharingKernels() const { return 1; }
};

}  // namespace nnhal::engine
