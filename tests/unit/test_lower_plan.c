/* The kernel plan's invariants (compiler/lower_kernel_internal.h, beside lw_stmt_plan and
 * lw_group): pto__lower_plan_check accepts what the planner makes and names the invariant a
 * hand-broken plan breaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

typedef struct fixture {
  pto_ir_program *p;
  lw L;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  assert_pto_ok(pto_ir_parse_string(k_src, strlen(k_src), "plan.ptir", &f->p));
  assert_pto_ok(pto_ir_verify(f->p));
  f->L.p = f->p;
  f->L.k = f->p->funcs[0];
  assert_pto_ok(pto__lower_plan(&f->L));
  *state = f;
  return 0;
}

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
  assert_non_null(strstr(m, "the kernel plan of @add_block breaks an invariant: "));
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
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
