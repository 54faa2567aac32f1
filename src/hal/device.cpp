// The non-virtual parts of the public Device interface: the blocking forms of the
// asynchronous preparations, shared by every Device (the embedded driver and the remote
// client), and the names of its option values.
#include "nnhal/device.h"

#include <future>
#include <utility>

namespace nnhal {

CompilationCaching Device::getCompilationCaching() const {
  const NumberOfCacheFiles files = getNumberOfCacheFilesNeeded();
  if (files.modelCache != 0 || files.dataCache != 0) return {true, ""};
  return {false, "the device needs no cache files (getNumberOfCacheFilesNeeded is 0, 0)"};
}

Result<std::shared_ptr<PreparedModel>> Device::prepareModel(Model model,
                                                            const PrepareOptions& options) {
  std::promise<Result<std::shared_ptr<PreparedModel>>> promise;
  auto future = promise.get_future();
  prepareModel(std::move(model), options,
               [&promise](Result<std::shared_ptr<PreparedModel>> result) {
                 promise.set_value(std::move(result));
               });
  return future.get();
}

Result<std::shared_ptr<PreparedModel>> Device::prepareModelFromCache(const CacheFiles& cache,
                                                                     OptionalTimePoint deadline) {
  std::promise<Result<std::shared_ptr<PreparedModel>>> promise;
  auto future = promise.get_future();
  prepareModelFromCache(cache, deadline, [&promise](Result<std::shared_ptr<PreparedModel>> result) {
    promise.set_value(std::move(result));
  });
  return future.get();
}

}  // namespace nnhal
