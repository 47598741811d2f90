/* pto manifest: DIR/manifest.json, the work dir description (pto/workdir.h: the struct, its
 * free and its files list) on disk (README.md, "Work dirs and the binary cache").
 *
 * A manifest names what the compiler produced and how to trust it: the program and its entry
 * signature, the kernels (id, name, exported symbol, core type, scratch bytes), the
 * orchestration (its C++ source and shared object), the kernels shared object, the XXH3-128
 * content hash of every source and binary, the GNU Build-ID and hid of both shared objects, the
 * toolchain identity, the cache key, the optimization level and the platform.
 *
 * Reading validates everything before returning: a malformed or foreign manifest fails with one
 * message naming the file and the field ("DIR/manifest.json: field 'kernels[1].core_type':
 * expected \"aiv\" or \"aic\", got \"gpu\""), and JSON syntax errors carry jansson's line:col.
 * Every path in a manifest is relative to the work dir, '/'-separated, without empty, '.' or '..'
 * components; pto_manifest_resolve additionally refuses a path that a symlink leads out of the
 * work dir, so a manifest never makes the loader open a file outside it.
 *
 * Writing validates the same way (what pto_manifest_write accepts, pto_manifest_read accepts),
 * then replaces DIR/manifest.json atomically (temp file in DIR, fsync, rename, fsync DIR). The
 * loader writes the manifest last, from the description the compiler filled, once every file it
 * lists is hashed, so an interrupted build is never trusted. Writer and reader walk one table of
 * the manifest's fields (loader/manifest.c). */
#ifndef PTO_MANIFEST_H
#define PTO_MANIFEST_H

#include <stdint.h>

#include "pto/export.h"
#include "pto/status.h"
#include "pto/workdir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads and validates DIR/manifest.json into *out_m (zeroed first; left empty on failure). */
PTO_API PTO_MUST_USE pto_status pto_manifest_read(const char *dir, pto_manifest *out_m);
/* Parses manifest text; name is the file named in messages. */
PTO_API PTO_MUST_USE pto_status pto_manifest_parse(const char *text, size_t len, const char *name,
                                                   pto_manifest *out_m);
/* Validates m and writes DIR/manifest.json atomically. */
PTO_API PTO_MUST_USE pto_status pto_manifest_write(const char *dir, const pto_manifest *m);
/* The JSON text pto_manifest_write would write (freed with pto_free, NUL-terminated). */
PTO_API PTO_MUST_USE pto_status pto_manifest_to_json(const pto_manifest *m, char **out_text);

/* ---- building a manifest (compiler, rebuild) -------------------------------------------- */

/* Hashes DIR/relpath and records it in m->files (replacing an earlier entry for the path). */
PTO_API PTO_MUST_USE pto_status pto_manifest_add_file(pto_manifest *m, const char *dir,
                                                      const char *relpath);
/* Fills b from the shared object DIR/relpath: path, Build-ID hex and hid. */
PTO_API PTO_MUST_USE pto_status pto_manifest_binary_set(pto_manifest_binary *b, const char *dir,
                                                        const char *relpath);

/* ---- paths and hashes ------------------------------------------------------------------- */

/* Ok when relpath is a safe work-dir path: relative, '/'-separated, no empty, '.' or '..'
 * components, no control characters. what names it in the message. */
PTO_API PTO_MUST_USE pto_status pto_manifest_check_path(const char *relpath, const char *what);
/* DIR/relpath as an absolute, symlink-free path (freed with pto_free), refusing an unsafe relpath
 * and a path that symlinks lead outside DIR. The file must exist. */
PTO_API PTO_MUST_USE pto_status pto_manifest_resolve(const char *dir, const char *relpath,
                                                     char **out_path);

/* XXH3-128 of a file's content, streamed, as 32 lowercase hex digits (the canonical big-endian
 * byte order, as xxh128sum prints it). */
PTO_API PTO_MUST_USE pto_status pto_file_hash(const char *path, char out_hex[PTO_HASH_HEX_LEN + 1]);

#ifdef __cplusplus
}
#endif
#endif
