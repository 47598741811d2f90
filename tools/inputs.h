/* Program inputs shared by pto run and pto bench: the command-line options that name a program
 * and feed its entry (--dim, --in, --out, compile options), and the host data bound to every
 * entry parameter from them. Messages name the option, as docs/cli.md asks. */
#ifndef PTO_TOOLS_INPUTS_H
#define PTO_TOOLS_INPUTS_H

#include <stddef.h>

#include "cli.h"
#include "pto/runtime.h"
#include "tensor_data.h"

/* --devices N (ids 0..N-1) or --devices ID,ID,... (docs/cli.md): parses text into out (up to
 * PTO_MAX_DEVICES ids: distinct, >= 0; N >= 1) and returns the count, or -1 with a message in
 * err ("--devices 2,2: device id 2 appears twice"). Shared by compile, run and bench. */
int cli_parse_devices(const char *text, int32_t out[PTO_MAX_DEVICES], char *err, size_t errlen);

/* The value of a dynamic dim that neither --dim nor a .npy input binds (a note says so). */
#define CLI_DEFAULT_DIM 128

/* The memory that holds a run's tensors on the workers pto run and pto bench open: the default
 * device memory of an L2 worker (pto_run_config) and shared heap of a distributed one
 * (pto_dist_config), which the command line does not change. */
#define CLI_DEVICE_MEMORY_BYTES (1ull << 30)

#define CLI_MAX_OPTS 64

typedef struct cli_named {
  char *name;
  char *value;
} cli_named;

typedef struct cli_inputs {
  cli_compile_args c;
  cli_named dims[CLI_MAX_OPTS], ins[CLI_MAX_OPTS], outs[CLI_MAX_OPTS];
  int ndims, nins, nouts;
  const char *prog;
} cli_inputs;

/* A command's own options: consumes argv[*i] (and its values, advancing *i) and returns 1, returns
 * 0 when it is not one of them, or -1 after printing a usage error. */
typedef int (*cli_option_fn)(void *ctx, const char *cmd, int argc, char **argv, int *i);

/* Parses argv[1..argc): compile options, --dim, --in, --out (when allow_out), the command's own
 * options through extra (may be NULL), and one program. Returns 0, or -1 after printing a usage
 * error. */
int cli_parse_inputs(const char *cmd, cli_inputs *a, int argc, char **argv, int allow_out,
                     cli_option_fn extra, void *ctx);

/* One entry parameter's data for a launch (and its pristine copy for a reference run). */
typedef struct cli_param {
  pto_host_tensor t;
  void *data;
  void *ref; /* pto run --check: the interpreter's copy */
  size_t nbytes;
  pto_scalar scalar;
  int fed; /* named by --in */
} cli_param;

/* Binds every parameter of sig from a's --dim/--in (unfed inputs random, unfed outputs zeros)
 * into pd[sig->nparams] (zeroed by the caller). Errors name the option and the parameter. */
pto_status cli_bind_inputs(const pto_signature *sig, const cli_inputs *a, cli_param *pd);
/* What run and bench both need before a launch: allocates the parameters of sig and their
 * launch arguments (host tensors and scalars) and binds them with cli_bind_inputs. On failure
 * the caller still frees whatever was set, with cli_params_free. */
pto_status cli_prepare_params(const pto_signature *sig, const cli_inputs *a, cli_param **out_pd,
                              pto_arg **out_args);
/* Frees pd[0..nparams), their data, and args (each may be NULL). */
void cli_params_free(cli_param *pd, pto_arg *args, int nparams);

double cli_elem_get(pto_dtype dt, const void *p, int64_t i);
/* "[64,128]" */
void cli_format_shape(char *buf, size_t n, int rank, const int64_t *shape);

#endif
