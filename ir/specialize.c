/* Specialization: the entry's compile-time bindings written into the program itself.
 *
 * After `-D n=128` the entry parameter reads `%n: i32 = 128` (after `-D n=runtime`,
 * `= runtime`), and an unshaped `tensor f32` given `--arg x=64x128` becomes `tensor[64, 128] f32`,
 * so DIR/program.ptir says exactly what was compiled and the reference interpreter runs the same
 * program. The specialized slot stays in the ABI. */
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "pto/base.h"
#include "pto/ir_builder.h"
#include "pto/signature.h"

static pto_status literal_of(pto_ir_builder *b, const pto_sig_param *sp, pto_ir_expr **out) {
  if (sp->dtype == PTO_DTYPE_BOOL) return pto_ir_builder_bool(b, sp->value.i != 0, out);
  if (pto_dtype_is_float(sp->dtype)) return pto_ir_builder_float(b, sp->value.f, out);
  if (sp->dtype == PTO_DTYPE_U64) return pto_ir_builder_uint(b, sp->value.u, out);
  return pto_ir_builder_int(b, sp->value.i, out);
}

static pto_status sample_type(pto_ir_builder *b, const pto_sig_param *sp, const pto_ir_type **out) {
  pto_ir_expr *dims[PTO_MAX_RANK];
  for (int d = 0; d < sp->rank; d++)
    PTO_RETURN_IF_ERROR(pto_ir_builder_int(b, sp->dims[d].value, &dims[d]));
  return pto_ir_builder_tensor_type(b, sp->dtype, sp->rank, dims, out);
}

static pto_status entry_header(pto_ir_builder *b, const pto_ir_program *p, const pto_ir_func *f,
                               const pto_signature *sig, pto_ir_func **out) {
  pto_ir_builder_set_loc(b, f->loc);
  PTO_RETURN_IF_ERROR(pto_ir_builder_func_begin(b, f->kind, f->name, out));
  PTO_RETURN_IF_ERROR(pto__ir_builder_kernel_entry(b, *out, f->kernel_entry));
  pto_ir_value_map none = {0};
  const pto_ir_type *unshaped_samples[64];
  int nsamples = 0;
  for (int i = 0; i < f->nparams; i++) {
    const pto_ir_param *ip = &f->params[i];
    const pto_sig_param *sp = &sig->params[i];
    const pto_ir_type *t;
    pto_ir_expr *lit = NULL;
    pto_bind_kind bind = ip->bind;
    pto_ir_builder_set_loc(b, ip->value->loc);
    if (ip->value->type->kind == PTO_TYPE_SCALAR) {
      PTO_RETURN_IF_ERROR(pto_ir_builder_copy_type(b, p, ip->value->type, &none, &t));
      bind = sp->bind;
      if (bind == PTO_BIND_LITERAL) PTO_RETURN_IF_ERROR(literal_of(b, sp, &lit));
    } else if (ip->value->type->rank < 0) {
      PTO_RETURN_IF_ERROR(sample_type(b, sp, &t));
      if (ip->dir != PTO_DIR_IN && nsamples < 64) unshaped_samples[nsamples++] = t;
    } else {
      PTO_RETURN_IF_ERROR(pto_ir_builder_copy_type(b, p, ip->value->type, &none, &t));
    }
    pto_ir_value *v;
    PTO_RETURN_IF_ERROR(
        pto_ir_builder_param(b, ip->value->name, t, ip->dir, ip->dir_written, bind, lit, &v));
  }
  if (f->nrets) {
    const pto_ir_type *rets[64];
    int used = 0;
    for (int i = 0; i < f->nrets && i < 64; i++) {
      /* An unshaped result takes the shape of the unshaped output it returns: outputs and
       * results correspond in order. */
      if (f->rets[i]->rank < 0 && used < nsamples)
        rets[i] = unshaped_samples[used++];
      else
        PTO_RETURN_IF_ERROR(pto_ir_builder_copy_type(b, p, f->rets[i], &none, &rets[i]));
    }
    PTO_RETURN_IF_ERROR(pto_ir_builder_func_rets(b, rets, f->nrets < 64 ? f->nrets : 64));
  }
  return pto_ir_builder_header_end(b);
}

pto_status pto_ir_specialize(const pto_ir_program *p, const pto_ir_func *entry,
                             const pto_signature *sig, pto_ir_program **out_program) {
  if (!p) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_specialize: p is NULL");
  if (!sig) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_specialize: sig is NULL");
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_specialize: out_program is NULL");
  *out_program = NULL;
  pto_ir_builder *b;
  PTO_RETURN_IF_ERROR(pto_ir_builder_create(p->name, p->file, &b));
  pto_ir_func **nf = pto_calloc((size_t)p->nfuncs + 1, sizeof *nf);
  pto_status s =
      nf ? PTO_OK : pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "out of memory specializing");
  for (int i = 0; !s && i < p->nsyms; i++)
    s = pto_ir_builder_dynamic(b, p->syms[i], NULL);
  for (int i = 0; !s && i < p->nfuncs; i++)
    s = p->funcs[i] == entry ? entry_header(b, p, entry, sig, &nf[i])
                             : pto_ir_builder_copy_func_header(b, p, p->funcs[i], &nf[i]);
  for (int i = 0; !s && i < p->nfuncs; i++)
    s = pto_ir_builder_copy_func_body(b, p, p->funcs[i], nf[i]);
  if (!s) s = pto_ir_builder_finish(b, out_program);
  if (s)
    s = pto_status_annotate(s, "specializing @%s",
                            entry->kernel_entry ? entry->kernel_entry : entry->name);
  free(nf);
  pto_ir_builder_destroy(b);
  return s;
}
