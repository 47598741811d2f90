/* Asynchronous dispatch: pto_handle_submit queues a launch on the worker's dispatcher thread and
 * returns a completion to wait on or poll, so the caller can prepare the next batch while the
 * device runs this one.
 *
 * One dispatcher thread per worker, started by the first submit; launches run on it one at a
 * time in submission order, through the same launch path as pto_handle_call. Every other worker
 * call (a synchronous call, copies, allocation, register, close, ...) first waits until the
 * queue is empty, so launches on one worker stay ordered whichever entry point issued them, and
 * the worker is still used by one thread at a time. Guarded by async->mu: the queue, pending
 * and stop; a completion's own mu guards its done flag and status.
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
  pto__rt_callable *callable;
  pto_arg *args; /* a copy of the caller's array (host data stays the caller's) */
  size_t nargs;
  completion *c;
} job;

struct pto__rt_async {
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
  pto__rt_worker *w = arg;
  pto__rt_async *a = w->async;
  pto__rt_tls_worker = w; /* a kernel's close of its own worker is ignored, not waited on */
  pthread_mutex_lock(&a->mu);
  for (;;) {
    while (!a->head && !a->stop)
      pthread_cond_wait(&a->work, &a->mu);
    if (!a->head) break; /* stop, and nothing left */
    job *j = a->head;
    a->head = j->next;
    if (!a->head) a->tail = NULL;
    pthread_mutex_unlock(&a->mu);
    pto_status s = pto__rt_launch_callable(w, j->callable, j->args, j->nargs);
    complete(j->c, s);
    free(j->args);
    free(j);
    pthread_mutex_lock(&a->mu);
    if (--a->pending == 0) pthread_cond_broadcast(&a->idle);
  }
  pthread_mutex_unlock(&a->mu);
  return NULL;
}

void pto__rt_async_drain(pto__rt_worker *w) {
  pto__rt_async *a = w ? w->async : NULL;
  if (!a || pthread_equal(pthread_self(), a->thread)) return;
  pthread_mutex_lock(&a->mu);
  while (a->pending)
    pthread_cond_wait(&a->idle, &a->mu);
  pthread_mutex_unlock(&a->mu);
}

void pto__rt_async_stop(pto__rt_worker *w) {
  pto__rt_async *a = w->async;
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
  w->async = NULL;
}

static pto_status start(pto__rt_worker *w) {
  pto__rt_async *a = pto_calloc(1, sizeof *a);
  if (!a) return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "pto_handle_submit: out of memory");
  pthread_mutex_init(&a->mu, NULL);
  pthread_cond_init(&a->work, NULL);
  pthread_cond_init(&a->idle, NULL);
  w->async = a;
  if (pthread_create(&a->thread, NULL, dispatcher, w)) {
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->work);
    pthread_cond_destroy(&a->idle);
    free(a);
    w->async = NULL;
    return pto_status_make(PTO_STATUS_INTERNAL,
                           "pto_handle_submit: cannot start the dispatcher thread");
  }
  return PTO_OK;
}

pto_status pto__rt_async_submit(pto__rt_worker *w, pto__rt_callable *callable, const pto_arg *args,
                                size_t nargs, pto_completion **out) {
  *out = NULL;
  if (nargs && !args)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_handle_submit: args is NULL");
  if (!w->async) PTO_RETURN_IF_ERROR(start(w));
  job *j = pto_calloc(1, sizeof *j);
  completion *c = pto_calloc(1, sizeof *c);
  pto_arg *copy = pto_malloc((nargs ? nargs : 1) * sizeof *copy);
  void *token = c ? pto__rt_obj_add(PTO__RT_OBJ_COMPLETION, c) : NULL;
  if (!j || !c || !copy || !token) {
    free(j);
    free(c);
    free(copy);
    if (token) pto__rt_obj_remove(token, PTO__RT_GONE_DISCARDED);
    return pto_status_make(PTO_STATUS_OUT_OF_MEMORY, "pto_handle_submit: out of memory");
  }
  if (nargs) memcpy(copy, args, nargs * sizeof *copy);
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  j->callable = callable;
  j->args = copy;
  j->nargs = nargs;
  j->c = c;
  pto__rt_async *a = w->async;
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
    return pto_status_make(PTO_STATUS_FAILED_PRECONDITION, "pto_completion_wait: %s",
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
