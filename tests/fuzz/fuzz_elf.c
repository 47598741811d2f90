/* libFuzzer target: the ELF Build-ID / hid reader on an image in memory. */
#include <stdint.h>

#include "loader_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t id[64];
  size_t len = 0;
  uint64_t hid = 0;
  pto_status s = pto__loader_build_id_mem("fuzz.so", data, size, id, &len);
  pto_status_free(s);
  s = pto__loader_hid_mem("fuzz.so", data, size, &hid);
  pto_status_free(s);
  return 0;
}
