/* CTest runtime_header_alone: a runtime-only user (a program loaded elsewhere, launched here)
 * includes pto/runtime.h alone and gets no IR, signature, loader or compiler header with it. */
#include "pto/runtime.h"

#if defined(PTO_IR_H) || defined(PTO_SIGNATURE_H) || defined(PTO_LOADER_H) ||                      \
    defined(PTO_COMPILE_API_H) || defined(PTO_IR_BUILDER_H)
#error "pto/runtime.h pulls in an IR or loader header"
#endif

/* The runtime's own API is complete without them: a launch of an opaque program. */
pto_status launch(pto_worker *w, const pto_program *p, const pto_arg *args, size_t nargs);
pto_status launch(pto_worker *w, const pto_program *p, const pto_arg *args, size_t nargs) {
  return pto_worker_run(w, p, args, nargs);
}
