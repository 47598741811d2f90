/* Internal to the loader: the layout of pto_program, shared by program.c (creation, accessors)
 * and the work-dir loader that fills it. */
#ifndef PTO_LOADER_INTERNAL_H
#define PTO_LOADER_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pto/base.h"
#include "pto/loader.h"

struct pto_program {
  atomic_int refs;
  pto_signature sig;
  char *work_dir; /* NULL for programs made from functions */
  void *orch_dl;  /* dlopen handles, NULL when made from functions */
  void *kernels_dl;
  uint64_t hid; /* orchestration .so hid */
  pto_orch_bind_fn orch_bind;
  pto_orch_entry_fn orch_entry;
  pto_orch_config_fn orch_config; /* NULL: the orchestration exports none */
  int nkernels;
  pto_kernel_fn *kernels;
  char **kernel_names;
  int *kernel_core_types; /* PTO_CORE_* from the manifest; -1: not declared */
  uint64_t scratch_bytes;
  uint64_t kernels_hid; /* kernels .so hid (0 for programs made from functions) */
  /* A host (L3) program: host.so, the device set, the loaded callee work dirs. */
  int is_host;
  void *host_dl;
  pto_host_entry_fn host_entry;
  int ndevices;
  int32_t *devices;
  int ncallees;
  pto_program **callees; /* one reference each */
  char **callee_dirs;    /* DIR/callees/<orch>, resolved */
  /* A host program's callee: the private copy of its work dir (work_dir) that the chips load
   * from, held from load to release (pto__loader_hold_dir); NULL otherwise. */
  char *held_dir;
  /* The directory of private copies its shared objects were loaded from (open_private_copy in
   * load_dir.c), held from load to release; NULL when each was loaded in place. */
  char *load_copy;
  /* launch errors (positions.c) */
  int32_t *current_op;              /* the orchestration's pto_orch_current_op, or NULL */
  struct pto__positions *positions; /* op id -> source position, or NULL */
};

/* ---- source positions of launch errors (positions.c) --------------------------------------- */

#define PTO_POSITIONS_FILENAME "positions.json"
typedef struct pto__positions pto__positions;
void pto__positions_free(pto__positions *t);
/* The table of ir's entry function (NULL in *out when ir has no source file). */
pto_status pto__positions_from_ir(const pto_ir_program *ir, const char *entry,
                                  pto__positions **out);
/* Replaces p's position table with one made from ir (the program p was compiled from). */
pto_status pto__program_set_positions_from_ir(pto_program *p, const pto_ir_program *ir);
/* DIR/positions.json: written beside a work dir (never listed in its manifest); read as a
 * best effort (NULL when missing or unreadable). */
pto_status pto__positions_write(const pto__positions *t, const char *dir);
pto__positions *pto__positions_read(const char *dir);
/* Replaces p's table (takes t). */
void pto__program_set_positions(pto_program *p, pto__positions *t);

#ifdef PTO_TEST_HOOKS
/* Test hook: called by the work-dir loader with each shared object's path after its bytes were
 * verified and before it is loaded (a test swaps the file there). */
extern void (*pto__loader_test_after_verify)(const char *path);
#endif

/* An empty program with one reference and nkernels zeroed kernel slots; NULL on OOM. */
pto_program *pto__loader_program_alloc(int nkernels);

/* ---- files, hashes and ELF (build_id.c, manifest.c) ------------------------------------- */

/* Seeds jansson's hash tables without a system call (manifest.c); before the first JSON call. */
void pto__loader_json_init(void);
/* pto_manifest_resolve in two steps, for a caller resolving several paths of one dir: the
 * realpath of dir once (NOT_FOUND, IO or OUT_OF_MEMORY naming dir), then each relpath under that
 * realpath (dir names it in messages). */
pto_status pto__manifest_realdir(const char *dir, char **out_rdir);
pto_status pto__manifest_resolve_in(const char *rdir, const char *dir, const char *relpath,
                                    char **out_path);

/* The Build-ID / hid of an ELF image held in memory; name is used in messages. Same results
 * and errors as pto_elf_build_id / pto_elf_hid. */
pto_status pto__loader_build_id_mem(const char *name, const uint8_t *buf, size_t size,
                                    uint8_t out_id[64], size_t *out_len);
pto_status pto__loader_hid_mem(const char *name, const uint8_t *buf, size_t size,
                               uint64_t *out_hid);
/* dlopen, dlclose and dl_iterate_phdr as the loader calls them: under one loader-wide lock.
 * glibc serialises them with its own loader lock, which ThreadSanitizer cannot see: without ours,
 * a thread reading a loaded object's program headers (pto__loader_loaded_build_id) while another
 * thread's dlopen made its link map was reported as a race (test_cache's threads compiling one
 * key). The lock is recursive: a constructor or destructor dlopen runs may load or release
 * another pto program. */
struct dl_phdr_info;
void *pto__loader_dlopen(const char *path, int flags);
int pto__loader_dlclose(void *handle);
int pto__loader_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);

/* The Build-ID of an image the dynamic loader mapped for handle (from its PT_NOTE segments in
 * memory): what actually runs, whatever file is at its path now. */
pto_status pto__loader_loaded_build_id(void *handle, const char *name, uint8_t out_id[64],
                                       size_t *out_len);

/* ---- compiling (compile.c) --------------------------------------------------------------- */

/* The dlopen'ed compiler library's table. */
pto_status pto__loader_compiler(const pto_compiler_api **out_api);
int pto__loader_compiler_loaded(void);
/* Completes m, the description the compiler filled for dir (toolchain, cache key, the hash of
 * every listed file, the shared objects' identities), and writes it as dir/manifest.json; a host
 * program's callee dirs first, each with its own manifest. */
pto_status pto__loader_write_manifest(const char *dir, pto_manifest *m, const char *toolchain,
                                      const char *cache_key);
/* Compiles p into dir and writes its manifest last. */
pto_status pto__loader_build_dir(const pto_ir_program *p, const pto_compile_options *opt,
                                 const char *dir, const char *cache_key);

#endif
