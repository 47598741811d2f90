/* libFuzzer target: the [STRACE] v=1 log parser behind pto trace. */
#include <stdint.h>

#include "pto/bench.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pto_bench_stats *st = NULL;
  pto_status s = pto_trace_parse((const char *)data, size, NULL, &st);
  pto_status_free(s);
  pto_bench_stats_destroy(st);
  return 0;
}
