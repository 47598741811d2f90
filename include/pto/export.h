/* PTO_API marks the public API: pto's libraries are built with hidden visibility, so only what
 * carries this macro leaves a shared library; internals (pto__*) never do. */
#ifndef PTO_EXPORT_H
#define PTO_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define PTO_API __attribute__((visibility("default")))
#else
#define PTO_API
#endif

/* PTO_MUST_USE marks every public function that returns a pto_status: a caller that drops one
 * (a failure unseen, a message leaked) gets a warning, an error under -Werror. A (void) cast does
 * not silence it (GCC): handle the status or pto_status_free it. CTest must_use checks that every
 * declaration carries it, and that ignoring one fails to compile. */
#if defined(__GNUC__) || defined(__clang__)
#define PTO_MUST_USE __attribute__((warn_unused_result))
#else
#define PTO_MUST_USE
#endif

#endif
