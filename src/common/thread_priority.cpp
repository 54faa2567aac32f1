#include "common/thread_priority.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace nnhal::common {

void applyPreparationPolicy(PreparationPolicy policy) noexcept {
  thread_local bool applied = false;
  if (applied) return;
  applied = true;
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

}  // namespace nnhal::common
