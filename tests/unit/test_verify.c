/* The verifier and the program queries: programs edited through the C API are re-checked, the
 * kernel footprint is reported with its numbers, the entry is chosen as docs/language.md says. */
#include <stdlib.h>
#include <string.h>

#include "pto/arena.h"
#include "pto/ir.h"
#include "pto/ir_builder.h"
#include "pto/signature.h"
#include "testutil.h"

static pto_ir_program *parse(const char *text) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_string(text, strlen(text), "v.ptir", &p));
  return p;
}

static pto_ir_program *parse_add(void) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/examples/add.ptir", &p));
  return p;
}

static void test_verify_catches_an_edited_value_type(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_func *k = p->funcs[0];
  /* make %tc claim the type of a tensor parameter */
  k->body.stmts[2]->results[0]->type = k->params[0].value->type;
  assert_status_contains(pto_ir_verify(p),
                         "examples/add.ptir:12:3: %tc is declared tensor[R, 128] f32 but its value "
                         "is tile[32, 128] f32 @vec valid[R, 128]");
  pto_ir_program_destroy(p);
}

/* A written-out valid region equal to the tile's shape is the whole tile: the same type as none,
 * so a loop carrying a tile[8, 1] takes a row_sum of a tile loaded with valid=[8, 4] (issue #33:
 * "yield for iter ... the iter variable is tile[8, 1] f32 @vec"). */
static void test_verify_full_valid_region_is_the_plain_tile_type(void **state) {
  pto_ir_program *p = parse("program carry\n"
                            "kernel @k(%x: tensor[8,4] f32, out %y: tensor[8,1] f32)"
                            " -> (tensor[8,1] f32) {\n"
                            "  %z = tile.full([8, 1], f32, 0.0)\n"
                            "  %s = for %i in range(0, 3) iter(%acc = %z) {\n"
                            "    %t = tile.load(%x, [0, 0], [8, 4], valid=[8, 4])\n"
                            "    %r = tile.row_sum(%t)\n"
                            "    %n = tile.add(%acc, %r)\n"
                            "    yield %n\n"
                            "  }\n"
                            "  %y1 = tile.store(%s, [0, 0], %y)\n"
                            "  return %y1\n}\n");
  assert_pto_ok(pto_ir_verify(p));
  pto_ir_program_destroy(p);
}

static void test_verify_catches_an_edited_alias(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_func *k = p->funcs[0];
  k->body.stmts[3]->results[0]->alias_of = k->params[1].value;
  assert_status_contains(pto_ir_verify(p), "the alias of %c1 does not match its definition");
  pto_ir_program_destroy(p);
}

static void test_verify_catches_an_edited_literal_dtype(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_stmt *nblk = p->funcs[1]->body.stmts[0];
  /* (M + 31) / 32: retype the 32 as i32 under an index division */
  nblk->expr->rhs->dtype = PTO_DTYPE_I32;
  assert_status_contains(pto_ir_verify(p),
                         "expression 32 has dtype i32 where its context gives index");
  pto_ir_program_destroy(p);
}

static void test_verify_catches_a_moved_statement(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_block *body = &p->funcs[0]->body;
  /* swap the add and the store: the store now uses %tc before its definition */
  pto_ir_stmt *t = body->stmts[2];
  body->stmts[2] = body->stmts[3];
  body->stmts[3] = t;
  assert_status_contains(pto_ir_verify(p), "%tc is used before its definition");
  pto_ir_program_destroy(p);
}

static void test_verify_catches_an_op_moved_to_an_orch(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_func *k = p->funcs[0];
  k->kind = PTO_FUNC_ORCH;
  pto_status s = pto_ir_verify(p);
  assert_status_contains(s, "tile.load is not allowed in an orch outside an incore scope");
  pto_ir_program_destroy(p);
}

static void test_kernel_footprint_sums_tiles_per_space(void **state) {
  pto_ir_program *p = parse("program fp\n"
                            "kernel @k(%a: tensor[64, 64] f16, %b: tensor[64, 64] f32) {\n"
                            "  %x = tile.load(%a, [0, 0], [64, 32], space=mat)\n"
                            "  %l = tile.move(%x, space=left)\n"
                            "  %y = tile.load(%a, [0, 0], [32, 64], space=mat)\n"
                            "  %r = tile.move(%y, space=right)\n"
                            "  %m = tile.matmul(%l, %r)\n"
                            "  %m2 = tile.matmul_acc(%m, %l, %r)\n"
                            "  for %i in range(0, 4) {\n"
                            "    %v = tile.load(%b, [0, 0], [16, 64])\n"
                            "  }\n"
                            "}\n");
  uint64_t bytes[PTO_SPACE_COUNT];
  pto_ir_kernel_footprint(p->funcs[0], bytes);
  assert_int_equal(bytes[PTO_SPACE_DDR], 0);
  assert_int_equal(bytes[PTO_SPACE_MAT], 2 * 64 * 32 * 2);
  assert_int_equal(bytes[PTO_SPACE_LEFT], 64 * 32 * 2);
  assert_int_equal(bytes[PTO_SPACE_RIGHT], 32 * 64 * 2);
  assert_int_equal(bytes[PTO_SPACE_ACC], 64 * 64 * 4); /* matmul_acc reuses its accumulator */
  assert_int_equal(bytes[PTO_SPACE_VEC], 16 * 64 * 4);
  assert_pto_ok(pto_ir_verify(p));
  pto_ir_program_destroy(p);
}

static void test_verify_reports_footprint_with_numbers(void **state) {
  pto_ir_program *p = parse("program fp\n"
                            "kernel @k(%a: tensor[256, 256] f16) {\n"
                            "  %x = tile.load(%a, [0, 0], [128, 128], space=mat)\n"
                            "  %l = tile.move(%x, space=left)\n"
                            "}\n");
  assert_pto_ok(pto_ir_verify(p)); /* 32 KiB of left fits in 64 */
  pto_ir_program_destroy(p);
  p = parse("program fp\n"
            "kernel @k(%a: tensor[256, 256] f32) {\n"
            "  %x = tile.load(%a, [0, 0], [256, 256], space=mat)\n"
            "  %l = tile.move(%x, space=left)\n"
            "}\n");
  assert_status_contains(
      pto_ir_verify(p),
      "v.ptir:4:8: kernel @k: its tiles need 256 KiB of left (262144 bytes), more than the 64 KiB "
      "(65536 bytes) of the sim platform");
  pto_ir_program_destroy(p);
  p = parse("program fp\n"
            "orch @o(inout %t: tensor[512, 512] f32) {\n"
            "  incore \"big\" {\n"
            "    %x = tile.load(%t, [0, 0], [256, 256])\n"
            "  }\n"
            "}\n");
  assert_status_contains(pto_ir_verify(p),
                         "v.ptir:4:10: incore scope \"big\": its tiles need 256 KiB of vec");
  pto_ir_program_destroy(p);
}

static void test_verify_allows_unshaped_tensors_on_the_entry_only(void **state) {
  pto_ir_program *p = parse("program u\n"
                            "kernel @k(%a: tensor[8] f32) {\n}\n"
                            "orch @main(%x: tensor f32, out %y: tensor f32) -> (tensor f32) {\n"
                            "  %s = tensor.slice(%x, [0], [8])\n"
                            "  call @k(%s)\n"
                            "  return %y\n"
                            "}\n");
  assert_pto_ok(pto_ir_verify(p));
  pto_ir_program_destroy(p);
}

static void test_program_entry_follows_the_rules(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_func *f = NULL;
  assert_pto_ok(pto_ir_program_entry(p, NULL, &f));
  assert_string_equal(f->name, "main");
  assert_pto_ok(pto_ir_program_entry(p, "add_block", &f));
  assert_string_equal(f->name, "add_block");
  assert_pto_ok(pto_ir_program_entry(p, "@main", &f));
  assert_status_contains(pto_ir_program_entry(p, "nope", &f),
                         "the program has no function named @nope");
  assert_ptr_equal(pto_ir_program_find_func(p, "add_block"), p->funcs[0]);
  assert_null(pto_ir_program_find_func(p, "x"));
  pto_ir_program_destroy(p);

  p = parse("program two\norch @a() {\n}\norch @b() {\n}\n");
  assert_status_contains(pto_ir_program_entry(p, NULL, &f),
                         "the program has 2 orch functions (@a, @b): name the entry");
  pto_ir_program_destroy(p);
  p = parse("program h\norch @a() {\n}\norch @b() {\n}\nhost @h() {\n  call @a()\n}\n");
  assert_pto_ok(pto_ir_program_entry(p, NULL, &f));
  assert_string_equal(f->name, "h");
  pto_ir_program_destroy(p);
  p = parse("program k\nkernel @a() {\n}\nkernel @b() {\n}\n");
  assert_status_contains(pto_ir_program_entry(p, NULL, &f),
                         "v.ptir: the program has no host or orch function to run: name the entry "
                         "with --entry NAME to run a kernel as one task (kernels: @a, @b)");
  assert_pto_ok(pto_ir_program_entry(p, "b", &f));
  assert_string_equal(f->name, "b");
  pto_ir_program_destroy(p);
}

/* --entry naming a kernel: the program gets an orch, last, that calls it once with its own
 * parameters (names, directions, defaults, positions); the orch's name is fresh, and its
 * kernel_entry names the kernel: the signature, its copies and specializations carry it, the
 * fingerprint and the structural hash tell it apart from an orch without it. */
static void test_kernel_entry_gets_an_orch_of_its_own(void **state) {
  pto_ir_program *p = parse_add();
  pto_ir_program *w = NULL;
  const char *name = NULL;
  assert_pto_ok(pto_ir_program_kernel_entry(p, "main", &w, &name));
  assert_null(w);
  assert_string_equal(name, "main");
  assert_pto_ok(pto_ir_program_kernel_entry(p, "@add_block", &w, &name));
  assert_non_null(w);
  assert_string_equal(name, "add_block_entry");
  assert_int_equal(w->nfuncs, p->nfuncs + 1);
  pto_ir_func *o = w->funcs[w->nfuncs - 1], *k = pto_ir_program_find_func(w, "add_block");
  assert_int_equal(o->kind, PTO_FUNC_ORCH);
  assert_int_equal(o->nparams, k->nparams);
  for (int i = 0; i < k->nparams; i++) {
    assert_string_equal(o->params[i].value->name, k->params[i].value->name);
    assert_int_equal(o->params[i].dir, k->params[i].dir);
    assert_int_equal(o->params[i].value->loc.line, k->params[i].value->loc.line);
  }
  assert_int_equal(o->loc.line, k->loc.line);
  assert_int_equal(o->body.n, 2);
  assert_int_equal(o->body.stmts[0]->kind, PTO_STMT_CALL);
  assert_ptr_equal(o->body.stmts[0]->call.callee, k);
  assert_int_equal(o->body.stmts[1]->kind, PTO_STMT_RETURN);
  pto_ir_func *e = NULL;
  assert_pto_ok(pto_ir_program_entry(w, name, &e));
  assert_ptr_equal(e, o);
  assert_pto_ok(pto_ir_verify(w));

  assert_string_equal(o->kernel_entry, "add_block");
  assert_null(k->kernel_entry);
  assert_null(pto_ir_program_find_func(p, "main")->kernel_entry);
  pto_signature sig, sc;
  assert_pto_ok(pto_signature_build(w, o, NULL, 0, NULL, 0, &sig));
  assert_string_equal(sig.entry, "add_block_entry");
  assert_string_equal(sig.kernel_entry, "add_block");
  assert_string_equal(pto_signature_entry_name(&sig), "add_block");
  assert_pto_ok(pto_signature_copy(&sig, &sc));
  assert_string_equal(sc.kernel_entry, "add_block");
  char with[33], without[33];
  assert_pto_ok(pto_signature_fingerprint(&sc, 0, NULL, NULL, with));
  free(sc.kernel_entry);
  sc.kernel_entry = NULL;
  assert_string_equal(pto_signature_entry_name(&sc), "add_block_entry");
  assert_pto_ok(pto_signature_fingerprint(&sc, 0, NULL, NULL, without));
  assert_string_not_equal(with, without);
  pto_signature_clear(&sc);
  pto_ir_program *spec = NULL, *copy = NULL;
  assert_pto_ok(pto_ir_specialize(w, o, &sig, &spec));
  assert_string_equal(pto_ir_program_find_func(spec, name)->kernel_entry, "add_block");
  assert_pto_ok(pto_ir_program_copy(w, &copy));
  assert_string_equal(pto_ir_program_find_func(copy, name)->kernel_entry, "add_block");
  assert_true(pto_ir_program_equal(copy, w));
  pto_ir_func *oc = pto_ir_program_find_func(copy, name);
  oc->kernel_entry = NULL; /* a hand-written orch of the same name and body */
  assert_false(pto_ir_program_equal(copy, w));
  pto_ir_hash128 hw = pto_ir_program_hash(w), hc = pto_ir_program_hash(copy);
  assert_false(hw.lo == hc.lo && hw.hi == hc.hi);
  pto_signature_clear(&sig);
  pto_ir_program_destroy(copy);
  pto_ir_program_destroy(spec);
  pto_ir_program_destroy(w);
  pto_ir_program_destroy(p);

  /* Taken names (a function, an incore scope's kernel) get a number. */
  p = parse("program n\n"
            "kernel @k(%n: i32 = 4) {\n}\n"
            "kernel @k_entry() {\n}\n"
            "orch @o() {\n  incore \"k_entry0\" {\n  }\n}\n");
  assert_pto_ok(pto_ir_program_kernel_entry(p, "k", &w, &name));
  assert_string_equal(name, "k_entry1");
  pto_ir_func *ko = pto_ir_program_find_func(w, "k_entry1");
  assert_int_equal(ko->params[0].bind, PTO_BIND_LITERAL);
  assert_int_equal(ko->params[0].literal->i, 4);
  pto_ir_program_destroy(w);
  pto_ir_program_destroy(p);
}

static void test_kernel_entry_refuses_comm_windows(void **state) {
  pto_ir_program *p = NULL, *w = NULL;
  const char *name = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/examples/allreduce_ring.ptir", &p));
  assert_status_contains(pto_ir_program_kernel_entry(p, "allreduce", &w, &name),
                         "allreduce_ring.ptir:16:49: entry @allreduce is a kernel with a "
                         "dtensor parameter %buf: comm windows (and the dist.* ops on them) come "
                         "from a host program");
  assert_null(w);
  pto_ir_program_destroy(p);
}

static void test_expr_static_int_folds_index_arithmetic(void **state) {
  pto_ir_program *p = parse("program s\ndynamic M\nkernel @k(%n: index) {\n"
                            "  %a = (7 + 1) * 3 - 4 / 3\n"
                            "  %b = -7 / 2\n"
                            "  %c = mod(-7, 3) + mod(7, -3)\n"
                            "  %d = max(2, min(9, 5))\n"
                            "  %e = M + 1\n"
                            "  %f = %n * 0\n"
                            "  %g = 9223372036854775807 + 1\n"
                            "}\n");
  const pto_ir_block *b = &p->funcs[0]->body;
  int64_t v = 0;
  assert_int_equal(pto_ir_expr_static_int(b->stmts[0]->expr, &v), 0);
  assert_int_equal(v, 23);
  assert_int_equal(pto_ir_expr_static_int(b->stmts[1]->expr, &v), 0);
  assert_int_equal(v, -4); /* floor */
  assert_int_equal(pto_ir_expr_static_int(b->stmts[2]->expr, &v), 0);
  assert_int_equal(v, 2 + -2); /* sign of the divisor */
  assert_int_equal(pto_ir_expr_static_int(b->stmts[3]->expr, &v), 0);
  assert_int_equal(v, 5);
  assert_int_not_equal(pto_ir_expr_static_int(b->stmts[4]->expr, &v), 0);
  assert_int_not_equal(pto_ir_expr_static_int(b->stmts[5]->expr, &v), 0);
  assert_int_not_equal(pto_ir_expr_static_int(b->stmts[6]->expr, &v),
                       0); /* overflow is not static */
  pto_ir_program_destroy(p);
}

/* Every tile op that computes (tile.load/store/create/full/move aside) has a class, and each of
 * those but cast, matmul and the layout ops (which move elements, computing nothing) a scalar
 * function: the builder, interpreter and lowering dispatch on them, so a row without one would
 * be typed or run as nothing. */
static void test_op_registry_gives_every_tile_math_op_a_class(void **state) {
  for (int op = 0; op < PTO_OP_COUNT; op++) {
    const pto_op_info *info = pto_op_info_get((pto_opcode)op);
    int memory = op == PTO_OP_TILE_LOAD || op == PTO_OP_TILE_STORE || op == PTO_OP_TILE_CREATE ||
                 op == PTO_OP_TILE_FULL || op == PTO_OP_TILE_MOVE;
    if (strncmp(info->name, "tile.", 5) != 0 || memory) {
      assert_int_equal(info->cls, PTO_OPC_OTHER);
      continue;
    }
    assert_int_not_equal(info->cls, PTO_OPC_OTHER);
    if (info->cls != PTO_OPC_CAST && info->cls != PTO_OPC_MATMUL && info->cls != PTO_OPC_LAYOUT)
      assert_int_not_equal(info->fn, PTO_FN_NONE);
    if (info->float_only) assert_true(info->dtypes == 0 || info->dtypes == PTO_OPD_FLOAT);
  }
  assert_int_equal(pto_op_info_get(PTO_OP_TILE_ROW_SUM)->fn, PTO_FN_ADD);
  assert_int_equal(pto_op_info_get(PTO_OP_TILE_DIVS)->cls, PTO_OPC_BINARY_SCALAR);
  assert_true(pto_op_info_get(PTO_OP_TILE_EXP)->float_only);
  assert_false(pto_op_info_get(PTO_OP_TILE_RELU)->float_only);
}

static void test_op_registry_names_every_op(void **state) {
  for (int op = 0; op < PTO_OP_COUNT; op++) {
    const pto_op_info *info = pto_op_info_get((pto_opcode)op);
    assert_non_null(info);
    assert_non_null(info->name);
    assert_int_equal(pto_op_lookup(info->name, strlen(info->name)), op);
    assert_true(info->min_pos <= info->max_pos);
    assert_true(info->allowed_in != 0);
  }
  assert_null(pto_op_info_get(PTO_OP_COUNT));
  assert_int_equal(pto_op_lookup("tile.loads", 10), -1);
  assert_int_equal(pto_op_lookup("tile.load", 9), PTO_OP_TILE_LOAD);
  assert_int_equal(pto_op_info_get(PTO_OP_TILE_STORE)->write_mask, 1u << 2);
  assert_int_equal(pto_op_info_get(PTO_OP_DIST_NOTIFY)->write_mask, 1u << 0);
  assert_int_equal(pto_op_info_get(PTO_OP_DIST_REMOTE_STORE)->write_mask, 1u << 1);
  assert_string_equal(pto_op_info_get(PTO_OP_TILE_LOAD)->keywords, "space valid pad");
  assert_int_equal(pto_op_info_get(PTO_OP_TENSOR_DIM)->allowed_in,
                   PTO_IN_KERNEL | PTO_IN_ORCH | PTO_IN_HOST);
  assert_int_equal(pto_op_info_get(PTO_OP_DIST_WAIT)->nresults, 0);
}

/* ---- L3 ops: tensor.reshape, tensor.select, barrier, collectives ---------------------------- */

static const pto_ir_value *find_result(const pto_ir_block *b, const char *name) {
  for (int i = 0; i < b->n; i++) {
    const pto_ir_stmt *s = b->stmts[i];
    for (int r = 0; r < s->nresults; r++)
      if (strcmp(s->results[r]->name, name) == 0) return s->results[r];
    const pto_ir_value *v = NULL;
    if (s->kind == PTO_STMT_FOR) v = find_result(&s->loop.body, name);
    if (v) return v;
  }
  return NULL;
}

static void assert_type_of(const pto_ir_program *p, const pto_ir_func *f, const char *name,
                           const char *want) {
  const pto_ir_value *v = find_result(&f->body, name);
  if (!v) {
    print_error("no value %%%s\n", name);
    fail();
  }
  char *t = pto_ir_type_str(p, v->type);
  if (strcmp(t, want) != 0) print_error("%%%s: %s, expected %s\n", name, t, want);
  assert_string_equal(t, want);
  free(t);
}

static void test_l3_ops_deduce_types_and_aliases(void **state) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/tests/corpus/good/dist_collectives.ptir", &p));
  assert_pto_ok(pto_ir_verify(p));
  pto_ir_func *k = pto_ir_program_find_func(p, "reduce_all");
  pto_ir_func *o = pto_ir_program_find_func(p, "step");
  pto_ir_func *h = pto_ir_program_find_func(p, "main");
  assert_non_null(k);
  assert_non_null(o);
  assert_non_null(h);
  /* reshape and select */
  assert_type_of(p, o, "x0", "tensor[4, 512] f32");
  assert_type_of(p, o, "flat", "tensor[2048] f32");
  assert_type_of(p, o, "rows", "tensor[B, 4, 512] f32");
  assert_type_of(p, o, "r1", "tensor[4, 512] f32");
  assert_type_of(p, o, "w2", "dtensor[32, 64] f32");
  assert_type_of(p, o, "w3", "dtensor[64] f32");
  assert_type_of(p, h, "flat", "tensor[B, 2048] f32");
  assert_type_of(p, h, "shard", "tensor[64, 32] f32");
  /* collectives alias their window and keep its type */
  const pto_ir_value *win = k->params[0].value;
  static const char *const names[] = {"a", "b", "c", "d", "e"};
  const pto_ir_value *prev = win;
  for (int i = 0; i < 5; i++) {
    assert_type_of(p, k, names[i], "dtensor[64, 32] f32");
    const pto_ir_value *v = find_result(&k->body, names[i]);
    assert_ptr_equal(v->alias_of, prev);
    prev = v;
  }
  /* barrier and an unnamed collective have no result */
  assert_int_equal(k->body.stmts[0]->kind, PTO_STMT_OP);
  assert_int_equal(k->body.stmts[0]->op.opc, PTO_OP_DIST_BARRIER);
  assert_int_equal(k->body.stmts[0]->nresults, 0);
  assert_int_equal(k->body.stmts[3]->op.opc, PTO_OP_DIST_ALLREDUCE);
  assert_int_equal(k->body.stmts[3]->nresults, 0);
  /* keywords in canonical order whatever the source order */
  const pto_ir_stmt *s3 = k->body.stmts[3];
  assert_string_equal(pto_ir_stmt_kwarg(s3, "op")->str, "prod");
  assert_string_equal(pto_ir_stmt_kwarg(s3, "mode")->str, "mesh");
  assert_string_equal(s3->op.args[2].kw, "op");
  assert_string_equal(s3->op.args[3].kw, "mode");
  pto_ir_program_destroy(p);
}

static void test_l3_ops_in_the_registry(void **state) {
  static const struct {
    pto_opcode op;
    const char *name;
    int allowed, min_pos, max_pos, nresults;
    const char *kw;
  } rows[] = {
      {PTO_OP_TENSOR_RESHAPE, "tensor.reshape", PTO_IN_ORCH | PTO_IN_HOST, 2, 2, 1, ""},
      {PTO_OP_TENSOR_SELECT, "tensor.select", PTO_IN_ORCH | PTO_IN_HOST, 2, 2, 1, ""},
      {PTO_OP_DIST_BARRIER, "dist.barrier", PTO_IN_KERNEL, 1, 1, 0, ""},
      {PTO_OP_DIST_ALLREDUCE, "dist.allreduce", PTO_IN_KERNEL, 2, 2, 1, "op mode"},
      {PTO_OP_DIST_BROADCAST, "dist.broadcast", PTO_IN_KERNEL, 3, 3, 1, ""},
      {PTO_OP_DIST_ALLGATHER, "dist.allgather", PTO_IN_KERNEL, 2, 2, 1, ""},
      {PTO_OP_DIST_REDUCE_SCATTER, "dist.reduce_scatter", PTO_IN_KERNEL, 2, 2, 1, "op"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const pto_op_info *info = pto_op_info_get(rows[i].op);
    assert_string_equal(info->name, rows[i].name);
    assert_int_equal(pto_op_lookup(rows[i].name, strlen(rows[i].name)), rows[i].op);
    assert_int_equal(info->allowed_in, rows[i].allowed);
    assert_int_equal(info->min_pos, rows[i].min_pos);
    assert_int_equal(info->max_pos, rows[i].max_pos);
    assert_int_equal(info->nresults, rows[i].nresults);
    assert_string_equal(info->keywords, rows[i].kw);
  }
  /* the collectives write the window and the signal window; barrier the signal window */
  assert_int_equal(pto_op_info_get(PTO_OP_DIST_ALLREDUCE)->write_mask, 3u);
  assert_int_equal(pto_op_info_get(PTO_OP_DIST_BARRIER)->write_mask, 1u);
  assert_int_equal(pto_op_info_get(PTO_OP_TENSOR_RESHAPE)->write_mask, 0u);
}

/* Each misuse with its position: "v.ptir:LINE:COL: message". */
static void test_l3_ops_misuse(void **state) {
  static const struct {
    const char *body;
    const char *want;
  } cases[] = {
      /* reshape: element count, contiguity, where */
      {"orch @o(%a: tensor[8, 16] f32) {\n  %r = tensor.reshape(%a, [3, 5])\n}\n",
       "v.ptir:3:27: tensor.reshape: %a [8,16] has 128 elements, the shape 15"},
      {"orch @o(%a: tensor[8, 16] f32) {\n  %s = tensor.slice(%a, [0, 8], [2, 8])\n"
       "  %r = tensor.reshape(%s, [16])\n}\n",
       "v.ptir:4:23: tensor.reshape: %s is not contiguous"},
      {"kernel @k(%a: tensor[8, 16] f32) {\n  %r = tensor.reshape(%a, [128])\n}\n",
       "v.ptir:3:8: tensor.reshape is not allowed in a kernel (only in an orch or a host)"},
      {"orch @o(%a: tensor[8, 16] f32) {\n  %r = tensor.reshape(%a, [0, 16])\n}\n",
       "v.ptir:3:28: tensor.reshape: extent 0: extents are positive"},
      /* select: rank, index, where */
      {"orch @o(%a: tensor[8] f32) {\n  %r = tensor.select(%a, 1)\n}\n",
       "v.ptir:3:22: tensor.select: %a [8] has rank 1"},
      {"host @h(%a: tensor[4, 8] f32) {\n  %r = tensor.select(%a, 4)\n}\n",
       "v.ptir:3:26: tensor.select: index 4 is at or past the extent 4 of dim 0"},
      {"kernel @k(%a: tensor[4, 8] f32) {\n  %r = tensor.select(%a, 0)\n}\n",
       "v.ptir:3:8: tensor.select is not allowed in a kernel"},
      /* collectives */
      {"kernel @k(inout %w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) -> (dtensor[8, 8] f32, "
       "dtensor[1, 8] i32) {\n  %r = dist.allreduce(%w, %s, op=mean)\n  return %r, %s\n}\n",
       "v.ptir:3:34: dist.allreduce: op=mean: expected one of sum max min prod"},
      {"kernel @k(inout %w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) -> (dtensor[8, 8] f32, "
       "dtensor[1, 8] i32) {\n  %r = dist.allreduce(%w, %s, mode=star)\n  return %r, %s\n}\n",
       "v.ptir:3:36: dist.allreduce: mode=star: expected one of mesh ring"},
      {"kernel @k(inout %w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) -> (dtensor[8, 8] f32, "
       "dtensor[1, 8] i32) {\n  %r = dist.allreduce(%w, %s, op=\"sum\")\n  return %r, %s\n}\n",
       "v.ptir:3:34: dist.allreduce: op= takes a word"},
      {"kernel @k(inout %w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) -> (dtensor[8, 8] f32, "
       "dtensor[1, 8] i32) {\n  %r = dist.broadcast(%w, %s, 0, op=sum)\n  return %r, %s\n}\n",
       "v.ptir:3:37: dist.broadcast: unknown keyword 'op' (dist.broadcast takes no keywords)"},
      {"kernel @k(inout %w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) -> (dtensor[8, 8] f32, "
       "dtensor[1, 8] i32) {\n  %r = dist.allgather(%w, %s, 0)\n  return %r, %s\n}\n",
       "v.ptir:3:8: dist.allgather takes 2 positional arguments, got 3"},
      {"orch @o(inout %w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) {\n"
       "  %r = dist.reduce_scatter(%w, %s)\n}\n",
       "v.ptir:3:8: dist.reduce_scatter is not allowed in an orch outside an incore scope (only in "
       "a "
       "kernel)"},
      {"orch @o(inout %s: dtensor[1, 8] i32) {\n  incore {\n    dist.barrier(%s)\n  }\n}\n",
       "v.ptir:4:5: dist.barrier is not allowed in an incore scope"},
      {"kernel @k(inout %w: dtensor[8, 8] f32, inout %s: dtensor[2, 8] i32) -> (dtensor[8, 8] f32, "
       "dtensor[2, 8] i32) {\n  %r = dist.allreduce(%w, %s)\n  return %r, %s\n}\n",
       "v.ptir:3:27: dist.allreduce: the signal window %s must be an i32 dtensor [1, S] or [S, 1] "
       "(S >= the rank count), got dtensor[2, 8] i32"},
      {"kernel @k(inout %w: dtensor[8, 8] f32) -> (dtensor[8, 8] f32) {\n"
       "  %r = dist.allreduce(%w, %w)\n  return %r\n}\n",
       "v.ptir:3:27: dist.allreduce: the signal window %w must be an i32 dtensor"},
      {"kernel @k(inout %w: dtensor[1, 8] i32) -> (dtensor[1, 8] i32) {\n"
       "  %r = dist.allreduce(%w, %w)\n  return %r\n}\n",
       "v.ptir:3:27: dist.allreduce: the signal window must not be the data window"},
      {"kernel @k(inout %w: dtensor[8, 8] bool, inout %s: dtensor[1, 8] i32) -> (dtensor[8, 8] "
       "bool, "
       "dtensor[1, 8] i32) {\n  %r = dist.reduce_scatter(%w, %s)\n  return %r, %s\n}\n",
       "v.ptir:3:28: dist.reduce_scatter: %w is a bool window: reductions need numbers"},
      {"kernel @k(%w: dtensor[8, 8] f32, inout %s: dtensor[1, 8] i32) -> (dtensor[1, 8] i32) {\n"
       "  %r = dist.broadcast(%w, %s, 0)\n  return %s\n}\n",
       "v.ptir:3:8: dist.broadcast writes %w, an in parameter (declare it out or inout)"},
      {"kernel @k(inout %w: dtensor[8, 8] f32, %t: tensor[1, 8] i32) -> (dtensor[8, 8] f32) {\n"
       "  %r = dist.allgather(%w, %t)\n  return %r\n}\n",
       "v.ptir:3:27: dist.allgather: argument 2 must be a dtensor, got %t: tensor[1, 8] i32"},
      {"kernel @k(inout %s: dtensor[1, 8] i32) -> (dtensor[1, 8] i32) {\n"
       "  %r = dist.barrier(%s)\n  return %s\n}\n",
       "v.ptir:3:8: dist.barrier has no result"},
      /* notify/wait signals are i32 */
      {"kernel @k(inout %s: dtensor[8] u32) -> (dtensor[8] u32) {\n"
       "  %r = dist.notify(%s, 0, [0], 1, op=set)\n  return %r\n}\n",
       "v.ptir:3:20: dist.notify: the signal window %s must be i32, got dtensor[8] u32"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char text[2048];
    snprintf(text, sizeof text, "program bad\n%s", cases[i].body);
    pto_ir_program *p = NULL;
    pto_status s = pto_ir_parse_string(text, strlen(text), "v.ptir", &p);
    if (!s) {
      s = pto_ir_verify(p);
      pto_ir_program_destroy(p);
    }
    if (!s) {
      print_error("case %zu accepted:\n%s", i, text);
      fail();
    }
    const char *msg = pto_status_message(s);
    if (strncmp(msg, cases[i].want, strlen(cases[i].want)) != 0) {
      print_error("case %zu:\n  got:      %s\n  expected: %s...\n", i, msg, cases[i].want);
      pto_status_free(s);
      fail();
    }
    pto_status_free(s);
  }
}

/* Extent products are checked (issue #34, item 17): huge static extents whose product wraps to a
 * small number (here (2^63-1)^2 * 4 == 4, and * 16 == the source's 16 elements) are refused
 * with the overflow named, never compared wrapped (UBSan aborted; the release build wrapped). */
static void test_reshape_extent_products_do_not_overflow(void **state) {
  const char *fmt = "program r\n"
                    "orch @main(%%a: tensor[16] f32) {\n"
                    "  %%b = tensor.reshape(%%a, [9223372036854775807, 9223372036854775807, %d])\n"
                    "}\n";
  const int last[] = {4, 16};
  for (int i = 0; i < 2; i++) {
    char text[256];
    snprintf(text, sizeof text, fmt, last[i]);
    pto_ir_program *p = NULL;
    assert_status_contains(pto_ir_parse_string(text, strlen(text), "r.ptir", &p),
                           "r.ptir:3:27: tensor.reshape: the shape has more than "
                           "9223372036854775807 elements (extent 9223372036854775807 of dim 1 "
                           "overflows the count)");
    assert_null(p);
  }
  /* Counts that fit are compared as before. */
  pto_ir_program *ok = parse("program r\n"
                             "orch @main(%a: tensor[4, 4] f32) {\n"
                             "  %b = tensor.reshape(%a, [16])\n"
                             "}\n");
  pto_ir_program_destroy(ok);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape_extent_products_do_not_overflow),
      cmocka_unit_test(test_verify_catches_an_edited_value_type),
      cmocka_unit_test(test_kernel_entry_gets_an_orch_of_its_own),
      cmocka_unit_test(test_kernel_entry_refuses_comm_windows),
      cmocka_unit_test(test_verify_full_valid_region_is_the_plain_tile_type),
      cmocka_unit_test(test_verify_catches_an_edited_alias),
      cmocka_unit_test(test_verify_catches_an_edited_literal_dtype),
      cmocka_unit_test(test_verify_catches_a_moved_statement),
      cmocka_unit_test(test_verify_catches_an_op_moved_to_an_orch),
      cmocka_unit_test(test_kernel_footprint_sums_tiles_per_space),
      cmocka_unit_test(test_verify_reports_footprint_with_numbers),
      cmocka_unit_test(test_verify_allows_unshaped_tensors_on_the_entry_only),
      cmocka_unit_test(test_program_entry_follows_the_rules),
      cmocka_unit_test(test_expr_static_int_folds_index_arithmetic),
      cmocka_unit_test(test_op_registry_names_every_op),
      cmocka_unit_test(test_l3_ops_deduce_types_and_aliases),
      cmocka_unit_test(test_l3_ops_in_the_registry),
      cmocka_unit_test(test_l3_ops_misuse),
      cmocka_unit_test(test_op_registry_gives_every_tile_math_op_a_class),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
