/* pto IR builder: the one way IR nodes are made.
 *
 * The PTIR parser is a client of this API: it handles syntax only and creates and type-checks
 * every node through these calls, so a program built in C and the same program parsed from text
 * are identical IR. Compiler passes use the same calls (and the copy helpers at the end) to make
 * new programs from old ones.
 *
 * A builder owns one program under construction. It keeps a cursor: the function whose header or
 * body is open and, inside a body, the innermost open block; statement calls append there. Every
 * call type-checks what it adds (operand kinds, dtypes, shapes, spaces, the kind of function an
 * op may appear in, SSA visibility) and deduces result types, so a value's type is always known.
 *
 * Errors: every fallible call returns a pto_status the caller owns. The first error is also kept
 * by the builder ("file:line:col: message", the position being the one last given to
 * pto_ir_builder_set_loc; C API users who never set one get line 0 and "file: message"), and
 * every later call fails with a copy of it, so a C API user may check only the last call or
 * pto_ir_builder_finish. Nothing aborts.
 *
 * Memory: nodes come from the program's arena. Arrays passed in (arguments, lists, names) are
 * copied, so callers may pass temporaries. Expressions passed to a call become part of the node
 * made by that call and must not be passed again (expressions are trees, never shared); a value
 * may be used any number of times through pto_ir_builder_use.
 *
 * Literal typing (docs/language.md "Types"): an integer literal takes the int or float
 * dtype its context needs and a float literal any float dtype; without context they are index and
 * f32. An expression made only of literals stays open to its context until the statement that
 * uses it is added, then takes its context's dtype (an error if the value does not fit). Negating
 * a literal folds into a negative literal, so `-5` is one INT node in text and in C. */
#ifndef PTO_IR_BUILDER_H
#define PTO_IR_BUILDER_H

#include "pto/export.h"
#include "pto/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_ir_builder pto_ir_builder;

/* A result being named: %name [: type]. type is the declared type or NULL (deduced); a declared
 * type must equal the deduced one, except that it gives literal-only expressions their dtype. A
 * NULL name gets a fresh one. loc {0,0} means the builder's current position. */
typedef struct pto_ir_result {
  const char *name;
  const pto_ir_type *type;
  pto_loc loc;
} pto_ir_result;

/* ---- lifetime ------------------------------------------------------------------------- */

/* file is used in messages (NULL: "<builder>"). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_create(const char *program_name, const char *file,
                                                      pto_ir_builder **out_b);
/* Frees the builder, and the program unless pto_ir_builder_finish handed it out. */
PTO_API void pto_ir_builder_destroy(pto_ir_builder *b);
/* Hands out the program (every function complete, no block open). The builder keeps no reference
 * to it afterwards; destroy the builder as usual. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_finish(pto_ir_builder *b,
                                                      pto_ir_program **out_program);

/* The program under construction (borrowed), e.g. for pto_ir_program_find_func. */
PTO_API pto_ir_program *pto_ir_builder_program(pto_ir_builder *b);
/* The position the next calls report errors at and record on nodes. */
PTO_API void pto_ir_builder_set_loc(pto_ir_builder *b, pto_loc loc);
PTO_API pto_loc pto_ir_builder_loc(const pto_ir_builder *b);
/* The first error's message, or NULL. Borrowed. */
PTO_API const char *pto_ir_builder_error(const pto_ir_builder *b);
/* Records an error found by a client (the parser's syntax errors) as the builder's first error;
 * returns it like any failing call. The message gets the current position. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_fail(pto_ir_builder *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- dynamic symbols ------------------------------------------------------------------ */

/* Declares a dynamic dim symbol (not a grammar keyword, dtype, min, max or mod; declared once). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_dynamic(pto_ir_builder *b, const char *name,
                                                       int *out_sym);
/* Index of the symbol named name[0..len), or -1. */
PTO_API int pto_ir_builder_find_sym(const pto_ir_builder *b, const char *name, size_t len);

/* ---- types ---------------------------------------------------------------------------- */

PTO_API PTO_MUST_USE pto_status pto_ir_builder_scalar_type(pto_ir_builder *b, pto_dtype dt,
                                                           const pto_ir_type **out_type);
/* rank 1..5 with dims (index expressions; constant ones fold to INT literals), or rank -1 for an
 * unshaped 'tensor f32' (dims unused). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_tensor_type(pto_ir_builder *b, pto_dtype dt,
                                                           int rank, pto_ir_expr *const *dims,
                                                           const pto_ir_type **out_type);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_dtensor_type(pto_ir_builder *b, pto_dtype dt,
                                                            int rank, pto_ir_expr *const *dims,
                                                            const pto_ir_type **out_type);
/* A 2-D tile: dims must be static positive; nvalid is 0 (no valid clause) or rank. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_tile_type(pto_ir_builder *b, pto_dtype dt, int rank,
                                                         pto_ir_expr *const *dims, pto_space space,
                                                         int nvalid, pto_ir_expr *const *valid,
                                                         const pto_ir_type **out_type);

/* ---- expressions ---------------------------------------------------------------------- */

PTO_API PTO_MUST_USE pto_status pto_ir_builder_int(pto_ir_builder *b, int64_t v,
                                                   pto_ir_expr **out_expr);
/* An integer literal of magnitude v, for the values above INT64_MAX that pto_ir_builder_int
 * cannot give: as the text `18446744073709551615`, it fits a u64 (or float) context only. For
 * v <= INT64_MAX it is pto_ir_builder_int(b, (int64_t)v). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_uint(pto_ir_builder *b, uint64_t v,
                                                    pto_ir_expr **out_expr);
/* A float literal of value v. A NaN is the quiet NaN of its sign (its payload is not kept), as
 * -D and --in read one: the program's text has only nan and -nan, so a program built here prints
 * and parses back to itself, bit for bit. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_float(pto_ir_builder *b, double v,
                                                     pto_ir_expr **out_expr);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_bool(pto_ir_builder *b, int v,
                                                    pto_ir_expr **out_expr);
/* A use of value v, which must be visible at the cursor. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_use(pto_ir_builder *b, pto_ir_value *v,
                                                   pto_ir_expr **out_expr);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_sym(pto_ir_builder *b, int sym,
                                                   pto_ir_expr **out_expr);
/* op: PTO_EOP_NEG or PTO_EOP_NOT. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_unary(pto_ir_builder *b, pto_expr_op op,
                                                     pto_ir_expr *a, pto_ir_expr **out_expr);
/* op: ADD SUB MUL DIV MOD MIN MAX EQ NE LT LE GT GE AND OR. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_binary(pto_ir_builder *b, pto_expr_op op,
                                                      pto_ir_expr *lhs, pto_ir_expr *rhs,
                                                      pto_ir_expr **out_expr);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_cast(pto_ir_builder *b, pto_dtype dt, pto_ir_expr *a,
                                                    pto_ir_expr **out_expr);
/* The value named name visible at the cursor (innermost first). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_lookup(pto_ir_builder *b, const char *name,
                                                      pto_ir_value **out_value);

/* ---- functions ------------------------------------------------------------------------ */

/* Starts a function and opens its header: add parameters and the '->' list next. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_func_begin(pto_ir_builder *b, pto_func_kind kind,
                                                          const char *name, pto_ir_func **out_func);
/* A parameter of the open header. Tensors may have a direction (dir_written says the word was
 * written; a tensor without one is IN); scalars may have a default (bind LITERAL with literal an
 * INT/FLOAT/BOOL literal that fits the dtype, or RUNTIME). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_param(pto_ir_builder *b, const char *name,
                                                     const pto_ir_type *type, pto_dir dir,
                                                     int dir_written, pto_bind_kind bind,
                                                     pto_ir_expr *literal,
                                                     pto_ir_value **out_value);
/* The '->' list of the open header. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_func_rets(pto_ir_builder *b,
                                                         const pto_ir_type *const *types, int n);
/* Closes the header and checks it (a kernel's '->' list equals its out/inout tensor types). A
 * header may be closed now and its body built later, so functions can call each other in any
 * textual order. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_header_end(pto_ir_builder *b);
/* Opens the body of f (header closed, body not yet built; closes f's header if still open). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_body_begin(pto_ir_builder *b, pto_ir_func *f);
/* Closes the body: every block closed, a return last when the function has a '->' list. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_body_end(pto_ir_builder *b);

/* ---- statements (appended at the cursor) ---------------------------------------------- */

/* %name [: type] = e. Only scalar expressions are assigned. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_assign(pto_ir_builder *b,
                                                      const pto_ir_result *result, pto_ir_expr *e,
                                                      pto_ir_value **out_value);
/* [results =] op(args). Positional arguments first; keywords in any order (stored in the op's
 * canonical order). Result values: (*out_stmt)->results. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_op(pto_ir_builder *b, pto_opcode op,
                                                  const pto_ir_arg *args, int nargs,
                                                  const pto_ir_result *results, int nresults,
                                                  pto_ir_stmt **out_stmt);
/* [results =] call @callee(args) [device=device]. Results, if any, are one per out/inout tensor
 * parameter of the callee, each an alias of the argument passed there. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_call(pto_ir_builder *b, pto_ir_func *callee,
                                                    pto_ir_expr *const *args, int nargs,
                                                    pto_ir_expr *device,
                                                    const pto_ir_result *results, int nresults,
                                                    pto_ir_stmt **out_stmt);
/* [results =] for %iv in range|parallel(lo, hi[, step]) [iter(%it = init, ...)] { ... }.
 * Opens the body, where iv and the iter values are visible; results become visible at
 * pto_ir_builder_for_end. step may be NULL. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_for_begin(
    pto_ir_builder *b, const char *iv_name, int parallel, pto_ir_expr *lo, pto_ir_expr *hi,
    pto_ir_expr *step, const pto_ir_result *iters, pto_ir_expr *const *inits, int niters,
    const pto_ir_result *results, int nresults, pto_ir_stmt **out_stmt);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_for_end(pto_ir_builder *b);
/* [results =] if cond { ... } [else { ... }]. Opens the then-block. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_if_begin(pto_ir_builder *b, pto_ir_expr *cond,
                                                        const pto_ir_result *results, int nresults,
                                                        pto_ir_stmt **out_stmt);
/* Closes the then-block and opens the else-block. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_else(pto_ir_builder *b);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_if_end(pto_ir_builder *b);
/* incore ["name"] { ... } (name may be NULL). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_incore_begin(pto_ir_builder *b, const char *name,
                                                            pto_ir_stmt **out_stmt);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_incore_end(pto_ir_builder *b);
/* yield / return: last statement of their block. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_yield(pto_ir_builder *b, pto_ir_expr *const *vals,
                                                     int n);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_return(pto_ir_builder *b, pto_ir_expr *const *vals,
                                                      int n);

/* ---- copying (for passes) ------------------------------------------------------------- */

/* Maps the values of a source function (by id) to what their uses become in the function being
 * built: values[id] (a value of the program being built) or exprs[id] (an expression of the
 * program being built, e.g. a literal that specializes a parameter; copied at each use, its own
 * value uses kept as they are), checked in that order. A use of a value with neither is an error
 * ("used before its definition"). Both arrays have n entries; copying a statement fills values[]
 * for its results. */
typedef struct pto_ir_value_map {
  int n;
  pto_ir_value **values;
  const pto_ir_expr **exprs;
} pto_ir_value_map;

PTO_API PTO_MUST_USE pto_status pto_ir_value_map_init(pto_ir_value_map *m, int n);
PTO_API void pto_ir_value_map_clear(pto_ir_value_map *m);

/* The copies resolve dynamic symbols by name (declaring missing ones) and callees by name in the
 * program being built (copy callee headers first). Copied statements go through the same checks
 * as new ones, with the source's result types as declared types. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_copy_type(pto_ir_builder *b,
                                                         const pto_ir_program *src,
                                                         const pto_ir_type *t, pto_ir_value_map *m,
                                                         const pto_ir_type **out_type);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_copy_expr(pto_ir_builder *b,
                                                         const pto_ir_program *src,
                                                         const pto_ir_expr *e, pto_ir_value_map *m,
                                                         pto_ir_expr **out_expr);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_copy_stmt(pto_ir_builder *b,
                                                         const pto_ir_program *src,
                                                         const pto_ir_stmt *s, pto_ir_value_map *m);
PTO_API PTO_MUST_USE pto_status pto_ir_builder_copy_block(pto_ir_builder *b,
                                                          const pto_ir_program *src,
                                                          const pto_ir_block *blk,
                                                          pto_ir_value_map *m);
/* Copies f's header (kind, name, params, '->') and closes it. */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_copy_func_header(pto_ir_builder *b,
                                                                const pto_ir_program *src,
                                                                const pto_ir_func *f,
                                                                pto_ir_func **out_func);
/* Builds dst's body as a copy of f's (dst's header made by copy_func_header, or one whose params
 * correspond to f's one for one). */
PTO_API PTO_MUST_USE pto_status pto_ir_builder_copy_func_body(pto_ir_builder *b,
                                                              const pto_ir_program *src,
                                                              const pto_ir_func *f,
                                                              pto_ir_func *dst);
/* A full copy of src through a fresh builder (so every check runs again). */
PTO_API PTO_MUST_USE pto_status pto_ir_program_copy(const pto_ir_program *src,
                                                    pto_ir_program **out_program);

#ifdef __cplusplus
}
#endif
#endif
