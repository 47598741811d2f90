/* Helpers shared by the IR front end's files (builder, parser, printer, verifier). */
#ifndef PTO_IR_INTERNAL_H
#define PTO_IR_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "pto/base.h"
#include "pto/ir.h"
#include "pto/ir_builder.h"

/* Statements visited so far by the walks of program.c (stmt_at, stmt_index, func_stmts): a test
 * reads it around a pass to prove the pass linear in the statement count. */
long pto__ir_stmt_steps(void);

/* An open-addressing hash of names to indexes of an array its user appends to (slots hold
 * index + 1; 0 is empty); the names stay in that array, read through at(ctx, i). compares (NULL:
 * not counted) gains one per name compared, for tests that prove a pass linear. */
typedef struct pto__ir_name_index {
  int *slots;
  int cap, used;
} pto__ir_name_index;
typedef const char *(*pto__ir_name_at_fn)(const void *ctx, int i);
/* The index of name (len bytes) in x, or -1. */
int pto__ir_name_index_find(const pto__ir_name_index *x, pto__ir_name_at_fn at, const void *ctx,
                            const char *name, size_t len, long *compares);
/* Adds element i (named at(ctx, i)) to x; -1 when out of memory. */
int pto__ir_name_index_add(pto__ir_name_index *x, pto__ir_name_at_fn at, const void *ctx, int i,
                           long *compares);
void pto__ir_name_index_clear(pto__ir_name_index *x);

/* Canonical text of a type / expression, appended to out. */
void pto__ir_print_type(pto_text *out, const pto_ir_program *p, const pto_ir_type *t);
void pto__ir_print_expr(pto_text *out, const pto_ir_program *p, const pto_ir_expr *e);
/* "[64,128]" for messages: dims without spaces. */
void pto__ir_print_shape(pto_text *out, const pto_ir_program *p, pto_ir_expr *const *dims,
                         int rank);
/* The shortest decimal text that reads back as v, always a FLOAT token ("1.0", "1e+20", "inf"). */
void pto__ir_print_float(pto_text *out, double v);

/* Text into a fixed buffer, truncated: for messages. */
const char *pto__ir_type_text(const pto_ir_program *p, const pto_ir_type *t, char *dst, size_t n);
const char *pto__ir_expr_text(const pto_ir_program *p, const pto_ir_expr *e, char *dst, size_t n);
const char *pto__ir_shape_text(const pto_ir_program *p, pto_ir_expr *const *dims, int rank,
                               char *dst, size_t n);

/* Structural equality of expressions and types (values by identity, symbols by index). */
int pto__ir_expr_equal(const pto_ir_expr *a, const pto_ir_expr *b);
int pto__ir_type_equal(const pto_ir_type *a, const pto_ir_type *b);

/* An expression of literals only (INT, FLOAT and arithmetic on them): its dtype still follows
 * its context. */
int pto__ir_expr_is_flexible(const pto_ir_expr *e);
/* The dtype a flexible expression takes without context: f32 if it has a float literal, else
 * index. */
pto_dtype pto__ir_flexible_default(const pto_ir_expr *e);
/* The ends of the integer literals: i64's lowest and u64's highest (the parser's and the
 * builder's messages). */
#define PTO__LIT_LOWEST "at least -9223372036854775808, the lowest i64"
#define PTO__LIT_HIGHEST "at most 18446744073709551615, the highest u64"

/* Words that cannot name a dynamic symbol: grammar keywords, dtypes, min, max, mod. */
int pto__ir_reserved_word(const char *s, size_t n);
/* [A-Za-z_][A-Za-z0-9_]* */
int pto__ir_valid_ident(const char *s);

int64_t pto__ir_floordiv(int64_t a, int64_t b);
int64_t pto__ir_floormod(int64_t a, int64_t b);

/* Sum of the tile bytes a block allocates per space, nested blocks included (in-place results of
 * tile.matmul_acc and loop/if results share buffers and add nothing). */
void pto__ir_footprint_block(const pto_ir_block *blk, uint64_t out_bytes[PTO_SPACE_COUNT]);
/* The statement at which a running footprint of blk first exceeds cap[space], or NULL. */
const pto_ir_stmt *pto__ir_footprint_overflow(const pto_ir_block *blk,
                                              const uint64_t cap[PTO_SPACE_COUNT],
                                              uint64_t running[PTO_SPACE_COUNT],
                                              pto_space *out_space);

/* "file:line:col: " prefix (or "file: " at line 0) + message. */
pto_status pto__ir_errorf(const pto_ir_program *p, pto_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The builder's program's function named name, or NULL: pto_ir_program_find_func through the
 * builder's hash index (a program of N calls to N functions costs O(N), not N^2 comparisons). */
pto_ir_func *pto__ir_builder_find_func(const pto_ir_builder *b, const char *name);

/* pto_ir_program_find_func through p's function index (pto_ir_builder_finish's): the function,
 * or NULL; *out_found 0 when p has no index valid for its functions (then NULL). Adds the names
 * it compared to *out_compares. */
pto_ir_func *pto__ir_program_index_find(const pto_ir_program *p, const char *name, int *out_found,
                                        long *out_compares);
/* The names pto_ir_program_find_func has compared in this process, for tests of its cost. */
long pto__ir_func_compares(void);
/* Lookups and probes of pto_ir_each_incore's name sets (a count, for a test of linearity). */
long pto__ir_name_compares(void);

/* The builder's sticky out-of-memory failure (PTO_STATUS_OUT_OF_MEMORY), for the parser. */
pto_status pto__ir_builder_oom(pto_ir_builder *b);
/* f->kernel_entry (f is b's) becomes a copy of kernel in b's arena; NULL clears it. */
pto_status pto__ir_builder_kernel_entry(pto_ir_builder *b, pto_ir_func *f, const char *kernel);

#endif
