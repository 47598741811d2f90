/* pto_bench_stats_to_json: the statistics as one JSON document (jansson). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

/* A number, or null for NAN (JSON has no NaN). */
static json_t *num(double v) { return isnan(v) ? json_null() : json_real(v); }

/* json_object_set_new that remembers a failure: any NULL along the way makes *ok 0. */
/* The _new setters steal v, also when they fail. */
static void put(json_t *obj, const char *key, json_t *v, int *ok) {
  if (!obj || !v) {
    json_decref(v);
    *ok = 0;
  } else if (json_object_set_new(obj, key, v)) {
    *ok = 0;
  }
}

static void push(json_t *arr, json_t *v, int *ok) {
  if (!arr || !v) {
    json_decref(v);
    *ok = 0;
  } else if (json_array_append_new(arr, v)) {
    *ok = 0;
  }
}

static json_t *summary_json(const pto_bench_summary *sm, int *ok) {
  json_t *o = json_object();
  put(o, "count", json_integer(sm->count), ok);
  put(o, "min", sm->count ? num(sm->min) : json_null(), ok);
  put(o, "median", sm->count ? num(sm->median) : json_null(), ok);
  put(o, "mean", sm->count ? num(sm->mean) : json_null(), ok);
  put(o, "max", sm->count ? num(sm->max) : json_null(), ok);
  put(o, "stdev", sm->count ? num(sm->stdev) : json_null(), ok);
  return o;
}

static json_t *tree_json(const pto_bench_tree *t, int *ok) {
  json_t *arr = json_array();
  for (int i = 0; arr && i < t->nnodes; i++) {
    const pto_bench_node *nd = &t->nodes[i];
    json_t *o = json_object();
    put(o, "name", json_string(nd->name), ok);
    put(o, "label", json_string(nd->label), ok);
    put(o, "level", json_integer(nd->level), ok);
    put(o, "depth", json_integer(nd->depth), ok);
    put(o, "parent", json_integer(nd->parent), ok);
    put(o, "device", json_boolean(nd->is_device), ok);
    put(o, "count", json_integer(nd->count), ok);
    put(o, "mean", num(nd->mean_us), ok);
    put(o, "stdev", num(nd->stdev_us), ok);
    put(o, "min", num(nd->min_us), ok);
    put(o, "max", num(nd->max_us), ok);
    push(arr, o, ok);
  }
  if (!arr) *ok = 0;
  return arr;
}

pto_status pto_bench_stats_to_json(const pto_bench_stats *st, char **out_json) {
  if (!out_json)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT,
                           "pto_bench_stats_to_json: out_json is NULL");
  *out_json = NULL;
  if (!st)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_bench_stats_to_json: stats is NULL");
  pto_bench_tree *tree = NULL;
  PTO_RETURN_IF_ERROR(pto_bench_stats_mean_tree(st, &tree));
  int ok = 1;
  char hid[17];
  pto_hid_format(st->hid, hid);
  json_t *root = json_object();
  put(root, "rounds", json_integer(st->rounds), &ok);
  put(root, "warmup", json_integer(st->warmup), &ok);
  put(root, "hid", json_string(hid), &ok);
  put(root, "ntasks", json_integer((json_int_t)st->ntasks), &ok);
  put(root, "ncores", json_integer(st->ncores), &ok);
  put(root, "unit", json_string("us"), &ok);
  json_t *samples = json_object(), *summary = json_object();
  for (int m = 0; m < PTO_BENCH_METRIC_COUNT; m++) {
    const char *name = pto_bench_metric_name((pto_bench_metric)m);
    json_t *arr = json_array();
    for (int i = 0; arr && i < st->nlaunches; i++)
      push(arr, num(st->samples[m][i]), &ok);
    put(samples, name, arr, &ok);
    put(summary, name, summary_json(&st->summary[m], &ok), &ok);
  }
  put(root, "samples", samples, &ok);
  put(root, "summary", summary, &ok);
  put(root, "mean_tree", tree_json(tree, &ok), &ok);
  json_t *tr = json_object();
  put(tr, "records", json_integer((json_int_t)st->trace.records), &ok);
  put(tr, "skipped", json_integer((json_int_t)st->trace.skipped), &ok);
  put(tr, "unsupported", json_integer((json_int_t)st->trace.unsupported), &ok);
  put(tr, "invocations", json_integer((json_int_t)st->trace.invocations), &ok);
  put(tr, "hids", json_integer((json_int_t)st->trace.hids), &ok);
  put(tr, "bucket", json_integer((json_int_t)st->trace.bucket), &ok);
  put(root, "trace", tr, &ok);
  pto_bench_tree_destroy(tree);
  char *text = ok ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) : NULL;
  json_decref(root);
  if (!text) return pto__bench_oom("the JSON statistics");
  /* Hand back memory the caller frees with free(), with the final newline. */
  size_t n = strlen(text);
  char *out = pto__bench_malloc(n + 2);
  if (!out) {
    free(text);
    return pto__bench_oom("the JSON statistics");
  }
  memcpy(out, text, n);
  out[n] = '\n';
  out[n + 1] = 0;
  free(text);
  *out_json = out;
  return PTO_OK;
}
