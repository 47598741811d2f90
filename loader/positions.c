/* Source positions of launch errors.
 *
 * Generated orchestration stores the op id of the statement it is running in the exported
 * variable pto_orch_current_op (an op id is the statement's pre-order number in the entry,
 * pto_ir_func_stmt_index), never a position: positions stay out of the binary's identity and its
 * cache key, so programs that differ only in layout share one binary. The position table maps op
 * ids to file:line:col, the op, and for a kernel call the kernel's tensor parameters and the
 * dynamic symbols of their dims. It is made from the caller's own IR on every pto_compile that
 * loads from disk, and written beside a work dir (positions.json, outside the manifest, so it
 * never makes a binary stale) for pto run DIR. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"
#include "pto/ir.h"

#define POSITIONS_SCHEMA "pto.positions/1"

typedef struct pos_op {
  int32_t id;
  int line, col;
  char *op;     /* "call", "tensor.slice", "for", ... */
  char *callee; /* call: the kernel, else NULL */
  int ntensors; /* call of a kernel: its tensor parameters, in order */
  char **tnames;
  int (*dimsym)[PTO_MAX_RANK]; /* per tensor parameter and dim: the symbol index, or -1 */
} pos_op;

/* A statement inside a kernel that can fail a launch naming it (PTO_KERNEL_ERR_INDEX): the
 * kernel's name (an incore scope's: the kernel it becomes) and the statement's index there. */
typedef struct pos_kop {
  char *kernel;
  int32_t id;
  int line, col;
  char *op;
  char *index,
      *table; /* gather_rows / scatter_rows: its index tile's and tensor's names, or NULL */
} pos_kop;

struct pto__positions {
  char *file;
  int nsyms;
  char **syms;
  int nops;
  pos_op *ops;
  int nkops, capkops;
  pos_kop *kops;
};

void pto__positions_free(pto__positions *t) {
  if (!t) return;
  for (int i = 0; i < t->nops; i++) {
    pos_op *o = &t->ops[i];
    free(o->op);
    free(o->callee);
    for (int k = 0; k < o->ntensors; k++)
      free(o->tnames[k]);
    free(o->tnames);
    free(o->dimsym);
  }
  free(t->ops);
  for (int i = 0; i < t->nkops; i++) {
    free(t->kops[i].kernel);
    free(t->kops[i].op);
    free(t->kops[i].index);
    free(t->kops[i].table);
  }
  free(t->kops);
  for (int i = 0; i < t->nsyms; i++)
    free(t->syms[i]);
  free(t->syms);
  free(t->file);
  free(t);
}

static const char *stmt_op_name(const pto_ir_stmt *s) {
  switch (s->kind) {
  case PTO_STMT_CALL: return "call";
  case PTO_STMT_FOR: return "for";
  case PTO_STMT_INCORE: return "incore";
  case PTO_STMT_OP: {
    const pto_op_info *info = pto_op_info_get(s->op.opc);
    return info ? info->name : NULL;
  }
  default: return NULL;
  }
}

static int fill_call(pos_op *o, const pto_ir_func *k) {
  o->callee = pto_strdup(k->name);
  if (!o->callee) return -1;
  int n = 0;
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i].value->type->kind != PTO_TYPE_SCALAR) n++;
  o->tnames = pto_calloc((size_t)n + 1, sizeof *o->tnames);
  o->dimsym = pto_calloc((size_t)n + 1, sizeof *o->dimsym);
  if (!o->tnames || !o->dimsym) return -1;
  for (int i = 0; i < k->nparams; i++) {
    const pto_ir_type *t = k->params[i].value->type;
    if (t->kind == PTO_TYPE_SCALAR) continue;
    int j = o->ntensors++;
    o->tnames[j] = pto_strdup(k->params[i].value->name ? k->params[i].value->name : "?");
    if (!o->tnames[j]) return -1;
    for (int d = 0; d < PTO_MAX_RANK; d++) {
      const pto_ir_expr *e = d < t->rank ? t->dims[d] : NULL;
      o->dimsym[j][d] = e && e->kind == PTO_EXPR_SYM ? e->sym : -1;
    }
  }
  return 0;
}

static int add_kop(pto__positions *t, const char *kernel, int32_t id, int line, int col,
                   const char *op, const char *index, const char *table) {
  if (pto_grow_int(&t->kops, sizeof *t->kops, &t->capkops, t->nkops + 1)) return -1;
  pos_kop *k = &t->kops[t->nkops];
  k->kernel = pto_strdup(kernel);
  k->op = pto_strdup(op);
  k->index = index && table ? pto_strdup(index) : NULL;
  k->table = index && table ? pto_strdup(table) : NULL;
  if (!k->kernel || !k->op || (index && table && (!k->index || !k->table))) {
    free(k->kernel);
    free(k->op);
    free(k->index);
    free(k->table);
    return -1;
  }
  k->id = id;
  k->line = line;
  k->col = col;
  t->nkops++;
  return 0;
}

/* The name of positional operand i of op statement s, a value's; NULL where it is not one. */
static const char *operand_name(const pto_ir_stmt *s, int i) {
  for (int j = 0, k = 0; j < s->op.nargs; j++) {
    const pto_ir_arg *a = &s->op.args[j];
    if (a->kw || k++ != i) continue;
    return a->kind == PTO_ARG_EXPR && a->expr && a->expr->kind == PTO_EXPR_VALUE && a->expr->value
               ? a->expr->value->name
               : NULL;
  }
  return NULL;
}

/* The layout ops of a kernel body, its loads with a valid= region, its divides and its
 * statements whose own expressions divide integers (those that check indices, extents or
 * divisors at run time), by statement index: one pre-order walk numbering statements as
 * pto_ir_block_stmt_at does. */
static int add_kernel_ops_in(pto__positions *t, const char *kernel, const pto_ir_block *b,
                             int *index) {
  for (int j = 0; j < b->n; j++) {
    const pto_ir_stmt *s = b->stmts[j];
    int i = (*index)++;
    if (s->loc.line > 0) {
      /* a statement whose own expressions divide integers (an assignment, an op's argument, a
       * loop's bounds, an if's condition, a yield's values): named by its op, '%q =' as an orch's
       * assignment is, or its keyword */
      int divides = pto_ir_stmt_divides_int(s);
      const char *name = NULL;
      char assign[80];
      if (s->kind == PTO_STMT_OP) {
        const pto_op_info *info = pto_op_info_get(s->op.opc);
        int checks = info && (info->cls == PTO_OPC_LAYOUT ||
                              (s->op.opc == PTO_OP_TILE_LOAD && pto_ir_stmt_kwarg(s, "valid")) ||
                              info->fn == PTO_FN_DIV || info->fn == PTO_FN_REM || divides);
        if (checks) name = info->name;
      } else if (divides && s->kind == PTO_STMT_ASSIGN && s->nresults == 1) {
        snprintf(assign, sizeof assign, "%%%s =", s->results[0]->name);
        name = assign;
      } else if (divides) {
        name = s->kind == PTO_STMT_FOR ? "for" : s->kind == PTO_STMT_IF ? "if" : "yield";
        if (s->kind == PTO_STMT_RETURN) name = "return";
      }
      /* a gather_rows' or scatter_rows' row index out of range names its operands */
      const char *index = NULL, *table = NULL;
      if (s->kind == PTO_STMT_OP &&
          (s->op.opc == PTO_OP_TILE_GATHER_ROWS || s->op.opc == PTO_OP_TILE_SCATTER_ROWS)) {
        index = operand_name(s, 1);
        table = operand_name(s, s->op.opc == PTO_OP_TILE_SCATTER_ROWS ? 3 : 0);
      }
      if (name && add_kop(t, kernel, i, s->loc.line, s->loc.col, name, index, table)) return -1;
    }
    int rc = 0;
    switch (s->kind) {
    case PTO_STMT_FOR: rc = add_kernel_ops_in(t, kernel, &s->loop.body, index); break;
    case PTO_STMT_IF:
      rc = add_kernel_ops_in(t, kernel, &s->branch.then_body, index);
      if (!rc) rc = add_kernel_ops_in(t, kernel, &s->branch.else_body, index);
      break;
    case PTO_STMT_INCORE: rc = add_kernel_ops_in(t, kernel, &s->incore.body, index); break;
    default: break;
    }
    if (rc) return rc;
  }
  return 0;
}

static int add_kernel_ops(pto__positions *t, const char *kernel, const pto_ir_block *body) {
  int index = 0;
  return add_kernel_ops_in(t, kernel, body, &index);
}

/* ctx: {the table, an int set when adding failed}. */
static int visit_incore(void *ctx, const pto_ir_func *f, const pto_ir_stmt *scope,
                        const char *kernel) {
  (void)f;
  void **c = ctx;
  if (!add_kernel_ops(c[0], kernel, &scope->incore.body)) return 0;
  *(int *)c[1] = 1;
  return 1;
}

pto_status pto__positions_from_ir(const pto_ir_program *ir, const char *entry,
                                  pto__positions **out) {
  *out = NULL;
  pto_ir_func *f = pto_ir_program_find_func(ir, entry);
  if (!f || !ir->file) return PTO_OK; /* nothing to point at */
  const pto_ir_stmt **stmts = NULL;
  int nstmts = 0;
  pto__positions *t = pto_calloc(1, sizeof *t);
  if (!t) goto oom;
  t->file = pto_strdup(ir->file);
  t->syms = pto_calloc((size_t)ir->nsyms + 1, sizeof *t->syms);
  if (!t->file || !t->syms) goto oom;
  for (int i = 0; i < ir->nsyms; i++) {
    if (!(t->syms[i] = pto_strdup(ir->syms[i]))) goto oom;
    t->nsyms++;
  }
  /* One walk: looking each statement up by its index would walk from the start every time. */
  pto_status ls = pto_ir_func_stmts(f, &stmts, &nstmts);
  if (ls) {
    pto_status_free(ls); /* out of memory, its only failure */
    goto oom;
  }
  t->ops = pto_calloc((size_t)nstmts + 1, sizeof *t->ops);
  if (!t->ops) goto oom;
  for (int i = 0; i < nstmts; i++) {
    const pto_ir_stmt *s = stmts[i];
    const char *name = stmt_op_name(s);
    char assign[80];
    if (s->kind == PTO_STMT_ASSIGN && s->nresults == 1 && pto_ir_expr_divides_int(s->expr)) {
      snprintf(assign, sizeof assign, "%%%s =", s->results[0]->name);
      name = assign;
    }
    if (!name || s->loc.line <= 0) continue;
    pos_op *o = &t->ops[t->nops++];
    memset(o, 0, sizeof *o);
    o->id = i;
    o->line = s->loc.line;
    o->col = s->loc.col;
    if (!(o->op = pto_strdup(name))) goto oom;
    if (s->kind == PTO_STMT_CALL && s->call.callee && fill_call(o, s->call.callee)) goto oom;
  }
  free(stmts);
  stmts = NULL;
  for (int i = 0; i < ir->nfuncs; i++)
    if (ir->funcs[i]->kind == PTO_FUNC_KERNEL &&
        add_kernel_ops(t, ir->funcs[i]->name, &ir->funcs[i]->body))
      goto oom;
  /* The walk stops, and still returns PTO_OK, when the visitor fails: the flag says so. */
  int incore_failed = 0;
  void *ctx[2] = {t, &incore_failed};
  pto_status is = pto_ir_each_incore(ir, visit_incore, ctx);
  if (is || incore_failed) {
    pto_status_free(is); /* out of memory, its only failure */
    goto oom;
  }
  *out = t;
  return PTO_OK;
oom:
  free(stmts);
  pto__positions_free(t);
  return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory building the position table");
}

static const pos_op *find_op(const pto__positions *t, int32_t id) {
  int lo = 0, hi = t ? t->nops : 0; /* ops are in id order */
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (t->ops[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return t && lo < t->nops && t->ops[lo].id == id ? &t->ops[lo] : NULL;
}

/* ---- JSON beside a work dir ------------------------------------------------------------- */

pto_status pto__positions_write(const pto__positions *t, const char *dir) {
  if (!t) return PTO_OK;
  pto__loader_json_init();
  json_t *doc = json_object(), *syms = json_array(), *ops = json_array();
  int ok = doc && syms && ops;
  ok = ok && !json_object_set_new(doc, "schema", json_string(POSITIONS_SCHEMA));
  ok = ok && !json_object_set_new(doc, "file", json_string(t->file));
  for (int i = 0; ok && i < t->nsyms; i++)
    ok = !json_array_append_new(syms, json_string(t->syms[i]));
  for (int i = 0; ok && i < t->nops; i++) {
    const pos_op *o = &t->ops[i];
    json_t *jo = json_pack("{s:i, s:i, s:i, s:s}", "id", (int)o->id, "line", o->line, "col", o->col,
                           "op", o->op);
    ok = jo != NULL;
    if (ok && o->callee) {
      json_t *params = json_array();
      ok = params && !json_object_set_new(jo, "callee", json_string(o->callee)) &&
           !json_object_set_new(jo, "tensors", params);
      for (int k = 0; ok && k < o->ntensors; k++) {
        json_t *dims = json_array();
        for (int d = 0; dims && d < PTO_MAX_RANK; d++)
          json_array_append_new(dims, json_integer(o->dimsym[k][d]));
        json_t *p = json_pack("{s:s, s:o}", "name", o->tnames[k], "dim_syms", dims);
        ok = p && !json_array_append_new(params, p);
      }
    }
    ok = ok && !json_array_append_new(ops, jo);
  }
  json_t *kops = json_array();
  ok = ok && kops;
  for (int i = 0; ok && i < t->nkops; i++) {
    const pos_kop *k = &t->kops[i];
    json_t *jk = json_pack("{s:s, s:i, s:i, s:i, s:s}", "kernel", k->kernel, "id", (int)k->id,
                           "line", k->line, "col", k->col, "op", k->op);
    if (jk && k->index) /* "index" and "table": absent in older tables */
      ok = !json_object_set_new(jk, "index", json_string(k->index)) &&
           !json_object_set_new(jk, "table", json_string(k->table));
    ok = ok && jk && !json_array_append_new(kops, jk);
  }
  if (!ok) json_decref(kops);
  ok = ok && !json_object_set_new(doc, "kernel_ops", kops);
  ok = ok && !json_object_set_new(doc, "syms", syms) && !json_object_set_new(doc, "ops", ops);
  if (!ok) {
    json_decref(doc);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing positions.json");
  }
  char *text = json_dumps(doc, JSON_INDENT(1));
  json_decref(doc);
  if (!text)
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory writing positions.json");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, PTO_POSITIONS_FILENAME);
  pto_status s = pto_file_write_atomic(path, text, strlen(text), 0644);
  free(text);
  return s;
}

/* Reads DIR/positions.json; a missing or unreadable one gives no table (errors are not worth
 * refusing a program over: only messages lose their positions). */
pto__positions *pto__positions_read(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, PTO_POSITIONS_FILENAME);
  pto__loader_json_init();
  /* A regular file of bounded size, as every file of a work dir is read: json_load_file would
   * block for good on a FIFO put there, and read a device or a huge file to its end. */
  uint8_t *text = NULL;
  size_t len = 0;
  pto_status rs = pto_file_read(path, PTO_FILE_MAX_SOURCE, &text, &len);
  if (rs) {
    pto_status_free(rs);
    return NULL;
  }
  json_t *doc = json_loadb((const char *)text, len, 0, NULL);
  free(text);
  if (!doc) return NULL;
  pto__positions *t = pto_calloc(1, sizeof *t);
  json_t *syms = json_object_get(doc, "syms"), *ops = json_object_get(doc, "ops");
  const char *file = json_string_value(json_object_get(doc, "file"));
  const char *schema = json_string_value(json_object_get(doc, "schema"));
  if (!t || !file || !schema || strcmp(schema, POSITIONS_SCHEMA) || !json_is_array(syms) ||
      !json_is_array(ops))
    goto bad;
  t->file = pto_strdup(file);
  t->syms = pto_calloc(json_array_size(syms) + 1, sizeof *t->syms);
  t->ops = pto_calloc(json_array_size(ops) + 1, sizeof *t->ops);
  if (!t->file || !t->syms || !t->ops) goto bad;
  for (size_t i = 0; i < json_array_size(syms); i++) {
    const char *s = json_string_value(json_array_get(syms, i));
    if (!s || !(t->syms[t->nsyms] = pto_strdup(s))) goto bad;
    t->nsyms++;
  }
  for (size_t i = 0; i < json_array_size(ops); i++) {
    json_t *jo = json_array_get(ops, i);
    pos_op *o = &t->ops[t->nops++];
    json_int_t id = json_integer_value(json_object_get(jo, "id"));
    const char *op = json_string_value(json_object_get(jo, "op"));
    if (!op || id < 0 || id > INT32_MAX || (i && id <= t->ops[i - 1].id)) goto bad;
    o->id = (int32_t)id;
    o->line = (int)json_integer_value(json_object_get(jo, "line"));
    o->col = (int)json_integer_value(json_object_get(jo, "col"));
    if (!(o->op = pto_strdup(op))) goto bad;
    const char *callee = json_string_value(json_object_get(jo, "callee"));
    json_t *tens = json_object_get(jo, "tensors");
    if (!callee) continue;
    if (!(o->callee = pto_strdup(callee)) || !json_is_array(tens)) goto bad;
    size_t nt = json_array_size(tens);
    o->tnames = pto_calloc(nt + 1, sizeof *o->tnames);
    o->dimsym = pto_calloc(nt + 1, sizeof *o->dimsym);
    if (!o->tnames || !o->dimsym) goto bad;
    for (size_t k = 0; k < nt; k++) {
      json_t *p = json_array_get(tens, k), *dims = json_object_get(p, "dim_syms");
      const char *name = json_string_value(json_object_get(p, "name"));
      if (!name || !json_is_array(dims) || !(o->tnames[k] = pto_strdup(name))) goto bad;
      o->ntensors++;
      for (int d = 0; d < PTO_MAX_RANK; d++) {
        json_int_t v = json_integer_value(json_array_get(dims, (size_t)d));
        o->dimsym[k][d] = v >= 0 && v < t->nsyms ? (int)v : -1;
      }
    }
  }
  json_t *kops = json_object_get(doc, "kernel_ops"); /* absent in older tables */
  for (size_t i = 0; i < json_array_size(kops); i++) {
    json_t *jk = json_array_get(kops, i);
    const char *kernel = json_string_value(json_object_get(jk, "kernel"));
    const char *op = json_string_value(json_object_get(jk, "op"));
    json_int_t id = json_integer_value(json_object_get(jk, "id"));
    if (!kernel || !op || id < 0 || id > INT32_MAX ||
        add_kop(t, kernel, (int32_t)id, (int)json_integer_value(json_object_get(jk, "line")),
                (int)json_integer_value(json_object_get(jk, "col")), op,
                json_string_value(json_object_get(jk, "index")),
                json_string_value(json_object_get(jk, "table"))))
      goto bad;
  }
  json_decref(doc);
  return t;
bad:
  json_decref(doc);
  pto__positions_free(t);
  return NULL;
}

/* ---- the program's side ------------------------------------------------------------------ */

void pto__program_set_positions(pto_program *p, pto__positions *t) {
  pto__positions_free(p->positions);
  p->positions = t;
}

/* The word is the program's, shared by every thread that runs its orchestration in this process
 * (workers on threads, a distributed worker's chip threads): read and reset atomically, so they
 * do not race; which statement it names while two launches of the program run at once is the
 * last one either reached. */
int32_t pto_program_current_op(const pto_program *p) {
  return p && p->current_op ? __atomic_load_n(p->current_op, __ATOMIC_RELAXED) : -1;
}

void pto_program_reset_current_op(const pto_program *p) {
  if (p && p->current_op) __atomic_store_n(p->current_op, -1, __ATOMIC_RELAXED);
}

int pto_program_op_text(const pto_program *p, int32_t op, char *buf, size_t n) {
  const pos_op *o = p ? find_op(p->positions, op) : NULL;
  if (!o || !buf || !n) return -1;
  if (o->callee)
    snprintf(buf, n, "%s:%d:%d: %s @%s", p->positions->file, o->line, o->col, o->op, o->callee);
  else
    snprintf(buf, n, "%s:%d:%d: %s", p->positions->file, o->line, o->col, o->op);
  return 0;
}

int pto_program_kernel_op_text(const pto_program *p, const char *kernel, int32_t op, char *buf,
                               size_t n) {
  const pto__positions *t = p ? p->positions : NULL;
  for (int i = 0; t && kernel && buf && n && i < t->nkops; i++) {
    const pos_kop *k = &t->kops[i];
    if (k->id != op || strcmp(k->kernel, kernel)) continue;
    snprintf(buf, n, "%s:%d:%d: %s", t->file, k->line, k->col, k->op);
    return 0;
  }
  return -1;
}

int pto_program_kernel_op_operands(const pto_program *p, const char *kernel, int32_t op,
                                   const char **index, const char **table) {
  const pto__positions *t = p ? p->positions : NULL;
  for (int i = 0; t && kernel && i < t->nkops; i++) {
    const pos_kop *k = &t->kops[i];
    if (k->id != op || strcmp(k->kernel, kernel)) continue;
    if (!k->index) return -1;
    *index = k->index;
    *table = k->table;
    return 0;
  }
  return -1;
}

int pto_program_explain_dim_mismatch(const pto_program *p, int32_t op,
                                     const pto_kernel_tensor *tensors, int ntensors, int64_t a,
                                     int64_t b, char *buf, size_t n) {
  const pos_op *o = p ? find_op(p->positions, op) : NULL;
  if (!o || !o->callee || !n) return -1;
  /* The symbol with a dim of value a and another of value b among the kernel's parameters. */
  for (int sym = 0; sym < p->positions->nsyms; sym++) {
    int ka = -1, da = -1, kb = -1, db = -1;
    for (int k = 0; k < o->ntensors && k < ntensors; k++)
      for (int d = 0; d < tensors[k].rank && d < PTO_MAX_RANK; d++) {
        if (o->dimsym[k][d] != sym) continue;
        if (ka < 0 && tensors[k].shape[d] == a)
          ka = k, da = d;
        else if (kb < 0 && tensors[k].shape[d] == b && tensors[k].shape[d] != a)
          kb = k, db = d;
      }
    if (ka >= 0 && kb >= 0) {
      snprintf(buf, n,
               "dynamic symbol %s is %" PRId64 " from parameter '%s' (dim %d) but %" PRId64
               " from parameter '%s' (dim %d)",
               p->positions->syms[sym], a, o->tnames[ka], da, b, o->tnames[kb], db);
      return 0;
    }
  }
  return -1;
}

pto_status pto__program_set_positions_from_ir(pto_program *p, const pto_ir_program *ir) {
  if (!p || !ir) return PTO_OK;
  pto__positions *t = NULL;
  PTO_RETURN_IF_ERROR(pto__positions_from_ir(ir, p->sig.entry, &t));
  if (t) pto__program_set_positions(p, t);
  /* A host program's callees: their chips load them from the private copies this process holds
   * (pto__loader_hold_dir), so their tables go there too, and a failing rank names its line. */
  for (int i = 0; i < p->ncallees; i++) {
    pto_program *c = p->callees[i];
    pto__positions *ct = NULL;
    pto_status s = pto__positions_from_ir(ir, c->sig.entry, &ct);
    if (s || !ct) {
      pto_status_free(s); /* only messages would lose their positions */
      continue;
    }
    if (c->held_dir && c->work_dir) pto_status_free(pto__positions_write(ct, c->work_dir));
    pto__program_set_positions(c, ct);
  }
  return PTO_OK;
}
