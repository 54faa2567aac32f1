#include "common/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <thread>

namespace nnhal::common {

void applyPreparationPolicy(PreparationPolicy policy) noexcept {
  // On Linux these calls address one thread when given its thread id.
  const pid_t tid = gettid();
  switch (policy) {
    case PreparationPolicy::kIdle: {
      sched_param param{};
      param.sched_priority = 0;
      (void)sched_setscheduler(tid, SCHED_IDLE, &param);
      return;
    }
    case PreparationPolicy::kNice: {
      constexpr int kNice = 10;
      errno = 0;
      const int current = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
      if (errno == 0 && current < kNice) {
        (void)setpriority(PRIO_PROCESS, static_cast<id_t>(tid), kNice);
      }
      return;
    }
    case PreparationPolicy::kNormal:
      return;
  }
}

bool restoreProcessPriority(pid_t tid) noexcept {
  errno = 0;
  const int processNice = getpriority(PRIO_PROCESS, static_cast<id_t>(getpid()));
  if (errno != 0) return false;
  sched_param param{};
  param.sched_priority = 0;
  // SCHED_IDLE -> SCHED_OTHER is checked against the thread's nice value: set that first.
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(tid), processNice) != 0) return false;
  return sched_setscheduler(tid, SCHED_OTHER, &param) == 0;
}

bool canRestoreProcessPriority(PreparationPolicy policy) noexcept {
  rlimit limit{};
  if (getrlimit(RLIMIT_NICE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)setrlimit(RLIMIT_NICE, &limit);
  }
  bool restored = false;
  try {
    std::jthread probe([&] {
      applyPreparationPolicy(policy);
      restored = restoreProcessPriority(gettid());
    });
  } catch (...) {  // no thread to spare: then it cannot be done either
    return false;
  }
  return restored;
}

std::optional<ThreadSchedStat> readSchedStat(pid_t tid) noexcept {
  try {
    const std::string task = "/proc/self/task/" + std::to_string(tid);
    ThreadSchedStat stat;
    std::ifstream schedstat(task + "/schedstat");
    if (!(schedstat >> stat.onCpuNs)) return std::nullopt;
    // "TID (COMM) STATE ...": COMM may hold spaces and parentheses; the state follows the last
    // ')'.
    std::ifstream file(task + "/stat");
    std::string line;
    if (!std::getline(file, line)) return std::nullopt;
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size()) return std::nullopt;
    stat.runnable = line[close + 2] == 'R';
    return stat;
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace nnhal::common
