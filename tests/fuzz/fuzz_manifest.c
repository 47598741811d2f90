/* libFuzzer target: the work-dir manifest reader (JSON through jansson, then every field
 * checked). Any bytes either fail with a status or give a manifest that serializes back. */
#include <stdint.h>
#include <stdlib.h>

#include "pto/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pto_manifest m;
  pto_status s = pto_manifest_parse((const char *)data, size, "fuzz/manifest.json", &m);
  if (s) {
    pto_status_free(s);
    return 0;
  }
  char *text = NULL;
  s = pto_manifest_to_json(&m, &text);
  pto_status_free(s);
  free(text);
  pto_manifest_free(&m);
  return 0;
}
