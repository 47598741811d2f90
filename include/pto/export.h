/* PTO_API marks the public API: pto's libraries are built with hidden visibility, so only what
 * carries this macro leaves a shared library; internals (pto__*) never do. */
#ifndef PTO_EXPORT_H
#define PTO_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define PTO_API __attribute__((visibility("default")))
#else
#define PTO_API
#endif

#endif
