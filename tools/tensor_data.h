/* Host memory for tensor data in the pto command (tensor_data.c). */
#ifndef PTO_TOOLS_TENSOR_DATA_H
#define PTO_TOOLS_TENSOR_DATA_H

#include <stddef.h>

/* Zeroed memory for nbytes of tensor data (a large tensor from a region with huge pages, faulted
 * in at once), or NULL; freed with cli_tensor_data_free (which takes NULL). Not thread-safe: the
 * command's main thread only. */
void *cli_tensor_data_alloc(size_t nbytes);
void cli_tensor_data_free(void *p);

#endif
