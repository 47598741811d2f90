/* pto cache: inspect and maintain the binary cache (pto/cache.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "pto/base.h"
#include "pto/cache.h"
#include "pto/manifest.h"

static const char *k_cmd = "cache";

/* ---- output helpers ------------------------------------------------------------------- */

static void json_str(FILE *f, const char *s) {
  if (!s) {
    fputs("null", f);
    return;
  }
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\t': fputs("\\t", f); break;
    case '\r': fputs("\\r", f); break;
    default:
      if (*c < 0x20)
        fprintf(f, "\\u%04x", *c);
      else
        fputc(*c, f);
    }
  }
  fputc('"', f);
}

static void human_bytes(uint64_t n, char *buf, size_t len) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024 && u < 4)
    v /= 1024, u++;
  if (u == 0)
    snprintf(buf, len, "%" PRIu64 " B", n);
  else
    snprintf(buf, len, "%.1f %s", v, units[u]);
}

static void age_text(int64_t ns, char *buf, size_t len) {
  if (!ns) {
    snprintf(buf, len, "-");
    return;
  }
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t s = (int64_t)now.tv_sec - ns / 1000000000;
  if (s < 0) s = 0;
  if (s < 120)
    snprintf(buf, len, "%" PRId64 "s ago", s);
  else if (s < 7200)
    snprintf(buf, len, "%" PRId64 "m ago", s / 60);
  else if (s < 172800)
    snprintf(buf, len, "%" PRId64 "h ago", s / 3600);
  else
    snprintf(buf, len, "%" PRId64 "d ago", s / 86400);
}

static void iso_time(int64_t ns, char *buf, size_t len) {
  time_t t = (time_t)(ns / 1000000000);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- subcommands ---------------------------------------------------------------------- */

static int do_stats(int json) {
  pto_cache_stats st;
  char dir[PATH_MAX];
  pto_status s = pto_cache_dir(dir, sizeof dir);
  if (!s) s = pto_cache_stats_get(&st);
  if (s) return cli_fail(k_cmd, s);
  if (json) {
    printf("{\"dir\": ");
    json_str(stdout, dir);
    printf(", \"entries\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"max_bytes\": %" PRIu64
           ", \"hits\": %" PRIu64 ", \"misses\": %" PRIu64 ", \"stores\": %" PRIu64
           ", \"evictions\": %" PRIu64 ", \"corruptions\": %" PRIu64 ", \"races\": %" PRIu64
           ", \"uncached\": %" PRIu64 ", \"remote_hits\": %" PRIu64 ", \"remote_misses\": %" PRIu64
           ", \"remote_stores\": %" PRIu64 ", \"remote_errors\": %" PRIu64
           ", \"remote_refusals\": %" PRIu64 "}\n",
           st.entries, st.bytes, st.max_bytes, st.hits, st.misses, st.stores, st.evictions,
           st.corruptions, st.races, st.uncached, st.remote_hits, st.remote_misses,
           st.remote_stores, st.remote_errors, st.remote_refusals);
    return PTO_EXIT_OK;
  }
  char size[32], max[64];
  human_bytes(st.bytes, size, sizeof size);
  const char *env = getenv("PTO_CACHE_MAX_SIZE");
  uint64_t unused;
  pto_status bad = !st.max_bytes && env && *env ? pto_cache_parse_size(env, &unused) : PTO_OK;
  if (st.max_bytes) {
    human_bytes(st.max_bytes, max, sizeof max);
  } else if (bad) { /* set, but not a size (the cache warned): not shown as unset */
    snprintf(max, sizeof max, "none (PTO_CACHE_MAX_SIZE is not a size)");
  } else {
    snprintf(max, sizeof max, "none (set PTO_CACHE_MAX_SIZE)");
  }
  pto_status_free(bad);
  printf("cache directory  %s\n", dir);
  printf("entries          %" PRIu64 "\n", st.entries);
  printf("size             %s\n", size);
  printf("size limit       %s\n", max);
  printf("hits             %" PRIu64 "\n", st.hits);
  printf("misses           %" PRIu64 "\n", st.misses);
  printf("stores           %" PRIu64 "\n", st.stores);
  printf("evictions        %" PRIu64 "\n", st.evictions);
  printf("corruptions      %" PRIu64 "\n", st.corruptions);
  printf("races            %" PRIu64 "\n", st.races);
  printf("uncached         %" PRIu64 "\n", st.uncached);
  printf("remote hits      %" PRIu64 "\n", st.remote_hits);
  printf("remote misses    %" PRIu64 "\n", st.remote_misses);
  printf("remote stores    %" PRIu64 "\n", st.remote_stores);
  printf("remote errors    %" PRIu64 "\n", st.remote_errors);
  printf("remote refusals  %" PRIu64 "\n", st.remote_refusals);
  return PTO_EXIT_OK;
}

/* An entry's signature in one line, "x:in[M,64]f32 y:out[M,64]f32 alpha:f32", and what it was
 * specialised for: its scalars, an -O level other than -O2 and a host program's device set,
 * "act=1 n=128 -O3", "devices=0,1" ("-" when none), so two entries of one program can be told
 * apart. */
static void scalar_text(const pto_sig_param *p, char *buf, size_t n) {
  if (pto_dtype_is_float(p->dtype))
    snprintf(buf, n, "%.17g", p->value.f);
  else if (p->dtype == PTO_DTYPE_BOOL)
    snprintf(buf, n, "%s", p->value.i ? "true" : "false");
  else if (!pto_dtype_is_signed(p->dtype))
    snprintf(buf, n, "%" PRIu64, p->value.u);
  else
    snprintf(buf, n, "%" PRId64, p->value.i);
}

static void entry_signature(const pto_cache_entry *e, pto_text *sig, pto_text *scalars) {
  static const char *const dirs[] = {"in", "out", "inout"};
  pto_manifest m;
  pto_status s = pto_manifest_read(e->path, &m);
  if (s) {
    pto_status_free(s);
    /* Another pto version's entry (its own key, sealed): kept, as verify keeps it; this pto
     * cannot read its manifest, and never looks it up. Anything else unreadable is corrupt. */
    if (e->other_schema)
      pto_text_printf(sig, "(another pto version's entry, %s: kept, not used by this pto)",
                      e->other_schema);
    else
      pto_text_puts(sig, "(unreadable: corrupt? 'pto cache verify' removes corrupt entries)");
    pto_text_puts(scalars, "-");
    return;
  }
  for (int i = 0; i < m.sig.nparams; i++) {
    const pto_sig_param *p = &m.sig.params[i];
    if (sig->len) pto_text_puts(sig, " ");
    if (!p->is_tensor) {
      char v[64] = "";
      if (p->bind == PTO_BIND_LITERAL) {
        scalar_text(p, v, sizeof v);
        pto_text_printf(scalars, "%s%s=%s", scalars->len ? " " : "", p->name, v);
      }
      pto_text_printf(sig, "%s:%s%s%s", p->name, pto_dtype_name(p->dtype), *v ? "=" : "", v);
      continue;
    }
    pto_text_printf(sig, "%s:%s[", p->name, (unsigned)p->dir < 3 ? dirs[p->dir] : "?");
    for (int d = 0; d < p->rank; d++) {
      if (p->dims[d].sym >= 0 && p->dims[d].sym < m.sig.nsyms)
        pto_text_printf(sig, "%s%s", d ? "," : "", m.sig.syms[p->dims[d].sym]);
      else
        pto_text_printf(sig, "%s%" PRId64, d ? "," : "", p->dims[d].value);
    }
    pto_text_printf(sig, "]%s", pto_dtype_name(p->dtype));
  }
  /* A host program's device set and an optimization level other than the default are part of
   * the key: two entries may differ there alone. */
  if (m.opt_level != 2) pto_text_printf(scalars, "%s-O%d", scalars->len ? " " : "", m.opt_level);
  if (m.is_host && m.ndevices > 0) {
    pto_text_printf(scalars, "%sdevices=", scalars->len ? " " : "");
    for (int d = 0; d < m.ndevices; d++)
      pto_text_printf(scalars, "%s%d", d ? "," : "", (int)m.devices[d]);
  }
  if (!scalars->len) pto_text_puts(scalars, "-");
  pto_manifest_free(&m);
}

typedef struct remote_ls {
  int json, n;
} remote_ls;

static void print_remote(void *ctx, const char *key, uint64_t bytes) {
  remote_ls *l = ctx;
  if (l->json) {
    printf("%s{\"key\": \"%s\", \"bytes\": %" PRIu64 "}", l->n ? ", " : "[", key, bytes);
  } else {
    char size[32];
    human_bytes(bytes, size, sizeof size);
    printf("%s  %s\n", key, size);
  }
  l->n++;
}

/* pto cache ls --remote: the entries of $PTO_REMOTE_CACHE, where its backend can list. A remote
 * that cannot list (http://: GET, HEAD and PUT have no listing) is bad input, exit 2, as no
 * remote at all is (docs/cli.md's exit codes: 1 is a job that ran and failed), and --json prints no
 * list then. */
static int do_ls_remote(int json) {
  remote_ls l = {json, 0};
  pto_status s = pto_cache_remote_list(print_remote, &l);
  if (json && (l.n || !s)) printf("%s]\n", l.n ? "" : "[");
  if (s && pto_status_code_of(s) == PTO_STATUS_UNIMPLEMENTED) {
    fprintf(stderr, "pto %s: ", k_cmd);
    cli_put_message(stderr, pto_status_message(s));
    fputc('\n', stderr);
    pto_status_free(s);
    return PTO_EXIT_USAGE;
  }
  if (s) return cli_fail(k_cmd, s);
  return PTO_EXIT_OK;
}

static int do_ls(int json) {
  pto_cache_entry *v = NULL;
  int n = 0;
  pto_status s = pto_cache_list(&v, &n);
  if (s) return cli_fail(k_cmd, s);
  if (json) {
    printf("[");
    for (int i = 0; i < n; i++) {
      printf("%s\n  {\"key\": \"%s\", \"path\": ", i ? "," : "", v[i].key);
      json_str(stdout, v[i].path);
      printf(", \"program\": ");
      json_str(stdout, v[i].program);
      printf(", \"entry\": ");
      json_str(stdout, v[i].entry);
      printf(", \"bytes\": %" PRIu64 ", \"last_use_ns\": %" PRId64 ", \"created_ns\": %" PRId64,
             v[i].bytes, v[i].last_use_ns, v[i].created_ns);
      pto_text sig = {0}, sc = {0};
      entry_signature(&v[i], &sig, &sc);
      printf(", \"signature\": ");
      json_str(stdout, sig.data);
      printf(", \"specialised\": ");
      json_str(stdout, sc.data);
      printf(", \"other_version\": ");
      json_str(stdout, v[i].other_schema);
      printf("}");
      pto_text_free(&sig);
      pto_text_free(&sc);
    }
    printf("%s]\n", n ? "\n" : "");
  } else {
    if (n)
      printf("%-32s  %-20s  %10s  %-12s  %s\n", "KEY", "PROGRAM", "SIZE", "LAST USE",
             "SPECIALISED  SIGNATURE");
    for (int i = 0; i < n; i++) {
      char size[32], age[32], prog[64];
      human_bytes(v[i].bytes, size, sizeof size);
      age_text(v[i].last_use_ns, age, sizeof age);
      if (v[i].program)
        snprintf(prog, sizeof prog, "%s@%s", v[i].program, v[i].entry);
      else
        snprintf(prog, sizeof prog, "%s", v[i].other_schema ? "(other version)" : "(unreadable)");
      pto_text sig = {0}, sc = {0};
      entry_signature(&v[i], &sig, &sc);
      printf("%s  %-20s  %10s  %-12s  %-11s  %s\n", v[i].key, prog, size, age,
             sc.data ? sc.data : "-", sig.data ? sig.data : "");
      pto_text_free(&sig);
      pto_text_free(&sc);
    }
  }
  pto_cache_list_free(v, n);
  return PTO_EXIT_OK;
}

static char *read_text(const char *path) {
  uint8_t *buf;
  size_t len;
  pto_status s = pto_file_read(path, PTO_FILE_MAX_SOURCE, &buf, &len);
  pto_status_free(s);
  return s ? NULL : (char *)buf;
}

static void print_param(const pto_signature *sig, const pto_sig_param *p) {
  static const char *const dirs[] = {"in", "out", "inout"};
  if (p->is_tensor) {
    printf("  %-5s %s: tensor[", (unsigned)p->dir < 3 ? dirs[p->dir] : "?", p->name);
    for (int d = 0; d < p->rank; d++) {
      if (p->dims[d].sym >= 0 && p->dims[d].sym < sig->nsyms)
        printf("%s%s", d ? "," : "", sig->syms[p->dims[d].sym]);
      else
        printf("%s%" PRId64, d ? "," : "", p->dims[d].value);
    }
    printf("] %s\n", pto_dtype_name(p->dtype));
    return;
  }
  printf("  %-5s %s: %s = ", "", p->name, pto_dtype_name(p->dtype));
  if (p->bind != PTO_BIND_LITERAL)
    printf("runtime\n");
  else if (pto_dtype_is_float(p->dtype))
    printf("%.17g\n", p->value.f);
  else if (p->dtype == PTO_DTYPE_BOOL)
    printf("%s\n", p->value.i ? "true" : "false");
  else if (!pto_dtype_is_signed(p->dtype))
    printf("%" PRIu64 "\n", p->value.u);
  else
    printf("%" PRId64 "\n", p->value.i);
}

/* The other_schema pto_cache_list gives the entry key (a copy), or NULL. */
static char *other_schema_of(const char *key) {
  pto_cache_entry *v = NULL;
  int n = 0;
  char *schema = NULL;
  pto_status s = pto_cache_list(&v, &n);
  for (int i = 0; !s && i < n && !schema; i++)
    if (!strcmp(v[i].key, key) && v[i].other_schema) schema = strdup(v[i].other_schema);
  pto_status_free(s);
  pto_cache_list_free(v, n);
  return schema;
}

/* show of an entry whose manifest this pto cannot read: another version's entry (as ls and
 * verify tell it) is shown as such, exit 0; any other is corrupt, and the message says so rather
 * than only what the manifest lacks ("written by another version of pto; compile the program
 * again" of a manifest that does not even match its seal). */
static int show_unreadable(const char *key, const char *path, pto_status s, int json) {
  char *schema = other_schema_of(key);
  if (!schema) {
    return cli_fail(k_cmd,
                    pto_status_annotate(s,
                                        "cache entry %s does not read: corrupt ('pto cache "
                                        "verify' checks every entry and removes corrupt ones)",
                                        key));
  }
  pto_status_free(s);
  if (json) {
    printf("{\"key\": \"%s\", \"path\": ", key);
    json_str(stdout, path);
    printf(", \"key_text\": null, \"other_version\": ");
    json_str(stdout, schema);
    printf(", \"manifest\": null}\n");
  } else {
    printf("key          %s\n", key);
    printf("path         %s\n", path);
    printf("version      another pto version's entry (%s): kept for it, not used by this pto "
           "('pto cache rm %.8s' removes it)\n",
           schema, key);
  }
  free(schema);
  return PTO_EXIT_OK;
}

static int do_show(const char *prefix, int json) {
  char key[33], *path = NULL;
  pto_status s = pto_cache_find(prefix, key, &path);
  if (s) return cli_fail(k_cmd, s);
  pto_manifest m;
  s = pto_manifest_read(path, &m);
  if (s) {
    int rc = show_unreadable(key, path, s, json);
    free(path);
    return rc;
  }
  char kpath[PATH_MAX + 16], mpath[PATH_MAX + 16];
  snprintf(kpath, sizeof kpath, "%s/key.txt", path);
  snprintf(mpath, sizeof mpath, "%s/%s", path, PTO_MANIFEST_FILENAME);
  char *key_text = read_text(kpath);
  if (json) {
    char *mtext = read_text(mpath);
    printf("{\"key\": \"%s\", \"path\": ", key);
    json_str(stdout, path);
    printf(", \"key_text\": ");
    json_str(stdout, key_text);
    printf(", \"other_version\": null");
    /* The manifest was just validated as JSON; it is embedded as it is. */
    printf(", \"manifest\": %s}\n", mtext ? mtext : "null");
    free(mtext);
  } else {
    printf("key          %s\n", key);
    printf("path         %s\n", path);
    printf("program      %s (entry @%s, platform %s, -O%d)\n", m.program,
           pto_signature_entry_name(&m.sig), m.platform, m.opt_level);
    struct stat st;
    char when[64], age[32];
    if (stat(path, &st) == 0) {
      int64_t ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
      iso_time(ns, when, sizeof when);
      age_text(ns, age, sizeof age);
      printf("last use     %s (%s)\n", when, age);
    }
    if (stat(mpath, &st) == 0) {
      iso_time((int64_t)st.st_mtim.tv_sec * 1000000000, when, sizeof when);
      printf("created      %s\n", when);
    }
    printf("toolchain    %s\n", m.toolchain);
    if (m.is_host) {
      printf("devices      ");
      for (int d = 0; d < m.ndevices; d++)
        printf("%s%d", d ? "," : "", (int)m.devices[d]);
      printf(" (rank r runs on the r-th)\n");
    }
    printf("signature:\n");
    for (int i = 0; i < m.sig.nparams; i++)
      print_param(&m.sig, &m.sig.params[i]);
    printf("kernels:\n");
    for (int i = 0; i < m.nkernels; i++)
      printf("  %d  %-20s %s  %s  scratch %" PRIu64 " bytes\n", m.kernels[i].id, m.kernels[i].name,
             m.kernels[i].core_type == PTO_CORE_AIC ? "aic" : "aiv", m.kernels[i].symbol,
             m.kernels[i].scratch_bytes);
    char hid[17];
    printf("binaries:\n");
    if (m.is_host) {
      pto_hid_format(m.host.hid, hid);
      printf("  %-28s hid=%s build-id=%s\n", m.host.path, hid, m.host.build_id);
    } else {
      pto_hid_format(m.orch.hid, hid);
      printf("  %-28s hid=%s build-id=%s\n", m.orch.path, hid, m.orch.build_id);
      pto_hid_format(m.kernels_so.hid, hid);
      printf("  %-28s hid=%s build-id=%s\n", m.kernels_so.path, hid, m.kernels_so.build_id);
    }
    printf("files:\n");
    for (int i = 0; i < m.nfiles; i++)
      printf("  %-28s %s\n", m.files[i].path, m.files[i].hash);
    if (key_text)
      printf("key.txt:\n%s", key_text);
    else
      printf("key.txt: (none; PTO_CACHE_DEBUG=1 writes it into new entries)\n");
  }
  free(key_text);
  pto_manifest_free(&m);
  free(path);
  return PTO_EXIT_OK;
}

/* ctx: the count of corrupt entries that stay (a read-only cache dir: not "discarded"). */
static void report_corrupt(void *ctx, const char *key, pto_status problem) {
  char *path = NULL;
  pto_status s = pto_cache_find(key, (char[33]){0}, &path);
  int kept = !s;
  pto_status_free(s);
  free(path);
  *(int *)ctx += kept;
  printf("corrupt  %s: %s (%s)\n", key, pto_status_message(problem), kept ? "kept" : "discarded");
}

static int do_verify(void) {
  int checked = 0, corrupt = 0, kept = 0;
  pto_status s = pto_cache_verify(report_corrupt, &kept, &checked, &corrupt);
  if (s) return cli_fail(k_cmd, s);
  printf("%d entries checked, %d corrupt%s\n", checked, corrupt,
         !corrupt ? ""
         : kept   ? " (some could not be removed)"
                  : " (discarded)");
  return corrupt ? PTO_EXIT_FAILED : PTO_EXIT_OK;
}

static int do_gc(const char *max_text) {
  uint64_t max = 0;
  pto_status s = PTO_OK;
  if (max_text) {
    s = pto_cache_parse_size(max_text, &max);
    if (s) {
      int rc = cli_usage_error(k_cmd, "--max-size %s", pto_status_message(s));
      pto_status_free(s);
      return rc;
    }
    /* pto_cache_gc takes 0 for "no limit": --max-size 0 would evict nothing, the opposite of
     * what it says. */
    if (!max)
      return cli_usage_error(k_cmd,
                             "--max-size %s: the size must be above 0 ('pto cache clear' "
                             "removes every entry)",
                             max_text);
  } else {
    const char *env = getenv("PTO_CACHE_MAX_SIZE");
    if (env && *env && (s = pto_cache_parse_size(env, &max))) {
      int rc = cli_usage_error(k_cmd, "PTO_CACHE_MAX_SIZE: %s", pto_status_message(s));
      pto_status_free(s);
      return rc;
    }
  }
  pto_cache_gc_result r;
  s = pto_cache_gc(max, &r);
  if (s) return cli_fail(k_cmd, s);
  char freed[32], left[32];
  human_bytes(r.evicted_bytes, freed, sizeof freed);
  human_bytes(r.bytes, left, sizeof left);
  printf("evicted %" PRIu64 " entries (%s); %" PRIu64 " entries (%s) left", r.evicted, freed,
         r.entries, left);
  if (!max) printf("; no size limit (pass --max-size or set PTO_CACHE_MAX_SIZE)");
  printf("; removed %" PRIu64 " stale build dirs\n", r.stale_tmp);
  return PTO_EXIT_OK;
}

/* Every KEY is resolved to its full key before anything is removed: a KEY that names no entry
 * (or several) removes nothing; two KEYs of one entry remove it once. */
static int do_rm(char **keys, int nkeys) {
  char(*full)[33] = calloc((size_t)nkeys, sizeof *full);
  if (!full) return cli_fail(k_cmd, pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory"));
  for (int i = 0; i < nkeys; i++) {
    char *path = NULL;
    pto_status s = pto_cache_find(keys[i], full[i], &path);
    free(path);
    if (s) {
      free(full);
      return cli_fail(k_cmd, s);
    }
  }
  int rc = PTO_EXIT_OK;
  for (int i = 0; i < nkeys && rc == PTO_EXIT_OK; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++)
      seen |= !strcmp(full[j], full[i]);
    if (seen) continue;
    pto_status s = pto_cache_remove(full[i], NULL);
    if (s)
      rc = cli_fail(k_cmd, s);
    else
      printf("removed %s\n", full[i]);
  }
  free(full);
  return rc;
}

static int do_clear(void) {
  uint64_t n = 0;
  pto_status s = pto_cache_clear(&n);
  if (!s || n) printf("removed %" PRIu64 " entries\n", n); /* those before a failure too */
  return s ? cli_fail(k_cmd, s) : PTO_EXIT_OK;
}

/* The cache directory the environment names must be a directory where it exists: a file there
 * (or above it) is bad input (exit 2) naming the variable and the path, for every subcommand,
 * rather than a failed job (exit 1). A missing one is fine: stats and ls show an empty cache. */
static int check_cache_dir(void) {
  char dir[PATH_MAX];
  if (pto_cache_dir(dir, sizeof dir)) return PTO_EXIT_OK; /* no dir at all: the subcommand says */
  const char *pd = getenv("PTO_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
  const char *var = pd && *pd ? "PTO_CACHE_DIR" : xdg && xdg[0] == '/' ? "XDG_CACHE_HOME" : "HOME";
  const char *val = getenv(var);
  struct stat st;
  if (stat(dir, &st) == 0 ? S_ISDIR(st.st_mode) : errno != ENOTDIR) return PTO_EXIT_OK;
  if (!strcmp(var, "PTO_CACHE_DIR"))
    return cli_usage_error(k_cmd,
                           "PTO_CACHE_DIR=%s is not a directory: set it to a directory or unset "
                           "it",
                           dir);
  return cli_usage_error(k_cmd,
                         "the cache directory %s (from %s=%s) is not a directory: set "
                         "PTO_CACHE_DIR to a directory",
                         dir, var, val);
}

int cmd_cache(int argc, char **argv) {
  const char *sub = NULL, *arg = NULL, *max_size = NULL, *remote_url = NULL;
  int json = 0, remote = 0, nkeys = 0;
  char **keys = argv; /* rm's KEYs, collected in place over the options already read */
  int operands = 0;   /* after "--", no argument is an option */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int option = !operands && a[0] == '-' && a[1]; /* else a subcommand or a KEY, below */
    if (option && !strcmp(a, "--")) {
      operands = 1;
      continue;
    } else if (!option) {
      /* below */
    } else if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--remote")) {
      remote = 1;
    } else if (!strcmp(a, "--remote-cache") || !strncmp(a, "--remote-cache=", 15)) {
      const char *url = a[14] == '=' ? a + 15 : cli_next_value(argc, argv, &i);
      if (!url) return cli_usage_error(k_cmd, "--remote-cache needs a URL");
      if (cli_check_remote_url(k_cmd, url)) return PTO_EXIT_USAGE;
      if (cli_set_once(k_cmd, "--remote-cache", &remote_url, url)) return PTO_EXIT_USAGE;
      pto_status s = pto_cache_set_remote(url);
      if (s) return cli_fail(k_cmd, s);
    } else if (!strcmp(a, "--max-size") || !strncmp(a, "--max-size=", 11)) {
      const char *v = a[10] == '=' ? a + 11 : cli_next_value(argc, argv, &i);
      if (!v) return cli_usage_error(k_cmd, "--max-size needs a size like 512M or 2G");
      /* Given twice, one size however written (1G and 1024M) counts once. */
      uint64_t was = 0, now = 1;
      pto_status ws = max_size ? pto_cache_parse_size(max_size, &was) : PTO_OK;
      pto_status ns = max_size ? pto_cache_parse_size(v, &now) : PTO_OK;
      int same = max_size && !ws && !ns && was == now;
      pto_status_free(ws);
      pto_status_free(ns);
      if (!same && cli_set_once(k_cmd, "--max-size", &max_size, v)) return PTO_EXIT_USAGE;
    } else {
      return cli_usage_error(k_cmd, "unknown option '%s'", a);
    }
    if (option) continue;
    if (!sub) {
      sub = a;
    } else if (!strcmp(sub, "rm")) {
      keys[nkeys++] = argv[i];
    } else if (!arg) {
      arg = a;
    } else {
      return cli_usage_error(k_cmd, "unexpected argument '%s'", a);
    }
  }
  if (!sub)
    return cli_usage_error(k_cmd,
                           "which one: stats, ls, show KEY, rm KEY..., verify, gc or clear?");
  static const char *const subs[] = {"stats", "ls", "show", "rm", "verify", "gc", "clear"};
  size_t which = 0;
  while (which < sizeof subs / sizeof *subs && strcmp(sub, subs[which]) != 0)
    which++;
  /* Named before anything about its arguments ('explain KEY' is no command taking no KEY). */
  if (which == sizeof subs / sizeof *subs)
    return cli_usage_error(
        k_cmd, "'%s' is not a cache command: stats, ls, show, rm, verify, gc, clear", sub);
  int takes_key = !strcmp(sub, "show");
  if (arg && !takes_key) return cli_usage_error(k_cmd, "%s takes no argument ('%s')", sub, arg);
  if (max_size && strcmp(sub, "gc") != 0)
    return cli_usage_error(k_cmd, "--max-size is an option of gc only");
  if (json && strcmp(sub, "stats") && strcmp(sub, "ls") && strcmp(sub, "show"))
    return cli_usage_error(k_cmd, "--json is for stats, ls and show");
  if (remote && strcmp(sub, "ls") != 0)
    return cli_usage_error(k_cmd, "--remote is an option of ls only");
  /* The remote cache is listed by ls --remote alone: anywhere else the URL would be ignored. */
  if (remote_url && !remote)
    return cli_usage_error(k_cmd,
                           "--remote-cache %s: only with ls --remote (the other cache "
                           "commands work on the local cache)",
                           remote_url);
  if (!strcmp(sub, "show") && !arg)
    return cli_usage_error(k_cmd, "show needs a KEY (or a unique start of one)");
  if (!strcmp(sub, "rm") && !nkeys)
    return cli_usage_error(k_cmd, "rm needs a KEY (or a unique start of one)");
  if (!remote) { /* ls --remote reads only the remote cache */
    int rc = check_cache_dir();
    if (rc) return rc;
  }
  if (!strcmp(sub, "stats")) return do_stats(json);
  if (!strcmp(sub, "ls")) return remote ? do_ls_remote(json) : do_ls(json);
  if (!strcmp(sub, "show")) return do_show(arg, json);
  if (!strcmp(sub, "rm")) return do_rm(keys, nkeys);
  if (!strcmp(sub, "verify")) return do_verify();
  if (!strcmp(sub, "gc")) return do_gc(max_size);
  return do_clear();
}

const pto_cmd cli_cmd_cache = {
    "cache", "inspect and maintain the binary cache",
    "usage: pto cache stats [--json]\n"
    "       pto cache ls [--remote [--remote-cache URL]] [--json]\n"
    "       pto cache show KEY [--json]\n"
    "       pto cache rm KEY...\n"
    "       pto cache verify\n"
    "       pto cache gc [--max-size SIZE]\n"
    "       pto cache clear\n"
    "\n"
    "The binary cache keeps compiled programs in $PTO_CACHE_DIR (else $XDG_CACHE_HOME/pto, else\n"
    "~/.cache/pto), one entry per key; the key hashes the program's structure, its signature\n"
    "(dtypes, directions, static dims; dynamic dims as '?'), specialized scalar values, the\n"
    "options, the platform, the host CPU and the toolchain.\n"
    "\n"
    "  stats          counters summed over every process (hits, misses, stores, evictions,\n"
    "                 corruptions, lost races, uncached compiles; the remote level's hits,\n"
    "                 misses, stores, errors and refused entries), entries and size\n"
    "  ls             every entry, most recently used first, with its signature and the scalars\n"
    "                 it was specialised for, an -O level other than -O2 and a host\n"
    "                 program's device set (two entries of one program differ there); an\n"
    "                 entry of another pto version (a sealed manifest of another schema) shows\n"
    "                 as '(other version)', kept: this pto never uses it (--json: its schema\n"
    "                 in \"other_version\")\n"
    "  ls --remote    the keys and sizes of the remote cache's entries ($PTO_REMOTE_CACHE or\n"
    "                 --remote-cache URL; a redis:// remote can list, an http:// one cannot)\n"
    "  show KEY       one entry (KEY or a unique start of it): program, signature, kernels,\n"
    "                 binaries and file hashes, and key.txt (written with PTO_CACHE_DEBUG=1);\n"
    "                 another pto version's entry is named as such\n"
    "  rm KEY...      removes these entries (each KEY or a unique start of one); when a KEY\n"
    "                 names no entry or several, nothing is removed\n"
    "  verify         re-hashes every file of every entry; corrupt entries are reported and\n"
    "                 removed (exit status 1 when there were any); another pto version's\n"
    "                 entries (a sealed manifest of another schema) are left alone\n"
    "  gc             evicts least recently used entries until the cache fits SIZE (default\n"
    "                 $PTO_CACHE_MAX_SIZE; sizes like 4096, 512K, 512M, 2G) and removes build\n"
    "                 dirs of processes that died\n"
    "  clear          removes every entry (the counters stay)\n"
    "  An entry rm or clear cannot remove (a read-only cache dir) is named, exit status 1;\n"
    "  gc leaves it and does not count it; verify reports a corrupt one (kept).\n"
    "\n"
    "options:\n"
    "  --json         machine-readable output (stats, ls, show)\n"
    "  --remote       ls: the remote cache's entries instead of the local ones\n"
    "  --remote-cache URL  ls --remote: the remote to list (else $PTO_REMOTE_CACHE)\n"
    "  --max-size S   gc: the size to fit (above 0; 'clear' empties the cache)\n"
    "\n"
    "examples:\n"
    "  pto cache stats\n"
    "  pto cache ls --json\n"
    "  pto cache show 3fa9\n"
    "  pto cache rm 3fa9 07c1\n"
    "  pto cache verify\n"
    "  pto cache gc --max-size 512M\n"
    "  pto cache clear\n",
    cmd_cache};
