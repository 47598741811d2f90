#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cache_internal.h"
#include "loader_internal.h"
#include "pto/orch_abi.h"

pto_program *pto__loader_program_alloc(int nkernels) {
  pto_program *p = pto_calloc(1, sizeof *p);
  if (!p) return NULL;
  atomic_init(&p->refs, 1);
  p->nkernels = nkernels;
  p->kernels = pto_calloc((size_t)(nkernels > 0 ? nkernels : 1), sizeof *p->kernels);
  p->kernel_names = pto_calloc((size_t)(nkernels > 0 ? nkernels : 1), sizeof *p->kernel_names);
  p->kernel_core_types =
      pto_malloc((size_t)(nkernels > 0 ? nkernels : 1) * sizeof *p->kernel_core_types);
  if (!p->kernels || !p->kernel_names || !p->kernel_core_types) {
    free(p->kernels);
    free(p->kernel_names);
    free(p->kernel_core_types);
    free(p);
    return NULL;
  }
  for (int i = 0; i < nkernels; i++)
    p->kernel_core_types[i] = -1;
  return p;
}

pto_status pto_program_create_from_functions(const pto_signature *sig, pto_orch_bind_fn bind,
                                             pto_orch_entry_fn entry, int nkernels,
                                             const pto_kernel_fn *kernels,
                                             const char *const *kernel_names,
                                             uint64_t scratch_bytes, pto_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_program_create_from_functions: out_program is NULL");
  *out_program = NULL;
  if (!entry)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "program has no orchestration entry");
  pto_program *p = pto__loader_program_alloc(nkernels);
  if (!p) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory creating a program");
  pto_status s = pto_signature_copy(sig, &p->sig);
  if (s) {
    pto_program_release(p);
    return s;
  }
  p->orch_bind = bind;
  p->orch_entry = entry;
  p->scratch_bytes = scratch_bytes;
  for (int i = 0; i < nkernels; i++) {
    p->kernels[i] = kernels[i];
    p->kernel_names[i] = pto_strdup(kernel_names && kernel_names[i] ? kernel_names[i] : "kernel");
    if (!p->kernel_names[i]) {
      pto_program_release(p);
      return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory creating a program");
    }
  }
  *out_program = p;
  return PTO_OK;
}

pto_status pto_program_create_host(const pto_signature *sig, pto_host_entry_fn entry, int ncallees,
                                   pto_program *const *callees, int ndevices,
                                   const int32_t *device_ids, pto_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_program_create_host: out_program is NULL");
  *out_program = NULL;
  if (!entry) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "host program has no entry");
  if (ndevices < 1)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "host program needs at least one device");
  for (int i = 0; i < ncallees; i++)
    if (!callees[i] || callees[i]->is_host)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "callee %d of a host program must be an L2 program", i);
  pto_program *p = pto__loader_program_alloc(0);
  if (!p) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory creating a program");
  pto_status s = pto_signature_copy(sig, &p->sig);
  p->devices = pto_malloc((size_t)ndevices * sizeof *p->devices);
  p->callees = pto_calloc((size_t)(ncallees ? ncallees : 1), sizeof *p->callees);
  if (!s && (!p->devices || !p->callees))
    s = pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory creating a program");
  if (s) {
    pto_program_release(p);
    return s;
  }
  p->is_host = 1;
  p->host_entry = entry;
  p->ndevices = ndevices;
  for (int r = 0; r < ndevices; r++)
    p->devices[r] = device_ids ? device_ids[r] : r;
  p->ncallees = ncallees;
  for (int i = 0; i < ncallees; i++) {
    pto_program_retain(callees[i]);
    p->callees[i] = callees[i];
  }
  *out_program = p;
  return PTO_OK;
}

void pto_program_retain(pto_program *p) {
  if (p) atomic_fetch_add(&p->refs, 1);
}

void pto_program_release(pto_program *p) {
  if (!p || atomic_fetch_sub(&p->refs, 1) != 1) return;
  pto_signature_clear(&p->sig);
  for (int i = 0; i < p->nkernels; i++)
    free(p->kernel_names[i]);
  free(p->kernel_names);
  free(p->kernel_core_types);
  free(p->kernels);
  if (p->kernels_dl) pto__loader_dlclose(p->kernels_dl);
  if (p->orch_dl) pto__loader_dlclose(p->orch_dl);
  for (int i = 0; i < p->ncallees; i++) {
    pto_program_release(p->callees[i]);
    if (p->callee_dirs) free(p->callee_dirs[i]); /* NULL for pto_program_create_host's */
  }
  free(p->callees);
  free(p->callee_dirs);
  free(p->devices);
  if (p->host_dl) pto__loader_dlclose(p->host_dl);
  pto__positions_free(p->positions);
  free(p->work_dir);
  pto__loader_release_held(p->load_copy); /* after every dlclose above */
  pto__loader_release_held(p->held_dir);
  free(p);
}

const pto_signature *pto_program_signature(const pto_program *p) { return p ? &p->sig : NULL; }
uint64_t pto_program_hid(const pto_program *p) { return p ? p->hid : 0; }
pto_orch_bind_fn pto_program_orch_bind(const pto_program *p) { return p ? p->orch_bind : NULL; }
pto_orch_entry_fn pto_program_orch_entry(const pto_program *p) { return p ? p->orch_entry : NULL; }
pto_orch_config_fn pto_program_orch_config(const pto_program *p) {
  return p ? p->orch_config : NULL;
}
int pto_program_kernel_count(const pto_program *p) { return p ? p->nkernels : 0; }
pto_kernel_fn pto_program_kernel(const pto_program *p, int id) {
  return p && id >= 0 && id < p->nkernels ? p->kernels[id] : NULL;
}
const char *pto_program_kernel_name(const pto_program *p, int id) {
  return p && id >= 0 && id < p->nkernels ? p->kernel_names[id] : "?";
}
int pto_program_kernel_core_type(const pto_program *p, int id) {
  return p && id >= 0 && id < p->nkernels ? p->kernel_core_types[id] : -1;
}
pto_status pto_program_set_kernel_core_type(pto_program *p, int id, int core_type) {
  if (!p)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_program_set_kernel_core_type: the program is NULL");
  if (id < 0 || id >= p->nkernels)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "kernel id %d is out of range (%d kernels)",
                           id, p->nkernels);
  if (core_type != -1 && core_type != PTO_CORE_AIV && core_type != PTO_CORE_AIC)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "core type %d is not AIV (0) or AIC (1)",
                           core_type);
  p->kernel_core_types[id] = core_type;
  return PTO_OK;
}
uint64_t pto_program_scratch_bytes(const pto_program *p) { return p ? p->scratch_bytes : 0; }
const char *pto_program_work_dir(const pto_program *p) { return p ? p->work_dir : NULL; }
const char *pto_program_callee_dir(const pto_program *p, int index) {
  return p && index >= 0 && index < p->ncallees ? p->callee_dirs[index] : NULL;
}

int pto_program_is_host(const pto_program *p) { return p ? p->is_host : 0; }
int pto_program_device_count(const pto_program *p) { return p && p->is_host ? p->ndevices : 0; }
int32_t pto_program_device_id(const pto_program *p, int rank) {
  return p && p->is_host && rank >= 0 && rank < p->ndevices ? p->devices[rank] : -1;
}
int pto_program_callee_count(const pto_program *p) { return p ? p->ncallees : 0; }
const pto_program *pto_program_callee(const pto_program *p, int index) {
  return p && index >= 0 && index < p->ncallees ? p->callees[index] : NULL;
}
pto_host_entry_fn pto_program_host_entry(const pto_program *p) { return p ? p->host_entry : NULL; }
