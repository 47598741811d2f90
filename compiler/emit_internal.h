/* The emitter core shared by the two generators of C-family text: the orchestration C++
 * (emit_orch.c) and the host C (emit_host.c). The core writes what PTIR means the same way in
 * both: expressions, declarations, lists, yields, if, the shape of a for, blocks, the binding of
 * dynamic symbols and the results of a call. A dialect says what differs: a few words (types,
 * casts, literals) and the statements that reach the runtime (ops, calls, the loop header),
 * which each dialect writes itself. A dialect's own state follows the core's: each emitter
 * embeds pto__emit as its first member. */
#ifndef PTO_COMPILER_EMIT_INTERNAL_H
#define PTO_COMPILER_EMIT_INTERNAL_H

#include "compiler_internal.h"

typedef struct pto__emit pto__emit;

/* A block of more statements (its own and its inner blocks') than PTO__EMIT_PART_SPLIT is
 * written in parts of about PTO__EMIT_PART statements where the dialect has parts. */
#define PTO__EMIT_PART 128
#define PTO__EMIT_PART_SPLIT 256

typedef struct pto__emit_dialect {
  const char *what;        /* "orchestration codegen", "host codegen": starts each error */
  int cxx;                 /* C++ spelling: T(x), static_cast<T>(x), true; else C: ((T)x), 1 */
  const char *tensor_type; /* the type of a tensor variable: "ChipTensor", "pto_host_ref" */
  const char *alias_decl;  /* a call result naming an argument: "const ChipTensor &" */
  const char *if_tensor_init, *if_scalar_init; /* after an if result's declaration: "{}" */
  const char *scope_open; /* opens a block whose intermediates die with it; NULL: none */
  const char *no_ctype;   /* the error for a scalar dtype without a C type */
  /* The prefix of the rounding of an f16/bf16 scalar result: PREFIXround_f16(double) gives the
   * float holding the value rounded to nearest-even ("pto_" in the header, "ph_" in the host's
   * helpers). */
  const char *round_prefix;
  const char *incore;                 /* the error for an incore scope left in the function */
  const char *(*ctype)(pto_dtype dt); /* NULL: the dialect has no scalar of that dtype */
  /* Binary operators PTIR writes as calls (and '/', which floors): the whole expression. */
  void (*binary_call)(pto__emit *e, const pto_ir_expr *x);
  void (*op)(pto__emit *e, const pto_ir_stmt *s, int depth);
  void (*call)(pto__emit *e, const pto_ir_stmt *s, int depth);
  /* The for statement after its carried variables are declared and before its results are:
   * the header, the body (through pto__emit_block) and the closing brace. */
  void (*loop)(pto__emit *e, const pto_ir_stmt *s, int depth);
  /* Around a statement that evaluates x (an assignment, an if's condition, a yielded value),
   * where x may fail the launch (an integer division by a runtime zero); either may be NULL. */
  void (*before_expr)(pto__emit *e, const pto_ir_stmt *s, const pto_ir_expr *x, int depth);
  void (*after_expr)(pto__emit *e, const pto_ir_expr *x, int depth);
  /* A dynamic symbol bound from dim `dim` of tensor parameter v (the entry's prologue). */
  void (*bind_sym)(pto__emit *e, int sym, const pto_ir_value *v, int dim);
  /* Opens a part of a long block as a function of its own that sees every name above it (a C++
   * lambda capturing by reference, called at once), so that no function the host compiler
   * optimizes grows with the program; part_close ends one (pto__emit_block). NULL: blocks are
   * written whole. */
  const char *part_open, *part_close;
} pto__emit_dialect;

struct pto__emit {
  const pto__emit_dialect *d;
  const pto_ir_program *p;
  pto_text out;
  pto_status err; /* the first error; the emitters keep going but write nothing that counts */
  int parts;      /* the parts opened so far (pto__emit_block), 0 when every block is whole */
};

/* The source file's name without its directory (generated text must not depend on where the
 * source was: golden tests, reproducible work dirs). */
/* The C type both dialects give a scalar dtype: the integers (index is int64_t), float and
 * double; NULL for bool, f16 and bf16, which each dialect types itself. */
const char *pto__emit_c_type(pto_dtype dt);
const char *pto__emit_source_name(const pto_ir_program *p, const char *none);
void pto__emit_fail(pto__emit *e, pto_loc loc, const char *what);
/* Indentation of depth levels (2 spaces each), then printf. */
void pto__emit_line(pto__emit *e, int depth, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pto__emit_printf(pto__emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pto__emit_vname(pto__emit *e, const pto_ir_value *v);
/* The C type of a scalar dtype; for one the dialect lacks, fails naming loc (and gives "int"). */
const char *pto__emit_ctype(pto__emit *e, pto_dtype dt, pto_loc loc);
void pto__emit_expr(pto__emit *e, const pto_ir_expr *x);
/* x as an int64_t: cast unless it is one already. */
void pto__emit_int64(pto__emit *e, const pto_ir_expr *x);
/* {a, b, c} of a list argument, each as an int64_t. */
void pto__emit_list(pto__emit *e, const pto_ir_arg *a);
void pto__emit_decl(pto__emit *e, const pto_ir_value *v);
void pto__emit_block(pto__emit *e, const pto_ir_block *blk, int depth,
                     pto_ir_value *const *yield_to, int nyield);
/* After a call: its results alias the out/inout tensor arguments, in parameter order. */
void pto__emit_call_results(pto__emit *e, const pto_ir_stmt *s, int depth);
/* The entry's dynamic symbols, each bound from the first tensor parameter that declares it. */
void pto__emit_bind_syms(pto__emit *e, const pto_ir_func *f);
/* The text written, or the first error (the text then freed); what = what was being emitted. */
pto_status pto__emit_finish(pto__emit *e, const char *what, char **out_text);

#endif
