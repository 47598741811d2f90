/* libFuzzer target: the .npy reader (tools/npy.c belongs to the pto executable, so it is
 * compiled into this target, as tests/unit/test_npy.c does). */
#include "../../tools/npy.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pto_npy_array a;
  pto_status s = pto_npy_parse(data, size, "fuzz.npy",
                               (int)(size % 3 == 0   ? PTO_DTYPE_BF16
                                     : size % 3 == 1 ? PTO_DTYPE_INDEX
                                                     : -1),
                               &a);
  if (!s) pto_npy_array_free(&a);
  pto_status_free(s);
  return 0;
}
