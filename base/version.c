/* The library version (pto/base.h), fixed by the build from the project's version. */
#include "pto/base.h"

const char *pto_version(void) { return PTO_VERSION_STRING; }
