/* The distributed worker's shared state and its shared-memory transport (runtime/dist*.c).
 *
 * Everything here lives in memory mapped MAP_SHARED before the chips are forked, so it has the
 * same address in the parent and in every chip. */
#ifndef PTO_RUNTIME_DIST_INTERNAL_H
#define PTO_RUNTIME_DIST_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "pto/dist_abi.h"
#include "pto/kernel_abi.h"
#include "pto/runtime.h"
#include "pto/types.h"

#define PTO__DIST_MAX_RANKS 64
#define PTO__DIST_MAX_WINDOWS 64
#define PTO__DIST_RING 32
#define PTO__DIST_MAX_ARGS 32
#define PTO__DIST_MSG 1024
/* Device address of the shared heap's byte 0 in every chip (clear of the L2 arenas' windows). */
#define PTO__DIST_HEAP_BASE 0x600000000000ull

/* A comm window: rank r's slice is bytes at heap offset off + r * stride. */
typedef struct pto__dist_window {
  uint64_t off, stride, bytes;
  int64_t cols; /* last dim, to name an element's offsets in messages */
  _Atomic int32_t live;
  int32_t pad;
} pto__dist_window;

enum { PTO__DIST_CMD_LOAD = 1, PTO__DIST_CMD_RUN = 2, PTO__DIST_CMD_EXIT = 3 };

typedef struct pto__dist_arg {
  int32_t kind; /* PTO_ORCH_ARG_* */
  int32_t dtype;
  int32_t rank;
  int32_t pad;
  uint64_t addr; /* device address in the shared heap (PTO__DIST_HEAP_BASE + offset) */
  int64_t shape[PTO_MAX_RANK];
  uint64_t scalar;
} pto__dist_arg;

typedef struct pto__dist_cmd {
  int32_t op;
  int32_t slot; /* RUN: the chip's registered program */
  int32_t nargs;
  int32_t pad;
  uint32_t dep[PTO__DIST_MAX_RANKS]; /* run after chip r has finished dep[r] commands */
  pto__dist_arg args[PTO__DIST_MAX_ARGS];
  char path[1024]; /* LOAD: the work dir */
} pto__dist_cmd;

/* One finished RUN's launch record, as the chip saw it (names copied: the parent interns them). */
#define PTO__DIST_RECS 1024
typedef struct pto__dist_rec {
  uint32_t seq; /* 1 + the command's index: which command this slot holds */
  int32_t ok;
  uint64_t hid, ntasks;
  int32_t nspans;
  int32_t pad;
  struct {
    char name[56];
    int32_t depth, is_device;
    uint64_t ts_ns, dur_ns;
  } spans[PTO_LAUNCH_MAX_SPANS];
} pto__dist_rec;

typedef struct pto__dist_chip {
  _Atomic uint32_t head;   /* commands posted (parent) */
  _Atomic uint32_t tail;   /* commands finished (chip) */
  _Atomic uint32_t state;  /* 0 starting, 1 serving, 2 failed to start, 3 exited */
  _Atomic uint32_t failed; /* 1 + the seq of the first failed command, or 0 */
  _Atomic int32_t last_slot; /* LOAD's result */
  int32_t pid;
  char msg[PTO__DIST_MSG]; /* why it failed to start, or its first failed command */
  pto__dist_cmd ring[PTO__DIST_RING];
  pto__dist_rec recs[PTO__DIST_RECS]; /* by command index % PTO__DIST_RECS */
} pto__dist_chip;

typedef struct pto__dist_shared {
  int32_t nranks;
  uint32_t timeout_ms;
  uint8_t *heap;      /* host address of the heap (the same in every process) */
  uint64_t heap_size;
  pto__dist_window windows[PTO__DIST_MAX_WINDOWS];
  pto__dist_chip chips[]; /* nranks */
} pto__dist_shared;

/* The shared-memory transport of one chip: its pto_dist_ctx and the detail of its last failed
 * wait. */
typedef struct pto__dist_shm {
  pto_dist_ctx ctx;
  pto__dist_shared *sh;
  char detail[512];
} pto__dist_shm;

void pto__dist_shm_init(pto__dist_shm *t, pto__dist_shared *sh, int rank);

/* futex on shared (not process-private) memory. */
void pto__dist_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint32_t timeout_us);
void pto__dist_futex_wake(_Atomic uint32_t *addr);

#endif
