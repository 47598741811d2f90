/* Shared state of the kernel code generator (lower_kernel.c, lower_plan.c, lower_ops.c).
 *
 * The planner runs first over the kernel body: it numbers statements in pre-order, computes each
 * tile's live range (a tile defined outside a loop and used inside lives to the loop's end), puts
 * aliases (tile.move, loop-carried values and their results) into one buffer group, lets
 * elementwise ops take over a dying operand's buffer, and assigns 64-byte aligned offsets so that
 * groups whose ranges overlap never share bytes. It also decides which consecutive elementwise
 * statements (row expansions included) share one loop (plan_fusion), which runs of loads, such a
 * loop and a store go element by element from tensor to tensor (plan_streams), and which loaded
 * tiles may be the tensor's own memory instead of a copy (plan_views). Code generation then walks
 * the body in the same order. */
#ifndef PTO_COMPILER_LOWER_KERNEL_INTERNAL_H
#define PTO_COMPILER_LOWER_KERNEL_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "lower_internal.h"
#include "pto/ir.h"
#include "pto/kernel_abi.h"

/* A buffer group: values that share one buffer in the scratch arena. Only a root's fields
 * (parent == itself) describe the buffer; a member's are what it had when it was merged.
 * Invariants of a live root (not dead) after planning, checked by pto__lower_plan_check:
 *   0 <= start <= end < npos;
 *   offset is a multiple of 64 and offset + bytes <= the kernel's footprint;
 *   two live roots whose [start, end] ranges meet have disjoint [offset, offset + bytes). */
typedef struct lw_group {
  int64_t bytes;  /* >= 0: the largest member's bytes */
  int start, end; /* statement positions, inclusive: the union of the members' live ranges */
  int64_t offset; /* from the scratch arena's start; assigned last (assign_offsets) */
  int parent;     /* union-find, 0 <= parent < ngroups; itself when a root */
  int iter;       /* a loop-carried buffer: taken over in place only by its own next value */
  int loop_pos;   /* iter: position of the for statement */
  int iter_index; /* iter: which carried value */
  int dead;       /* no storage (no offset): every value of it lives inside one fused loop */
} lw_group;

typedef struct lw_tile {
  LLVMValueRef base; /* element 0 in the scratch arena (or in a tensor: a view); NULL while
                        fused away */
  int64_t rows, cols;
  pto_dtype dt;
  LLVMValueRef vr, vc; /* runtime valid extents (i64), within [0, rows] x [0, cols] */
  LLVMValueRef rs;     /* row stride in elements (i64) of a view with rows apart (plan_views:
                          a matmul's right operand); NULL: cols, rows back to back */
  LLVMValueRef ri;     /* a gather_rows as a view (plan_row_views): when ri_on (i1), row k is
                          row ri[k] (the i32 index tile's buffer) of the view, else row k;
                          NULL: row k */
  LLVMValueRef ri_on;
} lw_tile;

typedef struct lw_tensor {
  LLVMValueRef data;
  int rank;
  pto_dtype dt;
  LLVMValueRef shape[PTO_MAX_RANK];  /* i64 */
  LLVMValueRef stride[PTO_MAX_RANK]; /* i64, elements */
} lw_tensor;

enum { LW_V_NONE = 0, LW_V_SCALAR, LW_V_TILE, LW_V_TENSOR };

/* group_of value of a tile that exists only inside a fused elementwise loop. */
#define LW_FUSED (-2)

typedef struct lw_value {
  int kind;
  LLVMValueRef v; /* scalar, in its compute type */
  lw_tile tile;
  int tensor; /* index into lw.tensors */
} lw_value;

typedef struct lw_loop {
  LLVMBasicBlockRef pre, header, body, exit;
  LLVMValueRef iv, lo;
} lw_loop;

typedef enum lw_bin {
  LW_ADD,
  LW_SUB,
  LW_MUL,
  LW_DIV,
  LW_MOD,
  LW_MIN,
  LW_MAX,
  /* second set: elementwise (compiler/lower_elem.c) */
  LW_EQ, /* comparisons: i1 results, NaN false except ne */
  LW_NE,
  LW_LT,
  LW_LE,
  LW_GT,
  LW_GE,
  LW_AND,
  LW_OR,
  LW_XOR,
  LW_SHL,
  LW_SHR,
  LW_LRELU,
  LW_FMOD,
  LW_EXPDIF,
} lw_bin;

/* Per statement position (pre-order: a statement, then its bodies), what the planner decided.
 * The invariants after planning (pto__lower_plan_check checks them) are beside the fields; a
 * group index is one of the kernel's, 0 <= g < ngroups. */
typedef struct lw_stmt_plan {
  const pto_ir_stmt *s;    /* never NULL */
  const pto_ir_block *blk; /* the block holding s */
  int end;                 /* last position inside a for/if body; the position itself otherwise:
                              pos <= end < npos */
  int fuse_len;            /* >1: this elementwise statement starts a fused run of that many
                              statements, consecutive in its block (positions pos..pos+fuse_len-1,
                              all of blk); 1 otherwise */
  int stream_len;          /* >0: this statement starts a streamed run of that many statements,
                              consecutive in its block; 0 otherwise */
  int stream_loads;        /* its leading tile.loads; then elementwise ops, then one tile.store:
                              0 <= stream_loads < stream_len */
  int yield_tmp;           /* first temp group of a yield that permutes loop-carried tiles, or -1 */
  int view;                /* a tile.load whose tile may be the tensor's own memory (plan_views):
                              only ever set on a tile.load: 1 with rows back to back,
                              2 with any row stride (lw_tile.rs); 3 only on a tile.gather_rows
                              (plan_row_views): its rows read through the index tile
                              (lw_tile.ri) */
  int mm_pack;             /* a matmul on bf16 dot products: its packed operands' group, or -1 */
  int defer;               /* a streamed run whose store may be deferred (plan_deferred_stores):
                              its staging buffer's group, or -1; set only on a run of more than
                              one statement without loads, and only when streaming stores are
                              on (pto__lower_x86_streaming) */
  int defer_at;            /* a for statement: the position of that run in its body, or -1;
                              pos < defer_at <= end and plan[defer_at].defer >= 0 */
} lw_stmt_plan;

/* A window a tile.load of a loop body reads in the loop's next iteration: rows of row_bytes
 * (static: the tile's columns) from ptr, sr elements of dt apart. */
#define LW_NEXT_MAX 4
typedef struct lw_next_window {
  LLVMValueRef ptr, sr;
  int64_t rows, row_bytes;
  pto_dtype dt;
} lw_next_window;

/* A tile's window of a tensor, as a load or store addresses it (lower_ops.c's tensor_window). */
typedef struct lw_window {
  LLVMValueRef ptr;    /* tensor element at the tile's [0,0] */
  LLVMValueRef sr, sc; /* row and column strides, elements */
  LLVMValueRef nr, nc; /* rows and columns inside both the valid region and the tensor */
} lw_window;

/* A streamed run's store deferred to the next iteration of its loop (pto__lower_streamed): its
 * values wait in a staging buffer in the scratch arena while the loop's next iteration computes,
 * and go to the tensor, past the cache, a share of a row at a time inside that iteration's first
 * row-by-row run of the same tile shape (pto__lower_fused), or whole before the next staging and
 * after the loop. pend, ptr, nr and sr are allocas: whether rows wait, where row 0 goes, how many
 * rows, and the row stride in elements. */
typedef struct lw_defer {
  int pos; /* the streamed run's position */
  LLVMValueRef buf;
  int64_t rows, cols;
  pto_dtype dt;
  LLVMValueRef pend, ptr, nr, sr;
} lw_defer;

/* The innermost for loop around the code being lowered (its body, induction value and step;
 * body NULL outside loops) with the windows its body's tile.loads so far will read in the next
 * iteration: a matmul later in the same body prefetches them while it computes. */
typedef struct lw_loop_ctx {
  const pto_ir_block *body;
  const pto_ir_value *iv;
  LLVMValueRef step;
  int nnext;
  int prefetched;  /* a run has prefetched the next windows (pto__lower_fused) */
  lw_defer *defer; /* the body's deferred store, or NULL */
  int drains;      /* a run of the body drains it (pto__lower_fused) */
  lw_next_window next[LW_NEXT_MAX];
} lw_loop_ctx;

typedef struct lw {
  const pto_ir_program *p;
  const pto_ir_func *k;
  int is_entry;
  pto_status err;

  LLVMContextRef c;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMValueRef fn;
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_half, t_f32, t_f64, t_ptr;
  LLVMTypeRef t_desc, t_ctx, t_dist; /* pto_kernel_tensor, pto_core_ctx, pto_dist_ctx */
  LLVMValueRef arg_tensors, arg_scalars, arg_ctx;
  LLVMValueRef scratch;
  LLVMValueRef divzero;       /* i64 alloca: 0, or 1 + the statement index of a tile op that met
                               * an integer zero divisor (-1: the op is unknown) */
  int64_t divzero_op;         /* what a divide lowered now stores there: 1 + its statement index */
  LLVMValueRef stream_stores; /* pto__lower_stream_stores, once made */

  LLVMValueRef md_scratch, md_tensor;
  LLVMMetadataRef md_domain, md_scratch_scope, md_tensor_scope; /* to build more scopes */
  int nstreams; /* streamed runs lowered so far: each gets scopes of its own */
  unsigned kind_scope, kind_noalias;

  LLVMValueRef *syms; /* per program symbol, i64, or NULL when unbound */
  lw_value *vals;     /* per value id */
  lw_tensor *tensors;
  int ntensors;

  /* plan */
  lw_stmt_plan *plan; /* per position */
  int npos;
  int *def_pos;  /* per value id: the position that defines it; -1 for parameters */
  int *group_of; /* per value id: buffer group, -1 when none, LW_FUSED when fused away */
  int *last_use; /* per value id: last position that reads it (loops extend), -1 unused */
  lw_group *groups;
  int ngroups, capgroups;
  int64_t footprint;        /* scratch bytes: the end of the highest live group */
  LLVMValueRef *group_base; /* per group root: its address */
  int cur_pos;              /* codegen: position of the statement being lowered */
  LLVMValueRef *views;      /* codegen: bases of tiles that may be views of tensors (untagged) */
  int nviews, capviews;
  const pto_ir_block *cur_blk;  /* codegen: the block being lowered */
  const pto_ir_stmt *pf_store;  /* codegen: the last tile.store a run prefetched (store_ahead) */
  const pto_ir_stmt *pf_gather; /* codegen: the last gather_rows a run prefetched (gather_ahead) */
  lw_loop_ctx loop;             /* codegen: the innermost for loop around it */
} lw;

void pto__lower_fail(lw *L, pto_status_code code, pto_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
LLVMValueRef pto__lower_i64(lw *L, int64_t v);
LLVMTypeRef pto__lower_storage_type(lw *L, pto_dtype dt);
LLVMTypeRef pto__lower_compute_type(lw *L, pto_dtype dt);
LLVMValueRef pto__lower_call_intrinsic(lw *L, const char *name, LLVMTypeRef *over, int nover,
                                       LLVMValueRef *args, int nargs, const char *vname);
/* llvm.prefetch of the line at addr into the data cache: for a write (write 1) or a read, with
 * locality 0 (none) to 3 (keep in every level). */
void pto__lower_prefetch(lw *L, LLVMValueRef addr, int write, int locality);
LLVMAttributeRef pto__lower_enum_attr(lw *L, const char *name);
LLVMValueRef pto__lower_to_compute(lw *L, pto_dtype dt, LLVMValueRef raw);
LLVMValueRef pto__lower_to_storage(lw *L, pto_dtype dt, LLVMValueRef v);
LLVMValueRef pto__lower_round(lw *L, pto_dtype dt, LLVMValueRef v);
LLVMValueRef pto__lower_convert(lw *L, LLVMValueRef v, pto_dtype from, pto_dtype to);
void pto__lower_tag(lw *L, LLVMValueRef inst, int is_tensor);
int pto__lower_note_view(lw *L, LLVMValueRef base);
int pto__lower_maybe_view(lw *L, LLVMValueRef p);
LLVMValueRef pto__lower_tile_load(lw *L, LLVMValueRef base, pto_dtype dt, LLVMValueRef idx);
void pto__lower_tile_store(lw *L, LLVMValueRef base, pto_dtype dt, LLVMValueRef idx,
                           LLVMValueRef raw);
LLVMValueRef pto__lower_loop_begin(lw *L, lw_loop *lp, LLVMValueRef lo, LLVMValueRef hi,
                                   const char *name);
void pto__lower_loop_end(lw *L, lw_loop *lp);
void pto__lower_fail_if(lw *L, LLVMValueRef cond, int code, LLVMValueRef d0, LLVMValueRef d1);
/* Fails the launch with PTO_KERNEL_ERR_INDEX (s's statement index, position [r, c], the value v)
 * unless lo <= v < hi (i64 values; hi NULL: no upper bound). */
void pto__lower_check_index(lw *L, const pto_ir_stmt *s, LLVMValueRef v, LLVMValueRef lo,
                            LLVMValueRef hi, LLVMValueRef r, LLVMValueRef c);
/* The statement index of s in the kernel (pto_ir_func_stmt_at), as launch errors name it. */
int64_t pto__lower_op_index(lw *L, const pto_ir_stmt *s);
LLVMValueRef pto__lower_smin(lw *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef pto__lower_smax(lw *L, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef pto__lower_binop(lw *L, lw_bin op, pto_dtype dt, LLVMValueRef a, LLVMValueRef b,
                              LLVMValueRef divzero_flag);
LLVMValueRef pto__lower_unop(lw *L, pto_op_fn op, pto_dtype dt, LLVMValueRef a);
/* lower_x86.c: the host-specific fast paths, each off under PTO_GENERIC_LOWERING=1 (the switch
 * itself, pto__lower_host_has, is in lower.h). The two the generic files ask by name: 512-bit
 * vectors (16-lane fused and streamed runs, the sort network in zmm registers) and streaming
 * stores (non-temporal stores fenced by sfence, deferred stores). */
int pto__lower_x86_wide(void);
int pto__lower_x86_streaming(void);
/* p 2^n (f32 vectors, n integral or NaN) in one vscalefps; NULL where the host has none (then
 * the caller multiplies). */
LLVMValueRef pto__lower_x86_scalef(lw *L, LLVMValueRef p, LLVMValueRef n);
/* Marks a store to go past the cache; the stores so marked are fenced (sfence) before the task
 * completes, so that its completion publishes them. Only where pto__lower_x86_streaming. */
void pto__lower_x86_nontemporal(lw *L, LLVMValueRef store);
void pto__lower_x86_sfence(lw *L);
/* The current function keeps vectors in 512-bit registers (where the host has them). */
void pto__lower_x86_wide_vectors(lw *L);
/* The current function's loops are vectorized at 512 bits where the host has them (16 f32
 * lanes), whatever LLVM's tuning for the host CPU prefers. */
void pto__lower_x86_prefer_wide(lw *L);
/* i1: the task's pto_core_ctx.flags has PTO_CORE_STREAM_STORES (loaded once per kernel). */
LLVMValueRef pto__lower_stream_stores(lw *L);
/* a cmp b (PTIR's comparisons, as scalar expressions compare): i1, NaN false except ne. */
LLVMValueRef pto__lower_compare(lw *L, pto_expr_op op, pto_dtype dt, LLVMValueRef a,
                                LLVMValueRef b);
/* compiler/lower_elem.c: the second set's elementwise functions on compute values (scalars or
 * vectors), what pto__lower_binop gives for the lw_bin values it does not compute itself; and
 * the lw_bin of a statement's function (its cmp= keyword for tile.cmp/cmps), 0 when it has
 * none. */
LLVMValueRef pto__lower_elem_binop(lw *L, lw_bin op, pto_dtype dt, LLVMValueRef a, LLVMValueRef b);
int pto__lower_stmt_bin(const pto_ir_stmt *s, lw_bin *out);
/* pto_sinf (cos 0) / pto_cosf (cos 1) of pto/mathf.h on an f32 value or vector, operation for
 * operation as base/mathf.c (in double lanes). */
LLVMValueRef pto__lower_sincosf(lw *L, LLVMValueRef x, int cos);
/* Whether pto__lower_unop calls libm for fn on dt (f64 exp/log/sigmoid; f32 ones are inline,
 * pto/mathf.h): such a loop stays scalar, so it is not fused. */
int pto__lower_fn_calls_libm(pto_op_fn fn, pto_dtype dt);
/* Scalar expression in its compute type; NULL after a failure. */
LLVMValueRef pto__lower_expr(lw *L, const pto_ir_expr *e);

/* lower_dist.c: the kernel-side dist.* ops onto pto_core_ctx.dist (pto/dist_abi.h). */
void pto__lower_dist_op(lw *L, const pto_ir_stmt *s);

/* lower_plan.c */
int pto__lower_static_int(const pto_ir_expr *e, int64_t *out);
const pto_ir_arg *pto__lower_kwarg(const pto_ir_stmt *s, const char *kw);
/* A tile type's static rows and columns (0); -1 for anything else. */
int pto__lower_tile_shape(const pto_ir_type *t, int64_t *r, int64_t *c);
/* The value positional argument i of op statement s names, or NULL (out of range, a keyword, not
 * a plain value). */
const pto_ir_value *pto__lower_stmt_value_arg(const pto_ir_stmt *s, int i);
int pto__lower_group_find(lw *L, int g);
/* Classifies elementwise tile ops (fusable, may run in place): 1 binary, 2 with a scalar,
 * 3 unary, 4 cast, 5 row expansion, 6 select (tile.sel, tile.sels), 7 column expansion; 0
 * otherwise. */
int pto__lower_elementwise_kind(pto_opcode op);
pto_status pto__lower_plan(lw *L);
void pto__lower_plan_free(lw *L);
/* The plan's invariants (beside lw_stmt_plan, lw_group and lw's plan fields): PTO_OK, or an
 * INTERNAL error naming the first one broken, where. pto__lower_plan runs it in builds with
 * PTO_DEBUG_CHECKS (sanitizer builds) or without NDEBUG. */
pto_status pto__lower_plan_check(const lw *L);

/* lower_ops.c */
void pto__lower_op(lw *L, const pto_ir_stmt *s);
/* Bytes of the packed operands of an [M,K] x [K,N] matmul of those input dtypes that may run on
 * the host's bf16 dot-product instruction (lower_matmul_x86.c); 0 when it never does. The planner
 * reserves them for the statement alone (lw_stmt_plan.mm_pack). */
int64_t pto__lower_mm_pack_bytes(pto_dtype l, pto_dtype r, int64_t M, int64_t K, int64_t N);
/* Lowers the fused run of n elementwise statements starting at s[0] (consecutive in a block). */
void pto__lower_fused(lw *L, pto_ir_stmt *const *s, int n);
/* Lowers a streamed run (lw_stmt_plan.stream_len): n statements from s[0], nloads tile.loads,
 * elementwise ops, a tile.store. Advances L->cur_pos past them. */
void pto__lower_streamed(lw *L, pto_ir_stmt *const *s, int nloads, int n);
/* Copies a whole tile buffer. */
void pto__lower_copy_tile(lw *L, LLVMValueRef dst, LLVMValueRef src, const lw_tile *t);
/* Address of a buffer group's storage. */
LLVMValueRef pto__lower_value_base(lw *L, const pto_ir_value *v);
/* Operands and results as lower_ops.c's own ops read and define them (for lower_struct.c):
 * a positional argument (a failure when missing), a tile or tensor operand, a scalar converted to
 * dt's compute type, the tile result of the current statement, one element of a tile in its
 * compute type, an alloca in the entry block, one tensor element's storage value and its store,
 * the storage value of pad=zero|min|max. */
const pto_ir_arg *pto__lower_pos_arg(lw *L, const pto_ir_stmt *s, int i);
lw_tile *pto__lower_tile_arg(lw *L, const pto_ir_stmt *s, int i);
lw_tensor *pto__lower_tensor_arg(lw *L, const pto_ir_stmt *s, int i);
LLVMValueRef pto__lower_scalar_arg(lw *L, const pto_ir_arg *a, pto_dtype dt);
lw_tile *pto__lower_def_tile(lw *L, const pto_ir_value *r, LLVMValueRef vr, LLVMValueRef vc);
LLVMValueRef pto__lower_load_c(lw *L, const lw_tile *t, LLVMValueRef idx);
LLVMValueRef pto__lower_entry_alloca(lw *L, LLVMTypeRef ty, const char *name);
LLVMValueRef pto__lower_tensor_load(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx);
void pto__lower_tensor_store(lw *L, pto_dtype dt, LLVMValueRef ptr, LLVMValueRef idx,
                             LLVMValueRef raw);
LLVMValueRef pto__lower_pad_value(lw *L, pto_dtype dt, const char *pad);

/* Vector helpers of lower_ops.c for lower_matmul_x86.c: x in each of vw lanes; a load of ty at
 * element idx of et from scratch memory (or a view) and the store; vw elements of a tile as one
 * vector of its storage type and the store; sum + a * b as the interpreter computes a matmul
 * step in odt; the elements between rows of a matmul's right operand (a view's row stride). */
LLVMValueRef pto__lower_splat(lw *L, LLVMValueRef x, int vw);
LLVMValueRef pto__lower_scratch_load(lw *L, LLVMTypeRef ty, LLVMTypeRef et, LLVMValueRef base,
                                     LLVMValueRef idx, unsigned align);
void pto__lower_scratch_store(lw *L, LLVMValueRef v, LLVMTypeRef et, LLVMValueRef base,
                              LLVMValueRef idx, unsigned align);
LLVMValueRef pto__lower_vload(lw *L, const lw_tile *t, LLVMValueRef idx, int vw);
void pto__lower_vstore(lw *L, const lw_tile *t, LLVMValueRef idx, LLVMValueRef v);
LLVMValueRef pto__lower_mm_step(lw *L, pto_dtype odt, LLVMValueRef a, LLVMValueRef b,
                                LLVMValueRef sum);
LLVMValueRef pto__lower_mm_rstride(lw *L, const lw_tile *r);
LLVMValueRef pto__lower_mm_rrow(lw *L, const lw_tile *r, LLVMValueRef k);

/* lower_stream_x86.c: deferred stores (lw_defer), only where pto__lower_x86_streaming.
 * The deferred store of the for statement at position `pos`: allocas, nothing pending on entry.
 * At the loop's exit: pto__lower_defer_finish writes what is pending and fences the
 * non-temporal stores. */
void pto__lower_defer_begin(lw *L, lw_defer *d, int pos);
void pto__lower_defer_finish(lw *L, const lw_defer *d);
/* The loop's deferred store when a row-by-row run of rows x cols tiles can drain it (straight in
 * the loop's body, the same tile shape, the first such run), else NULL; and the share of staged
 * row i that such a run writes at its columns [j, j + step). */
lw_defer *pto__lower_defer_drainer(lw *L, int64_t rows, int64_t cols);
void pto__lower_defer_drain_at(lw *L, const lw_defer *d, LLVMValueRef i, LLVMValueRef j, int step);
/* A streamed run's store to window ws of tensor T ([slo, shi) its bytes) may be staged: the
 * run-time check (the window's rows whole and on 64-byte lines, no other tensor sharing a byte
 * with it), then, where it holds, what is pending written out and the builder left where the
 * caller computes the run's values into d->buf; the block returned is where the check failed.
 * pto__lower_defer_staged then marks them pending (to bb_done) and, at bb_now, writes out what
 * is pending, the builder left there for the ordinary non-temporal path. */
LLVMBasicBlockRef pto__lower_defer_stage(lw *L, const lw_defer *d, const lw_tensor *T,
                                         const lw_window *ws, LLVMValueRef slo, LLVMValueRef shi);
void pto__lower_defer_staged(lw *L, const lw_defer *d, const lw_window *ws,
                             LLVMBasicBlockRef bb_done, LLVMBasicBlockRef bb_now);

/* lower_matmul_x86.c: out[0..M, 0..j) += l x r in register blocks (j returned; the columns from
 * j on are left to the caller), on the bf16 dot products with the packed operands' buffer pack
 * (NULL: none; with_acc: the accumulators may be out of their range). */
int64_t pto__lower_mm_blocks(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t,
                             int with_acc, LLVMValueRef pack);

/* lower_kloop.c: where the for statement s (its carried accumulator's buffer acc, iterations
 * [lo, hi)) is a k loop of matmul_acc steps on two loaded windows, emits a run-time check of the
 * windows and, where it holds, the whole loop as one K-blocked product into acc; returns that
 * path's last block (unterminated; the caller branches it past the loop's last iteration) with
 * the builder left where the loop is to be lowered as usual. NULL (nothing emitted) otherwise. */
LLVMBasicBlockRef pto__lower_kloop(lw *L, const pto_ir_stmt *s, LLVMValueRef acc, LLVMValueRef lo,
                                   LLVMValueRef hi);

/* lower_struct.c: the second set's structural ops (PTO_OPC_LAYOUT, arg reductions). */
void pto__lower_layout_op(lw *L, const pto_ir_stmt *s);
void pto__lower_argreduce(lw *L, const pto_ir_stmt *s, int rows);

#endif
