/* The kernel plan's invariants (compiler/lower_kernel_internal.h, beside lw_stmt_plan and
 * lw_group): pto__lower_plan_check accepts what the planner makes and names the invariant a
 * hand-broken plan breaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lower_kernel_internal.h"
#include "pto/ir.h"
#include "testutil.h"

/* Two loads live together (their tiles need two buffers), an add and a store. */
static const char *k_src =
    "program add\n"
    "kernel @add_block(%a: tensor[32,128] f32, %b: tensor[32,128] f32,\n"
    "                  out %c: tensor[32,128] f32) -> (tensor[32,128] f32) {\n"
    "  %ta = tile.load(%a, [0, 0], [32, 128])\n"
    "  %tb = tile.load(%b, [0, 0], [32, 128])\n"
    "  %tc = tile.add(%ta, %tb)\n"
    "  %c1 = tile.store(%tc, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n";

/* P . V of the decode attention: V's gathered rows read by the matmul through the index tile
 * (plan_row_views), the index tile kept live to the matmul. */
static const char *k_gsrc =
    "program pv\n"
    "dynamic S\n"
    "kernel @pv(%p: tensor[1,64] f32, %v: tensor[S,128] f32, out %c: tensor[1,128] f32)\n"
    "    -> (tensor[1,128] f32) {\n"
    "  %tp = tile.load(%p, [0, 0], [1, 64], space=mat)\n"
    "  %l = tile.move(%tp, space=left)\n"
    "  %ci = tile.ci(0, [1, 64], dtype=i32)\n"
    "  %ix = tile.reshape(%ci, [64, 1])\n"
    "  %tv = tile.gather_rows(%v, %ix, [0], [64, 128])\n"
    "  %vr = tile.move(%tv, space=right)\n"
    "  %o = tile.matmul(%l, %vr)\n"
    "  %c1 = tile.store(%o, [0, 0], %c)\n"
    "  return %c1\n"
    "}\n";

typedef struct fixture {
  pto_ir_program *p;
  lw L;
} fixture;

static int setup_src(void **state, const char *src) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  assert_pto_ok(pto_ir_parse_string(src, strlen(src), "plan.ptir", &f->p));
  assert_pto_ok(pto_ir_verify(f->p));
  f->L.p = f->p;
  f->L.k = f->p->funcs[0];
  assert_pto_ok(pto__lower_plan(&f->L));
  *state = f;
  return 0;
}

static int setup(void **state) { return setup_src(state, k_src); }
static int setup_gather(void **state) { return setup_src(state, k_gsrc); }

static int teardown(void **state) {
  fixture *f = *state;
  pto__lower_plan_free(&f->L);
  pto_ir_program_destroy(f->p);
  free(f);
  return 0;
}

/* The group of the tile a statement at position pos defines. */
static int group_at(lw *L, int pos) {
  return pto__lower_group_find(L, L->group_of[L->plan[pos].s->results[0]->id]);
}

static void assert_broken(lw *L, const char *needle) {
  pto_status s = pto__lower_plan_check(L);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INTERNAL);
  const char *m = pto_status_message(s);
  char head[128];
  snprintf(head, sizeof head, "the kernel plan of @%s breaks an invariant: ", L->k->name);
  assert_non_null(strstr(m, head));
  if (!strstr(m, needle)) print_error("'%s' does not say '%s'\n", m, needle);
  assert_non_null(strstr(m, needle));
  pto_status_free(s);
}

static void test_lower_plan_check_accepts_the_planners_plan(void **state) {
  fixture *f = *state;
  assert_int_equal(f->L.npos, 5);
  assert_pto_ok(pto__lower_plan_check(&f->L));
}

static void test_lower_plan_check_catches_overlapping_live_buffers(void **state) {
  fixture *f = *state;
  int ga = group_at(&f->L, 0), gb = group_at(&f->L, 1);
  assert_true(ga >= 0 && gb >= 0 && ga != gb);
  f->L.groups[gb].offset = f->L.groups[ga].offset;
  assert_broken(&f->L, "live together over shared bytes");
}

static void test_lower_plan_check_catches_a_misaligned_buffer(void **state) {
  fixture *f = *state;
  f->L.groups[group_at(&f->L, 0)].offset += 8;
  assert_broken(&f->L, "not 64-aligned");
}

static void test_lower_plan_check_catches_a_run_past_its_block(void **state) {
  fixture *f = *state;
  f->L.plan[2].fuse_len = 4; /* the add, the store, the return and one more */
  assert_broken(&f->L, "position 2: a fused run of 4 leaves its block");
}

static void test_lower_plan_check_catches_a_view_that_is_no_load(void **state) {
  fixture *f = *state;
  f->L.plan[2].view = 1;
  assert_broken(&f->L, "position 2: a view that is not a tile.load");
}

static void test_lower_plan_check_catches_a_row_view_that_is_no_gather(void **state) {
  fixture *f = *state;
  f->L.plan[2].view = 3;
  assert_broken(&f->L, "position 2: a row view that is not a tile.gather_rows");
}

/* The planner reads P . V's gathered rows through the index tile and keeps that tile's buffer
 * until the matmul; a plan whose index tile dies at the gather is caught. */
static void test_lower_plan_check_catches_a_row_view_outliving_its_indices(void **state) {
  fixture *f = *state;
  int p = -1;
  for (int q = 0; q < f->L.npos; q++)
    if (f->L.plan[q].s->kind == PTO_STMT_OP && f->L.plan[q].s->op.opc == PTO_OP_TILE_GATHER_ROWS)
      p = q;
  assert_true(p >= 0);
  assert_int_equal(f->L.plan[p].view, 3);
  assert_pto_ok(pto__lower_plan_check(&f->L));
  const pto_ir_value *ix = f->L.plan[p].s->op.args[1].expr->value;
  int gi = pto__lower_group_find(&f->L, f->L.group_of[ix->id]);
  assert_true(gi >= 0 && f->L.groups[gi].end > p);
  f->L.groups[gi].end = p;
  char want[96];
  snprintf(want, sizeof want, "position %d: a row view whose index tile dies before it", p);
  assert_broken(&f->L, want);
}

static void test_lower_plan_check_catches_a_bad_group_index(void **state) {
  fixture *f = *state;
  f->L.plan[3].mm_pack = f->L.ngroups;
  assert_broken(&f->L, "position 3: a group index outside");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_lower_plan_check_accepts_the_planners_plan, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lower_plan_check_catches_overlapping_live_buffers, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lower_plan_check_catches_a_misaligned_buffer, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lower_plan_check_catches_a_run_past_its_block, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lower_plan_check_catches_a_view_that_is_no_load, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lower_plan_check_catches_a_bad_group_index, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_lower_plan_check_catches_a_row_view_that_is_no_gather,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(
          test_lower_plan_check_catches_a_row_view_outliving_its_indices, setup_gather, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
