/* A fixture for the layering check (never compiled): the runtime reaching into the compiler's
 * folder and up to the compiler's public header. The `layering_catches` test expects both to be
 * reported. */
#include "../compiler/sbuf.h"
#include "pto/compiler.h"
