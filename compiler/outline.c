#include "compiler_internal.h"

static int has_incore(const pto_ir_block *b) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    if (s->kind == PTO_STMT_INCORE) return 1;
    if (s->kind == PTO_STMT_FOR && has_incore(&s->loop.body)) return 1;
    if (s->kind == PTO_STMT_IF && (has_incore(&s->branch.then_body) || has_incore(&s->branch.else_body)))
      return 1;
  }
  return 0;
}

pto_status pto__outline_incore(const pto_ir_program *p, pto_ir_program **out_program) {
  *out_program = NULL;
  for (int i = 0; i < p->nfuncs; i++) {
    if (has_incore(&p->funcs[i]->body))
      return pto_status_make(PTO_STATUS_UNIMPLEMENTED,
                             "%s:%d:%d: incore scopes are not outlined yet; write the scope as a kernel "
                             "and call it",
                             p->file ? p->file : "<program>", p->funcs[i]->loc.line,
                             p->funcs[i]->loc.col);
  }
  return PTO_OK;
}
