#include "actors/prepared_model_impl.h"

#include <future>

#include "actors/embedded_burst.h"

namespace nnhal::actors {

Result<std::shared_ptr<Burst>> PreparedModelImpl::configureExecutionBurst() {
  NNHAL_VLOG(Driver, "configureExecutionBurst");
  NNHAL_VLOG(Burst, "embedded burst configured: executions run on the caller's thread");
  try {
    NNHAL_ASSIGN_OR_RETURN(ExecutionActor::BurstResources resources, actor_.burstResources());
    return std::shared_ptr<Burst>(
        std::make_shared<EmbeddedBurst>(shared_from_this(), actor_, std::move(resources)));
  } catch (const std::bad_alloc&) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "out of memory for a burst");
  }
}

Result<void> PreparedModelImpl::updateCache() const {
  NNHAL_VLOG(Cache, "updateCache: rewriting the cache files");
  if (cache_ == nullptr) {
    return fail(ErrorStatus::GENERAL_FAILURE, "this prepared model has no cache files");
  }
  CacheImage image;
  if (cache_->loadedFrom != nullptr) {
    image = *cache_->loadedFrom;
  } else {
    NNHAL_ASSIGN_OR_RETURN(cache::EncodedCache encoded,
                           cache_->backend->encodeCache(*compiled_, cache_->settings));
    auto owner = std::make_shared<cache::EncodedCache>(std::move(encoded));
    image.model = owner->model;
    image.modelDigest = owner->modelDigest;
    image.data = owner->data;
    image.owner = owner;
  }
  std::promise<Result<void>> done;
  auto future = done.get_future();
  cache_->actor->post(CacheActor::Save{
      cache_->token, cache_->files, std::move(image),
      [&done](Result<void> saved) { done.set_value(std::move(saved)); }, cache_->runAs});
  return future.get();
}

}  // namespace nnhal::actors
