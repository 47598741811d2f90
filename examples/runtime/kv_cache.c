/* A KV cache kept as one device tensor that two programs share on one worker.
 *
 * kv_prefill.ptir writes the prompt's keys into the first rows of the cache; kv_decode.ptir,
 * once per generated token, writes the token's key into the next row and reads every row so
 * far (a toy attention: out = q * the sum of the cached keys). Both are registered on the same
 * worker and both get the same device tensor: the cache never leaves the device, and what one
 * program wrote the other reads. The host mirrors the cache to check every step.
 *
 *   kv_cache [PTIR_DIR] [TOKENS]      (default 40 decode steps; prompt + tokens <= 64) */
#include "example.h"

#define MAX_POS 64
#define D 64
#define PROMPT 11

int main(int argc, char **argv) {
  long tokens = ex_size(argc, argv, 40);
  if (tokens < 0 || PROMPT + tokens > MAX_POS) {
    fprintf(stderr, "kv_cache: at most %d decode steps\n", MAX_POS - PROMPT);
    return 2;
  }
  const char *dir = ex_ptir_dir(argc, argv);
  pto_program *prefill = ex_compile(dir, "kv_prefill.ptir"),
              *decode = ex_compile(dir, "kv_decode.ptir");
  pto_worker *w = ex_open_worker();

  /* The cache: one device tensor for the whole conversation. */
  const int64_t cshape[2] = {MAX_POS, D};
  pto_device_tensor *cache = NULL;
  EX_CHECK(pto_worker_alloc_tensor(w, 2, cshape, PTO_DTYPE_F32, NULL, &cache));
  static float host_cache[MAX_POS * D];

  pto_handle *hp = NULL, *hd = NULL;
  EX_CHECK(pto_worker_register(w, prefill, &hp));
  EX_CHECK(pto_worker_register(w, decode, &hd));

  /* Prefill: the prompt's keys (a host tensor) into rows [0, PROMPT) of the cache. */
  static float prompt[PROMPT * D];
  ex_fill(prompt, PROMPT * D, 3);
  const int64_t pshape[2] = {PROMPT, D};
  pto_host_tensor hprompt;
  pto_host_tensor_init(&hprompt, prompt, PTO_DTYPE_F32, 2, pshape);
  pto_arg pargs[2] = {pto_arg_host_readonly(&hprompt), pto_arg_device(cache)};
  EX_CHECK(pto_handle_call(hp, pargs, 2));
  memcpy(host_cache, prompt, sizeof prompt);

  /* Decode: token t goes into row PROMPT + t. */
  static float k[D], q[D], out[D], want[D];
  const int64_t vshape[2] = {1, D};
  pto_host_tensor hk, hq, ho;
  pto_host_tensor_init(&hk, k, PTO_DTYPE_F32, 2, vshape);
  pto_host_tensor_init(&hq, q, PTO_DTYPE_F32, 2, vshape);
  pto_host_tensor_init(&ho, out, PTO_DTYPE_F32, 2, vshape);
  long bad = 0;
  for (long t = 0; t < tokens; t++) {
    int64_t pos = PROMPT + t;
    ex_fill(k, D, 500 + (unsigned)t);
    ex_fill(q, D, 900 + (unsigned)t);
    pto_arg dargs[5] = {pto_arg_device(cache), pto_arg_host_readonly(&hk),
                        pto_arg_host_readonly(&hq), pto_arg_host(&ho), pto_arg_index(pos)};
    EX_CHECK(pto_handle_call(hd, dargs, 5));

    memcpy(&host_cache[pos * D], k, sizeof k);
    for (int j = 0; j < D; j++) {
      float sum = 0;
      for (int64_t r = 0; r <= pos; r++)
        sum += host_cache[r * D + j];
      want[j] = q[j] * sum;
    }
    bad += ex_compare("out", out, want, D, 1e-4f, 1e-5f);
  }

  /* The device cache holds the prompt and every decoded token, exactly. */
  static float got[MAX_POS * D];
  EX_CHECK(pto_worker_copy_from(w, got, pto_device_tensor_addr(cache), sizeof got));
  bad += ex_compare("cache", got, host_cache, MAX_POS * D, 0, 0);
  printf("prefill %d rows, %ld decode steps on one shared cache (callables %lld and %lld): %s\n",
         PROMPT, tokens, (long long)pto_handle_callable_id(hp),
         (long long)pto_handle_callable_id(hd), bad ? "FAIL" : "PASS");

  pto_worker_close(w);
  pto_program_release(prefill);
  pto_program_release(decode);
  return bad ? 1 : 0;
}
