/* A kernel as the entry point (docs/language.md "Functions and parameters").
 *
 * `--entry K` naming a kernel runs K as one task on one chip: the program gets one more orch,
 * last, named K_entry (a number appended while that name is taken by a function or by the
 * kernel of an incore scope), whose parameters are K's (names, types, directions, defaults and
 * positions) and whose body is `call @K(every parameter)` and a return of K's out/inout tensors.
 * Everything after this step (signature, cache key, specialization, outlining, code generation,
 * the interpreter, manifest, traces) sees an ordinary orch entry; its positions are K's, so
 * messages about the entry point at the user's source, and its kernel_entry is K's name, so what
 * users read names the entry as they did (@K: pto_signature.kernel_entry, the manifest's
 * signature.kernel_entry, 'pto cache ls'). kernel_entry is also in the structural hash, so the
 * orch made for K and a hand-written orch of the same name and body never share a cache entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "pto/ir_builder.h"

typedef struct taken_names {
  const char *want;
  int hit;
} taken_names;

static int incore_named(void *ctx, const pto_ir_func *f, const pto_ir_stmt *scope,
                        const char *kernel) {
  (void)f;
  (void)scope;
  taken_names *t = ctx;
  if (!strcmp(kernel, t->want)) t->hit = 1;
  return t->hit;
}

/* Whether name is a function of p or the kernel an incore scope of p becomes. */
static pto_status name_taken(const pto_ir_program *p, const char *name, int *out) {
  *out = pto_ir_program_find_func(p, name) != NULL;
  if (*out) return PTO_OK;
  taken_names t = {name, 0};
  PTO_RETURN_IF_ERROR(pto_ir_each_incore(p, incore_named, &t));
  *out = t.hit;
  return PTO_OK;
}

/* What a kernel or orch entry cannot have outside a host: comm windows. Every kernel-side
 * dist.* op takes a dtensor (or a communicator made of one), and only a host makes them, so a
 * dtensor parameter is what refuses every entry that needs a host's context. (A host's orch
 * callees, which do take windows, are compiled as entries of their own by the driver, not
 * through here.) */
static pto_status check_standalone(const pto_ir_program *p, const pto_ir_func *k) {
  int kernel = k->kind == PTO_FUNC_KERNEL;
  for (int i = 0; i < k->nparams; i++) {
    const pto_ir_value *v = k->params[i].value;
    if (v->type->kind == PTO_TYPE_DTENSOR)
      return pto_status_make(
          PTO_STATUS_INVALID_ARGUMENT,
          "%s:%d:%d: entry @%s is %s with a dtensor parameter %%%s: comm windows (and the "
          "dist.* ops on them) come from a host program (dist.alloc_window), so the entry must "
          "be a host %s @%s",
          p->file ? p->file : "<program>", v->loc.line, v->loc.col, k->name,
          kernel ? "a kernel" : "an orch", v->name, kernel ? "whose orch calls" : "that calls",
          k->name);
  }
  return PTO_OK;
}

static pto_status entry_name(const pto_ir_program *p, const pto_ir_func *k, char *out, size_t cap) {
  int taken = 0;
  snprintf(out, cap, "%s_entry", k->name);
  PTO_RETURN_IF_ERROR(name_taken(p, out, &taken));
  for (int i = 0; taken; i++) {
    snprintf(out, cap, "%s_entry%d", k->name, i);
    PTO_RETURN_IF_ERROR(name_taken(p, out, &taken));
  }
  return PTO_OK;
}

/* The orch of a kernel entry: K's header as an orch, then call and return. */
static pto_status build_orch(pto_ir_builder *b, const pto_ir_program *p, const pto_ir_func *k,
                             pto_ir_func *nk, const char *name) {
  pto_ir_func *orch = NULL;
  pto_ir_builder_set_loc(b, k->loc);
  PTO_RETURN_IF_ERROR(pto_ir_builder_func_begin(b, PTO_FUNC_ORCH, name, &orch));
  PTO_RETURN_IF_ERROR(pto__ir_builder_kernel_entry(b, orch, k->name));
  for (int i = 0; i < k->nparams; i++) {
    const pto_ir_param *pa = &k->params[i];
    const pto_ir_type *t;
    PTO_RETURN_IF_ERROR(pto_ir_builder_copy_type(b, p, pa->value->type, NULL, &t));
    pto_ir_expr *lit = NULL;
    if (pa->bind == PTO_BIND_LITERAL)
      PTO_RETURN_IF_ERROR(pto_ir_builder_copy_expr(b, p, pa->literal, NULL, &lit));
    pto_ir_builder_set_loc(b, pa->value->loc);
    PTO_RETURN_IF_ERROR(
        pto_ir_builder_param(b, pa->value->name, t, pa->dir, pa->dir_written, pa->bind, lit, NULL));
  }
  pto_ir_builder_set_loc(b, k->loc);
  if (k->nrets > 0) {
    const pto_ir_type **rets = pto_calloc((size_t)k->nrets, sizeof *rets);
    if (!rets) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
    pto_status s = PTO_OK;
    for (int i = 0; !s && i < k->nrets; i++)
      s = pto_ir_builder_copy_type(b, p, k->rets[i], NULL, &rets[i]);
    if (!s) s = pto_ir_builder_func_rets(b, rets, k->nrets);
    free(rets);
    PTO_RETURN_IF_ERROR(s);
  }
  PTO_RETURN_IF_ERROR(pto_ir_builder_header_end(b));

  pto_ir_expr **args = pto_calloc((size_t)k->nparams + 1, sizeof *args);
  if (!args) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  pto_status s = pto_ir_builder_body_begin(b, orch);
  pto_ir_builder_set_loc(b, k->loc); /* the call and the return stand at the kernel's header */
  for (int i = 0; !s && i < k->nparams; i++)
    s = pto_ir_builder_use(b, orch->params[i].value, &args[i]);
  pto_ir_stmt *call = NULL;
  if (!s) s = pto_ir_builder_call(b, nk, args, k->nparams, NULL, NULL, 0, &call);
  /* The kernel's '->' list is its out/inout tensors in order: the orch returns the same. */
  int nrets = 0;
  for (int i = 0; !s && i < k->nparams; i++) {
    const pto_ir_param *pa = &k->params[i];
    if (pa->value->type->kind != PTO_TYPE_SCALAR && pa->dir != PTO_DIR_IN)
      s = pto_ir_builder_use(b, orch->params[i].value, &args[nrets++]);
  }
  if (!s && k->nrets) s = pto_ir_builder_return(b, args, nrets);
  if (!s) s = pto_ir_builder_body_end(b);
  free(args);
  return s;
}

pto_status pto_ir_program_kernel_entry(const pto_ir_program *p, const char *name,
                                       pto_ir_program **out_program, const char **out_entry) {
  if (!p)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_program_kernel_entry: p is NULL");
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_program_kernel_entry: out_program is NULL");
  if (!out_entry)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_ir_program_kernel_entry: out_entry is NULL");
  *out_program = NULL;
  *out_entry = NULL;
  pto_ir_func *k = NULL;
  PTO_RETURN_IF_ERROR(pto_ir_program_entry(p, name, &k));
  if (k->kind == PTO_FUNC_ORCH) PTO_RETURN_IF_ERROR(check_standalone(p, k));
  if (k->kind != PTO_FUNC_KERNEL) {
    *out_entry = k->name;
    return PTO_OK;
  }
  PTO_RETURN_IF_ERROR(check_standalone(p, k));
  char oname[PTO_IR_KERNEL_NAME_MAX + 32];
  PTO_RETURN_IF_ERROR(entry_name(p, k, oname, sizeof oname));

  pto_ir_builder *b = NULL;
  pto_ir_func **nfs = pto_calloc((size_t)p->nfuncs + 1, sizeof *nfs);
  pto_status s = nfs ? pto_ir_builder_create(p->name, p->file, &b)
                     : pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory");
  for (int i = 0; i < p->nsyms && !s; i++) {
    int sym;
    s = pto_ir_builder_dynamic(b, p->syms[i], &sym);
  }
  for (int i = 0; i < p->nfuncs && !s; i++)
    s = pto_ir_builder_copy_func_header(b, p, p->funcs[i], &nfs[i]);
  for (int i = 0; i < p->nfuncs && !s; i++)
    s = pto_ir_builder_copy_func_body(b, p, p->funcs[i], nfs[i]);
  if (!s) s = build_orch(b, p, k, nfs[k->index], oname);
  pto_ir_program *out = NULL;
  if (!s) s = pto_ir_builder_finish(b, &out);
  pto_ir_builder_destroy(b);
  free(nfs);
  if (s) return pto_status_annotate(s, "running kernel @%s as the entry", k->name);
  *out_program = out;
  *out_entry = out->funcs[out->nfuncs - 1]->name;
  return PTO_OK;
}
