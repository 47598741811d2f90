/* The PTIR parser: structure of what it builds, literal forms, error positions and messages, and
 * robustness (no crash, leak or stack overflow on any input). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"
#include "testutil.h"

static pto_ir_program *parse_ok(const char *text) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "t.ptir", &p);
  if (s) {
    print_error("parse failed: %s\n", pto_status_message(s));
    pto_status_free(s);
    fail();
  }
  return p;
}

/* Parse (and verify) must fail with exactly this message. */
static void expect_error(const char *text, const char *msg) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string(text, strlen(text), "t.ptir", &p);
  if (!s) {
    s = pto_ir_verify(p);
    pto_ir_program_destroy(p);
  }
  if (!s) {
    print_error("accepted; expected: %s\n", msg);
    fail();
  }
  if (strcmp(pto_status_message(s), msg) != 0) {
    print_error("expected: %s\n     got: %s\n", msg, pto_status_message(s));
    pto_status_free(s);
    fail();
  }
  pto_status_free(s);
}

static char *type_str(const pto_ir_program *p, const pto_ir_type *t) {
  return pto_ir_type_str(p, t);
}

static void assert_type(const pto_ir_program *p, const pto_ir_type *t, const char *want) {
  char *s = type_str(p, t);
  assert_non_null(s);
  assert_string_equal(s, want);
  free(s);
}

static void test_parse_add_example_structure(void **state) {
  pto_ir_program *p = NULL;
  assert_pto_ok(pto_ir_parse_file(PTO_SOURCE_DIR "/examples/add.ptir", &p));
  assert_string_equal(p->name, "add");
  assert_int_equal(p->nsyms, 2);
  assert_string_equal(p->syms[0], "M");
  assert_int_equal(p->nfuncs, 2);
  const pto_ir_func *k = p->funcs[0], *o = p->funcs[1];
  assert_int_equal(k->kind, PTO_FUNC_KERNEL);
  assert_string_equal(k->name, "add_block");
  assert_int_equal(k->nparams, 3);
  assert_int_equal(k->params[0].dir, PTO_DIR_IN);
  assert_int_equal(k->params[0].dir_written, 0);
  assert_int_equal(k->params[2].dir, PTO_DIR_OUT);
  assert_int_equal(k->nrets, 1);
  assert_int_equal(k->body.n, 5);
  const pto_ir_stmt *load = k->body.stmts[0];
  assert_int_equal(load->kind, PTO_STMT_OP);
  assert_int_equal(load->op.opc, PTO_OP_TILE_LOAD);
  assert_non_null(pto_ir_stmt_kwarg(load, "valid"));
  assert_null(pto_ir_stmt_kwarg(load, "pad"));
  assert_type(p, load->results[0]->type, "tile[32, 128] f32 @vec valid[R, 128]");
  const pto_ir_stmt *store = k->body.stmts[3];
  assert_ptr_equal(store->results[0]->alias_of, k->params[2].value);
  assert_int_equal(k->body.stmts[4]->kind, PTO_STMT_RETURN);
  /* value ids: params first, then in definition order */
  assert_int_equal(load->results[0]->id, 3);
  assert_int_equal(k->nvalues, 7);

  assert_int_equal(o->kind, PTO_FUNC_ORCH);
  const pto_ir_stmt *nblk = o->body.stmts[0];
  assert_int_equal(nblk->kind, PTO_STMT_ASSIGN);
  assert_int_equal(nblk->expr->dtype, PTO_DTYPE_INDEX);
  const pto_ir_stmt *loop = o->body.stmts[1];
  assert_int_equal(loop->kind, PTO_STMT_FOR);
  assert_null(loop->loop.step);
  assert_int_equal(loop->loop.iv->type->dtype, PTO_DTYPE_INDEX);
  const pto_ir_stmt *slice = loop->loop.body.stmts[1];
  /* M is dynamic, so the slice's row extent is the clamp, bound at launch */
  assert_type(p, slice->results[0]->type, "tensor[min(32, M - %row0), 128] f32");
  const pto_ir_stmt *call = loop->loop.body.stmts[4];
  assert_int_equal(call->kind, PTO_STMT_CALL);
  assert_ptr_equal(call->call.callee, k);
  assert_int_equal(call->nresults, 0);
  assert_pto_ok(pto_ir_verify(p));
  pto_ir_program_destroy(p);
}

static void test_parse_literal_forms(void **state) {
  pto_ir_program *p = parse_ok("program lits\n"
                               "kernel @k() {\n"
                               "  %h = 0x1F\n"
                               "  %e: f64 = 1e3\n"
                               "  %d = 2.\n"
                               "  %i = inf\n"
                               "  %n = -nan\n"
                               "  %m: i64 = -9223372036854775808\n"
                               "  %t = true\n"
                               "  %neg = -5\n"
                               "}\n");
  const pto_ir_block *b = &p->funcs[0]->body;
  assert_int_equal(b->stmts[0]->expr->i, 31);
  assert_int_equal(b->stmts[0]->expr->dtype, PTO_DTYPE_INDEX);
  assert_true(b->stmts[1]->expr->f == 1000.0);
  assert_int_equal(b->stmts[1]->expr->dtype, PTO_DTYPE_F64);
  assert_true(b->stmts[2]->expr->f == 2.0);
  assert_int_equal(b->stmts[2]->expr->dtype, PTO_DTYPE_F32);
  assert_true(isinf(b->stmts[3]->expr->f));
  assert_true(isnan(b->stmts[4]->expr->f));
  assert_true(b->stmts[5]->expr->i == INT64_MIN);
  assert_int_equal(b->stmts[6]->expr->kind, PTO_EXPR_BOOL);
  /* a negated literal is one literal node */
  assert_int_equal(b->stmts[7]->expr->kind, PTO_EXPR_INT);
  assert_int_equal(b->stmts[7]->expr->i, -5);
  pto_ir_program_destroy(p);
}

static void test_parse_string_escapes(void **state) {
  pto_ir_program *p =
      parse_ok("program s\norch @o() {\n  incore \"a\\\"b\\\\c\\nd\\te\" {\n  }\n}\n");
  assert_string_equal(p->funcs[0]->body.stmts[0]->incore.name, "a\"b\\c\nd\te");
  char *text = NULL;
  assert_pto_ok(pto_ir_print(p, &text));
  assert_non_null(strstr(text, "incore \"a\\\"b\\\\c\\nd\\te\" {"));
  free(text);
  pto_ir_program_destroy(p);
}

static void test_parse_calls_may_precede_their_callee(void **state) {
  pto_ir_program *p = parse_ok("program fwd\n"
                               "orch @main(%x: tensor[8] f32) {\n  call @later(%x)\n}\n"
                               "kernel @later(%a: tensor[8] f32) {\n}\n");
  assert_ptr_equal(p->funcs[0]->body.stmts[0]->call.callee, p->funcs[1]);
  pto_ir_program_destroy(p);
}

static void test_parse_contextual_keywords_are_names(void **state) {
  pto_ir_program *p =
      parse_ok("program kw\ndynamic rows\n"
               "kernel @if(%for: tensor[rows, 8] f32, %valid: index) {\n"
               "  %in = tile.load(%for, [0, 0], [8, 8], valid=[%valid, 8], pad=min, space=mat)\n"
               "}\n");
  const pto_ir_stmt *s = p->funcs[0]->body.stmts[0];
  const pto_ir_arg *pad = pto_ir_stmt_kwarg(s, "pad");
  assert_non_null(pad);
  assert_int_equal(pad->kind, PTO_ARG_WORD);
  assert_string_equal(pad->str, "min");
  /* keywords are stored in the op's canonical order: space valid pad */
  assert_string_equal(s->op.args[3].kw, "space");
  assert_string_equal(s->op.args[4].kw, "valid");
  assert_string_equal(s->op.args[5].kw, "pad");
  assert_int_equal(s->results[0]->type->space, PTO_SPACE_MAT);
  pto_ir_program_destroy(p);
}

static void test_parse_file_reports_a_missing_file_as_not_found(void **state) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_file("/nonexistent/x.ptir", &p);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  assert_status_contains(s, "cannot open /nonexistent/x.ptir: No such file or directory");
  assert_null(p);
}

static void test_parse_rejects_unterminated_string(void **state) {
  expect_error("program s\norch @o() {\n  incore \"abc\n  {}\n}\n",
               "t.ptir:3:10: unterminated string (a string ends on its line)");
}

static void test_parse_rejects_empty_input(void **state) {
  expect_error(
      "", "t.ptir:1:1: expected 'program' (a file starts with: program NAME), found end of file");
}

static void test_parse_errors_name_expected_and_found(void **state) {
  expect_error("program e\nkernel @k( {\n}\n",
               "t.ptir:2:12: expected a value name (a parameter like %x: f32), found '{'");
  expect_error("program e\nkernel @k() {\n  %x = (1 + 2\n}\n",
               "t.ptir:4:1: expected ')' to close the '(', found '}'");
  expect_error("program e\nkernel @k() {\n  %x = 1 +\n}\n",
               "t.ptir:4:1: expected an expression, found '}'");
  expect_error("program e\nfunction @k() {\n}\n",
               "t.ptir:2:1: expected 'dynamic', 'kernel', 'orch' or 'host', found 'function'");
  expect_error("program e\nkernel @k(%a: tensor[8] f33) {\n}\n",
               "t.ptir:2:25: expected a dtype (bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 "
               "index), found 'f33'");
}

static void test_parse_rejects_control_bytes(void **state) {
  const char text[] = "program z\nkernel @k() {\n  %x = 1\x01\n}\n";
  expect_error(text, "t.ptir:3:9: unexpected character (byte 0x01)");
  pto_ir_program *p = NULL;
  const char nul[] = "program z\0kernel";
  pto_status s = pto_ir_parse_string(nul, sizeof nul - 1, "t.ptir", &p);
  assert_status_contains(s, "t.ptir:1:10: unexpected character (byte 0x00)");
}

static void test_parse_accepts_crlf_and_tabs(void **state) {
  pto_ir_program *p = parse_ok("program w\r\nkernel @k()\t{\r\n\t%x = 1\r\n}\r\n");
  assert_int_equal(p->funcs[0]->body.stmts[0]->loc.line, 3);
  assert_int_equal(p->funcs[0]->body.stmts[0]->loc.col, 2);
  pto_ir_program_destroy(p);
}

/* Nesting is bounded, so no input overflows the stack. */
static void test_parse_bounds_nesting_depth(void **state) {
  size_t n = 100000;
  char *text = malloc(n * 2 + 64);
  strcpy(text, "program d\nkernel @k() {\n  %x = ");
  size_t o = strlen(text);
  for (size_t i = 0; i < n; i++)
    text[o++] = '(';
  text[o++] = '1';
  for (size_t i = 0; i < n; i++)
    text[o++] = ')';
  strcpy(text + o, "\n}\n");
  pto_ir_program *p = NULL;
  assert_status_contains(pto_ir_parse_string(text, strlen(text), "t.ptir", &p),
                         "nested too deeply");
  strcpy(text, "program d\nkernel @k(%b: bool) {\n");
  o = strlen(text);
  for (size_t i = 0; i < 20000; i++)
    o += (size_t)sprintf(text + o, "if %%b {");
  strcpy(text + o, "\n");
  assert_status_contains(pto_ir_parse_string(text, strlen(text), "t.ptir", &p),
                         "nested too deeply");
  o = strlen("program d\nkernel @k() {\n  %x = ");
  strcpy(text, "program d\nkernel @k() {\n  %x = ");
  for (size_t i = 0; i < n; i++)
    text[o++] = '-';
  strcpy(text + o, "1\n}\n");
  assert_status_contains(pto_ir_parse_string(text, strlen(text), "t.ptir", &p),
                         "nested too deeply");
  free(text);
}

/* Every prefix of a valid program parses or fails cleanly (ASan builds check for leaks). */
static void test_parse_survives_every_truncation(void **state) {
  size_t len = 0;
  char *text = tu_read_file(PTO_SOURCE_DIR "/tests/corpus/good/control.ptir", &len);
  assert_non_null(text);
  for (size_t n = 0; n <= len; n++) {
    char *copy = malloc(n + 1);
    memcpy(copy, text, n);
    copy[n] = 0;
    pto_ir_program *p = NULL;
    pto_status s = pto_ir_parse_string(copy, n, "t.ptir", &p);
    if (!s) s = pto_ir_verify(p);
    if (s) assert_non_null(strstr(pto_status_message(s), "t.ptir:"));
    pto_status_free(s);
    pto_ir_program_destroy(p);
    free(copy);
  }
  free(text);
}

/* Random byte edits of valid programs never crash the front end. */
static void test_parse_survives_random_mutations(void **state) {
  static const char *files[] = {"tile_ops", "control", "orch", "dist", "names"};
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  static const char alphabet[] = "%@()[]{},:=<>!&|+-*/.#\"\\0123456789xeinfa_ \n";
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/corpus/good/%s.ptir", PTO_SOURCE_DIR, files[f]);
    size_t len = 0;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    for (int iter = 0; iter < 300; iter++) {
      char *copy = malloc(len + 1);
      memcpy(copy, text, len + 1);
      int edits = 1 + iter % 4;
      for (int e = 0; e < edits; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t at = (size_t)(seed >> 33) % len;
        copy[at] = alphabet[(seed >> 13) % (sizeof alphabet - 1)];
      }
      pto_ir_program *p = NULL;
      pto_status s = pto_ir_parse_string(copy, len, "m.ptir", &p);
      if (!s) {
        s = pto_ir_verify(p);
        char *out = NULL;
        if (!s) {
          /* whatever parses and verifies also prints to a fixed point */
          assert_pto_ok(pto_ir_print(p, &out));
          pto_ir_program *p2 = NULL;
          assert_pto_ok(pto_ir_parse_string(out, strlen(out), "m.ptir", &p2));
          char *out2 = NULL;
          assert_pto_ok(pto_ir_print(p2, &out2));
          assert_string_equal(out, out2);
          free(out2);
          pto_ir_program_destroy(p2);
          /* and formats, comments included, to a fixed point that loses none of them */
          char *fmt = NULL, *fmt2 = NULL;
          assert_pto_ok(pto_ir_format(p, &fmt));
          assert_pto_ok(pto_ir_parse_string(fmt, strlen(fmt), "m.ptir", &p2));
          assert_int_equal(p2->notes.ncomments, p->notes.ncomments);
          for (int i = 0; i < p->notes.ncomments; i++)
            assert_string_equal(p2->notes.comments[i].text, p->notes.comments[i].text);
          assert_pto_ok(pto_ir_format(p2, &fmt2));
          assert_string_equal(fmt, fmt2);
          free(fmt2);
          free(fmt);
          pto_ir_program_destroy(p2);
        }
        free(out);
      }
      pto_status_free(s);
      pto_ir_program_destroy(p);
      free(copy);
    }
    free(text);
  }
}

static void test_print_floats_round_trip_exactly(void **state) {
  static const double vals[] = {0.1,         1e-300, 5e-324, 1.7976931348623157e308, -0.0, 3.0,
                                123456789.0, 1e16,   2.5e-7};
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
    char text[256];
    snprintf(text, sizeof text, "program f\nkernel @k() {\n  %%x: f64 = %.17e\n}\n", vals[i]);
    pto_ir_program *p = parse_ok(text);
    char *out = NULL;
    assert_pto_ok(pto_ir_print(p, &out));
    pto_ir_program *p2 = parse_ok(out);
    double a = p->funcs[0]->body.stmts[0]->expr->f, b = p2->funcs[0]->body.stmts[0]->expr->f;
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(a == vals[i] && signbit(a) == signbit(vals[i]));
    free(out);
    pto_ir_program_destroy(p);
    pto_ir_program_destroy(p2);
  }
  pto_ir_program *p =
      parse_ok("program f\nkernel @k() {\n  %a = 0.1\n  %b: f64 = 3.0\n  %c = 1e+20 * 2.5\n}\n");
  char *out = NULL;
  assert_pto_ok(pto_ir_print(p, &out));
  assert_string_equal(
      out, "program f\n\nkernel @k() {\n  %a = 0.1\n  %b: f64 = 3.0\n  %c = 1e+20 * 2.5\n}\n");
  free(out);
  pto_ir_program_destroy(p);
}

/* 1. followed by 140 zeros and e-30 is 1e-30: a lexer that cut the literal at 127 characters
 * read 1.0 instead. */
static void test_parse_reads_a_long_float_literal_whole(void **state) {
  char lit[200], text[300];
  int n = snprintf(lit, sizeof lit, "1.");
  for (int i = 0; i < 140; i++)
    lit[n++] = '0';
  snprintf(lit + n, sizeof lit - (size_t)n, "e-30");
  snprintf(text, sizeof text, "program f\nkernel @k() {\n  %%x: f64 = %s\n}\n", lit);
  pto_ir_program *p = parse_ok(text);
  assert_true(p->funcs[0]->body.stmts[0]->expr->f == 1e-30);
  pto_ir_program_destroy(p);
}

static void test_print_uses_minimal_parentheses(void **state) {
  pto_ir_program *p = parse_ok("program e\ndynamic M\nkernel @k(%a: index, %b: index, %f: bool) {\n"
                               "  %x = ((%a + %b) * (%a - %b)) - ((%a / %b) - %a) + (-(%a))\n"
                               "  %y = (%a + %b) + %a - (%b - %a)\n"
                               "  %z = ((%a < %b) == (%f || %f && !(%f))) && ((%f))\n"
                               "  %w = mod((%a), M) + min(%a, (M)) * index(i32(%a))\n"
                               "}\n");
  char *out = NULL;
  assert_pto_ok(pto_ir_print(p, &out));
  assert_string_equal(out, "program e\ndynamic M\n\nkernel @k(%a: index, %b: index, %f: bool) {\n"
                           "  %x = (%a + %b) * (%a - %b) - (%a / %b - %a) + -%a\n"
                           "  %y = %a + %b + %a - (%b - %a)\n"
                           "  %z = (%a < %b) == (%f || %f && !%f) && %f\n"
                           "  %w = mod(%a, M) + min(%a, M) * index(i32(%a))\n"
                           "}\n");
  free(out);
  pto_ir_program_destroy(p);
}

/* The parser keeps each comment with its line, whether code precedes it and whether a blank line
 * is above it; '\r' and trailing blanks are not part of it. */
static void test_parse_keeps_comment_notes(void **state) {
  pto_ir_program *p = parse_ok("# top\r\nprogram c  # eol \r\n\n# above\nkernel @k() {\n}\n");
  const pto_ir_source_notes *n = &p->notes;
  assert_int_equal(n->ncomments, 3);
  assert_string_equal(n->comments[0].text, "# top");
  assert_int_equal(n->comments[0].line, 1);
  assert_false(n->comments[0].eol);
  assert_false(n->comments[0].blank_before);
  assert_string_equal(n->comments[1].text, "# eol");
  assert_true(n->comments[1].eol);
  assert_string_equal(n->comments[2].text, "# above");
  assert_int_equal(n->comments[2].line, 4);
  assert_true(n->comments[2].blank_before);
  assert_int_equal(n->program_line, 2);
  assert_int_equal(n->nclose, 1);
  assert_int_equal(n->close_lines[0], 6);
  pto_ir_program_destroy(p);
}

/* pto_ir_format puts every comment back where it was; pto_ir_print prints none. */
static void test_format_puts_comments_back(void **state) {
  pto_ir_program *p = parse_ok("program c # p\n"
                               "orch @main(%n: index) {  # header\n"
                               "  for %i in range(0,\n"
                               "      %n) {  # for\n"
                               "    # inside\n"
                               "    if %i == 0 {\n"
                               "      # then only\n"
                               "    }\n"
                               "    # before else\n"
                               "    else {\n"
                               "\n"
                               "      # after a blank, first in else\n"
                               "      %x = %i    # x\n"
                               "\n"
                               "      # end of else\n"
                               "    } # closes else\n"
                               "  }\n"
                               "  return\n"
                               "}\n"
                               "# after\n");
  char *out = NULL;
  assert_pto_ok(pto_ir_format(p, &out));
  assert_string_equal(out, "program c  # p\n"
                           "\n"
                           "orch @main(%n: index) {  # header\n"
                           "  for %i in range(0, %n) {\n"
                           "    # for\n"
                           "    # inside\n"
                           "    if %i == 0 {\n"
                           "      # then only\n"
                           "    } else {\n"
                           "      # before else\n"
                           "\n"
                           "      # after a blank, first in else\n"
                           "      %x = %i  # x\n"
                           "\n"
                           "      # end of else\n"
                           "    }  # closes else\n"
                           "  }\n"
                           "  return\n"
                           "}\n"
                           "# after\n");
  free(out);
  assert_pto_ok(pto_ir_print(p, &out));
  assert_null(strchr(out, '#'));
  free(out);
  pto_ir_program_destroy(p);
  /* A header set off from 'program' by a blank line stays set off; none is added at the end. */
  p = parse_ok("# header\n\nprogram c\nkernel @k() {\n  # last\n\n}\n# end\n\n\n");
  assert_true(p->notes.comments[0].blank_after);
  assert_pto_ok(pto_ir_format(p, &out));
  assert_string_equal(out, "# header\n\nprogram c\n\nkernel @k() {\n  # last\n\n}\n# end\n");
  free(out);
  pto_ir_program_destroy(p);
  /* Without comments the two are the same text. */
  p = parse_ok("program c\nkernel @k() {\n  if true {\n  } else {\n  }\n}\n");
  char *fmt = NULL;
  assert_pto_ok(pto_ir_format(p, &fmt));
  assert_pto_ok(pto_ir_print(p, &out));
  assert_string_equal(fmt, out);
  free(fmt);
  free(out);
  pto_ir_program_destroy(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_add_example_structure),
      cmocka_unit_test(test_parse_literal_forms),
      cmocka_unit_test(test_parse_string_escapes),
      cmocka_unit_test(test_parse_calls_may_precede_their_callee),
      cmocka_unit_test(test_parse_contextual_keywords_are_names),
      cmocka_unit_test(test_parse_file_reports_a_missing_file_as_not_found),
      cmocka_unit_test(test_parse_rejects_unterminated_string),
      cmocka_unit_test(test_parse_rejects_empty_input),
      cmocka_unit_test(test_parse_errors_name_expected_and_found),
      cmocka_unit_test(test_parse_rejects_control_bytes),
      cmocka_unit_test(test_parse_accepts_crlf_and_tabs),
      cmocka_unit_test(test_parse_bounds_nesting_depth),
      cmocka_unit_test(test_parse_survives_every_truncation),
      cmocka_unit_test(test_parse_survives_random_mutations),
      cmocka_unit_test(test_print_floats_round_trip_exactly),
      cmocka_unit_test(test_parse_reads_a_long_float_literal_whole),
      cmocka_unit_test(test_print_uses_minimal_parentheses),
      cmocka_unit_test(test_parse_keeps_comment_notes),
      cmocka_unit_test(test_format_puts_comments_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
