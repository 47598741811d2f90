/* pto compiler: turns a verified PTIR program into the binaries of a work dir.
 *
 * libpto_compiler is the only library that links LLVM. The loader dlopens it on a cache miss and
 * calls pto_compiler_build_dir through the pto_compiler_api table, so a cache hit never maps
 * LLVM; tests and tools that always compile may link it directly.
 *
 * pto_compiler_build_dir writes DIR/program.ptir, DIR/orchestration/<orch>.cpp and .so,
 * DIR/kernels/<k>.ll and .o, DIR/kernels/kernels.so, and describes them in the work dir's
 * pto_manifest (pto/workdir.h): every file it wrote listed without a hash, the shared objects'
 * paths without their identity. It does not write the manifest: the loader does, last and
 * atomically, after hashing the files and reading their Build-IDs. On failure *out is empty. */
#ifndef PTO_COMPILER_H
#define PTO_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "pto/compile_api.h"
#include "pto/export.h"
#include "pto/ir.h"
#include "pto/signature.h"
#include "pto/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The identity of everything that changes generated code: pto version, LLVM version, C++
 * compiler, runtime ABI versions, target triple, CPU and features. Static string. */
PTO_API const char *pto_compiler_toolchain_identity(void);

PTO_API PTO_MUST_USE pto_status pto_compiler_build_dir(const pto_ir_program *p,
                                                       const pto_compile_options *opt,
                                                       const char *dir, pto_manifest *out);

/* Rebuild path for hand-edited sources: .cpp -> .so, .ll -> .o, objects -> kernels.so. */
PTO_API PTO_MUST_USE pto_status pto_compiler_build_orchestration(const char *cpp_path,
                                                                 const char *so_path);
PTO_API PTO_MUST_USE pto_status pto_compiler_build_kernel_object(const char *ll_path, int opt_level,
                                                                 const char *obj_path);
PTO_API PTO_MUST_USE pto_status pto_compiler_link_kernels(const char *const *objects, int nobjects,
                                                          const char *so_path);
/* Host C -> shared object: cc -shared -fPIC -O2 -Wl,--build-id=sha1 with pto's headers. */
PTO_API PTO_MUST_USE pto_status pto_compiler_build_host(const char *c_path, const char *so_path);

/* The table (pto/compile_api.h) the loader reads from the dlopen'ed library. */
PTO_API extern const pto_compiler_api pto_compiler_api_table;

#ifdef __cplusplus
}
#endif
#endif
