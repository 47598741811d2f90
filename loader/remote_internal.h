/* Internal to the loader: the binary cache's remote second level (docs/remote-cache.md).
 * remote.c owns the configuration, the entry format, signing and verification and the hooks
 * cache.c calls; remote_http.c and remote_redis.c are the backends behind one table. */
#ifndef PTO_LOADER_REMOTE_INTERNAL_H
#define PTO_LOADER_REMOTE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pto/base.h"

/* One remote store of opaque objects named by cache key. Every call is bounded by the timeout
 * the backend was opened with; any failure is a status naming the URL. */
typedef struct pto__remote_backend {
  void *impl;
  /* The object, or NOT_FOUND when the remote does not have it (*out freed with free()). */
  pto_status (*get)(void *impl, const char *key, uint8_t **out, size_t *out_len);
  /* *out_exists: whether the remote has the object. */
  pto_status (*head)(void *impl, const char *key, int *out_exists);
  pto_status (*put)(void *impl, const char *key, const uint8_t *data, size_t len);
  /* Calls fn for each key it holds; NULL when the backend cannot list. */
  pto_status (*list)(void *impl, void (*fn)(void *ctx, const char *key, uint64_t bytes), void *ctx);
  void (*close)(void *impl);
} pto__remote_backend;

/* http://HOST[:PORT]/PATH: GET/HEAD/PUT of URL/<key> (nginx WebDAV, any plain HTTP store). */
pto_status pto__remote_http_open(const char *url, int timeout_ms, pto__remote_backend *out);
/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]: the object is the string "pto:<key>". After
 * connecting it sends AUTH [USER] PASSWORD (the password of the URL, else the first line of
 * $PTO_REMOTE_CACHE_PASSWORD_FILE), then SELECT DB. */
pto_status pto__remote_redis_open(const char *url, int timeout_ms, pto__remote_backend *out);
/* Reads the secret file named by the environment variable var (at most max bytes): a read error
 * is returned prefixed with var; a file every user can read or write is warned about once per
 * *warned ("... can be read or written by every user (mode M): RISK; chmod o= FILE"), not
 * refused (a group of build and run users may share it), as ssh says of a private key. */
pto_status pto__remote_read_secret_file(const char *var, const char *file, uint64_t max,
                                        const char *risk, int *warned, uint8_t **out,
                                        size_t *out_len);
/* A redis:// URL's parts, USER and PASSWORD with their %XX escapes decoded ("" when absent). */
typedef struct pto__redis_url {
  char host[256];
  int port, db;
  char user[256];
  char password[512];
} pto__redis_url;
/* Parses url (which starts with "redis://"); messages name it as shown (its password masked). */
pto_status pto__remote_redis_parse_url(const char *url, const char *shown, pto__redis_url *out);

/* ---- the hooks of the binary cache (remote.c) ---------------------------------------------- */

/* After a local miss of key (key_text: its text, pto_cache_key's): asks the remote for the
 * entry of the same remote key (remote.c says which lines of the text it leaves out). Returns 1
 * when a verified entry is now in place at ROOT/<key[0:2]>/<key[2:]> (the caller loads it as a
 * local entry), 0 when there is no remote, it is disabled, it has no entry, or the entry was
 * refused (warned and counted). Never fails. */
int pto__loader_remote_fetch(const char *root, const char *key, const char *key_text);
/* After an entry was stored locally (and loaded): stores it remotely too, signed when a key is
 * set. Best effort: a failure is warned once and disables the remote. */
void pto__loader_remote_store(const char *root, const char *entry_dir, const char *key,
                              const char *key_text);
/* A URL is shown in messages through pto_url_redact (pto/base.h): the password of its user
 * information (http://USER:PASSWORD@HOST, which libcurl sends as Basic authentication) as "***",
 * as ccache does: warnings land in CI logs that more people read than hold the password. */
/* The remote's URL for messages, its password redacted ("" when none is set). */
void pto__loader_remote_url(char *out, size_t n);
/* The checks a fetched object passes before anything of it is written (framing, filed under
 * rkey, the signature when a key is set, every manifest and listed file's hash, no unlisted
 * file): what a fetch runs, without a remote or a cache dir (the fuzz_remote target). */
pto_status pto__loader_remote_check_object(const uint8_t *buf, size_t len, const char *rkey);
/* Test hook: forget the configuration and the disabled state (re-read the environment). */
void pto__loader_remote_reset(void);

#endif
