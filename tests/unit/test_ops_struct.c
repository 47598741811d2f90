/* PTIR's second set of ops, the structural group (docs/language.md, "Ops (second set)"): the type
 * rules and their messages (op, numbers, source position), the text round trip, and the reference
 * interpreter's semantics checked by hand: first extremes and NaN in arg reductions, stable
 * sorts with NaN above +inf, ci wrapping, tri, later rows winning in scatter_rows, and launch
 * errors for indices out of range that leave every tensor untouched. The compiled kernels are
 * compared with the interpreter bit for bit by test_lower (group "struct"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "testutil.h"

static pto_ir_program *parse(const char *text) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "s.ptir", &p));
  return p;
}

static pto_status parse_status(const char *text) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "s.ptir", &p);
  pto_ir_program_destroy(p);
  return s;
}

/* ---- type rules --------------------------------------------------------------------------- */

typedef struct bad_case {
  const char *body; /* statements of @k (line 3 on) */
  const char *msg;
} bad_case;

#define KHEAD                                                                                      \
  "program b\n"                                                                                    \
  "kernel @k(%a: tensor[16, 32] f32, %i: tensor[16, 32] i32, %t: tensor[64, 32] f32, %n: index,"   \
  " out %o: tensor[64, 32] f32) -> (tensor[64, 32] f32) {\n"

static const bad_case k_bad[] = {
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.row_expand(%x, [16, 8])\n",
     "s.ptir:4:24: tile.row_expand: %x must be [16,1] for a [16,8] result, got [16,32]"},
    {"  %x = tile.load(%a, [0, 0], [1, 32])\n  %y = tile.col_expand(%x, [4, 16])\n",
     "s.ptir:4:24: tile.col_expand: %x must be [1,16] for a [4,16] result, got [1,32]"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.extract(%x, [10, 0], [8, 4])\n",
     "s.ptir:4:26: tile.extract: rows 10..18 fall outside the source tile's 16 rows"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.extract(%x, [0, 30], [8, 4])\n",
     "s.ptir:4:29: tile.extract: columns 30..34 fall outside the source tile's 32 columns"},
    /* Offsets near 2^63 must not wrap into range (they were accepted, UB in the check). */
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n"
     "  %y = tile.extract(%x, [9223372036854775807, 0], [8, 4])\n",
     "s.ptir:4:26: tile.extract: rows 9223372036854775807..9223372036854775815 fall outside the "
     "source tile's 16 rows"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %s = tile.load(%a, [0, 0], [4, 4])\n"
     "  %y = tile.assemble(%x, %s, [0, 9223372036854775806])\n",
     "s.ptir:5:34: tile.assemble: columns 9223372036854775806..9223372036854775810 fall outside "
     "the destination tile's 32 columns"},
    {"  %j = tile.load(%i, [0, 0], [16, 1])\n"
     "  %y = tile.gather_rows(%t, %j, [9223372036854775800], [16, 8])\n",
     "s.ptir:4:34: tile.gather_rows: columns 9223372036854775800..9223372036854775808 fall past "
     "the extent 32 of dim 1"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %s = tile.load(%a, [0, 0], [4, 4])\n"
     "  %y = tile.assemble(%x, %s, [0, 29])\n",
     "s.ptir:5:34: tile.assemble: columns 29..33 fall outside the destination tile's 32 columns"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %s = tile.load(%i, [0, 0], [4, 4])\n"
     "  %y = tile.assemble(%x, %s, [0, 0])\n",
     "tile.assemble: dtypes f32 and i32 differ"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %s = tile.load(%a, [0, 0], [8, 4])\n"
     "  %y = tile.concat(%x, %s)\n",
     "s.ptir:5:8: tile.concat: row counts differ: [16,32] and [8,4]"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.reshape(%x, [8, 32])\n",
     "s.ptir:4:25: tile.reshape: %x [16,32] has 512 elements, the shape [8,32] 256"},
    /* Element counts past int64 match nothing and are named as such (not wrapped, no UB). */
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n"
     "  %y = tile.reshape(%x, [9223372036854775807, 2])\n",
     "s.ptir:4:25: tile.reshape: %x [16,32] has 512 elements, the shape [9223372036854775807,2] "
     "more than 9223372036854775807"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n"
     "  %y = tile.reshape(%x, [4611686018427388032, 4])\n",
     "s.ptir:4:25: tile.reshape: %x [16,32] has 512 elements, the shape [4611686018427388032,4] "
     "more than 9223372036854775807"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.fillpad(%x, pad=one)\n",
     "tile.fillpad: pad=one: expected one of zero min max"},
    {"  %y = tile.ci(0, [2, 8])\n", "s.ptir:3:19: tile.ci: the shape must be [1, N], got [2,8]"},
    {"  %y = tile.ci(0, [1, 8], dtype=f32)\n", "tile.ci: dtype=f32: expected one of i32 i16 i64"},
    {"  %y = tile.ci(70000, [1, 8], dtype=i16)\n", "literal 70000 does not fit i16"},
    {"  %y = tile.tri(1.5, [8, 8])\n",
     "s.ptir:3:17: tile.tri: the diagonal: literal 1.5 does not fit index"},
    {"  %y = tile.tri(0, [8, 8], dtype=bool)\n", "tile.tri: dtype=bool: expected one of"},
    {"  %y = tile.tri(0, [8, 8], upper=yes)\n", "tile.tri: upper=yes: expected one of false true"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.gather(%x, %x)\n",
     "s.ptir:4:24: tile.gather: the indices %x must be an i32 tile, got tile[16, 32] f32 @vec"},
    {"  %j = tile.load(%i, [0, 0], [16, 2])\n  %y = tile.gather_rows(%t, %j, [0], [16, 8])\n",
     "s.ptir:4:29: tile.gather_rows: the indices %j must be an i32 tile [R,1], got tile[16, 2] "
     "i32"},
    {"  %j = tile.load(%i, [0, 0], [8, 1])\n  %y = tile.gather_rows(%t, %j, [0], [16, 8])\n",
     "s.ptir:4:29: tile.gather_rows: %j has 8 rows, the result 16"},
    {"  %j = tile.load(%i, [0, 0], [16, 1])\n  %y = tile.gather_rows(%t, %j, [28], [16, 8])\n",
     "s.ptir:4:34: tile.gather_rows: columns 28..36 fall past the extent 32 of dim 1"},
    {"  %j = tile.load(%i, [0, 0], [16, 1])\n  %y = tile.gather_rows(%t, %j, [0, 0], [16, 8])\n",
     "tile.gather_rows: the column offset: 2 entries, expected 1"},
    {"  %j = tile.load(%i, [0, 0], [16, 1])\n  %x = tile.load(%a, [0, 0], [16, 8])\n"
     "  %y = tile.scatter_rows(%x, %j, [0], %t)\n",
     "tile.scatter_rows writes %t, an in parameter (declare it out or inout)"},
    {"  %j = tile.load(%i, [0, 0], [16, 1])\n  %x = tile.load(%i, [0, 0], [16, 8])\n"
     "  %y = tile.scatter_rows(%x, %j, [0], %o)\n",
     "tile.scatter_rows: the tile is i32 but %o is f32"},
    {"  %j = tile.full([4, 4], i32, 512)\n  %x = tile.load(%a, [0, 0], [16, 32])\n"
     "  %y = tile.gather(%x, %j)\n",
     "s.ptir:5:24: tile.gather: index 512 (every element of %j) is outside [0, 512) (positions "
     "of the source tile)"},
    {"  %j = tile.full([16, 1], i32, -1)\n  %y = tile.gather_rows(%t, %j, [0], [16, 8])\n",
     "s.ptir:4:29: tile.gather_rows: index -1 (every element of %j) is outside [0, 64) (rows of "
     "the tensor)"},
    {"  %j = tile.full([16, 1], i32, 64)\n  %x = tile.load(%a, [0, 0], [16, 8])\n"
     "  %y = tile.scatter_rows(%x, %j, [0], %o)\n",
     "tile.scatter_rows: index 64 (every element of %j) is outside [0, 64) (rows of the tensor)"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.sort_idx(%x, order=up)\n",
     "tile.sort_idx: order=up: expected one of desc asc"},
    {"  %x = tile.load(%a, [0, 0], [16, 32], space=mat)\n  %l = tile.move(%x, space=left)\n"
     "  %w = tile.load(%t, [0, 0], [32, 16], space=mat)\n  %r = tile.move(%w, space=right)\n"
     "  %b = tile.load(%a, [0, 0], [1, 8])\n  %y = tile.matmul_bias(%l, %r, %b)\n",
     "s.ptir:8:33: tile.matmul_bias: the bias %b must be [1,16] f32, got tile[1, 8] f32 @vec"},
    {"  %x = tile.load(%a, [0, 0], [16, 32])\n  %y = tile.matmul_bias(%x, %x, %x)\n",
     "tile.matmul_bias: operand %x must be in left (made by tile.move(.., space=left)), not vec"},
};

static void test_struct_type_errors_name_op_numbers_and_position(void **state) {
  (void)state;
  int nfail = 0;
  for (size_t i = 0; i < sizeof k_bad / sizeof k_bad[0]; i++) {
    char text[2048];
    snprintf(text, sizeof text, "%s%s  return %%o\n}\n", KHEAD, k_bad[i].body);
    pto_status s = parse_status(text);
    if (!s || !strstr(pto_status_message(s), k_bad[i].msg)) {
      print_error("case %zu: got '%s'\nwant '%s'\n", i, s ? pto_status_message(s) : "ok",
                  k_bad[i].msg);
      nfail++;
    }
    pto_status_free(s);
  }
  assert_int_equal(nfail, 0);
}

/* Every op of the group in one kernel: print(parse(print(p))) == print(p), and the verifier
 * passes it. */
static const char *k_all_src =
    "program all\n"
    "kernel @k(%a: tensor[16, 32] f32, %t: tensor[64, 32] f32, out %o: tensor[64, 32] f32,"
    " %n: index, %s: i32) -> (tensor[64, 32] f32) {\n"
    "  %x = tile.load(%a, [0, 0], [16, 32], valid=[12, 30])\n"
    "  %p = tile.row_prod(%x)\n"
    "  %q = tile.col_prod(%x)\n"
    "  %m = tile.row_argmax(%x)\n"
    "  %m2 = tile.row_argmin(%x)\n"
    "  %m3 = tile.col_argmax(%x)\n"
    "  %m4 = tile.col_argmin(%x)\n"
    "  %e = tile.row_expand(%p, [16, 8])\n"
    "  %e2 = tile.col_expand(%q, [4, 32])\n"
    "  %tr = tile.transpose(%x)\n"
    "  %ex = tile.extract(%x, [%n, 2], [4, 8])\n"
    "  %as = tile.assemble(%x, %ex, [1, %n])\n"
    "  %cc = tile.concat(%x, %e)\n"
    "  %rs = tile.reshape(%x, [32, 16])\n"
    "  %fp = tile.fillpad(%x, pad=max)\n"
    "  %ci = tile.ci(%s, [1, 16], dtype=i32, descending=true)\n"
    "  %tri = tile.tri(%n, [16, 32], dtype=f32, upper=true)\n"
    "  %si = tile.sort_idx(%x, order=asc)\n"
    "  %g = tile.gather(%x, %si)\n"
    "  %gr = tile.gather_rows(%t, %m, [%n], [16, 8])\n"
    "  %o1 = tile.scatter_rows(%e, %m, [0], %o)\n"
    "  tile.scatter_rows(%e, %m, [8], %o1)\n"
    "  %xm = tile.load(%a, [0, 0], [16, 32], space=mat)\n"
    "  %l = tile.move(%xm, space=left)\n"
    "  %wm = tile.load(%t, [0, 0], [32, 16], space=mat)\n"
    "  %r = tile.move(%wm, space=right)\n"
    "  %b = tile.load(%a, [0, 0], [1, 16])\n"
    "  %mb = tile.matmul_bias(%l, %r, %b)\n"
    "  return %o1\n"
    "}\n";

static void test_struct_ops_round_trip_and_verify(void **state) {
  (void)state;
  pto_ir_program *p = parse(k_all_src);
  assert_pto_ok(pto_ir_verify(p));
  char *t1 = NULL, *t2 = NULL;
  assert_pto_ok(pto_ir_print(p, &t1));
  pto_ir_program *q = parse(t1);
  assert_pto_ok(pto_ir_print(q, &t2));
  assert_string_equal(t1, t2);
  assert_true(pto_ir_program_equal(p, q));
  /* the result types the rules give */
  static const char *const want[][2] = {{"m", "tile[16, 1] i32 @vec valid[12, 1]"},
                                        {"tr", "tile[32, 16] f32 @vec valid[30, 12]"},
                                        {"cc", "tile[16, 40] f32 @vec"},
                                        {"ci", "tile[1, 16] i32 @vec"},
                                        {"si", "tile[16, 32] i32 @vec"},
                                        {"o1", "tensor[64, 32] f32"},
                                        {"mb", "tile[16, 16] f32 @acc"}};
  const pto_ir_block *body = &p->funcs[0]->body;
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    const pto_ir_value *v = NULL;
    for (int i = 0; i < body->n && !v; i++)
      if (body->stmts[i]->nresults == 1 && !strcmp(body->stmts[i]->results[0]->name, want[w][0]))
        v = body->stmts[i]->results[0];
    assert_non_null(v);
    char *ts = pto_ir_type_str(p, v->type);
    assert_string_equal(ts, want[w][1]);
    free(ts);
  }
  free(t1);
  free(t2);
  pto_ir_program_destroy(q);
  pto_ir_program_destroy(p);
}

/* ---- interpreter semantics ------------------------------------------------------------------- */

/* Runs kernel @k of text with the given tensor arguments (host buffers, written in place). */
static pto_status run_k(const char *text, pto_ir_interp_arg *args, int n) {
  pto_ir_program *p = parse(text);
  pto_status s = pto_ir_interp_run(p, pto_ir_program_find_func(p, "k"), args, n);
  pto_ir_program_destroy(p);
  return s;
}

static pto_ir_interp_arg tensor_arg(void *data, pto_dtype dt, int64_t r, int64_t c) {
  pto_ir_interp_arg a;
  memset(&a, 0, sizeof a);
  a.is_tensor = 1;
  int64_t shape[2] = {r, c};
  pto_host_tensor_init(&a.tensor, data, dt, 2, shape);
  return a;
}

static void test_struct_argmax_first_extreme_and_first_nan(void **state) {
  (void)state;
  const char *src = "program a\n"
                    "kernel @k(%a: tensor[3, 5] f32, out %x: tensor[3, 1] i32,"
                    " out %y: tensor[3, 1] i32, out %z: tensor[1, 5] i32)"
                    " -> (tensor[3, 1] i32, tensor[3, 1] i32, tensor[1, 5] i32) {\n"
                    "  %t = tile.load(%a, [0, 0], [3, 5])\n"
                    "  %mx = tile.row_argmax(%t)\n"
                    "  %mn = tile.row_argmin(%t)\n"
                    "  %cx = tile.col_argmax(%t)\n"
                    "  %x1 = tile.store(%mx, [0, 0], %x)\n"
                    "  %y1 = tile.store(%mn, [0, 0], %y)\n"
                    "  %z1 = tile.store(%cx, [0, 0], %z)\n"
                    "  return %x1, %y1, %z1\n}\n";
  float a[15] = {1,     7,        7,   -2,        -2,  /* ties: the first 7, the first -2 */
                 -0.0f, 0.0f,     NAN, 9,         NAN, /* a NaN: the first NaN for both */
                 3,     INFINITY, 3,   -INFINITY, 0};
  int32_t x[3], y[3], z[5];
  pto_ir_interp_arg args[4] = {
      tensor_arg(a, PTO_DTYPE_F32, 3, 5), tensor_arg(x, PTO_DTYPE_I32, 3, 1),
      tensor_arg(y, PTO_DTYPE_I32, 3, 1), tensor_arg(z, PTO_DTYPE_I32, 1, 5)};
  assert_pto_ok(run_k(src, args, 4));
  assert_int_equal(x[0], 1);
  assert_int_equal(y[0], 3);
  assert_int_equal(x[1], 2);
  assert_int_equal(y[1], 2);
  assert_int_equal(x[2], 1);
  assert_int_equal(y[2], 3);
  int32_t want_z[5] = {2, 2, 1, 1, 1}; /* column 0: 3 wins; column 2: the NaN in row 1 */
  assert_memory_equal(z, want_z, sizeof z);
}

static void test_struct_sort_idx_stable_with_nan_above_inf(void **state) {
  (void)state;
  const char *src = "program s\n"
                    "kernel @k(%a: tensor[1, 7] f32, out %d: tensor[1, 7] i32,"
                    " out %u: tensor[1, 7] i32) -> (tensor[1, 7] i32, tensor[1, 7] i32) {\n"
                    "  %t = tile.load(%a, [0, 0], [1, 7])\n"
                    "  %sd = tile.sort_idx(%t, order=desc)\n"
                    "  %su = tile.sort_idx(%t, order=asc)\n"
                    "  %d1 = tile.store(%sd, [0, 0], %d)\n"
                    "  %u1 = tile.store(%su, [0, 0], %u)\n"
                    "  return %d1, %u1\n}\n";
  float a[7] = {2, NAN, INFINITY, 2, -0.0f, 0.0f, NAN};
  int32_t d[7], u[7];
  pto_ir_interp_arg args[3] = {tensor_arg(a, PTO_DTYPE_F32, 1, 7),
                               tensor_arg(d, PTO_DTYPE_I32, 1, 7),
                               tensor_arg(u, PTO_DTYPE_I32, 1, 7)};
  assert_pto_ok(run_k(src, args, 3));
  int32_t want_d[7] = {1, 6, 2, 0, 3, 4, 5}, want_u[7] = {4, 5, 0, 3, 2, 1, 6};
  assert_memory_equal(d, want_d, sizeof d);
  assert_memory_equal(u, want_u, sizeof u);
}

static void test_struct_ci_wraps_and_tri_takes_a_runtime_diagonal(void **state) {
  (void)state;
  const char *src = "program c\n"
                    "kernel @k(out %c: tensor[1, 4] i16, out %t: tensor[3, 4] f32, %d: index)"
                    " -> (tensor[1, 4] i16, tensor[3, 4] f32) {\n"
                    "  %x = tile.ci(32766, [1, 4], dtype=i16)\n"
                    "  %y = tile.tri(%d, [3, 4], dtype=f32)\n"
                    "  %c1 = tile.store(%x, [0, 0], %c)\n"
                    "  %t1 = tile.store(%y, [0, 0], %t)\n"
                    "  return %c1, %t1\n}\n";
  int16_t c[4];
  float t[12];
  pto_ir_interp_arg args[3] = {tensor_arg(c, PTO_DTYPE_I16, 1, 4),
                               tensor_arg(t, PTO_DTYPE_F32, 3, 4)};
  args[2].scalar.dtype = PTO_DTYPE_INDEX;
  args[2].scalar.i = -1;
  assert_pto_ok(run_k(src, args, 3));
  int16_t want_c[4] = {32766, 32767, -32768, -32767};
  assert_memory_equal(c, want_c, sizeof c);
  float want_t[12] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0};
  assert_memory_equal(t, want_t, sizeof t);
}

static const char *k_rows_src =
    "program r\n"
    "kernel @k(%t: tensor[6, 4] i32, %ix: tensor[3, 1] i32, %s: tensor[3, 2] i32,"
    " out %g: tensor[3, 2] i32, inout %u: tensor[6, 4] i32)"
    " -> (tensor[3, 2] i32, tensor[6, 4] i32) {\n"
    "  %i = tile.load(%ix, [0, 0], [3, 1])\n"
    "  %gr = tile.gather_rows(%t, %i, [1], [3, 2])\n"
    "  %g1 = tile.store(%gr, [0, 0], %g)\n"
    "  %ts = tile.load(%s, [0, 0], [3, 2])\n"
    "  %u1 = tile.scatter_rows(%ts, %i, [2], %u)\n"
    "  return %g1, %u1\n}\n";

static void test_struct_gather_rows_and_scatter_rows_later_row_wins(void **state) {
  (void)state;
  int32_t t[24], s[6] = {10, 11, 20, 21, 30, 31}, g[6], u[24];
  for (int k = 0; k < 24; k++)
    t[k] = k, u[k] = -1;
  int32_t ix[3] = {4, 0, 4};
  pto_ir_interp_arg args[5] = {
      tensor_arg(t, PTO_DTYPE_I32, 6, 4), tensor_arg(ix, PTO_DTYPE_I32, 3, 1),
      tensor_arg(s, PTO_DTYPE_I32, 3, 2), tensor_arg(g, PTO_DTYPE_I32, 3, 2),
      tensor_arg(u, PTO_DTYPE_I32, 6, 4)};
  assert_pto_ok(run_k(k_rows_src, args, 5));
  int32_t want_g[6] = {17, 18, 1, 2, 17, 18};
  assert_memory_equal(g, want_g, sizeof g);
  assert_int_equal(u[0 * 4 + 2], 20);
  assert_int_equal(u[0 * 4 + 3], 21);
  assert_int_equal(u[4 * 4 + 2], 30); /* row 2 wins over row 0 */
  assert_int_equal(u[4 * 4 + 3], 31);
  assert_int_equal(u[1 * 4 + 2], -1);
}

/* scatter_rows writes only the tile's valid region, as a store does: a [8, 4] tile with 3 valid
 * rows and 3 valid columns into a KV cache changes 3 cache rows' first 3 columns; every other
 * element, the targets of the padding rows (whose indices are 0, or past the cache) included,
 * keeps its bits. */
static void test_struct_scatter_rows_writes_only_the_valid_region(void **state) {
  (void)state;
  const char *src = "program r\n"
                    "kernel @k(%s: tensor[8, 4] f32, %ix: tensor[8, 1] i32,"
                    " inout %kv: tensor[10, 6] f32, %n: index) -> (tensor[10, 6] f32) {\n"
                    "  %i = tile.load(%ix, [0, 0], [8, 1])\n"
                    "  %t = tile.load(%s, [0, 0], [8, 4], valid=[%n, 3])\n"
                    "  %kv1 = tile.scatter_rows(%t, %i, [1], %kv)\n"
                    "  return %kv1\n}\n";
  float sv[32], kv[60], before[60];
  for (int k = 0; k < 32; k++)
    sv[k] = (float)(100 + k);
  for (int k = 0; k < 60; k++)
    kv[k] = before[k] = -(float)k - 0.5f;
  int32_t ix[8] = {7, 2, 5, 0, 0, 99, -4, 0}; /* rows 3..7 are padding: never used */
  pto_ir_interp_arg args[4] = {tensor_arg(sv, PTO_DTYPE_F32, 8, 4),
                               tensor_arg(ix, PTO_DTYPE_I32, 8, 1),
                               tensor_arg(kv, PTO_DTYPE_F32, 10, 6)};
  args[3].scalar.dtype = PTO_DTYPE_INDEX;
  args[3].scalar.i = 3;
  assert_pto_ok(run_k(src, args, 4));
  for (int r = 0; r < 10; r++)
    for (int c = 0; c < 6; c++) {
      int src_row = r == 7 ? 0 : r == 2 ? 1 : r == 5 ? 2 : -1;
      float want = src_row >= 0 && c >= 1 && c < 4 ? sv[src_row * 4 + c - 1] : before[r * 6 + c];
      if (memcmp(&kv[r * 6 + c], &want, sizeof want) != 0) {
        print_error("kv[%d][%d] = %g, expected %g\n", r, c, kv[r * 6 + c], want);
        fail();
      }
    }
}

static void test_struct_index_out_of_range_is_a_launch_error_writing_nothing(void **state) {
  (void)state;
  int32_t t[24] = {0}, s[6] = {1, 2, 3, 4, 5, 6}, g[6] = {0}, u[24];
  for (int k = 0; k < 24; k++)
    u[k] = -1;
  int32_t ix[3] = {1, 2, 6}; /* the last row is past the tensor's 6 rows */
  pto_ir_interp_arg args[5] = {
      tensor_arg(t, PTO_DTYPE_I32, 6, 4), tensor_arg(ix, PTO_DTYPE_I32, 3, 1),
      tensor_arg(s, PTO_DTYPE_I32, 3, 2), tensor_arg(g, PTO_DTYPE_I32, 3, 2),
      tensor_arg(u, PTO_DTYPE_I32, 6, 4)};
  pto_status st = run_k(k_rows_src, args, 5);
  assert_int_equal(pto_status_code_of(st), PTO_STATUS_LAUNCH);
  assert_status_contains(st, "s.ptir:4:9: tile.gather_rows in @k: %i[2,0] = 6 is not a row of "
                             "%t (0 to 5)");
  /* scatter_rows checks every index before it writes a row */
  const char *scatter_only = "program r\n"
                             "kernel @k(%ix: tensor[3, 1] i32, %s: tensor[3, 2] i32,"
                             " inout %u: tensor[6, 4] i32) -> (tensor[6, 4] i32) {\n"
                             "  %i = tile.load(%ix, [0, 0], [3, 1])\n"
                             "  %ts = tile.load(%s, [0, 0], [3, 2])\n"
                             "  %u1 = tile.scatter_rows(%ts, %i, [2], %u)\n"
                             "  return %u1\n}\n";
  pto_ir_interp_arg a2[3] = {tensor_arg(ix, PTO_DTYPE_I32, 3, 1),
                             tensor_arg(s, PTO_DTYPE_I32, 3, 2),
                             tensor_arg(u, PTO_DTYPE_I32, 6, 4)};
  st = run_k(scatter_only, a2, 3);
  assert_status_contains(st, "s.ptir:5:9: tile.scatter_rows in @k: %i[2,0] = 6 is not a row of "
                             "%u (0 to 5)");
  for (int k = 0; k < 24; k++)
    assert_int_equal(u[k], -1);
  /* extract at a runtime offset past the tile */
  const char *ext = "program e\n"
                    "kernel @k(%a: tensor[4, 4] i32, out %o: tensor[2, 2] i32, %r: index)"
                    " -> (tensor[2, 2] i32) {\n"
                    "  %t = tile.load(%a, [0, 0], [4, 4])\n"
                    "  %x = tile.extract(%t, [%r, 0], [2, 2])\n"
                    "  %o1 = tile.store(%x, [0, 0], %o)\n"
                    "  return %o1\n}\n";
  int32_t a[16] = {0}, o[4] = {7, 7, 7, 7};
  pto_ir_interp_arg a3[3] = {tensor_arg(a, PTO_DTYPE_I32, 4, 4),
                             tensor_arg(o, PTO_DTYPE_I32, 2, 2)};
  a3[2].scalar.dtype = PTO_DTYPE_INDEX;
  a3[2].scalar.i = 3;
  st = run_k(ext, a3, 3);
  assert_status_contains(st, "s.ptir:4:8: tile.extract in @k: offset 3 of dim 0 (rows 3..5) is "
                             "outside the tile's 4 rows");
  for (int k = 0; k < 4; k++)
    assert_int_equal(o[k], 7);
  /* gather_rows and scatter_rows at a runtime column offset past the tensor's columns name the
   * offset, its dim and the offsets that fit, as extract does */
  const char *cols = "program c\n"
                     "kernel @k(%t: tensor[6, 4] i32, %ix: tensor[3, 1] i32, out %g: tensor[3, 2] "
                     "i32, inout %u: tensor[6, 4] i32, %c: index, %d: index)"
                     " -> (tensor[3, 2] i32, tensor[6, 4] i32) {\n"
                     "  %i = tile.load(%ix, [0, 0], [3, 1])\n"
                     "  %gr = tile.gather_rows(%t, %i, [%c], [3, 2])\n"
                     "  %g1 = tile.store(%gr, [0, 0], %g)\n"
                     "  %u1 = tile.scatter_rows(%gr, %i, [%d], %u)\n"
                     "  return %g1, %u1\n}\n";
  int32_t ix2[3] = {0, 1, 2};
  pto_ir_interp_arg a4[6] = {
      tensor_arg(t, PTO_DTYPE_I32, 6, 4), tensor_arg(ix2, PTO_DTYPE_I32, 3, 1),
      tensor_arg(g, PTO_DTYPE_I32, 3, 2), tensor_arg(u, PTO_DTYPE_I32, 6, 4)};
  a4[4].scalar.dtype = a4[5].scalar.dtype = PTO_DTYPE_INDEX;
  a4[4].scalar.i = 3;
  st = run_k(cols, a4, 6);
  assert_status_contains(st, "s.ptir:4:9: tile.gather_rows in @k: offset 3 of dim 1 is outside "
                             "0..2 (the rows' 2 columns must fit in the tensor's 4)");
  a4[4].scalar.i = 2;
  a4[5].scalar.i = -1;
  st = run_k(cols, a4, 6);
  assert_status_contains(st, "tile.scatter_rows in @k: offset -1 of dim 1 is outside 0..2");
  /* a tile.gather position past the source tile's: the range of its positions, as the compiled
   * kernel says it (e2e_index_errors) */
  const char *gat = "program g\n"
                    "kernel @k(%a: tensor[4, 4] i32, %ix: tensor[1, 4] i32, out %o: tensor[1, 4] "
                    "i32) -> (tensor[1, 4] i32) {\n"
                    "  %t = tile.load(%a, [0, 0], [4, 4])\n"
                    "  %i = tile.load(%ix, [0, 0], [1, 4])\n"
                    "  %g = tile.gather(%t, %i)\n"
                    "  %o1 = tile.store(%g, [0, 0], %o)\n"
                    "  return %o1\n}\n";
  int32_t ix3[4] = {14, 15, 16, 17};
  pto_ir_interp_arg a5[3] = {tensor_arg(a, PTO_DTYPE_I32, 4, 4),
                             tensor_arg(ix3, PTO_DTYPE_I32, 1, 4),
                             tensor_arg(o, PTO_DTYPE_I32, 1, 4)};
  st = run_k(gat, a5, 3);
  assert_status_contains(st, "s.ptir:5:8: tile.gather in @k: index 16 at [0,2] is outside [0, 16) "
                             "(positions of the source tile)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_struct_type_errors_name_op_numbers_and_position),
      cmocka_unit_test(test_struct_ops_round_trip_and_verify),
      cmocka_unit_test(test_struct_argmax_first_extreme_and_first_nan),
      cmocka_unit_test(test_struct_sort_idx_stable_with_nan_above_inf),
      cmocka_unit_test(test_struct_ci_wraps_and_tri_takes_a_runtime_diagonal),
      cmocka_unit_test(test_struct_gather_rows_and_scatter_rows_later_row_wins),
      cmocka_unit_test(test_struct_scatter_rows_writes_only_the_valid_region),
      cmocka_unit_test(test_struct_index_out_of_range_is_a_launch_error_writing_nothing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
