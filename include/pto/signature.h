/* pto signature: the entry point's parameters as the compiler specialized them. It is what the
 * manifest records, what the cache key is built from, and what the runtime validates a launch
 * against. Plain data, independent of the IR arena; owned by whoever created it. */
#ifndef PTO_SIGNATURE_H
#define PTO_SIGNATURE_H

#include <stdint.h>

#include "pto/export.h"
#include "pto/ir.h"
#include "pto/status.h"
#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_sig_dim {
  int64_t value; /* static extent; -1 when dynamic */
  int sym;       /* index into pto_signature.syms when dynamic, else -1 */
} pto_sig_dim;

typedef struct pto_sig_param {
  char *name; /* without '%' */
  int is_tensor;
  pto_dir dir; /* tensors; scalars are IN */
  pto_dtype dtype;
  int rank; /* tensors */
  pto_sig_dim dims[PTO_MAX_RANK];
  pto_bind_kind bind; /* scalars: LITERAL (specialized, value below) or RUNTIME */
  pto_scalar value;   /* the specialized value */
} pto_sig_param;

typedef struct pto_signature {
  char *entry; /* entry function name */
  int nparams;
  pto_sig_param *params;
  int nsyms;
  char **syms; /* dynamic symbols used by the entry's parameters */
  int nrets;   /* the entry's '->' count (outputs are out/inout params) */
  /* A kernel K run as the entry (--entry K, pto_ir_program_kernel_entry): "K", the name the user
   * gave, while entry is the orch made for it (K_entry), which is what runs and what the work
   * dir's files are named after. NULL for any other entry. Messages, reports and 'pto cache ls'
   * show pto_signature_entry_name. */
  char *kernel_entry;
} pto_signature;

/* A compile-time binding: -D NAME=VALUE|runtime (value "128", "1.5", "true", "runtime") or a
 * sample shape --arg NAME=64x128 (value "64x128"). */
typedef struct pto_binding {
  const char *name;
  const char *value;
} pto_binding;

/* The signature of entry function f once compile-time bindings are applied: every tensor shaped
 * (annotation or sample), every scalar bound (default, -D value, or runtime). Fails naming the
 * parameter and both fixes ("scalar parameter 'n' has no value: pass -D n=VALUE or -D n=runtime",
 * "tensor parameter 'x' has no shape: annotate it (tensor[64,128] f32) or pass --arg x=64x128"),
 * or naming a binding that matches no parameter or does not fit its dtype. */
PTO_API PTO_MUST_USE pto_status pto_signature_build(const pto_ir_program *p, const pto_ir_func *f,
                                                    const pto_binding *scalars, int nscalars,
                                                    const pto_binding *samples, int nsamples,
                                                    pto_signature *out_sig);
/* The program with entry's bindings from sig written in: a specialized scalar's default becomes
 * its value (-D n=128 gives `%n: i32 = 128`, -D n=runtime `= runtime`), an unshaped tensor gets
 * its sample shape. What DIR/program.ptir holds, and what the reference interpreter runs. */
PTO_API PTO_MUST_USE pto_status pto_ir_specialize(const pto_ir_program *p, const pto_ir_func *entry,
                                                  const pto_signature *sig,
                                                  pto_ir_program **out_program);

PTO_API PTO_MUST_USE pto_status pto_signature_copy(const pto_signature *src,
                                                   pto_signature *out_sig);
PTO_API void pto_signature_clear(pto_signature *sig);
/* The entry as the user named it: kernel_entry where set, else entry ("" for neither). */
PTO_API const char *pto_signature_entry_name(const pto_signature *sig);
/* Index of the named parameter, or -1 (also for a NULL sig or name). */
PTO_API int pto_signature_find(const pto_signature *sig, const char *name);
/* The index of dynamic symbol name in sig->syms, appending a copy when it is new; -1 when out of
 * memory or for a NULL sig or name. */
PTO_API int pto_signature_intern_sym(pto_signature *sig, const char *name);

/* The symbols of a compiled orchestration object and of compiled host code that hold their
 * fingerprint (below). A host's "kernel table" is its callees, each name given as both name and
 * symbol, in call-index order. */
#define PTO_ORCH_FINGERPRINT_SYMBOL "pto_orch_fingerprint"
#define PTO_HOST_FINGERPRINT_SYMBOL "pto_host_fingerprint"
/* 32 hex digits (XXH3-128) of everything a launch is checked against and dispatched by: sig
 * (entry and kernel_entry, every parameter's name, direction, dtype, dims and binding, the
 * symbols, the result count) and the kernel table (id, name and symbol of each kernel). The
 * compiler writes it into the orchestration object it builds; the loader recomputes it from a work
 * dir's manifest and refuses a manifest whose fingerprint differs from the compiled one (a hand
 * edit). */
PTO_API PTO_MUST_USE pto_status pto_signature_fingerprint(const pto_signature *sig, int nkernels,
                                                          const char *const *kernel_names,
                                                          const char *const *kernel_symbols,
                                                          char out_hex[33]);

#ifdef __cplusplus
}
#endif
#endif
