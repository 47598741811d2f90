/* A library that exports test hooks and a name outside the pto_ prefix, for CTest
 * exported_symbols_catches: CheckExports.cmake must fail on it, as it would on a shipped library
 * that leaked base's allocation-failure injection or a helper without the prefix. */
__attribute__((visibility("default"))) void pto_alloc_fail_at(long n, int sticky);
__attribute__((visibility("default"))) long pto_alloc_count(void);

void pto_alloc_fail_at(long n, int sticky) {
  (void)n;
  (void)sticky;
}

long pto_alloc_count(void) { return 0; }

__attribute__((visibility("default"))) int leaked_helper(void);
int leaked_helper(void) { return 1; }

/* A pto_ name docs/c-api.md does not describe (pto_worker_open is; the near miss is not). */
__attribute__((visibility("default"))) int pto_worker_openx(void);
int pto_worker_openx(void) { return 0; }
