// common/thread_reaper.h — joins threads that cannot be joined by their owner.
//
// A thread cannot join itself. When the last reference to an object that owns threads (the
// driver's Runtime, a client Connection) is released on one of those very threads — a user
// callback that drops the last PreparedModel — the object hands that thread to the reaper
// instead of detaching it. The reaper's own thread joins each handed-over thread once it has
// finished; the reaper itself is joined at process exit, after every thread it holds. A
// thread handed over after that (released during static destruction) is kept, not joined,
// and ends with the process: the reaper's memory is never freed, so that late hand-over is
// still safe.
// So every thread of nnhal has an owner that joins it, and none outlives the process's
// static destruction.
//
// This is the one process-wide object of nnhal: threads are a process-wide resource, and no
// object of the driver or the client is guaranteed to outlive the thread releasing it.
//
// Thread safety: adopt() may be called from any thread, including threads being adopted.
#pragma once

#include <thread>

namespace nnhal::common {

/// Hands `thread` (joinable, typically the calling thread's own handle) to the reaper,
/// which joins it after it returns.
void adoptThread(std::thread thread);

}  // namespace nnhal::common
