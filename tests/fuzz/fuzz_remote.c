/* libFuzzer target: a remote cache entry as fetched (pto-remote-entry/1: the framing, the file
 * records, the signature line, then every manifest and the hashes of the files it lists), with no
 * signing key set, as a farm without PTO_REMOTE_CACHE_KEY runs. Any bytes give a status or an
 * object that passed every check; nothing is written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "remote_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  unsetenv("PTO_REMOTE_CACHE_KEY");
  unsetenv("PTO_REMOTE_CACHE_KEY_FILE");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pto_status s = pto__loader_remote_check_object(data, size, "0123456789abcdef0123456789abcdef");
  /* FUZZ_REMOTE_SAY=1: what each input gives (to check that a seed passes every check). */
  if (getenv("FUZZ_REMOTE_SAY"))
    fprintf(stderr, "fuzz_remote: %s\n", s ? pto_status_message(s) : "OK");
  pto_status_free(s);
  return 0;
}
