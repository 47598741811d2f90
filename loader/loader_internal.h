/* Internal to the loader: the layout of pto_program, shared by program.c (creation, accessors)
 * and the work-dir loader that fills it. */
#ifndef PTO_LOADER_INTERNAL_H
#define PTO_LOADER_INTERNAL_H

#include <stdatomic.h>

#include "pto/loader.h"

struct pto_program {
  atomic_int refs;
  pto_signature sig;
  char *work_dir;          /* NULL for programs made from functions */
  void *orch_dl;           /* dlopen handles, NULL when made from functions */
  void *kernels_dl;
  uint64_t hid;            /* orchestration .so hid */
  pto_orch_bind_fn orch_bind;
  pto_orch_entry_fn orch_entry;
  int nkernels;
  pto_kernel_fn *kernels;
  char **kernel_names;
  uint64_t scratch_bytes;
};

/* An empty program with one reference and nkernels zeroed kernel slots; NULL on OOM. */
pto_program *pto__loader_program_alloc(int nkernels);

#endif
