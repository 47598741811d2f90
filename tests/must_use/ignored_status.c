/* CTest must_use_compile: a caller that drops a pto_status must not compile under -Werror
 * (PTO_MUST_USE on every public function returning one, pto/export.h). */
#include "pto/base.h"

void drop_a_status(void);
void drop_a_status(void) { pto_file_mkdirs("must-use-never-created", 0755); }
