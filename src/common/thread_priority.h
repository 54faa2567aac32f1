// common/thread_priority.h — background threads that give way to every other thread, and
// taking it back when giving way would mean never finishing.
//
// The driver compiles on threads of their own (actors/scheduler.h) whose OS scheduling
// policy makes them give way: with SCHED_IDLE they run only on cores nothing else wants, so
// an execution that wakes up on a core where a compilation runs takes it at once, not after
// the compilation's time slice (docs/QOS.md). Giving way needs no privilege. Taking it back
// (SCHED_IDLE or a raised nice value back to the process's own) needs CAP_SYS_NICE or an
// RLIMIT_NICE of at least 20 (systemd: LimitNICE=20); the driver's starvation watch
// (actors/give_way_watch.h) does it for a preparation that other threads keep off the cores.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "nnhal/device.h"

namespace nnhal::common {

/// Applies `policy` to the calling thread: kIdle = SCHED_IDLE, kNice = nice value 10 (or the
/// thread's own, if higher), kNormal = unchanged. A sandbox refusing the change leaves the
/// thread as it is: it is a preference, not a requirement.
void applyPreparationPolicy(PreparationPolicy policy) noexcept;

/// Gives thread `tid` of this process the process's own policy back: SCHED_OTHER at the
/// main thread's nice value. False where the OS refuses (EPERM without the privilege above).
bool restoreProcessPriority(pid_t tid) noexcept;

/// True when this process may take giving way back: it raises its soft RLIMIT_NICE to the
/// hard limit where that helps, then tries it on a short-lived thread of its own that first
/// gives way with `policy`.
bool canRestoreProcessPriority(PreparationPolicy policy) noexcept;

/// A thread's scheduler accounting (/proc/self/task/TID/schedstat and stat).
struct ThreadSchedStat {
  uint64_t onCpuNs = 0;   ///< time it ran, in ns
  bool runnable = false;  ///< running or ready to run now (state R), not sleeping or blocked
};

/// `tid`'s accounting, or nullopt where the kernel does not keep it (no CONFIG_SCHED_INFO)
/// or the thread is gone.
std::optional<ThreadSchedStat> readSchedStat(pid_t tid) noexcept;

}  // namespace nnhal::common
