/* pto orchestration API: the one header generated orchestration C++ includes.
 *
 * It keeps the PTO2 names of PyPTO's orchestration codegen and its reference runtime
 * (ChipTaskArgs, ChipTensor with view/reshape/transpose/permute/slice/data_as, CoreTaskArgs with
 * add_input/ add_output/add_inout/add_no_dep/add_scalar, launch_spec, set_dependencies,
 * set_allow_early_resolve, set_predicate, dump, TensorCreateInfo with set_initial_value and
 * buffer_size_bytes, alloc_tensors, always_assert/debug_assert, PTO2_SCOPE() and
 * PTO2_SCOPE(PTO2ScopeMode::MANUAL), MixedKernels with rt_submit_task, rt_submit_aiv_task,
 * rt_submit_aic_task, rt_submit_dummy_task, rt_submit_graph, make_tensor_external,
 * rt_available_aiv_count/rt_available_cluster_count, rt_orchestration_done, get_tensor_data,
 * set_tensor_data, from_u64/to_u64, LOG_*, rt_report_fatal, rt_is_fatal) and implements them over
 * the versioned C function table of pto/orch_abi.h, which the runtime hands to pto_orch_bind on the
 * dispatching thread before each entry call. ChipTaskArgs has exactly the layout of pto_orch_args,
 * so the runtime passes a pointer where the entry takes a reference; ChipTensor has PyPTO's field
 * types and the layout of pto_orch_chip_tensor: the runtime passes the entry tensors in that form
 * too (args.tensor(i) is the runtime's copy, valid for the whole call), converts a CoreTaskArgs at
 * its submit (submit_args) and makes tensor.slice views (slice), so that the code each
 * orchestration compiles stays small.
 *
 * Including this header in one translation unit of an orchestration shared object defines the
 * exported pto_orch_abi_version() and pto_orch_bind(); define PTO_ORCH_NO_EXPORTS before
 * including it in any further translation unit of the same object. C++17 (g++ and clang++ 14 or
 * later), no exceptions, no link dependencies.
 *
 * Where pto differs from PyPTO's runtime: CoreTaskArgs copies the tensors it is given (PyPTO
 * keeps pointers), so temporaries are fine; ChipTensor has PyPTO's uint32_t shapes and ndims but
 * int64_t strides and no raw_shapes/offsets (a view is addr plus strides); rt_submit_graph runs
 * its function on every call (no recorded replay); a mixed task's kernels run side by side, each
 * on a free core of its type (not necessarily one cluster), each a record of its own in one group,
 * and the task id a submit returns is the last one's (a dependency on it waits for all of them);
 * the blocks of an SPMD task (launch_spec.set_block_num) run side by side on as many cores of the
 * type as are free (with require_sync_start, the blocks taken first wait until every block has a
 * core, then all start); a predicate is read by every block, so a false
 * one still takes a core per block for the read; dump()'s marks reach the runtime, which writes
 * them (pto_worker_set_dump_args, PyPTO's enable_dump_args levels) as simpler's dump_viewer reads
 * them, scalars as their 64-bit slots (dtype uint64); set_tensor_data converts its value to the
 * tensor's dtype.
 *
 * set_allow_early_resolve(true) on a task lets its successors be staged, as PyPTO's runtime
 * does: once every block of it is on a core, a successor whose every unfinished predecessor is
 * such a running task is given to a core of its type, which holds it (the core is taken) and
 * starts it the moment the last predecessor ends. The sim has no launch latency to hide, so this
 * changes when cores are taken, not results; the records show it (pto_task_record.staged_ns, the
 * capture's dispatch time, deps.json's early_dispatch). */
#ifndef PTO_ORCHESTRATION_API_H
#define PTO_ORCHESTRATION_API_H

#include <algorithm>
#include <array>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "pto/orch_abi.h"

#ifndef PTO_ORCH_MAX_TENSOR_ARGS
#define PTO_ORCH_MAX_TENSOR_ARGS 32
#endif
#ifndef PTO_ORCH_MAX_SCALAR_ARGS
#define PTO_ORCH_MAX_SCALAR_ARGS 32
#endif

constexpr int32_t MAX_TENSOR_ARGS = PTO_ORCH_MAX_TENSOR_ARGS;
constexpr int32_t MAX_SCALAR_ARGS = PTO_ORCH_MAX_SCALAR_ARGS;
constexpr int32_t MAX_TENSOR_DIMS = PTO_MAX_RANK;
constexpr int32_t RUNTIME_MAX_TENSOR_DIMS = PTO_MAX_RANK;

/* Values are pto_dtype's. */
enum class DataType : int32_t {
  BOOL = PTO_DTYPE_BOOL,
  INT8 = PTO_DTYPE_I8,
  INT16 = PTO_DTYPE_I16,
  INT32 = PTO_DTYPE_I32,
  INT64 = PTO_DTYPE_I64,
  UINT8 = PTO_DTYPE_U8,
  UINT16 = PTO_DTYPE_U16,
  UINT32 = PTO_DTYPE_U32,
  UINT64 = PTO_DTYPE_U64,
  FLOAT16 = PTO_DTYPE_F16,
  BFLOAT16 = PTO_DTYPE_BF16,
  FLOAT32 = PTO_DTYPE_F32,
  FLOAT64 = PTO_DTYPE_F64,
  INDEX = PTO_DTYPE_INDEX,
};

inline constexpr size_t get_element_size(DataType dt) {
  switch (dt) {
  case DataType::BOOL:
  case DataType::INT8:
  case DataType::UINT8: return 1;
  case DataType::INT16:
  case DataType::UINT16:
  case DataType::FLOAT16:
  case DataType::BFLOAT16: return 2;
  case DataType::INT32:
  case DataType::UINT32:
  case DataType::FLOAT32: return 4;
  default: return 8;
  }
}

/* PTO2 error codes for rt_report_fatal. */
enum : int32_t {
  PTO2_ERROR_NONE = 0,
  PTO2_ERROR_INVALID_ARGS = 1,
  PTO2_ERROR_OUT_OF_MEMORY = 2,
  PTO2_ERROR_EXPLICIT_ORCH_FATAL = 3,
};

namespace pto_orch_detail {
/* The calling thread's runtime table, set by pto_orch_bind. */
__attribute__((visibility("hidden"))) inline thread_local const pto_orch_api *tls_api = nullptr;
template <typename T> struct dependent_false : std::false_type {};
} // namespace pto_orch_detail

/* ---- scalar bits ------------------------------------------------------------------------ */

/* The 64-bit slot of a value, as PyPTO's runtime packs it: the value's bytes in the low bytes,
 * the rest zero. So a float is its IEEE bits in the low 32, and a signed 32-bit -1 is
 * 0x00000000ffffffff (zero-extended, not sign-extended). from_u64 takes the low bytes back. */
template <typename T> inline uint64_t to_u64(T value) {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  static_assert(sizeof(U) <= sizeof(uint64_t), "to_u64: the type must fit in 8 bytes");
  static_assert(std::is_trivially_copyable_v<U>, "to_u64: the type must be trivially copyable");
  uint64_t bits = 0;
  U v = value;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

namespace pto_orch_detail {
/* The dtype code (PTO_DTYPE_* + 1; 0: not known) of a scalar of type T, for the argument dump. */
template <typename T> constexpr uint8_t scalar_code() {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<U, bool>)
    return PTO_DTYPE_BOOL + 1;
  else if constexpr (std::is_same_v<U, float>)
    return PTO_DTYPE_F32 + 1;
  else if constexpr (std::is_same_v<U, double>)
    return PTO_DTYPE_F64 + 1;
  else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>)
    return sizeof(U) == 1   ? PTO_DTYPE_I8 + 1
           : sizeof(U) == 2 ? PTO_DTYPE_I16 + 1
           : sizeof(U) == 4 ? PTO_DTYPE_I32 + 1
                            : PTO_DTYPE_I64 + 1;
  else if constexpr (std::is_integral_v<U>)
    return sizeof(U) == 1   ? PTO_DTYPE_U8 + 1
           : sizeof(U) == 2 ? PTO_DTYPE_U16 + 1
           : sizeof(U) == 4 ? PTO_DTYPE_U32 + 1
                            : PTO_DTYPE_U64 + 1;
  else
    return 0;
}
} // namespace pto_orch_detail

/* A scalar already in its 64-bit slot, with its dtype (pto_slot): what add_scalar takes from
 * generated code. */
struct PtoSlot {
  uint64_t bits;
  int32_t dtype;
  operator uint64_t() const { return bits; }
};

template <typename T> inline T from_u64(uint64_t bits) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "from_u64: the type must fit in 8 bytes");
  static_assert(std::is_trivially_copyable_v<T>, "from_u64: the type must be trivially copyable");
  T v;
  std::memcpy(static_cast<void *>(&v), &bits, sizeof v);
  return v;
}

/* ---- runtime calls ------------------------------------------------------------------------ */

inline const pto_orch_api *pto_orch_current_api() { return pto_orch_detail::tls_api; }

/* Fails the launch with a message (printf format). */
__attribute__((format(printf, 2, 3))) inline void rt_report_fatal(int32_t code, const char *fmt,
                                                                  ...) {
  const pto_orch_api *api = pto_orch_detail::tls_api;
  if (!api) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  api->report_fatal(api->ctx, code, msg);
}

inline bool rt_is_fatal() {
  const pto_orch_api *api = pto_orch_detail::tls_api;
  return !api || api->is_fatal(api->ctx) != 0;
}

namespace pto_orch_detail {
/* always_assert's failure: the launch fails with the condition and where it is. */
inline void assert_failed(const char *condition, const char *file, int line) {
  rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "Assertion failed: %s at %s:%d", condition, file, line);
}
} // namespace pto_orch_detail

/* PyPTO's assertion macros. A false condition fails the launch ("Assertion failed: COND at
 * FILE:LINE"). PyPTO's runtime throws there; this header has no exceptions, so the orchestration
 * goes on to its end with every later submit ignored (rt_is_fatal() is true): code after a failed
 * assertion must not rely on it to stay in bounds of host memory. debug_assert is checked unless
 * NDEBUG is defined, as PyPTO's is. A definition made before this header is kept. */
#ifndef always_assert
#define always_assert(cond)                                                                        \
  do {                                                                                             \
    if (!(cond)) pto_orch_detail::assert_failed(#cond, __FILE__, __LINE__);                        \
  } while (0)
#endif
#ifndef debug_assert
#ifdef NDEBUG
#define debug_assert(cond) ((void)0)
#else
#define debug_assert(cond) always_assert(cond)
#endif
#endif

/* A scope's mode: AUTO orders its tasks by the tensor regions they touch; MANUAL only by the
 * dependencies given with set_dependencies (and an argument's creator, for a manual_dep tensor). */
enum class PTO2ScopeMode : uint8_t {
  AUTO = 0,
  MANUAL = 1,
};
using ScopeMode = PTO2ScopeMode;

inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
  if (const pto_orch_api *api = pto_orch_detail::tls_api)
    api->scope_begin_mode(api->ctx, static_cast<int32_t>(mode));
}
inline void rt_scope_end() {
  if (const pto_orch_api *api = pto_orch_detail::tls_api) api->scope_end(api->ctx);
}

/* Everything is submitted: the orchestration's span (device_wall.orch) ends here. */
inline void rt_orchestration_done() {
  if (const pto_orch_api *api = pto_orch_detail::tls_api) api->orchestration_done(api->ctx);
}

/* This worker's cube cores: one per cluster, as on the chip. Size an AIC or mixed launch on it. */
inline int32_t rt_available_cluster_count() {
  const pto_orch_api *api = pto_orch_detail::tls_api;
  return api ? api->core_count(api->ctx, PTO_CORE_AIC) : 0;
}
/* This worker's vector cores. Size an AIV-only launch on it. */
inline int32_t rt_available_aiv_count() {
  const pto_orch_api *api = pto_orch_detail::tls_api;
  return api ? api->core_count(api->ctx, PTO_CORE_AIV) : 0;
}

namespace pto_orch_detail {
__attribute__((format(printf, 3, 4))) inline void log(int32_t level, const char *func,
                                                      const char *fmt, ...) {
  const pto_orch_api *api = tls_api;
  if (!api) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  api->log(api->ctx, level, func, msg);
}
} // namespace pto_orch_detail

/* Orchestration log lines go to the runtime, which writes them to stderr as PTO_LOG_LEVEL says
 * (error and warn always; timing, info, debug when that level or a later one is set). */
#define LOG_ERROR(...) pto_orch_detail::log(PTO_ORCH_LOG_ERROR, __FUNCTION__, __VA_ARGS__)
#define LOG_WARN(...) pto_orch_detail::log(PTO_ORCH_LOG_WARN, __FUNCTION__, __VA_ARGS__)
#define LOG_TIMING(...) pto_orch_detail::log(PTO_ORCH_LOG_TIMING, __FUNCTION__, __VA_ARGS__)
#define LOG_INFO(...) pto_orch_detail::log(PTO_ORCH_LOG_INFO, __FUNCTION__, __VA_ARGS__)
#define LOG_DEBUG(...) pto_orch_detail::log(PTO_ORCH_LOG_DEBUG, __FUNCTION__, __VA_ARGS__)
#define LOG_ALWAYS(...) pto_orch_detail::log(PTO_ORCH_LOG_ERROR, __FUNCTION__, __VA_ARGS__)

/* ---- tensors ------------------------------------------------------------------------------ */

/* A task of the launch: its submission order, from 0. */
struct TaskId {
  int64_t value;
  static constexpr TaskId invalid() { return TaskId{-1}; }
  bool is_valid() const { return value >= 0; }
  bool operator==(const TaskId &o) const { return value == o.value; }
  bool operator!=(const TaskId &o) const { return value != o.value; }
};
using PTO2TaskId = TaskId;

/* A strided view of a device buffer, with the reference runtime's field types (uint32_t shapes
 * and ndims, so `uint32_t s[2] = {t.shapes[0], 16};` compiles with every compiler); the runtime's
 * pto_orch_tensor, with 64-bit extents, is converted at the boundary (to_c / from_c). */
struct ChipTensor {
  uint64_t buffer; /* device address of the whole allocation */
  uint64_t addr;   /* device address of element [0,..,0] */
  uint32_t shapes[PTO_MAX_RANK];
  int64_t strides[PTO_MAX_RANK]; /* elements */
  uint32_t ndims;
  DataType dtype;
  TaskId owner_task_id;  /* the task whose output created it; invalid otherwise */
  uint64_t start_offset; /* elements from buffer to addr */
  bool manual_dep;       /* ordered after owner_task_id only: no region tracking */

  const ChipTensor &ref() const { return *this; }
  size_t element_size() const { return get_element_size(dtype); }
  int64_t numel() const {
    int64_t n = 1;
    for (uint32_t d = 0; d < ndims; d++)
      n *= shapes[d];
    return n;
  }
  uint64_t nbytes() const { return static_cast<uint64_t>(numel()) * element_size(); }
  /* The buffer's device address as a T*: a device pointer, as on the chip (not for the host to
   * dereference: read elements with get_tensor_data). */
  template <typename T> T *data_as() const {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(buffer));
  }
  bool is_contiguous() const {
    int64_t s = 1;
    for (uint32_t d = ndims; d-- > 0;) {
      if (shapes[d] != 1 && strides[d] != s) return false;
      s *= shapes[d];
    }
    return true;
  }
  /* A sub-view: shape[d] elements from offset[d] in every dim; an extent past the edge is
   * clamped to it (as tensor.slice does). manual_dep: the view is ordered after its creator
   * only. */
  template <typename S, typename O>
  ChipTensor view(const S *shape, const O *offset, bool in_manual_dep = false) const {
    static_assert(std::is_integral_v<S> && std::is_integral_v<O>, "view: integer shape and offset");
    ChipTensor v = *this;
    int64_t off = 0;
    for (uint32_t d = 0; d < ndims; d++) {
      int64_t o = static_cast<int64_t>(offset[d]);
      int64_t n = static_cast<int64_t>(shape[d]);
      const int64_t extent = shapes[d];
      if (o > extent) o = extent;
      if (n > extent - o) n = extent - o;
      if (n < 0) n = 0;
      v.shapes[d] = static_cast<uint32_t>(n);
      off += o * strides[d];
    }
    v.addr = addr + static_cast<uint64_t>(off * static_cast<int64_t>(element_size()));
    v.start_offset = start_offset + static_cast<uint64_t>(off);
    v.manual_dep = in_manual_dep;
    return v;
  }
  /* The same elements in a new row-major shape; the view must be contiguous and the element
   * count must stay (else the launch fails and an empty view is returned). */
  template <typename S>
  ChipTensor reshape(const S *new_shapes, uint32_t new_ndims, bool in_manual_dep = false) const;
  /* Dims x and y swapped (shape and stride together): no data moves. */
  ChipTensor transpose(uint32_t x, uint32_t y, bool in_manual_dep = false) const;
  bool valid_transpose(uint32_t x, uint32_t y) const { return x < ndims && y < ndims; }
  /* Whether new_shapes holds as many elements as this view (what reshape also needs: a
   * contiguous view). */
  template <typename S> bool valid_reshape(const S *new_shapes, uint32_t new_ndims) const {
    static_assert(std::is_integral_v<S>, "valid_reshape: integer shape");
    int64_t n = 1;
    for (uint32_t d = 0; d < new_ndims; d++)
      n *= static_cast<int64_t>(new_shapes[d]);
    return n == numel();
  }
  /* Dim d of the result is dim order[d] of this view (shape and stride together). */
  ChipTensor permute(const uint32_t order[], bool in_manual_dep = false) const;
  /* Elements start, start + step, ... (before end) of dim: the extent becomes
   * ceil((end - start) / step) and the stride step times the old one. start < end <= the extent
   * and step >= 1, else the launch fails and an empty view is returned. */
  ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1,
                   bool in_manual_dep = false) const;
  /* The runtime's form of this view. */
  pto_orch_tensor to_c() const {
    pto_orch_tensor c;
    std::memset(&c, 0, sizeof c);
    c.buffer = buffer;
    c.addr = addr;
    for (int d = 0; d < PTO_MAX_RANK; d++) {
      c.shape[d] = shapes[d];
      c.stride[d] = strides[d];
    }
    c.rank = static_cast<int32_t>(ndims);
    c.dtype = static_cast<int32_t>(dtype);
    c.owner_task_id = owner_task_id.value;
    c.start_offset = start_offset;
    c.manual_dep = manual_dep ? 1 : 0;
    return c;
  }
  /* A view from the runtime's form (extents beyond uint32_t are not representable here). */
  static ChipTensor from_c(const pto_orch_tensor &c) {
    ChipTensor t{};
    t.buffer = c.buffer;
    t.addr = c.addr;
    for (int d = 0; d < PTO_MAX_RANK; d++) {
      t.shapes[d] = static_cast<uint32_t>(c.shape[d]);
      t.strides[d] = c.stride[d];
    }
    t.ndims = static_cast<uint32_t>(c.rank);
    t.dtype = static_cast<DataType>(c.dtype);
    t.owner_task_id = TaskId{c.owner_task_id};
    t.start_offset = c.start_offset;
    t.manual_dep = c.manual_dep != 0;
    return t;
  }
};
static_assert(std::is_standard_layout_v<ChipTensor> && std::is_trivial_v<ChipTensor>,
              "ChipTensor must stay plain data");
/* The runtime reads and writes ChipTensors as pto_orch_chip_tensor (submit_args). */
static_assert(sizeof(ChipTensor) == sizeof(pto_orch_chip_tensor) &&
                  offsetof(ChipTensor, addr) == offsetof(pto_orch_chip_tensor, addr) &&
                  offsetof(ChipTensor, shapes) == offsetof(pto_orch_chip_tensor, shapes) &&
                  offsetof(ChipTensor, strides) == offsetof(pto_orch_chip_tensor, strides) &&
                  offsetof(ChipTensor, ndims) == offsetof(pto_orch_chip_tensor, ndims) &&
                  offsetof(ChipTensor, dtype) == offsetof(pto_orch_chip_tensor, dtype) &&
                  offsetof(ChipTensor, owner_task_id) ==
                      offsetof(pto_orch_chip_tensor, owner_task_id) &&
                  offsetof(ChipTensor, start_offset) ==
                      offsetof(pto_orch_chip_tensor, start_offset) &&
                  offsetof(ChipTensor, manual_dep) == offsetof(pto_orch_chip_tensor, manual_dep) &&
                  sizeof(TaskId) == sizeof(int64_t) && sizeof(bool) == sizeof(uint8_t) &&
                  sizeof(DataType) == sizeof(int32_t),
              "ChipTensor must have the layout of pto_orch_chip_tensor");
using Tensor = ChipTensor;

namespace pto_orch_detail {
inline const ChipTensor &null_tensor() {
  static const ChipTensor t{};
  return t;
}
} // namespace pto_orch_detail

template <typename S>
inline ChipTensor ChipTensor::reshape(const S *new_shapes, uint32_t new_ndims,
                                      bool in_manual_dep) const {
  static_assert(std::is_integral_v<S>, "reshape: integer shape");
  int64_t n = 1;
  for (uint32_t d = 0; d < new_ndims && d < static_cast<uint32_t>(PTO_MAX_RANK); d++)
    n *= static_cast<int64_t>(new_shapes[d]);
  if (new_ndims < 1 || new_ndims > static_cast<uint32_t>(PTO_MAX_RANK) || n != numel() ||
      !is_contiguous()) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                    "reshape: a rank-%u view of %lld elements from a %s view of %lld elements",
                    new_ndims, static_cast<long long>(n),
                    is_contiguous() ? "contiguous" : "strided", static_cast<long long>(numel()));
    return pto_orch_detail::null_tensor();
  }
  ChipTensor r = *this;
  r.ndims = new_ndims;
  int64_t stride = 1;
  for (uint32_t d = PTO_MAX_RANK; d-- > 0;) {
    r.shapes[d] = d < r.ndims ? static_cast<uint32_t>(new_shapes[d]) : 0;
    r.strides[d] = d < r.ndims ? stride : 0;
    if (d < r.ndims) stride *= r.shapes[d];
  }
  r.manual_dep = in_manual_dep;
  return r;
}

inline ChipTensor ChipTensor::transpose(uint32_t x, uint32_t y, bool in_manual_dep) const {
  if (x >= ndims || y >= ndims) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "transpose(%u, %u) of a rank-%u view", x, y, ndims);
    return pto_orch_detail::null_tensor();
  }
  ChipTensor r = *this;
  std::swap(r.shapes[x], r.shapes[y]);
  std::swap(r.strides[x], r.strides[y]);
  r.manual_dep = in_manual_dep;
  return r;
}

inline ChipTensor ChipTensor::permute(const uint32_t order[], bool in_manual_dep) const {
  ChipTensor r = *this;
  for (uint32_t d = 0; d < ndims; d++) {
    if (order[d] >= ndims) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "permute: order[%u] = %u of a rank-%u view", d,
                      order[d], ndims);
      return pto_orch_detail::null_tensor();
    }
    r.shapes[d] = shapes[order[d]];
    r.strides[d] = strides[order[d]];
  }
  r.manual_dep = in_manual_dep;
  return r;
}

inline ChipTensor ChipTensor::slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step,
                                    bool in_manual_dep) const {
  if (dim >= ndims || step < 1 || end <= start || end > shapes[dim]) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                    "slice(%u, %u, %u, %u) of a view of extent %u in dim %u", dim, start, end, step,
                    dim < ndims ? shapes[dim] : 0, dim);
    return pto_orch_detail::null_tensor();
  }
  ChipTensor r = *this;
  const int64_t off = static_cast<int64_t>(start) * strides[dim];
  r.addr = addr + static_cast<uint64_t>(off * static_cast<int64_t>(element_size()));
  r.start_offset = start_offset + static_cast<uint64_t>(off);
  r.shapes[dim] = (end - start + step - 1) / step;
  r.strides[dim] = strides[dim] * static_cast<int64_t>(step);
  r.manual_dep = in_manual_dep;
  return r;
}

/* An entry tensor as an orchestration tensor (PyPTO's older spelling): a copy, with manual_dep. */
inline ChipTensor from_tensor_arg(const ChipTensor &t, bool manual_dep = false,
                                  int32_t version = 0) {
  (void)version;
  ChipTensor c = t;
  c.manual_dep = manual_dep;
  return c;
}

/* A tensor over device memory the orchestration already has (addr: a buffer's device address,
 * as data_as gives it), row-major. Dependency tracking needs addr to start a live allocation. */
template <typename S>
inline ChipTensor make_tensor_external(void *addr, const S shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                       int32_t version = 0) {
  static_assert(std::is_integral_v<S>, "make_tensor_external: integer shape");
  (void)version;
  ChipTensor t{};
  if (ndims < 1 || ndims > static_cast<uint32_t>(PTO_MAX_RANK)) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "make_tensor_external: rank %u (1 to %d)", ndims,
                    PTO_MAX_RANK);
    return t;
  }
  t.buffer = t.addr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(addr));
  t.ndims = ndims;
  t.dtype = dtype;
  t.owner_task_id = TaskId::invalid();
  t.manual_dep = manual_dep;
  int64_t stride = 1;
  for (uint32_t d = t.ndims; d-- > 0;) {
    t.shapes[d] = static_cast<uint32_t>(shapes[d]);
    t.strides[d] = stride;
    stride *= t.shapes[d];
  }
  return t;
}

/* An intermediate to be allocated (tensor.create) when the task that outputs it is submitted, or
 * by alloc_tensors: zero-filled, or every element set_initial_value's. */
struct TensorCreateInfo {
  uint32_t shapes[PTO_MAX_RANK];
  uint32_t ndims; /* 0: a rank out of range (an error at submit) */
  DataType dtype;
  bool has_initial_value = false;
  uint64_t initial_value = 0; /* one element's bytes, low bytes first */

  /* Every element starts as value, converted to the dtype (a float to an f16, say). */
  template <typename T> void set_initial_value(T value);
  /* The bytes of the tensor it creates (every extent times the element size). */
  uint64_t buffer_size_bytes() const {
    uint64_t n = 1;
    for (uint32_t d = 0; d < ndims; d++)
      n *= shapes[d];
    return n * get_element_size(dtype);
  }

  template <typename S>
  TensorCreateInfo(const S *shape, uint32_t ndims_, DataType dtype_ = DataType::FLOAT32,
                   bool zero_init = false)
      : shapes{}, ndims(ndims_ <= static_cast<uint32_t>(PTO_MAX_RANK) ? ndims_ : 0), dtype(dtype_) {
    static_assert(std::is_integral_v<S>, "TensorCreateInfo: integer shape");
    (void)zero_init;
    for (uint32_t d = 0; d < ndims; d++)
      shapes[d] = static_cast<uint32_t>(shape[d]);
  }
};

/* ---- task options ------------------------------------------------------------------------- */

/* SPMD launch parameters: the kernel runs block_num times, once per block (ctx->block_idx). */
class PTO2LaunchSpec {
public:
  void set_block_num(int32_t n) { block_num_ = n; }
  int32_t block_num() const { return block_num_; }
  void set_core_num(int32_t n) { block_num_ = n; }
  int32_t core_num() const { return block_num_; }
  /* Every block starts at once (the cores taken first wait for the last): block_num may not
   * exceed the cores of the task's type. */
  void set_require_sync_start(bool v = true) { require_sync_start_ = v; }
  bool require_sync_start() const { return require_sync_start_; }

private:
  int32_t block_num_ = 1;
  bool require_sync_start_ = false;
};
using LaunchSpec = PTO2LaunchSpec;

/* The dispatch predicate's comparison: the task's kernels run only when operand OP target. */
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

/* One element of a tensor (tensor + ndims + indices, as get_tensor_data). */
struct CorePredicateOperand {
  const ChipTensor *tensor{nullptr};
  uint32_t ndims{0};
  uint32_t indices[MAX_TENSOR_DIMS]{};
};

/* Evaluated when the task is ready (its dependencies done), on the core: false retires the task
 * without running its kernels, and its successors go on. */
struct CoreTaskPredicate {
  CorePredicateOperand operand;
  PredicateOp op{PredicateOp::NONE};
  int64_t target{0};
};

/* The kernels of one task: a cube kernel and two vector kernels; INVALID_KERNEL_ID leaves a slot
 * empty. */
constexpr int32_t INVALID_KERNEL_ID = -1;
struct MixedKernels {
  int32_t aic_kernel_id{INVALID_KERNEL_ID};
  int32_t aiv0_kernel_id{INVALID_KERNEL_ID};
  int32_t aiv1_kernel_id{INVALID_KERNEL_ID};
};

/* The entry's arguments; the layout of pto_orch_args. */
class TensorArg {
public:
  explicit TensorArg(const ChipTensor *p) : p_(p) {}
  const ChipTensor &ref() const { return *p_; }
  operator const ChipTensor &() const { return *p_; }

private:
  const ChipTensor *p_;
};

struct ChipTaskArgs {
  const pto_orch_tensor *tensors_;
  const uint64_t *scalars_;
  int32_t ntensors_;
  int32_t nscalars_;
  const ChipTensor *chip_tensors_; /* the runtime's ChipTensor copies of tensors_ */

  int32_t tensor_count() const { return ntensors_; }
  int32_t scalar_count() const { return nscalars_; }
  TensorArg tensor(int32_t i) const {
    if (i < 0 || i >= ntensors_ || !chip_tensors_) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                      chip_tensors_ ? "entry tensor %d is out of range (%d tensors)"
                                    : "entry tensor %d: the arguments carry no ChipTensors (%d "
                                      "tensors)",
                      i, ntensors_);
      return TensorArg(&pto_orch_detail::null_tensor());
    }
    return TensorArg(&chip_tensors_[i]);
  }
  uint64_t scalar(int32_t i) const {
    if (i < 0 || i >= nscalars_) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "entry scalar %d is out of range (%d scalars)", i,
                      nscalars_);
      return 0;
    }
    return scalars_[i];
  }
  template <typename T> T scalar(int32_t i) const { return from_u64<T>(scalar(i)); }
};
static_assert(std::is_standard_layout_v<ChipTaskArgs> &&
                  sizeof(ChipTaskArgs) == sizeof(pto_orch_args) &&
                  offsetof(ChipTaskArgs, scalars_) == offsetof(pto_orch_args, scalars) &&
                  offsetof(ChipTaskArgs, ntensors_) == offsetof(pto_orch_args, ntensors) &&
                  offsetof(ChipTaskArgs, nscalars_) == offsetof(pto_orch_args, nscalars) &&
                  offsetof(ChipTaskArgs, chip_tensors_) == offsetof(pto_orch_args, chip_tensors),
              "ChipTaskArgs must have the layout of pto_orch_args");

/* ---- tasks -------------------------------------------------------------------------------- */

class CoreTaskArgs;
class TaskOutputTensors;
namespace pto_orch_detail {
inline TaskOutputTensors submit(const MixedKernels &mk, const CoreTaskArgs &args);
} // namespace pto_orch_detail

/* One task's arguments, in add_* order (tensors) and add_scalar order (scalars). */
class CoreTaskArgs {
public:
  enum SlotKind : int32_t {
    IN = PTO_ORCH_ARG_IN,
    OUT = PTO_ORCH_ARG_OUT,
    INOUT = PTO_ORCH_ARG_INOUT,
    CREATE = PTO_ORCH_ARG_CREATE
  };

  CoreTaskArgs() : has_error(false), error_msg(nullptr), ntensors_(0), nscalars_(0) {}
  CoreTaskArgs(const CoreTaskArgs &) = delete;
  CoreTaskArgs &operator=(const CoreTaskArgs &) = delete;

  bool has_error;
  const char *error_msg;
  PTO2LaunchSpec launch_spec;

  /* Explicit dependencies, kept by pointer as PyPTO's Arg does: the array must outlive the
   * submit. An invalid id is skipped. count 0 clears; a second non-empty call is an error. */
  void set_dependencies(const TaskId *deps, uint32_t count) {
    if (count == 0) {
      deps_ = nullptr;
      ndeps_ = 0;
      return;
    }
    if (!deps) {
      set_error("set_dependencies: deps must not be null when count > 0");
      return;
    }
    if (deps_) {
      set_error("set_dependencies: may be called at most once per Arg");
      return;
    }
    deps_ = deps;
    ndeps_ = count;
  }
  uint32_t explicit_dep_count() const { return ndeps_; }
  TaskId explicit_dep(uint32_t i) const { return i < ndeps_ ? deps_[i] : TaskId::invalid(); }
  const TaskId *explicit_deps_data() const { return deps_; }

  /* Lets this task's successors be staged on cores while it runs (see the top of this file). */
  void set_allow_early_resolve(bool v = true) { early_resolve_ = v; }
  bool allow_early_resolve() const { return early_resolve_; }

  void set_predicate(const CoreTaskPredicate &p) { predicate_ = p; }
  const CoreTaskPredicate &predicate() const { return predicate_; }

  /* Selective task timing (0 to 15), validated as PyPTO does. */
  void set_task_timing_slot(int32_t slot) {
    if (slot < 0 || slot >= 16) {
      set_error("task_timing_slot out of range (valid: 0..15)");
      return;
    }
    timing_slot_ = slot;
  }
  int32_t task_timing_slot() const { return timing_slot_; }

  /* Marks arguments already added (none: all of them) for the tensor dump
   * (pto_worker_set_dump_args); an argument that is not part of this task is an error.
   * dump_arg_mask() has bit i for tensor i, then the scalars. */
  template <typename... Ts> void dump(const Ts &...ts) {
    if constexpr (sizeof...(Ts) == 0) {
      if (ntensors_ + nscalars_ == 0) set_error("dump: no arguments added to this Arg");
      for (int32_t i = 0; i < ntensors_ + nscalars_ && i < 64; i++)
        dump_mask_ |= uint64_t{1} << i;
    } else {
      (mark_dump(ts), ...);
    }
  }
  uint64_t dump_arg_mask() const { return dump_mask_; }

  template <typename... Ts> void add_input(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_input: at least one tensor");
    (add_tensor(IN, ts), ...);
  }
  /* ChipTensors are written in place; a TensorCreateInfo becomes a new intermediate. */
  template <typename... Ts> void add_output(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_output: at least one tensor");
    (add_out_one(ts), ...);
  }
  template <typename... Ts> void add_inout(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_inout: at least one tensor");
    (add_tensor(INOUT, ts), ...);
  }
  template <typename... Ts> void add_scalar(Ts... vs) {
    static_assert(sizeof...(Ts) >= 1, "add_scalar: at least one value");
    (add_scalar_typed(vs), ...);
  }
  void add_scalars(const uint64_t *values, int count) {
    for (int i = 0; i < count; i++)
      add_scalar_one(values[i]);
  }
  void add_scalars_i32(const int32_t *values, int count) {
    for (int i = 0; i < count; i++)
      add_scalar_one(static_cast<uint64_t>(static_cast<uint32_t>(values[i])), PTO_DTYPE_I32 + 1);
  }
  void copy_scalars_from(const CoreTaskArgs &src, int src_offset, int count) {
    if (src_offset < 0 || count < 0 || src_offset + count > src.nscalars_) {
      set_error("Source scalar range out of bounds in copy_scalars_from");
      return;
    }
    for (int i = 0; i < count; i++)
      add_scalar_one(src.scalars_[src_offset + i], src.scalar_codes_[src_offset + i]);
  }
  /* A tensor ordered after its creator task only: no region tracking for it. */
  template <typename... Ts> void add_no_dep(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_no_dep: at least one tensor");
    (add_no_dep_one(ts), ...);
  }
  void set_error(const char *msg) {
    if (!has_error) {
      has_error = true;
      error_msg = msg;
    }
  }
  void clear() {
    ntensors_ = 0;
    nscalars_ = 0;
    deps_ = nullptr;
    ndeps_ = 0;
    early_resolve_ = false;
    predicate_ = CoreTaskPredicate{};
    timing_slot_ = -1;
    dump_mask_ = 0;
    launch_spec = PTO2LaunchSpec{};
  }
  void reset() {
    clear();
    has_error = false;
    error_msg = nullptr;
  }
  int32_t tensor_count() const { return ntensors_; }
  int32_t scalar_count() const { return nscalars_; }
  int32_t tensor_kind(int32_t i) const { return kinds_[i]; }
  const ChipTensor &tensor(int32_t i) const { return tensors_[i]; }
  uint64_t scalar(int32_t i) const { return scalars_[i]; }
  /* The initial value of a TensorCreateInfo output, when it has one. */
  bool initial_value(int32_t i, uint64_t *out) const {
    *out = inits_[i];
    return has_init_[i];
  }

private:
  /* Out of line: one copy per orchestration object, not one per add_* call (compile time). */
  __attribute__((noinline)) void add_tensor(int32_t kind, const ChipTensor &t) {
    if (ntensors_ >= MAX_TENSOR_ARGS) {
      set_error("too many tensor arguments in one task (PTO_ORCH_MAX_TENSOR_ARGS)");
      return;
    }
    kinds_[ntensors_] = kind;
    has_init_[ntensors_] = false;
    inits_[ntensors_] = 0;
    tensors_[ntensors_++] = t;
  }
  void add_no_dep_one(const ChipTensor &t) {
    ChipTensor c = t;
    c.manual_dep = true;
    add_tensor(IN, c);
  }
  void mark_dump(const ChipTensor &t) {
    for (int32_t i = 0; i < ntensors_; i++)
      if (kinds_[i] != CREATE && same_view(tensors_[i], t)) {
        dump_mask_ |= uint64_t{1} << i;
        return;
      }
    set_error("dump: tensor is not part of this Arg");
  }
  static bool same_view(const ChipTensor &a, const ChipTensor &b) {
    if (a.buffer != b.buffer || a.addr != b.addr || a.ndims != b.ndims || a.dtype != b.dtype ||
        a.start_offset != b.start_offset || a.owner_task_id != b.owner_task_id ||
        a.manual_dep != b.manual_dep)
      return false;
    for (uint32_t d = 0; d < a.ndims && d < static_cast<uint32_t>(PTO_MAX_RANK); d++)
      if (a.shapes[d] != b.shapes[d] || a.strides[d] != b.strides[d]) return false;
    return true;
  }
  void mark_dump(const TensorCreateInfo &ci) {
    for (int32_t i = 0; i < ntensors_; i++)
      if (kinds_[i] == CREATE && tensors_[i].ndims == ci.ndims && tensors_[i].dtype == ci.dtype &&
          std::memcmp(tensors_[i].shapes, ci.shapes, sizeof ci.shapes) == 0) {
        dump_mask_ |= uint64_t{1} << i;
        return;
      }
    set_error("dump: TensorCreateInfo is not part of this Arg");
  }
  template <typename T> void mark_dump(const T &scalar) {
    static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T>,
                  "dump: all arguments must be ChipTensor, TensorCreateInfo, or scalars");
    uint64_t v = to_u64(scalar);
    for (int32_t i = 0; i < nscalars_; i++)
      if (scalars_[i] == v && ntensors_ + i < 64) {
        dump_mask_ |= uint64_t{1} << (ntensors_ + i);
        return;
      }
    set_error("dump: scalar is not part of this Arg");
  }
  void add_out_one(const ChipTensor &t) { add_tensor(OUT, t); }
  void add_out_one(const TensorCreateInfo &ci) {
    if (ci.ndims < 1) {
      set_error("TensorCreateInfo: rank out of range (1 to PTO_MAX_RANK)");
      return;
    }
    ChipTensor t{};
    std::memcpy(t.shapes, ci.shapes, sizeof t.shapes);
    t.ndims = ci.ndims;
    t.dtype = ci.dtype;
    add_tensor(CREATE, t);
    if (ntensors_ > 0 && kinds_[ntensors_ - 1] == CREATE) {
      has_init_[ntensors_ - 1] = ci.has_initial_value;
      inits_[ntensors_ - 1] = ci.initial_value;
    }
  }
  friend TaskOutputTensors pto_orch_detail::submit(const MixedKernels &, const CoreTaskArgs &);
  template <typename T> void add_scalar_typed(T v) {
    add_scalar_one(to_u64(v), pto_orch_detail::scalar_code<T>());
  }
  void add_scalar_typed(PtoSlot s) {
    add_scalar_one(s.bits, s.dtype >= 0 && s.dtype < PTO_DTYPE_COUNT ? s.dtype + 1 : 0);
  }
  void add_scalar_one(uint64_t v, uint8_t code = 0) {
    if (nscalars_ >= MAX_SCALAR_ARGS) {
      set_error("too many scalar arguments in one task (PTO_ORCH_MAX_SCALAR_ARGS)");
      return;
    }
    scalar_codes_[nscalars_] = code;
    scalars_[nscalars_++] = v;
  }

  int32_t ntensors_, nscalars_;
  const TaskId *deps_ = nullptr;
  uint32_t ndeps_ = 0;
  bool early_resolve_ = false;
  CoreTaskPredicate predicate_{};
  int32_t timing_slot_ = -1;
  uint64_t dump_mask_ = 0;
  bool has_init_[MAX_TENSOR_ARGS];
  uint64_t inits_[MAX_TENSOR_ARGS];
  int32_t kinds_[MAX_TENSOR_ARGS];
  ChipTensor tensors_[MAX_TENSOR_ARGS];
  uint64_t scalars_[MAX_SCALAR_ARGS];
  uint8_t scalar_codes_[MAX_SCALAR_ARGS]; /* PTO_DTYPE_* + 1 each; 0: not known */
};
using Arg = CoreTaskArgs;
using PTOParam = CoreTaskArgs;
using L0TaskArgs = CoreTaskArgs;

/* CoreTaskArgs that keeps up to N explicit dependencies itself: add_dep(id) instead of an array
 * for set_dependencies that must outlive the submit. */
template <size_t N = 16> class CoreTaskArgsWithDeps : public CoreTaskArgs {
public:
  void add_dep(TaskId id) {
    if (ndeps_kept_ >= N) {
      set_error("add_dep: more dependencies than CoreTaskArgsWithDeps<N> holds");
      return;
    }
    kept_[ndeps_kept_++] = id;
    set_dependencies(nullptr, 0);
    set_dependencies(kept_, ndeps_kept_);
  }
  template <typename... Ids> void add_deps(Ids... ids) { (add_dep(ids), ...); }

private:
  TaskId kept_[N];
  uint32_t ndeps_kept_ = 0;
};
template <size_t N = 16> using L0TaskArgsWithDeps = CoreTaskArgsWithDeps<N>;
/* The arguments at a Graph boundary (rt_submit_graph). */
using GraphTaskArgs = CoreTaskArgs;

/* What a submit returns: the intermediates it created (add_output(TensorCreateInfo) order) and
 * a task id. Borrow outputs from a named variable: get_ref on a temporary does not compile. */
class TaskOutputTensors {
public:
  TaskOutputTensors() : n_(0), id_(TaskId::invalid()) {}
  bool empty() const { return n_ == 0; }
  uint32_t size() const { return n_; }
  const ChipTensor &get_ref(uint32_t i) const & {
    if (i >= n_) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "get_ref(%u): the task created %u outputs", i, n_);
      return pto_orch_detail::null_tensor();
    }
    return outs_[i];
  }
  const ChipTensor &get_ref(uint32_t i) const && = delete;
  TaskId task_id() const { return id_; }

  void materialize_output(const ChipTensor &t) {
    if (n_ < static_cast<uint32_t>(MAX_TENSOR_ARGS)) outs_[n_++] = t;
  }
  void set_task_id(TaskId id) { id_ = id; }

private:
  friend TaskOutputTensors pto_orch_detail::submit(const MixedKernels &, const CoreTaskArgs &);
  uint32_t n_;
  TaskId id_;
  ChipTensor outs_[MAX_TENSOR_ARGS];
};
using TaskSubmitResult = TaskOutputTensors;

namespace pto_orch_detail {
inline bool create(const pto_orch_api *api, const ChipTensor &info, const uint64_t *init,
                   ChipTensor *out) {
  int64_t shape[PTO_MAX_RANK];
  for (int d = 0; d < PTO_MAX_RANK; d++)
    shape[d] = info.shapes[d];
  pto_orch_tensor c;
  if (api->create_tensor_init(api->ctx, static_cast<int32_t>(info.ndims), shape,
                              static_cast<int32_t>(info.dtype), init, &c) != 0)
    return false;
  *out = ChipTensor::from_c(c);
  return true;
}

/* One task: CoreTaskArgs is described (pointers and counts, no copies) to the runtime, which
 * checks and converts it (runtime/orch_args.c: TensorCreateInfo outputs created with their
 * initial values, explicit dependencies, the predicate, the launch spec checks) and submits it. */
inline TaskOutputTensors submit(const MixedKernels &mk, const CoreTaskArgs &args) {
  TaskOutputTensors out;
  const pto_orch_api *api = tls_api;
  if (!api) return out;
  pto_orch_task_args t;
  t.kernel_ids[PTO_ORCH_SLOT_AIC] = mk.aic_kernel_id;
  t.kernel_ids[PTO_ORCH_SLOT_AIV0] = mk.aiv0_kernel_id;
  t.kernel_ids[PTO_ORCH_SLOT_AIV1] = mk.aiv1_kernel_id;
  t.has_error = args.has_error;
  t.error_msg = args.error_msg;
  t.ntensors = args.ntensors_;
  t.nscalars = args.nscalars_;
  t.kinds = args.kinds_;
  t.tensors = reinterpret_cast<const pto_orch_chip_tensor *>(args.tensors_);
  t.has_init = reinterpret_cast<const uint8_t *>(args.has_init_);
  t.inits = args.inits_;
  t.scalars = args.scalars_;
  t.deps = reinterpret_cast<const int64_t *>(args.deps_);
  t.ndeps = args.ndeps_;
  t.block_num = args.launch_spec.block_num();
  t.require_sync_start = args.launch_spec.require_sync_start();
  t.allow_early_resolve = args.early_resolve_;
  t.dump_mask = args.dump_mask_;
  t.pred_op = static_cast<int32_t>(args.predicate_.op);
  t.pred_ndims = args.predicate_.operand.ndims;
  t.pred_tensor = reinterpret_cast<const pto_orch_chip_tensor *>(args.predicate_.operand.tensor);
  t.pred_indices = args.predicate_.operand.indices;
  t.pred_target = args.predicate_.target;
  t.outs = reinterpret_cast<pto_orch_chip_tensor *>(out.outs_);
  /* The scalars' dtypes for the argument dump, where the runtime takes them. */
  if (args.nscalars_ > 0 &&
      api->size >= offsetof(pto_orch_api, scalar_dtypes) + sizeof api->scalar_dtypes &&
      api->scalar_dtypes)
    api->scalar_dtypes(api->ctx, args.scalar_codes_, args.nscalars_);
  api->submit_args(api->ctx, &t, &out.n_, &out.id_.value);
  return out;
}

/* Element values cross as doubles (floats) or 64-bit integers, converted to and from the
 * tensor's dtype, so get_tensor_data<float> on an f16 tensor gives the value, not its bits. */
inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        man <<= 1;
        e++;
      } while (!(man & 0x400));
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 127 - 15) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (man ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) h++;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = static_cast<uint32_t>(exp) << 10 | man >> 13, rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return static_cast<uint16_t>(sign | h);
}

inline float bf16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

inline bool is_float(DataType dt) {
  return dt == DataType::FLOAT16 || dt == DataType::BFLOAT16 || dt == DataType::FLOAT32 ||
         dt == DataType::FLOAT64;
}
inline bool is_signed_int(DataType dt) {
  return dt == DataType::INT8 || dt == DataType::INT16 || dt == DataType::INT32 ||
         dt == DataType::INT64 || dt == DataType::INDEX;
}

/* raw element bits (little-endian, low bytes) -> value */
inline double bits_to_double(DataType dt, uint64_t b) {
  switch (dt) {
  case DataType::FLOAT16: return half_to_float(static_cast<uint16_t>(b));
  case DataType::BFLOAT16: return bf16_to_float(static_cast<uint16_t>(b));
  case DataType::FLOAT32: return from_u64<float>(b);
  default: return from_u64<double>(b);
  }
}
inline int64_t bits_to_i64(DataType dt, uint64_t b) {
  switch (get_element_size(dt)) {
  case 1: return static_cast<int8_t>(b);
  case 2: return static_cast<int16_t>(b);
  case 4: return static_cast<int32_t>(b);
  default: return static_cast<int64_t>(b);
  }
}
inline uint64_t double_to_bits(DataType dt, double v) {
  switch (dt) {
  case DataType::FLOAT16: return float_to_half(static_cast<float>(v));
  case DataType::BFLOAT16: return float_to_bf16(static_cast<float>(v));
  case DataType::FLOAT32: return to_u64(static_cast<float>(v));
  default: return to_u64(v);
  }
}

template <typename I>
inline bool indices64(const ChipTensor &t, uint32_t ndims, const I *indices, int64_t *out) {
  static_assert(std::is_integral_v<I>, "tensor data access: integer indices");
  if (ndims != t.ndims) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                    "tensor data access with %u indices on a rank-%u tensor", ndims, t.ndims);
    return false;
  }
  for (uint32_t d = 0; d < ndims; d++)
    out[d] = static_cast<int64_t>(indices[d]);
  return true;
}
} // namespace pto_orch_detail

/* One task of up to three kernels (MixedKernels), each on a core of its type. */
inline TaskOutputTensors rt_submit_task(const MixedKernels &mk, const CoreTaskArgs &args) {
  return pto_orch_detail::submit(mk, args);
}
inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
  MixedKernels mk;
  mk.aiv0_kernel_id = kernel_id;
  return rt_submit_task(mk, args);
}
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
  MixedKernels mk;
  mk.aic_kernel_id = kernel_id;
  return rt_submit_task(mk, args);
}
/* A task that runs no kernel: ordered by its arguments and dependencies like any other, so it
 * serves as a barrier or a placeholder producer. */
inline TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs &args) {
  return rt_submit_task(MixedKernels{}, args);
}
inline void pto2_rt_scope_begin() { rt_scope_begin(); }
inline void pto2_rt_scope_end() { rt_scope_end(); }
inline void pto2_rt_orchestration_done() { rt_orchestration_done(); }
inline bool pto2_rt_is_fatal() { return rt_is_fatal(); }
inline TaskOutputTensors pto2_rt_submit_task(const MixedKernels &mk, const CoreTaskArgs &args) {
  return rt_submit_task(mk, args);
}
inline TaskOutputTensors pto2_rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return rt_submit_aiv_task(kernel_id, args);
}
inline TaskOutputTensors pto2_rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return rt_submit_aic_task(kernel_id, args);
}

/* Intermediates owned by the innermost scope, outside any task. */
inline TaskOutputTensors alloc_tensors(const TensorCreateInfo *cis, uint32_t count) {
  TaskOutputTensors out;
  const pto_orch_api *api = pto_orch_detail::tls_api;
  if (!api || api->is_fatal(api->ctx)) return out;
  if (count > static_cast<uint32_t>(MAX_TENSOR_ARGS)) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "alloc_tensors: %u tensors (at most %d)", count,
                    MAX_TENSOR_ARGS);
    return out;
  }
  for (uint32_t i = 0; i < count; i++) {
    const TensorCreateInfo &ci = cis[i];
    if (ci.ndims < 1) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "alloc_tensors: rank out of range (1 to %d)",
                      PTO_MAX_RANK);
      return out;
    }
    ChipTensor info{};
    std::memcpy(info.shapes, ci.shapes, sizeof info.shapes);
    info.ndims = ci.ndims;
    info.dtype = ci.dtype;
    ChipTensor t;
    if (!pto_orch_detail::create(api, info, ci.has_initial_value ? &ci.initial_value : nullptr, &t))
      return out;
    out.materialize_output(t);
  }
  return out;
}
inline TaskOutputTensors alloc_tensors(const TensorCreateInfo cis[], int32_t count) {
  return alloc_tensors(cis, static_cast<uint32_t>(count < 0 ? 0 : count));
}
template <typename... Cs> inline TaskOutputTensors alloc_tensors(const Cs &...cis) {
  static_assert(sizeof...(Cs) > 0, "alloc_tensors requires at least one TensorCreateInfo");
  static_assert((std::is_same_v<Cs, TensorCreateInfo> && ...),
                "alloc_tensors: TensorCreateInfo only");
  const TensorCreateInfo all[] = {cis...};
  return alloc_tensors(all, static_cast<uint32_t>(sizeof...(Cs)));
}

namespace pto_orch_detail {
/* The raw bits of one element (tensor.read): waits for the tasks writing it. 0 on failure. */
template <typename I>
inline uint64_t read_raw(const ChipTensor &t, uint32_t ndims, const I *indices) {
  const pto_orch_api *api = tls_api;
  int64_t idx[PTO_MAX_RANK];
  if (!api || !indices64(t, ndims, indices, idx)) return 0;
  uint64_t bits = 0;
  const pto_orch_tensor c = t.to_c();
  if (api->read_element(api->ctx, &c, idx, &bits) != 0) return 0;
  return bits;
}

/* One element's value converted to T (an f16 element read as a float gives its value). */
template <typename T, typename I>
inline T read_value(const ChipTensor &t, uint32_t ndims, const I *indices) {
  uint64_t bits = read_raw(t, ndims, indices);
  if constexpr (std::is_arithmetic_v<T>) {
    if (is_float(t.dtype)) return static_cast<T>(bits_to_double(t.dtype, bits));
    if (t.dtype == DataType::BOOL) return static_cast<T>(bits & 0xff ? 1 : 0);
    if (is_signed_int(t.dtype)) return static_cast<T>(bits_to_i64(t.dtype, bits));
    return static_cast<T>(bits);
  } else {
    return from_u64<T>(bits);
  }
}

/* value converted to dtype's element bits. */
template <typename T> inline uint64_t value_bits(DataType dt, T value) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (is_float(dt)) return double_to_bits(dt, static_cast<double>(value));
    if (dt == DataType::BOOL) return value ? 1 : 0;
    if (is_signed_int(dt)) return static_cast<uint64_t>(static_cast<int64_t>(value));
    return static_cast<uint64_t>(value);
  } else {
    return to_u64(value);
  }
}
} // namespace pto_orch_detail

/* One element (tensor.read), after the tasks that write it: its raw bits, reinterpreted as T
 * (from_u64), as PyPTO's runtime does. T = float on an f32 tensor gives the value; on an f16
 * tensor, use get_tensor_data<uint16_t> and convert. */
template <typename T = uint64_t, typename I>
inline T get_tensor_data(const ChipTensor &t, uint32_t ndims, const I *indices) {
  return from_u64<T>(pto_orch_detail::read_raw(t, ndims, indices));
}

/* Writes one element (converted from value to the tensor's dtype) after the tasks reading or
 * writing it finish. */
template <typename T, typename I>
inline void set_tensor_data(const ChipTensor &t, uint32_t ndims, const I *indices, T value) {
  const pto_orch_api *api = pto_orch_detail::tls_api;
  int64_t idx[PTO_MAX_RANK];
  if (!api || !pto_orch_detail::indices64(t, ndims, indices, idx)) return;
  if (api->size < offsetof(pto_orch_api, write_element) + sizeof api->write_element ||
      !api->write_element) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "set_tensor_data: the runtime does not support it");
    return;
  }
  uint64_t bits = pto_orch_detail::value_bits(t.dtype, value);
  const pto_orch_tensor c = t.to_c();
  api->write_element(api->ctx, &c, idx, &bits);
}

template <typename T> inline void TensorCreateInfo::set_initial_value(T value) {
  has_initial_value = true;
  initial_value = pto_orch_detail::value_bits(dtype, value);
}

/* ---- scopes ------------------------------------------------------------------------------- */

class PTO2ScopeGuard {
public:
  explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) { rt_scope_begin(mode); }
  ~PTO2ScopeGuard() { rt_scope_end(); }
  PTO2ScopeGuard(const PTO2ScopeGuard &) = delete;
  PTO2ScopeGuard &operator=(const PTO2ScopeGuard &) = delete;
};

#define PTO2_CONCATENATE_IMPL_(x, y) x##y
#define PTO2_CONCATENATE_(x, y) PTO2_CONCATENATE_IMPL_(x, y)
#define PTO2_SCOPE_GUARD(...)                                                                      \
  [[maybe_unused]] PTO2ScopeGuard PTO2_CONCATENATE_(pto2_scope_guard_, __COUNTER__) { __VA_ARGS__ }
/* PTO2_SCOPE() { ... }: intermediates created inside are freed when the block ends and the tasks
 * using them have finished. PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }: its tasks are ordered only
 * by the dependencies given (set_dependencies); an AUTO scope inside a MANUAL one is an error. */
#define PTO2_SCOPE(...)                                                                            \
  if (PTO2ScopeGuard PTO2_CONCATENATE_(pto2_scope_guard_, __COUNTER__){__VA_ARGS__}; true)

/* ---- graphs ------------------------------------------------------------------------------- */

/* PyPTO records a sub-DAG on its first call and replays it as one Graph task later. pto runs the
 * function on every call, through the ordinary submit path, which is what PyPTO does for a call
 * it cannot cache: the same tasks, the same results. */
struct GraphSubmitResult {
  bool recorded = false;
  bool replayed = false;
};
using GraphFunction = void (*)(const GraphTaskArgs &);

inline GraphSubmitResult rt_submit_graph(GraphFunction function, const GraphTaskArgs &args) {
  if (function && !rt_is_fatal()) function(args);
  return GraphSubmitResult{};
}
inline GraphSubmitResult rt_submit_graph(uint64_t graph_id, GraphFunction function,
                                         const GraphTaskArgs &args) {
  (void)graph_id;
  return rt_submit_graph(function, args);
}
template <typename... Config>
inline GraphSubmitResult rt_submit_graph(void (*function)(const GraphTaskArgs &, Config...),
                                         const GraphTaskArgs &args, Config... config) {
  if (function && !rt_is_fatal()) function(args, config...);
  return GraphSubmitResult{};
}
template <typename... Config>
inline GraphSubmitResult rt_submit_graph(uint64_t graph_id,
                                         void (*function)(const GraphTaskArgs &, Config...),
                                         const GraphTaskArgs &args, Config... config) {
  (void)graph_id;
  return rt_submit_graph(function, args, config...);
}

/* ---- configuration and logging ------------------------------------------------------------- */

/* What aicpu_orchestration_config returns: the runtime calls it before the entry and fails a
 * launch with fewer tensors and scalars than expected_arg_count (<= 0: not checked). */
struct OrchestrationConfig {
  int expected_arg_count;
};
static_assert(sizeof(OrchestrationConfig) == sizeof(pto_orch_config) &&
                  std::is_trivially_copyable_v<OrchestrationConfig>,
              "OrchestrationConfig is returned as a pto_orch_config");
using PTO2OrchestrationConfig = OrchestrationConfig;

/* ---- helpers of pto-generated orchestration ------------------------------------------------ */

/* What `pto compile` emits calls these (generated files say `using namespace pto_codegen;`):
 * PTIR's tensor.slice / tensor.create / tensor.read, scalar slots and integer division with
 * PTIR's rounding. Hand-written orchestration may use them too. */
namespace pto_codegen {

inline uint64_t pto_dtype_bytes(int32_t dt) {
  static const uint8_t bytes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8};
  return bytes[dt];
}

// The runtime's form of a tensor (64-bit extents), and back.
inline pto_orch_tensor pto_view(const ChipTensor &t) { return t.to_c(); }

inline ChipTensor pto_chip(const pto_orch_tensor &t) { return ChipTensor::from_c(t); }

// tensor.dim: extent d of a tensor (0 for a dim past its rank).
inline int64_t pto_dim(const ChipTensor &t, int64_t d) {
  return d >= 0 && d < static_cast<int64_t>(t.ndims) && d < PTO_MAX_RANK ? t.shapes[d] : 0;
}

// tensor.slice: a view clamped at the tensor's edge (only the extent is clamped), made by the
// runtime (the table's slice entry).
__attribute__((noinline)) inline ChipTensor pto_slice_n(const ChipTensor &src, int32_t n,
                                                        const int64_t *offs, const int64_t *shape) {
  ChipTensor v{};
  if (const pto_orch_api *api = pto_orch_detail::tls_api)
    api->slice(api->ctx, reinterpret_cast<const pto_orch_chip_tensor *>(&src), n, offs, shape,
               reinterpret_cast<pto_orch_chip_tensor *>(&v));
  return v;
}
template <size_t N>
ChipTensor pto_slice(const ChipTensor &src, const int64_t (&offs)[N], const int64_t (&shape)[N]) {
  return pto_slice_n(src, static_cast<int32_t>(N), offs, shape);
}

// Whether every extent fits ChipTensor's (PTO2's) 32-bit extents; a launch error naming the op
// and the dim when one does not (2^32 + 100 would silently become 100, -1 4294967295).
template <size_t N> bool pto_extents_fit(const char *op, const int64_t (&shape)[N]) {
  for (size_t d = 0; d < N; ++d)
    if (shape[d] < 0 || shape[d] > static_cast<int64_t>(UINT32_MAX)) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                      "%s: extent %lld of dim %d is outside 0 to %u, the extents the "
                      "orchestration ABI holds (32 bits)",
                      op, static_cast<long long>(shape[d]), static_cast<int>(d), UINT32_MAX);
      return false;
    }
  return true;
}

// A view passed to a kernel parameter with static extents (want[d] >= 0; -1: dynamic) has them,
// or the launch fails naming the call and the parameter, as the interpreter does: a slice
// clamped at the edge of its tensor is smaller than the kernel was compiled for.
template <size_t N>
bool pto_param_fits(const ChipTensor &t, const char *callee, const char *param,
                    const int64_t (&want)[N]) {
  for (size_t d = 0; d < N; ++d) {
    const int64_t got = d < static_cast<size_t>(t.ndims) ? static_cast<int64_t>(t.shapes[d]) : 0;
    if (want[d] >= 0 && got != want[d]) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                      "call @%s: parameter %%%s: extent of dim %d is %lld, expected %lld", callee,
                      param, static_cast<int>(d), static_cast<long long>(got),
                      static_cast<long long>(want[d]));
      return false;
    }
  }
  return true;
}

// tensor.reshape: a view of the same elements in a new row-major shape; the source must be
// contiguous and the element counts equal.
template <size_t N> ChipTensor pto_reshape(const ChipTensor &src, const int64_t (&shape)[N]) {
  if (!pto_extents_fit("tensor.reshape", shape)) return ChipTensor{};
  pto_orch_tensor v = pto_view(src);
  int64_t have = 1, want = 1, dense = 1;
  bool contiguous = true;
  for (int d = v.rank - 1; d >= 0; --d) {
    if (v.shape[d] != 1 && v.stride[d] != dense) contiguous = false;
    dense *= v.shape[d];
    have *= v.shape[d];
  }
  for (size_t d = 0; d < N; ++d)
    want *= shape[d];
  if (want != have)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                    "tensor.reshape: the tensor has %lld elements, the shape %lld",
                    static_cast<long long>(have), static_cast<long long>(want));
  if (!contiguous)
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "tensor.reshape: the tensor is not contiguous");
  v.rank = static_cast<int32_t>(N);
  int64_t stride = 1;
  for (int d = PTO_MAX_RANK - 1; d >= 0; --d) {
    v.shape[d] = d < static_cast<int>(N) ? shape[d] : 0;
    v.stride[d] = d < static_cast<int>(N) ? stride : 0;
    if (d < static_cast<int>(N)) stride *= shape[d];
  }
  return pto_chip(v);
}

// tensor.select: %t[idx], the leading dim indexed and dropped.
inline ChipTensor pto_select(const ChipTensor &src, int64_t idx) {
  pto_orch_tensor v = pto_view(src);
  if (v.rank < 2 || idx < 0 || idx >= v.shape[0])
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS,
                    "tensor.select: index %lld is outside the extent %lld of dim 0",
                    static_cast<long long>(idx), static_cast<long long>(v.shape[0]));
  if (idx < 0 || idx >= v.shape[0]) idx = 0;
  v.addr += static_cast<uint64_t>(idx * v.stride[0]) * pto_dtype_bytes(v.dtype);
  for (int d = 0; d < PTO_MAX_RANK; ++d) {
    v.shape[d] = d + 1 < v.rank ? v.shape[d + 1] : 0;
    v.stride[d] = d + 1 < v.rank ? v.stride[d + 1] : 0;
  }
  v.rank -= 1;
  return pto_chip(v);
}

// The condition of a for with a runtime step: a negative step counts down (as Python's
// range), a zero step fails the launch.
inline bool pto_in_range(int64_t i, int64_t hi, int64_t step) {
  if (step > 0) return i < hi;
  if (step < 0) return i > hi;
  rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "for: the step is zero");
  return false;
}

// The next value of a for's induction variable: hi when i + step would step past INT64_MAX (or
// below INT64_MIN), which ends the loop after exactly its iterations instead of wrapping.
inline int64_t pto_step(int64_t i, int64_t step, int64_t hi) {
  int64_t next;
  return __builtin_add_overflow(i, step, &next) ? hi : next;
}

// Scalars travel as 64-bit slots: ints sign/zero-extended, f32 bits low, f16/bf16 16 bits.
template <typename T> uint64_t pto_slot_bits(T v, int dt) {
  switch (dt) {
  case PTO_DTYPE_F32: {
    float f = static_cast<float>(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  case PTO_DTYPE_F64: {
    double f = static_cast<double>(v);
    uint64_t u;
    std::memcpy(&u, &f, 8);
    return u;
  }
  case PTO_DTYPE_F16: return pto_orch_detail::float_to_half(static_cast<float>(v));
  case PTO_DTYPE_BF16: {
    float f = static_cast<float>(v);
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  }
  case PTO_DTYPE_BOOL: return v ? 1 : 0;
  case PTO_DTYPE_U8:
  case PTO_DTYPE_U16:
  case PTO_DTYPE_U32:
  case PTO_DTYPE_U64: return static_cast<uint64_t>(v);
  default: return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}
// The slot with its dtype, so that add_scalar records the dtype for the argument dump.
template <typename T> PtoSlot pto_slot(T v, int dt) { return PtoSlot{pto_slot_bits(v, dt), dt}; }
template <typename T> T pto_unslot(uint64_t s, int dt) {
  switch (dt) {
  case PTO_DTYPE_F32: {
    uint32_t u = static_cast<uint32_t>(s);
    float f;
    std::memcpy(&f, &u, 4);
    return static_cast<T>(f);
  }
  case PTO_DTYPE_F64: {
    double f;
    std::memcpy(&f, &s, 8);
    return static_cast<T>(f);
  }
  case PTO_DTYPE_F16:
    return static_cast<T>(pto_orch_detail::half_to_float(static_cast<uint16_t>(s)));
  case PTO_DTYPE_BF16: {
    uint32_t u = static_cast<uint32_t>(s & 0xffffu) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return static_cast<T>(f);
  }
  case PTO_DTYPE_I8: return static_cast<T>(static_cast<int8_t>(s));
  case PTO_DTYPE_I16: return static_cast<T>(static_cast<int16_t>(s));
  case PTO_DTYPE_I32: return static_cast<T>(static_cast<int32_t>(s));
  default: return static_cast<T>(s);
  }
}

// tensor.create: a zero-filled intermediate owned by the innermost scope.
template <size_t N> ChipTensor pto_create(const int64_t (&shape)[N], DataType dt) {
  if (!pto_extents_fit("tensor.create", shape)) return ChipTensor{};
  const TaskOutputTensors made = alloc_tensors(TensorCreateInfo(shape, N, dt));
  return made.empty() ? ChipTensor{} : made.get_ref(0);
}

// tensor.read: one element, after the tasks that write it.
template <typename T, size_t N> T pto_read(const ChipTensor &t, const int64_t (&idx)[N]) {
  return pto_orch_detail::read_value<T>(t, N, idx);
}

// An f16 or bf16 scalar's value, as the float that holds it: x rounded once to nearest-even.
// f16 and bf16 scalars compute in float and round after every operation (and cast), as the
// interpreter and kernels do; without it `a * b + c` kept float's precision between the two.
// x rounds toward zero to float with the inexact bit kept in the lowest bit ("round to odd"), so
// the second rounding (to 11 or 8 bits) is the single correct rounding of a double.
inline float pto_round_odd_f32(double x) {
  float f = static_cast<float>(x);
  if (x != x || static_cast<double>(f) == x) return f;
  if (__builtin_fabs(static_cast<double>(f)) > __builtin_fabs(x)) f = __builtin_nextafterf(f, 0.0f);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  b |= 1u;
  std::memcpy(&f, &b, 4);
  return f;
}
inline float pto_round_f16(double x) {
  return pto_orch_detail::half_to_float(pto_orch_detail::float_to_half(pto_round_odd_f32(x)));
}
inline float pto_round_bf16(double x) {
  return pto_orch_detail::bf16_to_float(pto_orch_detail::float_to_bf16(pto_round_odd_f32(x)));
}

// A float -> integer cast: toward zero, saturated at T's range, NaN -> 0, as kernels
// (llvm.fpto[su]i.sat) and the interpreter convert; a static_cast is undefined out of range.
template <typename T> T pto_f2i(double x) {
  if (x != x) return T(0);
  if (x <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (x >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(x);
}

// Integer '/' floors and mod takes the sign of the divisor, as kernels do: division by zero is a
// launch error, and the minimum value divided by -1 wraps (mod gives 0) instead of trapping.
template <typename T> T pto_div(T a, T b) {
  if constexpr (static_cast<T>(0.5) != 0) {
    return a / b;
  } else {
    if (b == 0) {
      rt_report_fatal(1, "integer division by zero");
      return 0;
    }
    if constexpr (std::is_signed<T>::value) {
      using U = typename std::make_unsigned<T>::type;
      if (b == static_cast<T>(-1)) return static_cast<T>(static_cast<U>(0) - static_cast<U>(a));
    }
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }
}
template <typename T> T pto_mod(T a, T b) {
  if constexpr (static_cast<T>(0.5) != 0) {
    T r = __builtin_fmod(a, b);
    if (r == 0) return __builtin_copysign(static_cast<T>(0), b); // the divisor's sign, as numpy's
    if ((r < 0) != (b < 0)) r += b;
    return r;
  } else {
    if (b == 0) {
      rt_report_fatal(1, "integer division by zero");
      return 0;
    }
    if constexpr (std::is_signed<T>::value) {
      if (b == static_cast<T>(-1)) return 0;
    }
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
// Float min and max ignore a NaN unless both are NaN and put +0 above -0, as kernels and the
// interpreter do (C's fmin/fmax with the zeros ordered).
template <typename T> T pto_min(T a, T b) {
  if constexpr (static_cast<T>(0.5) != 0) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return __builtin_signbit(static_cast<double>(a)) ? a : b;
  }
  return b < a ? b : a;
}
template <typename T> T pto_max(T a, T b) {
  if constexpr (static_cast<T>(0.5) != 0) {
    if (a != a) return b;
    if (b != b) return a;
    if (a == b) return __builtin_signbit(static_cast<double>(a)) ? b : a;
  }
  return a < b ? b : a;
}

} // namespace pto_codegen

/* ---- exports ------------------------------------------------------------------------------- */

#ifndef PTO_ORCH_NO_EXPORTS
extern "C" __attribute__((visibility("default"))) uint32_t pto_orch_abi_version(void) {
  return PTO_ORCH_ABI_VERSION;
}
extern "C" __attribute__((visibility("default"))) void pto_orch_bind(const pto_orch_api *api) {
  pto_orch_detail::tls_api = api;
}
#endif

#endif
