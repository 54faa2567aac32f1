// common/thread_priority.h — background threads that give way to every other thread.
//
// The driver compiles on threads of their own (actors/scheduler.h) whose OS scheduling
// policy makes them give way: with SCHED_IDLE they run only on cores nothing else wants, so
// an execution that wakes up on a core where a compilation runs takes it at once, not after
// the compilation's time slice (docs/QOS.md). Only giving way is asked for, which needs no
// privilege; an unprivileged thread cannot take it back, so the threads never do.
#pragma once

#include "nnhal/device.h"

namespace nnhal::common {

/// Applies `policy` to the calling thread, the first time it is called on this thread (later
/// calls do nothing): kIdle = SCHED_IDLE, kNice = nice value 10 (or the thread's own, if
/// higher), kNormal = unchanged. A sandbox refusing the change leaves the thread as it is:
/// it is a preference, not a requirement.
void applyPreparationPolicy(PreparationPolicy policy) noexcept;

}  // namespace nnhal::common
