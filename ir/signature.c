#include "pto/signature.h"
#include "pto/base.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static pto_status oom(void) {
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory building a signature");
}

void pto_signature_clear(pto_signature *sig) {
  if (!sig) return;
  for (int i = 0; i < sig->nparams; i++)
    free(sig->params[i].name);
  free(sig->params);
  for (int i = 0; i < sig->nsyms; i++)
    free(sig->syms[i]);
  free(sig->syms);
  free(sig->entry);
  free(sig->kernel_entry);
  memset(sig, 0, sizeof *sig);
}

pto_status pto_signature_copy(const pto_signature *src, pto_signature *out) {
  if (!src) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_signature_copy: src is NULL");
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_signature_copy: out is NULL");
  memset(out, 0, sizeof *out);
  out->entry = pto_strdup(src->entry ? src->entry : "");
  out->params = pto_calloc((size_t)src->nparams + 1, sizeof *out->params);
  out->syms = pto_calloc((size_t)src->nsyms + 1, sizeof *out->syms);
  if (!out->entry || !out->params || !out->syms) goto fail;
  if (src->kernel_entry && !(out->kernel_entry = pto_strdup(src->kernel_entry))) goto fail;
  out->nrets = src->nrets;
  for (int i = 0; i < src->nparams; i++) {
    out->params[i] = src->params[i];
    out->params[i].name = pto_strdup(src->params[i].name);
    out->nparams = i + 1;
    if (!out->params[i].name) goto fail;
  }
  for (int i = 0; i < src->nsyms; i++) {
    out->syms[i] = pto_strdup(src->syms[i]);
    out->nsyms = i + 1;
    if (!out->syms[i]) goto fail;
  }
  return PTO_OK;
fail:
  pto_signature_clear(out);
  return oom();
}

const char *pto_signature_entry_name(const pto_signature *sig) {
  if (!sig) return "";
  if (sig->kernel_entry && *sig->kernel_entry) return sig->kernel_entry;
  return sig->entry ? sig->entry : "";
}

int pto_signature_find(const pto_signature *sig, const char *name) {
  if (!sig || !name) return -1;
  for (int i = 0; i < sig->nparams; i++)
    if (strcmp(sig->params[i].name, name) == 0) return i;
  return -1;
}

static const pto_binding *find_binding(const pto_binding *b, int n, const char *name) {
  const pto_binding *found = NULL;
  for (int i = 0; i < n; i++)
    if (strcmp(b[i].name, name) == 0) found = &b[i]; /* the last one wins, as on a command line */
  return found;
}

/* Parses "64x128" into dims; returns the rank or -1. */
static int parse_shape(const char *text, int64_t *dims) {
  int rank = 0;
  const char *p = text;
  while (*p) {
    if (rank == PTO_MAX_RANK) return -1;
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || v <= 0) return -1;
    dims[rank++] = v;
    if (*end == 'x' || *end == 'X' || *end == ',') {
      p = end + 1;
      if (!*p) return -1;
    } else if (*end) {
      return -1;
    } else {
      p = end;
    }
  }
  return rank ? rank : -1;
}

int pto_signature_intern_sym(pto_signature *sig, const char *name) {
  if (!sig || !name) return -1;
  for (int i = 0; i < sig->nsyms; i++)
    if (!strcmp(sig->syms[i], name)) return i;
  int cap = sig->nsyms; /* the public struct keeps no capacity: the count is the allocation */
  if (pto_grow_int(&sig->syms, sizeof *sig->syms, &cap, (int64_t)sig->nsyms + 1)) return -1;
  char **syms = sig->syms;
  syms[sig->nsyms] = pto_strdup(name);
  if (!syms[sig->nsyms]) return -1;
  return sig->nsyms++;
}

static const char *loc_file(const pto_ir_program *p) { return p->file ? p->file : "<program>"; }

pto_status pto_signature_build(const pto_ir_program *p, const pto_ir_func *f,
                               const pto_binding *scalars, int nscalars, const pto_binding *samples,
                               int nsamples, pto_signature *out) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_signature_build: p is NULL");
  if (!f) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_signature_build: f is NULL");
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_signature_build: out is NULL");
  memset(out, 0, sizeof *out);
  const char *shown = f->kernel_entry ? f->kernel_entry : f->name; /* the entry the user named */
  for (int i = 0; i < nscalars; i++) {
    int found = 0;
    for (int j = 0; j < f->nparams; j++)
      found |= !strcmp(f->params[j].value->name, scalars[i].name);
    if (!found)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "-D %s: @%s has no parameter named '%s'",
                             scalars[i].name, shown, scalars[i].name);
  }
  for (int i = 0; i < nsamples; i++) {
    int found = 0;
    for (int j = 0; j < f->nparams; j++)
      found |= !strcmp(f->params[j].value->name, samples[i].name);
    if (!found)
      return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                             "--arg %s: @%s has no parameter named '%s'", samples[i].name, shown,
                             samples[i].name);
  }
  out->entry = pto_strdup(f->name);
  out->params = pto_calloc((size_t)f->nparams + 1, sizeof *out->params);
  if (!out->entry || !out->params) goto oom_fail;
  if (f->kernel_entry && !(out->kernel_entry = pto_strdup(f->kernel_entry))) goto oom_fail;
  out->nrets = f->nrets;
  pto_status err = PTO_OK;
  for (int j = 0; j < f->nparams; j++) {
    const pto_ir_param *ip = &f->params[j];
    const pto_ir_type *t = ip->value->type;
    const char *name = ip->value->name;
    pto_sig_param *sp = &out->params[j];
    out->nparams = j + 1;
    sp->name = pto_strdup(name);
    if (!sp->name) goto oom_fail;
    sp->dtype = t->dtype;
    sp->dir = ip->dir;
    if (t->kind == PTO_TYPE_SCALAR) {
      /* A runtime binding's value too carries the dtype, as a read manifest's does. */
      sp->value = (pto_scalar){.dtype = t->dtype};
      const pto_binding *b = find_binding(scalars, nscalars, name);
      if (find_binding(samples, nsamples, name)) {
        err = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                              "--arg %s: '%s' is a scalar parameter; bind it with -D %s=VALUE",
                              name, name, name);
        goto fail;
      }
      if (b && !strcmp(b->value, "runtime")) {
        sp->bind = PTO_BIND_RUNTIME;
      } else if (b) {
        sp->bind = PTO_BIND_LITERAL;
        err = pto_scalar_parse(b->value, t->dtype, &sp->value);
        if (err) {
          err = pto_status_annotate(err, "-D %s=%s", name, b->value);
          goto fail;
        }
      } else if (ip->bind == PTO_BIND_RUNTIME) {
        sp->bind = PTO_BIND_RUNTIME;
      } else if (ip->bind == PTO_BIND_LITERAL) {
        sp->bind = PTO_BIND_LITERAL;
        const pto_ir_expr *e = ip->literal;
        sp->value.dtype = t->dtype;
        if (e->kind == PTO_EXPR_FLOAT)
          sp->value.f = e->f;
        else if (e->kind == PTO_EXPR_BOOL)
          sp->value.i = e->b;
        else if (pto_dtype_is_float(t->dtype))
          sp->value.f = (double)e->i;
        else
          sp->value.i = e->i;
      } else {
        err =
            pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                            "%s:%d:%d: scalar parameter '%s' has no value: pass -D %s=VALUE or "
                            "-D %s=runtime",
                            loc_file(p), ip->value->loc.line, ip->value->loc.col, name, name, name);
        goto fail;
      }
      continue;
    }
    sp->is_tensor = 1;
    if (find_binding(scalars, nscalars, name)) {
      err = pto_status_make(
          PTO_STATUS_INVALID_ARGUMENT,
          "-D %s: '%s' is a tensor parameter; give a sample shape with --arg %s=64x128", name, name,
          name);
      goto fail;
    }
    const pto_binding *sample = find_binding(samples, nsamples, name);
    int64_t sdims[PTO_MAX_RANK];
    int srank = -1;
    if (sample) {
      srank = parse_shape(sample->value, sdims);
      if (srank < 0) {
        err = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                              "--arg %s=%s: a shape is 1 to 5 positive extents like 64x128", name,
                              sample->value);
        goto fail;
      }
      if (pto_shape_size(srank, sdims, t->dtype, NULL, NULL)) {
        err = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                              "--arg %s=%s: the shape's size in bytes (%s) overflows 64 bits", name,
                              sample->value, pto_dtype_name(t->dtype));
        goto fail;
      }
    }
    if (t->rank < 0) {
      if (!sample) {
        err = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                              "%s:%d:%d: tensor parameter '%s' has no shape: annotate it "
                              "(tensor[64,128] %s) or pass --arg %s=64x128",
                              loc_file(p), ip->value->loc.line, ip->value->loc.col, name,
                              pto_dtype_name(t->dtype), name);
        goto fail;
      }
      sp->rank = srank;
      for (int d = 0; d < srank; d++)
        sp->dims[d] = (pto_sig_dim){sdims[d], -1};
      continue;
    }
    sp->rank = t->rank;
    if (sample && srank != t->rank) {
      err = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                            "--arg %s=%s: rank %d, but '%s' is declared with rank %d", name,
                            sample->value, srank, name, t->rank);
      goto fail;
    }
    for (int d = 0; d < t->rank; d++) {
      const pto_ir_expr *e = t->dims[d];
      if (e->kind == PTO_EXPR_SYM) {
        int si = pto_signature_intern_sym(out, p->syms[e->sym]);
        if (si < 0) goto oom_fail;
        /* A sample of an annotated dynamic dim does not specialize it: the key stays the same. */
        sp->dims[d] = (pto_sig_dim){-1, si};
      } else {
        int64_t v = 0;
        pto_ir_expr_static_int(e, &v);
        if (sample && sdims[d] != v) {
          err = pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                                "--arg %s=%s: dim %d is %lld, but '%s' is declared with %lld", name,
                                sample->value, d, (long long)sdims[d], name, (long long)v);
          goto fail;
        }
        sp->dims[d] = (pto_sig_dim){v, -1};
      }
    }
  }
  return PTO_OK;
oom_fail:
  err = oom();
fail:
  pto_signature_clear(out);
  return err;
}

pto_status pto_signature_fingerprint(const pto_signature *sig, int nkernels,
                                     const char *const *kernel_names,
                                     const char *const *kernel_symbols, char out_hex[33]) {
  if (!sig)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_signature_fingerprint: sig is NULL");
  if (!out_hex)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_signature_fingerprint: out_hex is NULL");
  /* One line per item, every string length-prefixed, so no two signatures share a text. */
  pto_text t = {0};
  const char *entry = sig->entry ? sig->entry : "";
  pto_text_printf(&t, "pto-signature-v1\nentry %zu:%s\n", strlen(entry), entry);
  /* Only where set, so every other signature's fingerprint is what it was. */
  if (sig->kernel_entry)
    pto_text_printf(&t, "kernel_entry %zu:%s\n", strlen(sig->kernel_entry), sig->kernel_entry);
  pto_text_printf(&t, "rets %d\n", sig->nrets);
  for (int i = 0; i < sig->nsyms; i++)
    pto_text_printf(&t, "sym %zu:%s\n", strlen(sig->syms[i]), sig->syms[i]);
  for (int i = 0; i < sig->nparams; i++) {
    const pto_sig_param *p = &sig->params[i];
    const char *name = p->name ? p->name : "";
    pto_text_printf(&t, "param %zu:%s tensor=%d dir=%d dtype=%d bind=%d", strlen(name), name,
                    p->is_tensor, (int)p->dir, (int)p->dtype, (int)p->bind);
    if (p->is_tensor) {
      pto_text_printf(&t, " rank=%d", p->rank);
      for (int d = 0; d < p->rank && d < PTO_MAX_RANK; d++)
        pto_text_printf(&t, " %lld/%d", (long long)p->dims[d].value, p->dims[d].sym);
    } else if (p->bind == PTO_BIND_LITERAL) {
      pto_text_printf(&t, " value=%016llx", (unsigned long long)pto_scalar_to_slot(p->value));
    }
    pto_text_puts(&t, "\n");
  }
  for (int i = 0; i < nkernels; i++) {
    const char *n = kernel_names[i] ? kernel_names[i] : "";
    const char *y = kernel_symbols[i] ? kernel_symbols[i] : "";
    pto_text_printf(&t, "kernel %d %zu:%s %zu:%s\n", i, strlen(n), n, strlen(y), y);
  }
  size_t len = t.len;
  char *text = pto_text_finish(&t);
  if (!text)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory fingerprinting a signature");
  pto_hash_xxh128_hex(text, len, out_hex);
  free(text);
  return PTO_OK;
}
