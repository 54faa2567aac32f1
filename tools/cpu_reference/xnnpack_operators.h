// tools/cpu_reference/xnnpack_operators.h — one NNAPI operation to one XNNPACK operator (the
// XNNPACK baseline's translation table; tools/cpu_reference/xnnpack_baseline.h says what is
// supported).
//
// Thread safety: createOperator is called by one thread at a time (XNNPACK operator
// creation is thread-safe, the context is not).
#pragma once

#include <xnnpack.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "nnhal/status.h"
#include "nnhal/types.h"
#include "tools/cpu_reference/nnapi_params.h"

namespace nnhal::cpu_reference {

struct XnnOperatorDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
/// An owned XNNPACK operator.
using XnnOperator = std::unique_ptr<xnn_operator, XnnOperatorDeleter>;

/// What an operator is built from.
struct OperatorContext {
  const Model& model;
  /// The bytes of operand `index`: a constant's stored value, or the buffer the baseline
  /// planned for a tensor (already allocated for the operation's outputs); nullptr for
  /// NO_VALUE operands.
  std::function<void*(uint32_t index)> data;
  pthreadpool_t threadpool = nullptr;
};

/// Creates the XNNPACK operator of `operation` and sets it up on ctx.data's pointers (which
/// must stay valid while the operator lives). Errors: INVALID_ARGUMENT for unsupported
/// operations, types or parameters, and when XNNPACK refuses the creation or setup (the
/// message names the call and its status); GENERAL_FAILURE for XNNPACK's out of memory.
Result<XnnOperator> createOperator(const OperatorContext& ctx, const Operation& operation);

/// Name of an xnn_status ("unsupported_parameter", ...).
const char* toString(xnn_status status);

}  // namespace nnhal::cpu_reference
