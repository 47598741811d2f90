/* ELF Build-ID and hid: the hid test vector, agreement with readelf -n on objects
 * the test links itself, the FNV-1a fallback, and refusal of non-ELF, truncated and corrupted
 * files without reading past them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loader_internal.h"
#include "pto/loader.h"
#include "testutil.h"

static const uint8_t k_vector_id[20] = {0xac, 0x6a, 0x37, 0x68, 0x91, 0x80, 0x2e, 0x4a, 0xa4, 0x7c,
                                        0x89, 0xa0, 0x76, 0xb5, 0xe4, 0xb4, 0x8a, 0x46, 0x1a, 0x47};

typedef struct fixture {
  char *dir;
  char with_note[512];    /* linked with --build-id=sha1 */
  char without_note[512]; /* linked with --build-id=none */
} fixture;

static int write_bytes(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, n, f);
  return (fclose(f) == 0 && w == n) ? 0 : -1;
}

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  fx->dir = tu_mkdtemp("buildid");
  assert_non_null(fx->dir);
  char src[512];
  snprintf(src, sizeof src, "%s/lib.c", fx->dir);
  assert_int_equal(tu_write_file(src, "int pto_test_value(void) { return 42; }\n"), 0);
  snprintf(fx->with_note, sizeof fx->with_note, "%s/with.so", fx->dir);
  snprintf(fx->without_note, sizeof fx->without_note, "%s/without.so", fx->dir);
  char *out = NULL;
  int rc = tu_run(&out,
                  "cc -shared -fPIC -Wl,--build-id=sha1 -o '%s' '%s' && "
                  "cc -shared -fPIC -Wl,--build-id=none -o '%s' '%s'",
                  fx->with_note, src, fx->without_note, src);
  if (rc != 0) print_error("%s\n", out);
  free(out);
  assert_int_equal(rc, 0);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  tu_rmtree(fx->dir);
  free(fx->dir);
  free(fx);
  return 0;
}

static void test_hid_of_the_architecture_vector(void **state) {
  uint64_t hid = pto_hid_from_build_id(k_vector_id, sizeof k_vector_id);
  assert_true(hid == 0x4a2e809168376aacull);
  char buf[17];
  pto_hid_format(hid, buf);
  assert_string_equal(buf, "4a2e809168376aac");
}

static void test_hid_format_is_lowercase_without_padding(void **state) {
  char buf[17];
  pto_hid_format(0, buf);
  assert_string_equal(buf, "0");
  pto_hid_format(0xabcull, buf);
  assert_string_equal(buf, "abc");
  pto_hid_format(UINT64_MAX, buf);
  assert_string_equal(buf, "ffffffffffffffff");
  /* A short Build-ID uses the bytes it has. */
  assert_true(pto_hid_from_build_id(k_vector_id, 2) == 0x6aacull);
}

static void test_fnv1a64_known_values(void **state) {
  assert_true(pto_hash_fnv1a64((const uint8_t *)"", 0) == 0xcbf29ce484222325ull);
  assert_true(pto_hash_fnv1a64((const uint8_t *)"a", 1) == 0xaf63dc4c8601ec8cull);
  assert_true(pto_hash_fnv1a64((const uint8_t *)"foobar", 6) == 0x85944171f73967e8ull);
}

/* The Build-ID readelf -n prints for path, as hex (malloc'd), or NULL. */
static char *readelf_build_id(const char *path) {
  char *out = NULL;
  int rc = tu_run(&out, "readelf -n '%s'", path);
  char *r = NULL;
  const char *p = rc == 0 && out ? strstr(out, "Build ID: ") : NULL;
  if (p) {
    p += strlen("Build ID: ");
    size_t n = strspn(p, "0123456789abcdef");
    r = strndup(p, n);
  }
  free(out);
  return r;
}

static void test_build_id_matches_readelf(void **state) {
  fixture *fx = *state;
  uint8_t id[64];
  size_t len = 0;
  assert_pto_ok(pto_elf_build_id(fx->with_note, id, &len));
  assert_int_equal(len, 20); /* sha1 */
  char hex[129];
  pto_hash_hex(id, len, hex);
  char *want = readelf_build_id(fx->with_note);
  assert_non_null(want);
  assert_string_equal(hex, want);
  free(want);
  uint64_t hid = 0;
  assert_pto_ok(pto_elf_hid(fx->with_note, &hid));
  assert_true(hid == pto_hid_from_build_id(id, len));
  uint64_t le = 0;
  for (int i = 7; i >= 0; i--)
    le = le << 8 | id[i];
  assert_true(hid == le);
}

static uint64_t reference_fnv(const uint8_t *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void test_elf_without_note_falls_back_to_fnv(void **state) {
  fixture *fx = *state;
  char *re = readelf_build_id(fx->without_note);
  assert_null(re); /* the fixture really has no note */
  uint8_t id[64];
  size_t len = 99;
  pto_status s = pto_elf_build_id(fx->without_note, id, &len);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  assert_int_equal(len, 0);
  assert_status_contains(s, "no GNU Build-ID note");
  size_t n = 0;
  char *bytes = tu_read_file(fx->without_note, &n);
  assert_non_null(bytes);
  uint64_t hid = 0;
  assert_pto_ok(pto_elf_hid(fx->without_note, &hid));
  assert_true(hid == reference_fnv((const uint8_t *)bytes, n));
  free(bytes);
}

static void test_non_elf_file_is_refused(void **state) {
  fixture *fx = *state;
  char path[600];
  snprintf(path, sizeof path, "%s/text.so", fx->dir);
  assert_int_equal(
      tu_write_file(path, "this is not an ELF file, just some text that is long enough\n"), 0);
  uint64_t hid = 0;
  pto_status s = pto_elf_hid(path, &hid);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_INVALID_ARGUMENT);
  assert_status_contains(s, "not an ELF file");
  assert_int_equal(tu_write_file(path, ""), 0);
  assert_status_contains(pto_elf_hid(path, &hid), "not an ELF file");
  snprintf(path, sizeof path, "%s/missing.so", fx->dir);
  s = pto_elf_hid(path, &hid);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_NOT_FOUND);
  assert_status_contains(s, "missing.so");
  /* A directory is not a file. */
  assert_status_contains(pto_elf_hid(fx->dir, &hid), "is a directory: only regular files are read");
}

static void test_truncated_elf_is_refused_at_every_length(void **state) {
  fixture *fx = *state;
  size_t n = 0;
  char *bytes = tu_read_file(fx->with_note, &n);
  assert_non_null(bytes);
  assert_true(n > 1000);
  for (size_t cut = 0; cut < n; cut += (cut < 128 ? 1 : 61)) {
    uint8_t id[64];
    size_t len = 0;
    pto_status s = pto__loader_build_id_mem("cut.so", (const uint8_t *)bytes, cut, id, &len);
    if (!s) {
      print_error("truncated at %zu of %zu bytes, yet accepted\n", cut, n);
      fail();
    }
    assert_int_not_equal(pto_status_code_of(s), PTO_STATUS_OK);
    pto_status_free(s);
    uint64_t hid;
    s = pto__loader_hid_mem("cut.so", (const uint8_t *)bytes, cut, &hid);
    assert_non_null(s);
    pto_status_free(s);
  }
  /* Through the file API too, with a message naming the file and the problem. */
  char path[600];
  snprintf(path, sizeof path, "%s/trunc.so", fx->dir);
  assert_int_equal(write_bytes(path, bytes, n / 2), 0);
  uint64_t hid;
  pto_status s = pto_elf_hid(path, &hid);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_DATA_LOSS);
  assert_status_contains(s, "trunc.so: malformed ELF file");
  free(bytes);
}

/* Offset of the GNU Build-ID note header in an ELF image, found by its "GNU\0" name and id. */
static size_t find_note(const uint8_t *b, size_t n, const uint8_t *id, size_t idlen) {
  for (size_t i = 12; i + 4 + idlen <= n; i++)
    if (memcmp(b + i, "GNU\0", 4) == 0 && memcmp(b + i + 4, id, idlen) == 0) return i - 12;
  return 0;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); } /* the fixture is little-endian */

static void test_corrupt_note_and_headers_are_refused(void **state) {
  fixture *fx = *state;
  uint8_t id[64];
  size_t idlen = 0, n = 0;
  assert_pto_ok(pto_elf_build_id(fx->with_note, id, &idlen));
  uint8_t *orig = (uint8_t *)tu_read_file(fx->with_note, &n);
  uint8_t *b = malloc(n);
  size_t note = find_note(orig, n, id, idlen);
  assert_true(note > 0);
  uint8_t got[64];
  size_t glen;

  /* descsz far past the section */
  memcpy(b, orig, n);
  put32(b + note + 4, 0x7fffffff);
  pto_status s = pto__loader_build_id_mem("x.so", b, n, got, &glen);
  assert_int_equal(pto_status_code_of(s), PTO_STATUS_DATA_LOSS);
  assert_status_contains(s, "runs past");
  /* namesz past the section */
  memcpy(b, orig, n);
  put32(b + note, 0xfffffff0u);
  assert_status_contains(pto__loader_build_id_mem("x.so", b, n, got, &glen), "runs past");
  /* an empty Build-ID */
  memcpy(b, orig, n);
  put32(b + note + 4, 0);
  assert_status_contains(pto__loader_build_id_mem("x.so", b, n, got, &glen), "has 0 bytes");
  /* e_shoff past the end (Elf64_Ehdr.e_shoff at 0x28) */
  memcpy(b, orig, n);
  uint64_t far = (uint64_t)n + 12345;
  memcpy(b + 0x28, &far, 8);
  assert_status_contains(pto__loader_build_id_mem("x.so", b, n, got, &glen),
                         "section header table");
  /* a huge section count (e_shnum at 0x3c) */
  memcpy(b, orig, n);
  uint16_t many = 0xfff0;
  memcpy(b + 0x3c, &many, 2);
  assert_status_contains(pto__loader_build_id_mem("x.so", b, n, got, &glen),
                         "section header table");
  /* a bad section entry size (e_shentsize at 0x3a) */
  memcpy(b, orig, n);
  uint16_t ent = 7;
  memcpy(b + 0x3a, &ent, 2);
  assert_status_contains(pto__loader_build_id_mem("x.so", b, n, got, &glen), "section header size");
  /* unknown class */
  memcpy(b, orig, n);
  b[4] = 9;
  assert_status_contains(pto__loader_build_id_mem("x.so", b, n, got, &glen), "unknown ELF class");

  /* Without section headers the note segment still gives the Build-ID. */
  memcpy(b, orig, n);
  memset(b + 0x28, 0, 8); /* e_shoff */
  memset(b + 0x3c, 0, 4); /* e_shnum, e_shstrndx */
  assert_pto_ok(pto__loader_build_id_mem("x.so", b, n, got, &glen));
  assert_int_equal(glen, idlen);
  assert_memory_equal(got, id, idlen);

  /* Random byte flips in the headers and tables never crash (ASan checks the reads). */
  srand(1234);
  for (int it = 0; it < 2000; it++) {
    memcpy(b, orig, n);
    for (int k = 0; k < 4; k++) {
      size_t at = (it & 1) ? (size_t)rand() % 128 : (size_t)rand() % n;
      b[at] = (uint8_t)rand();
    }
    if (it % 3 == 0) b[note + 4 + (size_t)(rand() % 4)] = (uint8_t)rand();
    s = pto__loader_build_id_mem("x.so", b, n, got, &glen);
    if (s)
      pto_status_free(s);
    else
      assert_true(glen >= 1 && glen <= 64);
  }
  free(b);
  free(orig);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hid_of_the_architecture_vector),
      cmocka_unit_test(test_hid_format_is_lowercase_without_padding),
      cmocka_unit_test(test_fnv1a64_known_values),
      cmocka_unit_test(test_build_id_matches_readelf),
      cmocka_unit_test(test_elf_without_note_falls_back_to_fnv),
      cmocka_unit_test(test_non_elf_file_is_refused),
      cmocka_unit_test(test_truncated_elf_is_refused_at_every_length),
      cmocka_unit_test(test_corrupt_note_and_headers_are_refused),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
