// hal/model_token.h — a compilation-cache token computed from a model itself, for a driver
// that caches on behalf of a client that passed no token (nnhald's client cache,
// ipc/daemon/client_cache.h).
#pragma once

#include <string>

#include "nnhal/device.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// SHA-256 over everything that decides what a driver compiles from `model` with `options`:
/// relaxComputationFloat32toFloat16, the extension names and prefixes, every subgraph's
/// operands (type, dimensions, scale, zero point, lifetime, consumers, quantization
/// parameters, and the bytes of constant values, wherever they are stored: operandValues or
/// a pool, and at whatever offset), operations and input and output indexes, and the
/// preference and priority. Two models that differ only in where their constants are laid
/// out get the same token; any other difference gives another. A constant whose location
/// lies outside its storage is hashed by its location only (validation refuses such a model
/// before it is compiled).
CacheToken modelToken(const Model& model, const PrepareOptions& options);

/// The token as 64 lowercase hex digits (a file name).
std::string tokenHex(const CacheToken& token);

}  // namespace nnhal::hal
