/* The verifier and the program queries: programs edited through the C API are re-checked, the
 * kernel footprint is reported with its numbers, the entry is chosen as PTIR.md says. */
#include <stdlib.h>
#include <string.h>

#include "pto/arena.h"
#include "pto/ir.h"
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
  p = parse("program k\nkernel @a() {\n}\n");
  assert_status_contains(pto_ir_program_entry(p, NULL, &f),
                         "the program has no host or orch function to run");
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
 * those but cast and matmul a scalar function: the builder, interpreter and lowering dispatch on
 * them, so a row without one would be typed or run as nothing. */
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
    if (info->cls != PTO_OPC_CAST && info->cls != PTO_OPC_MATMUL)
      assert_int_not_equal(info->fn, PTO_FN_NONE);
    if (info->float_only) assert_int_equal(info->cls, PTO_OPC_UNARY);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_verify_catches_an_edited_value_type),
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
      cmocka_unit_test(test_op_registry_gives_every_tile_math_op_a_class),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
