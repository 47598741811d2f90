/* libFuzzer target: the PTIR parser, verifier and printer. Any text either fails with a status
 * or parses; a program that parses and verifies prints, and its printed text parses, verifies
 * and prints to the same bytes (docs/language.md: print(parse(print(p))) == print(p)). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pto/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pto_ir_program *p = NULL;
  pto_status s = pto_ir_parse_string((const char *)data, size, "fuzz.ptir", &p);
  if (s) {
    if (!pto_status_message(s)) abort();
    pto_status_free(s);
    return 0;
  }
  char *t1 = NULL, *t2 = NULL;
  pto_ir_program *q = NULL;
  s = pto_ir_verify(p);
  if (!s) s = pto_ir_print(p, &t1);
  if (!s) {
    pto_status r = pto_ir_parse_string(t1, strlen(t1), "printed.ptir", &q);
    if (r) {
      fprintf(stderr, "printed text does not parse: %s\n%s\n", pto_status_message(r), t1);
      abort();
    }
    r = pto_ir_verify(q);
    if (!r) r = pto_ir_print(q, &t2);
    if (r) {
      fprintf(stderr, "printed text does not verify: %s\n%s\n", pto_status_message(r), t1);
      abort();
    }
    if (strcmp(t1, t2) != 0) {
      fprintf(stderr, "print is not a fixed point:\n--- first\n%s\n--- second\n%s\n", t1, t2);
      abort();
    }
  }
  pto_status_free(s);
  free(t1);
  free(t2);
  pto_ir_program_destroy(q);
  pto_ir_program_destroy(p);
  return 0;
}
