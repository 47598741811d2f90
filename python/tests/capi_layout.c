/* The layout of every public C struct that python/pto/_capi.py mirrors with ctypes, as this
 * compiler lays it out from include/pto: "TYPE SIZE" per struct, "TYPE.FIELD OFFSET SIZE" per
 * field (a member of an anonymous union by its own name). test_capi_layout.py compares it with
 * the ctypes mirrors, so a struct that grows or changes in C fails a test instead of corrupting
 * memory under Python (two did: pto_cache_stats, pto_dist_bench_stats). Built with the tests;
 * it links nothing, so the libraries export no test hook for it. A struct or field _capi.py
 * mirrors must be listed here (the test names what is missing). */
#include <stddef.h>
#include <stdio.h>

#include "pto/bench.h"
#include "pto/cache.h"
#include "pto/compile_api.h"
#include "pto/dist.h"
#include "pto/dist_bench.h"
#include "pto/runtime.h"
#include "pto/signature.h"
#include "pto/types.h"

#define S(T) printf("%s %zu\n", #T, sizeof(T));
#define F(T, f) printf("%s.%s %zu %zu\n", #T, #f, offsetof(T, f), sizeof(((T *)0)->f));

int main(void) {
  printf("PTO_MAX_RANK %d\n", PTO_MAX_RANK);
  printf("PTO_LAUNCH_MAX_SPANS %d\n", PTO_LAUNCH_MAX_SPANS);
  printf("PTO_DIST_METRIC_COUNT %d\n", PTO_DIST_METRIC_COUNT);
  /* A table, one struct per paragraph, to the end of the file: clang-format would run it into one
   * statement. */
  // clang-format off

  S(pto_host_tensor) F(pto_host_tensor, data) F(pto_host_tensor, dtype) F(pto_host_tensor, rank)
  F(pto_host_tensor, shape) F(pto_host_tensor, strides)

  S(pto_scalar) F(pto_scalar, dtype) F(pto_scalar, i) F(pto_scalar, u) F(pto_scalar, f)

  S(pto_arg) F(pto_arg, kind) F(pto_arg, readonly) F(pto_arg, host) F(pto_arg, device)
  F(pto_arg, scalar) F(pto_arg, dist)

  S(pto_device_memory_info) F(pto_device_memory_info, base) F(pto_device_memory_info, total)
  F(pto_device_memory_info, used) F(pto_device_memory_info, peak)
  F(pto_device_memory_info, nallocs) F(pto_device_memory_info, largest_free)

  S(pto_run_config) F(pto_run_config, sz) F(pto_run_config, platform) F(pto_run_config, ncores)
  F(pto_run_config, device_memory_bytes) F(pto_run_config, scratch_bytes)
  F(pto_run_config, idle_spin_us) F(pto_run_config, shuffle) F(pto_run_config, shuffle_seed)
  F(pto_run_config, max_inflight_tasks) F(pto_run_config, record_tasks)
  F(pto_run_config, aic_cores) F(pto_run_config, aiv_cores) F(pto_run_config, stream_store_bytes)
  F(pto_run_config, strict_cores) F(pto_run_config, threads)

  S(pto_binding) F(pto_binding, name) F(pto_binding, value)

  S(pto_compile_options) F(pto_compile_options, sz) F(pto_compile_options, entry)
  F(pto_compile_options, platform) F(pto_compile_options, opt_level)
  F(pto_compile_options, scalars) F(pto_compile_options, nscalars)
  F(pto_compile_options, samples) F(pto_compile_options, nsamples)
  F(pto_compile_options, progress) F(pto_compile_options, progress_ctx)
  F(pto_compile_options, devices) F(pto_compile_options, ndevices)
  F(pto_compile_options, waiting)

  S(pto_sig_dim) F(pto_sig_dim, value) F(pto_sig_dim, sym)

  S(pto_sig_param) F(pto_sig_param, name) F(pto_sig_param, is_tensor) F(pto_sig_param, dir)
  F(pto_sig_param, dtype) F(pto_sig_param, rank) F(pto_sig_param, dims) F(pto_sig_param, bind)
  F(pto_sig_param, value)

  S(pto_signature) F(pto_signature, entry) F(pto_signature, nparams) F(pto_signature, params)
  F(pto_signature, nsyms) F(pto_signature, syms) F(pto_signature, nrets)
  F(pto_signature, kernel_entry)

  S(pto_span) F(pto_span, name) F(pto_span, depth) F(pto_span, ts_ns) F(pto_span, dur_ns)
  F(pto_span, is_device)

  S(pto_launch_record) F(pto_launch_record, inv) F(pto_launch_record, hid)
  F(pto_launch_record, callable_id) F(pto_launch_record, ntasks) F(pto_launch_record, ok)
  F(pto_launch_record, nspans) F(pto_launch_record, spans)

  S(pto_bench_options) F(pto_bench_options, sz) F(pto_bench_options, rounds)
  F(pto_bench_options, warmup) F(pto_bench_options, run_config) F(pto_bench_options, progress)
  F(pto_bench_options, progress_ctx)

  S(pto_cache_stats) F(pto_cache_stats, hits) F(pto_cache_stats, misses)
  F(pto_cache_stats, stores) F(pto_cache_stats, evictions) F(pto_cache_stats, corruptions)
  F(pto_cache_stats, races) F(pto_cache_stats, uncached) F(pto_cache_stats, memory_hits)
  F(pto_cache_stats, entries) F(pto_cache_stats, bytes) F(pto_cache_stats, max_bytes)
  F(pto_cache_stats, remote_hits) F(pto_cache_stats, remote_misses)
  F(pto_cache_stats, remote_stores) F(pto_cache_stats, remote_errors)
  F(pto_cache_stats, remote_refusals)

  S(pto_cache_entry) F(pto_cache_entry, key) F(pto_cache_entry, path)
  F(pto_cache_entry, program) F(pto_cache_entry, entry) F(pto_cache_entry, bytes)
  F(pto_cache_entry, last_use_ns) F(pto_cache_entry, created_ns)
  F(pto_cache_entry, other_schema)

  S(pto_cache_gc_result) F(pto_cache_gc_result, evicted) F(pto_cache_gc_result, evicted_bytes)
  F(pto_cache_gc_result, entries) F(pto_cache_gc_result, bytes)
  F(pto_cache_gc_result, stale_tmp)

  S(pto_bench_node) F(pto_bench_node, name) F(pto_bench_node, label) F(pto_bench_node, level)
  F(pto_bench_node, depth) F(pto_bench_node, parent) F(pto_bench_node, is_device)
  F(pto_bench_node, count) F(pto_bench_node, mean_us) F(pto_bench_node, stdev_us)
  F(pto_bench_node, min_us) F(pto_bench_node, max_us) F(pto_bench_node, start_ns)

  S(pto_bench_tree) F(pto_bench_tree, nnodes) F(pto_bench_tree, nodes) F(pto_bench_tree, priv)

  S(pto_bench_summary) F(pto_bench_summary, count) F(pto_bench_summary, min)
  F(pto_bench_summary, median) F(pto_bench_summary, mean) F(pto_bench_summary, max)
  F(pto_bench_summary, stdev)

  S(pto_dist_bench_slot) F(pto_dist_bench_slot, rank) F(pto_dist_bench_slot, device)
  F(pto_dist_bench_slot, pid) F(pto_dist_bench_slot, slot) F(pto_dist_bench_slot, name)
  F(pto_dist_bench_slot, hid) F(pto_dist_bench_slot, tasks) F(pto_dist_bench_slot, stats)

  S(pto_dist_bench_stats) F(pto_dist_bench_stats, rounds) F(pto_dist_bench_stats, warmup)
  F(pto_dist_bench_stats, nranks) F(pto_dist_bench_stats, per_round)
  F(pto_dist_bench_stats, per_round_summary) F(pto_dist_bench_stats, per_rank)
  F(pto_dist_bench_stats, nslots) F(pto_dist_bench_stats, per_dispatch)

  S(pto_dist_config) F(pto_dist_config, sz) F(pto_dist_config, ndevices)
  F(pto_dist_config, device_ids) F(pto_dist_config, transport)
  F(pto_dist_config, ncores_per_chip) F(pto_dist_config, shared_heap_bytes)
  F(pto_dist_config, chip_memory_bytes) F(pto_dist_config, wait_timeout_ms)
  F(pto_dist_config, program) F(pto_dist_config, window_bytes) F(pto_dist_config, on_chip_call)
  F(pto_dist_config, on_chip_call_ctx) F(pto_dist_config, record_phases)
  F(pto_dist_config, dump_args_dir) F(pto_dist_config, dump_args_level) F(pto_dist_config, chips)
  return 0;
}
