// hal/application.h — who work is done for: the application, NNAPI's unit of priority and of
// fair share.
//
// The HAL scopes a prepared model's priority to its application ("relative to other prepared
// models owned by the client", IDevice::prepareModel_1_3): one application's HIGH work never
// delays another application's MEDIUM work. Between applications the driver shares its
// threads fairly instead (actors/scheduler.h, docs/QOS.md). nnhald identifies an application
// by the uid of the client's process (SO_PEERCRED): every process and connection of that uid
// is one application. The embedded driver is one application, kEmbeddedApplication.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>

namespace nnhal::hal {

/// An application: nnhald's client uid, or kEmbeddedApplication.
using ApplicationId = uint64_t;

/// The one application of an embedded driver (distinct from every uid).
inline constexpr ApplicationId kEmbeddedApplication = uint64_t{1} << 32;

}  // namespace nnhal::hal
