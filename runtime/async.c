/* Asynchronous dispatch: a submit queues a launch on a dispatcher thread and returns a completion
 * to wait on or poll, so the caller can prepare the next batch while the device runs this one.
 * The queue is generic: an L2 worker's pto_handle_submit queues pto_handle_call's launch path,
 * an L3 worker's pto_dist_worker_submit its run path (dist.c); both hand out the same
 * pto_completion.
 *
 * One dispatcher thread per worker, started by the first submit; jobs run on it one at a time in
 * submission order, through the owner's run function. Every other worker call (a synchronous
 * call, copies, allocation, register, close, ...) first waits until the queue is empty, so
 * launches on one worker stay ordered whichever entry point issued them, and the worker is still
 * used by one thread at a time. Guarded by async->mu: the queue, pending and stop; a
 * completion's own mu guards its done flag and status.
 *
 * The caller holds a completion as a registry token, never a pointer: wait and discard retire
 * the token before the completion is freed, so a second wait, or a poll after a wait, names a
 * stale token and is refused (pto__rt_obj_take: of two threads consuming one completion, one
 * gets it). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pto/base.h"
#include "runtime_internal.h"

typedef struct completion {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int done;
  int discarded;     /* the caller gave it up: the dispatcher frees it */
  pto_status status; /* the launch's, once done */
} completion;

typedef struct job {
  struct job *next;
  void *what;    /* the owner's: an L2 callable, an L3 program */
  pto_arg *args; /* a copy of the caller's array (host data stays the caller's) */
  size_t nargs;
  completion *c;
} job;

struct pto__rt_async {
  pto__rt_async_run run;
  void *ctx;
  void (*done)(void *ctx, void *what); /* after run: the owner releases what (or NULL) */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t work, idle;
  job *head, *tail;
  int pending; /* queued or running */
  int stop;
};

static void free_completion(completion *c) {
  pthread_mutex_destroy(&c->mu);
  pthread_cond_destroy(&c->cv);
  free(c);
}

static void complete(completion *c, pto_status s) {
  pthread_mutex_lock(&c->mu);
  int discarded = c->discarded;
  c->status = s;
  c->done = 1;
  pthread_cond_broadcast(&c->cv);
  pthread_mutex_unlock(&c->mu);
  if (discarded) {
    pto_status_free(s);
    free_completion(c);
  }
}

static void *dispatcher(void *arg) {
  pto__rt_async *a = arg;
  pthread_mutex_lock(&a->mu);
  for (;;) {
    while (!a->head && !a->stop)
      pthread_cond_wait(&a->work, &a->mu);
    if (!a->head) break; /* stop, and nothing left */
    job *j = a->head;
    a->head = j->next;
    if (!a->head) a->tail = NULL;
    pthread_mutex_unlock(&a->mu);
    pto_status s = a->run(a->ctx, j->what, j->args, j->nargs);
    if (a->done) a->done(a->ctx, j->what);
    complete(j->c, s);
    free(j->args);
    free(j);
    pthread_mutex_lock(&a->mu);
    if (--a->pending == 0) pthread_cond_broadcast(&a->idle);
  }
  pthread_mutex_unlock(&a->mu);
  return NULL;
}

void pto__rt_async_wait_idle(pto__rt_async *a) {
  if (!a || pthread_equal(pthread_self(), a->thread)) return;
  pthread_mutex_lock(&a->mu);
  while (a->pending)
    pthread_cond_wait(&a->idle, &a->mu);
  pthread_mutex_unlock(&a->mu);
}

void pto__rt_async_end(pto__rt_async **slot) {
  pto__rt_async *a = *slot;
  if (!a) return;
  pthread_mutex_lock(&a->mu);
  a->stop = 1;
  pthread_cond_broadcast(&a->work);
  pthread_mutex_unlock(&a->mu);
  pthread_join(a->thread, NULL);
  pthread_mutex_destroy(&a->mu);
  pthread_cond_destroy(&a->work);
  pthread_cond_destroy(&a->idle);
  free(a);
  *slot = NULL;
}

static pto_status start(pto__rt_async **slot, const pto__rt_async_owner *owner) {
  const char *fn = owner->fn;
  pto__rt_async *a = pto_calloc(1, sizeof *a);
  if (!a) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  a->run = owner->run; /* set before the thread exists: it reads them unlocked */
  a->ctx = owner->ctx;
  a->done = owner->done;
  pthread_mutex_init(&a->mu, NULL);
  pthread_cond_init(&a->work, NULL);
  pthread_cond_init(&a->idle, NULL);
  if (pthread_create(&a->thread, NULL, dispatcher, a)) {
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->work);
    pthread_cond_destroy(&a->idle);
    free(a);
    return pto_status_make(PTO_STATUS_INTERNAL, "%s: cannot start the dispatcher thread", fn);
  }
  *slot = a;
  return PTO_OK;
}

pto_status pto__rt_async_post(pto__rt_async **slot, const pto__rt_async_owner *owner, void *what,
                              const pto_arg *args, size_t nargs, pto_completion **out) {
  const char *fn = owner->fn;
  *out = NULL;
  if (nargs && !args) return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "%s: args is NULL", fn);
  job *j = pto_calloc(1, sizeof *j);
  completion *c = pto_calloc(1, sizeof *c);
  pto_arg *copy = pto_malloc((nargs ? nargs : 1) * sizeof *copy);
  void *token = c ? pto__rt_obj_add(PTO__RT_OBJ_COMPLETION, c) : NULL;
  pto_status s = j && c && copy && token
                     ? PTO_OK
                     : pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
  if (!s && !*slot) s = start(slot, owner);
  if (s) {
    free(j);
    free(c);
    free(copy);
    if (token) pto__rt_obj_remove(token, PTO__RT_GONE_DISCARDED);
    return s;
  }
  if (nargs) memcpy(copy, args, nargs * sizeof *copy);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  j->what = what;
  j->args = copy;
  j->nargs = nargs;
  j->c = c;
  pto__rt_async *a = *slot;
  pthread_mutex_lock(&a->mu);
  if (a->tail)
    a->tail->next = j;
  else
    a->head = j;
  a->tail = j;
  a->pending++;
  pthread_cond_signal(&a->work);
  pthread_mutex_unlock(&a->mu);
  *out = token;
  return PTO_OK;
}

/* ---- the L2 worker's queue (pto_handle_submit) ------------------------------------------- */

static pto_status run_l2(void *ctx, void *what, const pto_arg *args, size_t nargs) {
  pto__rt_worker *w = ctx;
  pto__rt_tls_worker = w; /* a kernel's close of its own worker is ignored, not waited on */
  return pto__rt_launch_callable(w, what, args, nargs);
}

pto_status pto__rt_async_submit(pto__rt_worker *w, pto__rt_callable *callable, const pto_arg *args,
                                size_t nargs, pto_completion **out) {
  const pto__rt_async_owner owner = {"pto_handle_submit", run_l2, NULL, w};
  return pto__rt_async_post(&w->async, &owner, callable, args, nargs, out);
}

void pto__rt_async_drain(pto__rt_worker *w) { pto__rt_async_wait_idle(w ? w->async : NULL); }

void pto__rt_async_stop(pto__rt_worker *w) { pto__rt_async_end(&w->async); }

int pto_completion_poll(pto_completion *ct) {
  completion *c = pto__rt_obj_get(ct, PTO__RT_OBJ_COMPLETION, NULL);
  if (!c) return -1;
  pthread_mutex_lock(&c->mu);
  int done = c->done;
  pthread_mutex_unlock(&c->mu);
  return done;
}

pto_status pto_completion_wait(pto_completion *ct) {
  pto__rt_gone gone;
  completion *c = pto__rt_obj_take(ct, PTO__RT_OBJ_COMPLETION, PTO__RT_GONE_WAITED, &gone);
  if (!c)
    return pto_status_make(pto__rt_gone_code(gone, PTO_STATUS_FAILED_PRECONDITION),
                           "pto_completion_wait: %s",
                           pto__rt_gone_text(gone, PTO__RT_OBJ_COMPLETION));
  pthread_mutex_lock(&c->mu);
  while (!c->done)
    pthread_cond_wait(&c->cv, &c->mu);
  pto_status s = c->status;
  pthread_mutex_unlock(&c->mu);
  free_completion(c);
  return s;
}

void pto_completion_discard(pto_completion *ct) {
  completion *c = pto__rt_obj_take(ct, PTO__RT_OBJ_COMPLETION, PTO__RT_GONE_DISCARDED, NULL);
  if (!c) return; /* consumed already: a no-op */
  pthread_mutex_lock(&c->mu);
  int done = c->done;
  c->discarded = 1;
  pthread_mutex_unlock(&c->mu);
  if (!done) return; /* the dispatcher frees it when the launch ends */
  pto_status_free(c->status);
  free_completion(c);
}
