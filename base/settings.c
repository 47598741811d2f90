/* Settings from the environment and the command line: integers in a range, names from a list.
 * Every PTO_* setting is read through these, so a bad value is an error naming the setting and
 * what it accepts, never a silent default, a truncation or a wrap. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"

pto_status pto_parse_int_setting(const char *name, const char *text, int64_t min, int64_t max,
                                 int64_t *out) {
  /* Digits only (and a '-' where the range has negatives): strtoll alone would take blanks, a
   * '+', "0x", and stop quietly at "1e3" or "5ms". */
  const char *p = text ? text : "";
  if (*p == '-' && min < 0) p++;
  int ok = *p != '\0';
  for (const char *q = p; ok && *q; q++)
    ok = *q >= '0' && *q <= '9';
  long long v = 0;
  if (ok) {
    errno = 0;
    v = strtoll(text, NULL, 10);
    ok = errno == 0 && v >= min && v <= max;
  }
  if (ok) {
    *out = (int64_t)v;
    return PTO_OK;
  }
  return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                         "%s is '%s': expected an integer from %" PRId64 " to %" PRId64, name,
                         text ? text : "", min, max);
}

pto_status pto_env_int(const char *name, int64_t min, int64_t max, int64_t dflt, int64_t *out) {
  if (!name) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_env_int: name is NULL");
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_env_int: out is NULL");
  const char *v = getenv(name);
  if (!v || !*v) {
    *out = dflt;
    return PTO_OK;
  }
  return pto_parse_int_setting(name, v, min, max, out);
}

pto_status pto_env_choice(const char *name, const char *const *choices, int nchoices, int dflt,
                          int *out) {
  if (!name) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_env_choice: name is NULL");
  if (!out) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_env_choice: out is NULL");
  const char *v = getenv(name);
  if (!v || !*v) {
    *out = dflt;
    return PTO_OK;
  }
  for (int i = 0; i < nchoices; i++)
    if (!strcmp(v, choices[i])) {
      *out = i;
      return PTO_OK;
    }
  pto_text t = {0};
  for (int i = 0; i < nchoices; i++)
    pto_text_printf(&t, "%s%s", i ? ", " : "", choices[i]);
  char *list = pto_text_finish(&t);
  pto_status s = pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s is '%s': expected one of: %s",
                                 name, v, list ? list : "?");
  free(list);
  return s;
}
