/* The work dir description (pto/workdir.h): its free and the files list, below both the compiler
 * that fills it and the loader that writes, reads and completes it. */
#include "pto/workdir.h"

#include <stdlib.h>
#include <string.h>

#include "pto/base.h"

static void free_binary(pto_manifest_binary *b) { pto_free(b->path); }

void pto_manifest_free(pto_manifest *m) {
  if (!m) return;
  pto_free(m->program);
  pto_signature_clear(&m->sig);
  for (int i = 0; i < m->nkernels; i++) {
    pto_free(m->kernels[i].name);
    pto_free(m->kernels[i].symbol);
    pto_free(m->kernels[i].source);
    pto_free(m->kernels[i].object);
  }
  pto_free(m->kernels);
  pto_free(m->orch_name);
  pto_free(m->orch_source);
  pto_free(m->orch_entry_symbol);
  free_binary(&m->orch);
  free_binary(&m->kernels_so);
  for (int i = 0; i < m->nfiles; i++)
    pto_free(m->files[i].path);
  pto_free(m->files);
  pto_free(m->toolchain);
  pto_free(m->platform);
  pto_free(m->host_name);
  pto_free(m->host_source);
  free_binary(&m->host);
  pto_free(m->devices);
  for (int i = 0; i < m->ncallees; i++) {
    pto_free(m->callees[i]);
    if (m->callee_dirs) pto_manifest_free(&m->callee_dirs[i]);
  }
  pto_free(m->callees);
  pto_free(m->callee_dirs);
  memset(m, 0, sizeof *m);
}

const pto_manifest_file *pto_manifest_find_file(const pto_manifest *m, const char *relpath) {
  if (!m || !relpath) return NULL;
  for (int i = 0; i < m->nfiles; i++)
    if (m->files[i].path && !strcmp(m->files[i].path, relpath)) return &m->files[i];
  return NULL;
}

pto_status pto_manifest_list_file(pto_manifest *m, const char *relpath) {
  if (!relpath)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "manifest: a listed file has no path");
  if (pto_manifest_find_file(m, relpath)) return PTO_OK;
  int cap = m->nfiles; /* the public struct keeps no capacity: the count is the allocation */
  if (pto_grow_int(&m->files, sizeof *m->files, &cap, (int64_t)m->nfiles + 1)) goto oom;
  pto_manifest_file *files = m->files;
  char *p = pto_strdup(relpath);
  if (!p) goto oom;
  files[m->nfiles] = (pto_manifest_file){.path = p};
  m->nfiles++;
  return PTO_OK;
oom:
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory listing %s in a manifest",
                         relpath);
}
