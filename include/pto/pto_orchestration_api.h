/* pto orchestration API: the one header generated orchestration C++ includes.
 *
 * It keeps the PTO2 names PyPTO's orchestration codegen emits (ChipTaskArgs, ChipTensor with
 * view(), CoreTaskArgs with add_input/add_output/add_inout/add_scalar, TensorCreateInfo,
 * alloc_tensors, PTO2_SCOPE(), rt_submit_aiv_task, rt_submit_aic_task, get_tensor_data,
 * set_tensor_data, from_u64/to_u64, rt_report_fatal, rt_is_fatal) and implements them over the
 * versioned C function table of pto/orch_abi.h, which the runtime hands to pto_orch_bind on the
 * dispatching thread before each entry call. ChipTensor and ChipTaskArgs have exactly the layouts
 * of pto_orch_tensor and pto_orch_args, so the runtime passes a pointer where the entry takes a
 * reference.
 *
 * Including this header in one translation unit of an orchestration shared object defines the
 * exported pto_orch_abi_version() and pto_orch_bind(); define PTO_ORCH_NO_EXPORTS before
 * including it in any further translation unit of the same object. C++17, no exceptions, no
 * link dependencies. Unlike PyPTO's Arg, CoreTaskArgs copies what it is given, so temporaries
 * are fine; explicit dependencies (set_dependencies), mixed AIC/AIV tasks and manual scopes are
 * not provided: task order comes from tensor regions only. */
#ifndef PTO_ORCHESTRATION_API_H
#define PTO_ORCHESTRATION_API_H

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

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
__attribute__((visibility("hidden"))) inline thread_local int64_t tls_next_task = 0;
template <typename T>
struct dependent_false : std::false_type {};
}  // namespace pto_orch_detail

/* ---- scalar bits ------------------------------------------------------------------------ */

/* The 64-bit slot of a value: floats as their IEEE bits (f32 in the low 32), signed integers
 * sign-extended, unsigned zero-extended, bool 0/1, enums by their underlying value. */
template <typename T>
inline uint64_t to_u64(T value) {
  using U = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<U, float>) {
    uint32_t b;
    std::memcpy(&b, &value, sizeof b);
    return b;
  } else if constexpr (std::is_same_v<U, double>) {
    uint64_t b;
    std::memcpy(&b, &value, sizeof b);
    return b;
  } else if constexpr (std::is_same_v<U, bool>) {
    return value ? 1u : 0u;
  } else if constexpr (std::is_enum_v<U>) {
    return to_u64(static_cast<std::underlying_type_t<U>>(value));
  } else if constexpr (std::is_integral_v<U> && std::is_signed_v<U>) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  } else if constexpr (std::is_integral_v<U>) {
    return static_cast<uint64_t>(value);
  } else if constexpr (std::is_pointer_v<U>) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(value));
  } else {
    static_assert(pto_orch_detail::dependent_false<T>::value, "to_u64: unsupported type");
    return 0;
  }
}

template <typename T>
inline T from_u64(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
  } else if constexpr (std::is_same_v<T, double>) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  } else if constexpr (std::is_same_v<T, bool>) {
    return bits != 0;
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(from_u64<std::underlying_type_t<T>>(bits));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(bits);
  } else if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(static_cast<uintptr_t>(bits));
  } else {
    static_assert(pto_orch_detail::dependent_false<T>::value, "from_u64: unsupported type");
    return T{};
  }
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

inline void rt_scope_begin() {
  if (const pto_orch_api *api = pto_orch_detail::tls_api) api->scope_begin(api->ctx);
}
inline void rt_scope_end() {
  if (const pto_orch_api *api = pto_orch_detail::tls_api) api->scope_end(api->ctx);
}

/* ---- tensors ------------------------------------------------------------------------------ */

/* A strided view of a device buffer; the layout of pto_orch_tensor. */
struct ChipTensor {
  uint64_t buffer;                 /* device address of the whole allocation */
  uint64_t addr;                   /* device address of element [0,..,0] */
  int64_t shapes[PTO_MAX_RANK];
  int64_t strides[PTO_MAX_RANK];   /* elements */
  int32_t ndims;
  DataType dtype;

  const ChipTensor &ref() const { return *this; }
  size_t element_size() const { return get_element_size(dtype); }
  int64_t numel() const {
    int64_t n = 1;
    for (int32_t d = 0; d < ndims; d++) n *= shapes[d];
    return n;
  }
  /* A sub-view: shape[d] elements from offset[d] in every dim; an extent past the edge is
   * clamped to it (as tensor.slice does). */
  template <typename S, typename O>
  ChipTensor view(const S *shape, const O *offset) const {
    static_assert(std::is_integral_v<S> && std::is_integral_v<O>, "view: integer shape and offset");
    ChipTensor v = *this;
    int64_t off = 0;
    for (int32_t d = 0; d < ndims; d++) {
      int64_t o = static_cast<int64_t>(offset[d]);
      int64_t n = static_cast<int64_t>(shape[d]);
      if (o > shapes[d]) o = shapes[d];
      if (n > shapes[d] - o) n = shapes[d] - o;
      if (n < 0) n = 0;
      v.shapes[d] = n;
      off += o * strides[d];
    }
    v.addr = addr + static_cast<uint64_t>(off * static_cast<int64_t>(element_size()));
    return v;
  }
  const pto_orch_tensor *c_tensor() const { return reinterpret_cast<const pto_orch_tensor *>(this); }
};
static_assert(std::is_standard_layout_v<ChipTensor> && std::is_trivial_v<ChipTensor>,
              "ChipTensor must stay plain data");
static_assert(sizeof(ChipTensor) == sizeof(pto_orch_tensor) &&
                  offsetof(ChipTensor, addr) == offsetof(pto_orch_tensor, addr) &&
                  offsetof(ChipTensor, shapes) == offsetof(pto_orch_tensor, shape) &&
                  offsetof(ChipTensor, strides) == offsetof(pto_orch_tensor, stride) &&
                  offsetof(ChipTensor, ndims) == offsetof(pto_orch_tensor, rank) &&
                  offsetof(ChipTensor, dtype) == offsetof(pto_orch_tensor, dtype),
              "ChipTensor must have the layout of pto_orch_tensor");
using Tensor = ChipTensor;

namespace pto_orch_detail {
inline const ChipTensor &null_tensor() {
  static const ChipTensor t{};
  return t;
}
}  // namespace pto_orch_detail

/* An intermediate to be allocated (tensor.create) when the task that outputs it is submitted, or
 * by alloc_tensors. Always zero-filled. */
struct TensorCreateInfo {
  int64_t shapes[PTO_MAX_RANK];
  int32_t ndims;
  DataType dtype;

  template <typename S>
  TensorCreateInfo(const S *shape, uint32_t ndims_, DataType dtype_ = DataType::FLOAT32,
                   bool zero_init = false)
      : shapes{}, ndims(ndims_ <= static_cast<uint32_t>(PTO_MAX_RANK) ? static_cast<int32_t>(ndims_) : -1),
        dtype(dtype_) {
    static_assert(std::is_integral_v<S>, "TensorCreateInfo: integer shape");
    (void)zero_init;
    for (int32_t d = 0; d < ndims; d++) shapes[d] = static_cast<int64_t>(shape[d]);
  }
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
  const ChipTensor *tensors_;
  const uint64_t *scalars_;
  int32_t ntensors_;
  int32_t nscalars_;

  int32_t tensor_count() const { return ntensors_; }
  int32_t scalar_count() const { return nscalars_; }
  TensorArg tensor(int32_t i) const {
    if (i < 0 || i >= ntensors_) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "entry tensor %d is out of range (%d tensors)", i,
                      ntensors_);
      return TensorArg(&pto_orch_detail::null_tensor());
    }
    return TensorArg(&tensors_[i]);
  }
  uint64_t scalar(int32_t i) const {
    if (i < 0 || i >= nscalars_) {
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "entry scalar %d is out of range (%d scalars)", i,
                      nscalars_);
      return 0;
    }
    return scalars_[i];
  }
  template <typename T>
  T scalar(int32_t i) const {
    return from_u64<T>(scalar(i));
  }
};
static_assert(std::is_standard_layout_v<ChipTaskArgs> &&
                  sizeof(ChipTaskArgs) == sizeof(pto_orch_args) &&
                  offsetof(ChipTaskArgs, scalars_) == offsetof(pto_orch_args, scalars) &&
                  offsetof(ChipTaskArgs, ntensors_) == offsetof(pto_orch_args, ntensors) &&
                  offsetof(ChipTaskArgs, nscalars_) == offsetof(pto_orch_args, nscalars),
              "ChipTaskArgs must have the layout of pto_orch_args");

/* ---- tasks -------------------------------------------------------------------------------- */

struct TaskId {
  int64_t value;
  static constexpr TaskId invalid() { return TaskId{-1}; }
  bool is_valid() const { return value >= 0; }
  bool operator==(const TaskId &o) const { return value == o.value; }
  bool operator!=(const TaskId &o) const { return value != o.value; }
};
using PTO2TaskId = TaskId;

/* One task's arguments, in add_* order (tensors) and add_scalar order (scalars). */
class CoreTaskArgs {
 public:
  enum SlotKind : int32_t { IN = PTO_ORCH_ARG_IN, OUT = PTO_ORCH_ARG_OUT, INOUT = PTO_ORCH_ARG_INOUT, CREATE = 100 };

  CoreTaskArgs() : has_error(false), error_msg(nullptr), ntensors_(0), nscalars_(0) {}
  CoreTaskArgs(const CoreTaskArgs &) = delete;
  CoreTaskArgs &operator=(const CoreTaskArgs &) = delete;

  bool has_error;
  const char *error_msg;

  template <typename... Ts>
  void add_input(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_input: at least one tensor");
    (add_tensor(IN, ts), ...);
  }
  /* ChipTensors are written in place; a TensorCreateInfo becomes a new intermediate. */
  template <typename... Ts>
  void add_output(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_output: at least one tensor");
    (add_out_one(ts), ...);
  }
  template <typename... Ts>
  void add_inout(const Ts &...ts) {
    static_assert(sizeof...(Ts) >= 1, "add_inout: at least one tensor");
    (add_tensor(INOUT, ts), ...);
  }
  template <typename... Ts>
  void add_scalar(Ts... vs) {
    static_assert(sizeof...(Ts) >= 1, "add_scalar: at least one value");
    (add_scalar_one(to_u64(vs)), ...);
  }
  void add_scalars(const uint64_t *values, int count) {
    for (int i = 0; i < count; i++) add_scalar_one(values[i]);
  }
  void add_scalars_i32(const int32_t *values, int count) {
    for (int i = 0; i < count; i++) add_scalar_one(static_cast<uint64_t>(static_cast<uint32_t>(values[i])));
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

 private:
  void add_tensor(int32_t kind, const ChipTensor &t) {
    if (ntensors_ >= MAX_TENSOR_ARGS) {
      set_error("too many tensor arguments in one task (PTO_ORCH_MAX_TENSOR_ARGS)");
      return;
    }
    kinds_[ntensors_] = kind;
    tensors_[ntensors_++] = t;
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
  }
  void add_scalar_one(uint64_t v) {
    if (nscalars_ >= MAX_SCALAR_ARGS) {
      set_error("too many scalar arguments in one task (PTO_ORCH_MAX_SCALAR_ARGS)");
      return;
    }
    scalars_[nscalars_++] = v;
  }

  int32_t ntensors_, nscalars_;
  int32_t kinds_[MAX_TENSOR_ARGS];
  ChipTensor tensors_[MAX_TENSOR_ARGS];
  uint64_t scalars_[MAX_SCALAR_ARGS];
};
using Arg = CoreTaskArgs;
using PTOParam = CoreTaskArgs;

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
  uint32_t n_;
  TaskId id_;
  ChipTensor outs_[MAX_TENSOR_ARGS];
};
using TaskSubmitResult = TaskOutputTensors;

namespace pto_orch_detail {
inline bool create(const pto_orch_api *api, const ChipTensor &info, ChipTensor *out) {
  return api->create_tensor(api->ctx, info.ndims, info.shapes, static_cast<int32_t>(info.dtype),
                            reinterpret_cast<pto_orch_tensor *>(out)) == 0;
}

inline TaskOutputTensors submit(int32_t core_type, int32_t kernel_id, const CoreTaskArgs &args) {
  TaskOutputTensors out;
  const pto_orch_api *api = tls_api;
  if (!api) return out;
  if (args.has_error) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "submit of kernel %d: %s", kernel_id,
                    args.error_msg ? args.error_msg : "invalid arguments");
    return out;
  }
  pto_orch_task_arg a[MAX_TENSOR_ARGS + MAX_SCALAR_ARGS];
  int32_t n = 0;
  for (int32_t i = 0; i < args.tensor_count(); i++) {
    pto_orch_task_arg &x = a[n++];
    x.reserved = 0;
    x.scalar = 0;
    if (args.tensor_kind(i) == CoreTaskArgs::CREATE) {
      ChipTensor t;
      if (!create(api, args.tensor(i), &t)) return out;
      out.materialize_output(t);
      x.kind = PTO_ORCH_ARG_OUT;
      std::memcpy(&x.tensor, &t, sizeof t);
    } else {
      x.kind = args.tensor_kind(i);
      std::memcpy(&x.tensor, &args.tensor(i), sizeof x.tensor);
    }
  }
  for (int32_t i = 0; i < args.scalar_count(); i++) {
    pto_orch_task_arg &x = a[n++];
    std::memset(&x, 0, sizeof x);
    x.kind = PTO_ORCH_ARG_SCALAR;
    x.scalar = args.scalar(i);
  }
  if (api->submit(api->ctx, kernel_id, core_type, a, n) == 0) out.set_task_id(TaskId{tls_next_task++});
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
  if (static_cast<int32_t>(ndims) != t.ndims) {
    rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "tensor data access with %u indices on a rank-%d tensor",
                    ndims, t.ndims);
    return false;
  }
  for (uint32_t d = 0; d < ndims; d++) out[d] = static_cast<int64_t>(indices[d]);
  return true;
}
}  // namespace pto_orch_detail

inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return pto_orch_detail::submit(PTO_CORE_AIV, kernel_id, args);
}
inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return pto_orch_detail::submit(PTO_CORE_AIC, kernel_id, args);
}
inline TaskOutputTensors pto2_rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return rt_submit_aiv_task(kernel_id, args);
}
inline TaskOutputTensors pto2_rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs &args) {
  return rt_submit_aic_task(kernel_id, args);
}

/* Intermediates owned by the innermost scope, outside any task. */
template <typename... Cs>
inline TaskOutputTensors alloc_tensors(const Cs &...cis) {
  static_assert((std::is_same_v<Cs, TensorCreateInfo> && ...), "alloc_tensors: TensorCreateInfo only");
  TaskOutputTensors out;
  const pto_orch_api *api = pto_orch_detail::tls_api;
  if (!api) return out;
  auto one = [&](const TensorCreateInfo &ci) {
    ChipTensor info{};
    std::memcpy(info.shapes, ci.shapes, sizeof info.shapes);
    info.ndims = ci.ndims;
    info.dtype = ci.dtype;
    ChipTensor t;
    if (pto_orch_detail::create(api, info, &t)) out.materialize_output(t);
  };
  (one(cis), ...);
  return out;
}

/* The raw bits of one element (tensor.read): waits for the tasks writing it. 0 on failure. */
template <typename I>
inline uint64_t get_tensor_data(const ChipTensor &t, uint32_t ndims, const I *indices) {
  const pto_orch_api *api = pto_orch_detail::tls_api;
  int64_t idx[PTO_MAX_RANK];
  if (!api || !pto_orch_detail::indices64(t, ndims, indices, idx)) return 0;
  uint64_t bits = 0;
  if (api->read_element(api->ctx, t.c_tensor(), idx, &bits) != 0) return 0;
  return bits;
}

/* One element converted to T. */
template <typename T, typename I>
inline T get_tensor_data(const ChipTensor &t, uint32_t ndims, const I *indices) {
  uint64_t bits = get_tensor_data(t, ndims, indices);
  if constexpr (std::is_arithmetic_v<T>) {
    if (pto_orch_detail::is_float(t.dtype)) return static_cast<T>(pto_orch_detail::bits_to_double(t.dtype, bits));
    if (t.dtype == DataType::BOOL) return static_cast<T>(bits & 0xff ? 1 : 0);
    if (pto_orch_detail::is_signed_int(t.dtype)) return static_cast<T>(pto_orch_detail::bits_to_i64(t.dtype, bits));
    return static_cast<T>(bits);
  } else {
    return from_u64<T>(bits);
  }
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
  uint64_t bits;
  if constexpr (std::is_arithmetic_v<T>) {
    if (pto_orch_detail::is_float(t.dtype))
      bits = pto_orch_detail::double_to_bits(t.dtype, static_cast<double>(value));
    else if (t.dtype == DataType::BOOL)
      bits = value ? 1 : 0;
    else if (pto_orch_detail::is_signed_int(t.dtype))
      bits = static_cast<uint64_t>(static_cast<int64_t>(value));
    else
      bits = static_cast<uint64_t>(value);
  } else {
    bits = to_u64(value);
  }
  api->write_element(api->ctx, t.c_tensor(), idx, &bits);
}

/* ---- scopes ------------------------------------------------------------------------------- */

class PTO2ScopeGuard {
 public:
  PTO2ScopeGuard() { rt_scope_begin(); }
  ~PTO2ScopeGuard() { rt_scope_end(); }
  PTO2ScopeGuard(const PTO2ScopeGuard &) = delete;
  PTO2ScopeGuard &operator=(const PTO2ScopeGuard &) = delete;
};

#define PTO2_CONCATENATE_IMPL_(x, y) x##y
#define PTO2_CONCATENATE_(x, y) PTO2_CONCATENATE_IMPL_(x, y)
#define PTO2_SCOPE_GUARD() [[maybe_unused]] PTO2ScopeGuard PTO2_CONCATENATE_(pto2_scope_guard_, __COUNTER__)
/* PTO2_SCOPE() { ... }: intermediates created inside are freed when the block ends and the tasks
 * using them have finished. */
#define PTO2_SCOPE() if (PTO2_SCOPE_GUARD(); true)

/* ---- configuration and logging ------------------------------------------------------------- */

struct OrchestrationConfig {
  int expected_arg_count;
};
using PTO2OrchestrationConfig = OrchestrationConfig;

/* Orchestration log lines are dropped: the runtime reports through statuses and spans. */
#ifndef LOG_ERROR
#define LOG_ERROR(...) ((void)0)
#define LOG_WARN(...) ((void)0)
#define LOG_INFO(...) ((void)0)
#define LOG_DEBUG(...) ((void)0)
#define LOG_ALWAYS(...) ((void)0)
#endif

/* ---- helpers of pto-generated orchestration ------------------------------------------------ */

/* What `pto compile` emits calls these (generated files say `using namespace pto_codegen;`):
 * PTIR's tensor.slice / tensor.create / tensor.read, scalar slots and integer division with
 * PTIR's rounding. Hand-written orchestration may use them too. */
namespace pto_codegen {

inline uint64_t pto_dtype_bytes(int32_t dt) {
  static const uint8_t bytes[] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 8};
  return bytes[dt];
}

// The C view of a tensor, copied: reading a ChipTensor through a pto_orch_tensor pointer
// would break strict aliasing.
inline pto_orch_tensor pto_view(const ChipTensor &t) {
  pto_orch_tensor v;
  std::memcpy(&v, &t, sizeof v);
  return v;
}

inline ChipTensor pto_chip(const pto_orch_tensor &t) {
  ChipTensor c;
  std::memcpy(static_cast<void *>(&c), &t, sizeof t);
  return c;
}

// tensor.slice: a view clamped at the tensor's edge (only the extent is clamped).
template <size_t N>
ChipTensor pto_slice(const ChipTensor &src, const int64_t (&offs)[N], const int64_t (&shape)[N]) {
  pto_orch_tensor v = pto_view(src);
  int64_t elem_offset = 0;
  for (size_t d = 0; d < N; ++d) {
    if (offs[d] < 0 || offs[d] >= v.shape[d])
      rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "tensor.slice: offset %lld of dim %d is outside the extent %lld",
                      static_cast<long long>(offs[d]), static_cast<int>(d), static_cast<long long>(v.shape[d]));
    int64_t off = offs[d] < 0 ? 0 : offs[d];
    int64_t room = v.shape[d] - off;
    if (room < 0) room = 0;
    if (off > v.shape[d]) off = v.shape[d];
    elem_offset += off * v.stride[d];
    v.shape[d] = shape[d] < room ? shape[d] : room;
  }
  v.addr += static_cast<uint64_t>(elem_offset) * pto_dtype_bytes(v.dtype);
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

// Scalars travel as 64-bit slots: ints sign/zero-extended, f32 bits low, f16/bf16 16 bits.
template <typename T> uint64_t pto_slot(T v, int dt) {
  switch (dt) {
  case PTO_DTYPE_F32: { float f = static_cast<float>(v); uint32_t u; std::memcpy(&u, &f, 4); return u; }
  case PTO_DTYPE_F64: { double f = static_cast<double>(v); uint64_t u; std::memcpy(&u, &f, 8); return u; }
  case PTO_DTYPE_F16: { _Float16 h = static_cast<_Float16>(static_cast<float>(v)); uint16_t u; std::memcpy(&u, &h, 2); return u; }
  case PTO_DTYPE_BF16: {
    float f = static_cast<float>(v); uint32_t x; std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (x >> 16) | 0x40u;
    return (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  }
  case PTO_DTYPE_BOOL: return v ? 1 : 0;
  case PTO_DTYPE_U8: case PTO_DTYPE_U16: case PTO_DTYPE_U32: case PTO_DTYPE_U64:
    return static_cast<uint64_t>(v);
  default: return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
}
template <typename T> T pto_unslot(uint64_t s, int dt) {
  switch (dt) {
  case PTO_DTYPE_F32: { uint32_t u = static_cast<uint32_t>(s); float f; std::memcpy(&f, &u, 4); return static_cast<T>(f); }
  case PTO_DTYPE_F64: { double f; std::memcpy(&f, &s, 8); return static_cast<T>(f); }
  case PTO_DTYPE_F16: { uint16_t u = static_cast<uint16_t>(s); _Float16 h; std::memcpy(&h, &u, 2); return static_cast<T>(static_cast<float>(h)); }
  case PTO_DTYPE_BF16: { uint32_t u = static_cast<uint32_t>(s & 0xffffu) << 16; float f; std::memcpy(&f, &u, 4); return static_cast<T>(f); }
  case PTO_DTYPE_I8: return static_cast<T>(static_cast<int8_t>(s));
  case PTO_DTYPE_I16: return static_cast<T>(static_cast<int16_t>(s));
  case PTO_DTYPE_I32: return static_cast<T>(static_cast<int32_t>(s));
  default: return static_cast<T>(s);
  }
}

// tensor.create: a zero-filled intermediate owned by the innermost scope.
template <size_t N> ChipTensor pto_create(const int64_t (&shape)[N], DataType dt) {
  const TaskOutputTensors made = alloc_tensors(TensorCreateInfo(shape, N, dt));
  return made.empty() ? ChipTensor{} : made.get_ref(0);
}

// tensor.read: one element, after the tasks that write it.
template <typename T, size_t N> T pto_read(const ChipTensor &t, const int64_t (&idx)[N]) {
  return get_tensor_data<T>(t, N, idx);
}

// Integer '/' floors and mod takes the sign of the divisor, as kernels do: division by zero is a
// launch error, and the minimum value divided by -1 wraps (mod gives 0) instead of trapping.
template <typename T> T pto_div(T a, T b) {
  if constexpr (static_cast<T>(0.5) != 0) {
    return a / b;
  } else {
    if (b == 0) { rt_report_fatal(1, "integer division by zero"); return 0; }
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
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  } else {
    if (b == 0) { rt_report_fatal(1, "integer division by zero"); return 0; }
    if constexpr (std::is_signed<T>::value) {
      if (b == static_cast<T>(-1)) return 0;
    }
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}
template <typename T> T pto_min(T a, T b) { return b < a ? b : a; }
template <typename T> T pto_max(T a, T b) { return a < b ? b : a; }

}  // namespace pto_codegen

/* ---- exports ------------------------------------------------------------------------------- */

#ifndef PTO_ORCH_NO_EXPORTS
extern "C" __attribute__((visibility("default"))) uint32_t pto_orch_abi_version(void) {
  return PTO_ORCH_ABI_VERSION;
}
extern "C" __attribute__((visibility("default"))) void pto_orch_bind(const pto_orch_api *api) {
  pto_orch_detail::tls_api = api;
  pto_orch_detail::tls_next_task = 0;
}
#endif

#endif
