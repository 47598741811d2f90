/* A k loop of matmul_acc steps run as one K-blocked product (x86-64 with AVX-512).
 *
 * The loop
 *
 *   %acc = for %k in range(lo, hi) iter(%ck = %init) {
 *     (%x = <scalar expression>; ... up to KL_ASSIGNS of them, e.g. %k0 = %k * 64)
 *     %ta = tile.load(%a, <offsets>, [M, KS]); %tb = tile.load(%b, <offsets>, [KS, N])
 *                                                      (either may have valid=[<rows>, <cols>])
 *     %l = tile.move(%ta); %r = tile.move(%tb)        (either move may be left out)
 *     %cn = tile.matmul_acc(%ck, %l, %r)
 *     yield %cn
 *   }
 *
 * lowered statement by statement copies both windows into tiles every k step and brings the
 * M x N accumulator tile into registers and back every KS products (bench/RESULTS.md, gemm1k:
 * 12-18% of a 1024^3 product, the gap to OpenBLAS on one thread). Here nothing is copied into
 * the tiles: the register blocks read a's rows straight from the tensor and b's column slab from
 * a panel packed once per chunk of iterations (by the chunk's first row block, kl_rowblock), and
 * keep their accumulators in registers across the chunk. An output element still sums its
 * products by one fmaf each, iteration by iteration and in each iteration in k order, which is
 * the order the loop gives it (the interpreter's bits).
 *
 * The body must be exactly that (nothing else can read or write anything in it) and its
 * assignments, offsets and valid extents plain arithmetic (+ - * min max) of the induction value,
 * the assigned values and values from outside (they can fail no check). At run time, before the
 * loop, one pass over the iterations checks that every window lies whole inside its tensor with
 * unit column stride and that every valid= extent covers its tile: then a loaded tile is exactly
 * its window and the fused product is the loop's. Otherwise (a window at the tensor's edge, a
 * partial valid extent: padding, an offset or extent the loop must report) the loop runs as
 * lowered statement by statement. So examples/matmul.ptir's k loop (%k0, %kn = min(64, K - %k0),
 * valid=) runs fused in the tasks whose blocks are whole and K a multiple of 64. */
#include <stdint.h>
#include <string.h>

#include "lower.h"
#include "lower_kernel_internal.h"

static LLVMValueRef mul(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildMul(L->b, a, b, "");
}
static LLVMValueRef add(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(L->b, a, b, "");
}
static LLVMValueRef i64(lw *L, int64_t v) { return pto__lower_i64(L, v); }

#define KL_VW 16    /* f32 lanes of a 512-bit vector */
#define KL_MR 8     /* rows of a full register block */
#define KL_NV_MAX 3 /* 8 x 3 accumulators + 3 of b + 1 broadcast fit 32 vector registers */
/* Fewer rows than this stay with the loop (decode shapes, M = 1 or 8: their product streams b,
 * which the loop's tiles already read in whole rows; see mm_rows_wide). */
#define KL_MIN_ROWS 16

/* Scalar assignments the loop body may open with (examples/matmul.ptir's %k0 and %kn). */
#define KL_ASSIGNS 4

/* One operand: its tile.load, the tensor, the window's rows and columns, valid= (or NULL). */
typedef struct kl_side {
  const pto_ir_stmt *load;
  const lw_tensor *T;
  int64_t R, C;
  const pto_ir_arg *valid;
} kl_side;

typedef struct kl {
  const pto_ir_stmt *loop;
  const pto_ir_stmt *asg[KL_ASSIGNS]; /* the body's scalar assignments, in order */
  int nasg;
  kl_side a, b;
  int64_t M, KS, N;
  LLVMValueRef lo, hi;
  lw_tile acc;        /* the carried accumulator buffer, M x N f32 */
  LLVMValueRef panel; /* b's tile buffer (KS x N f32), free while the product runs */
} kl;

/* An offset the fused loop may evaluate at any iteration, in any order: literals, symbols, scalar
 * values, negation, +, -, *, min and max (no check can fail, nothing is read from memory). */
static int kl_plain(const pto_ir_expr *e) {
  switch (e->kind) {
  case PTO_EXPR_INT:
  case PTO_EXPR_SYM: return 1;
  case PTO_EXPR_VALUE: return e->value->type->kind == PTO_TYPE_SCALAR;
  case PTO_EXPR_UNARY: return e->op == PTO_EOP_NEG && kl_plain(e->a);
  case PTO_EXPR_BINARY:
    return (e->op == PTO_EOP_ADD || e->op == PTO_EOP_SUB || e->op == PTO_EOP_MUL ||
            e->op == PTO_EOP_MIN || e->op == PTO_EOP_MAX) &&
           kl_plain(e->lhs) && kl_plain(e->rhs);
  default: return 0;
  }
}

/* A tile.load of f32 from a tensor of rank >= 2 into a tile, plain offsets and plain valid=
 * extents (the run-time check asks them to cover the tile: then the tile is its whole window). */
static int kl_side_of(lw *L, const pto_ir_stmt *s, kl_side *out) {
  if (s->kind != PTO_STMT_OP || s->op.opc != PTO_OP_TILE_LOAD || s->nresults != 1) return 0;
  out->valid = NULL;
  for (int i = 0; i < s->op.nargs; i++) {
    const pto_ir_arg *a = &s->op.args[i];
    if (a->kw && !strcmp(a->kw, "valid")) {
      if (a->kind != PTO_ARG_LIST || a->list.n != 2 || !kl_plain(a->list.items[0]) ||
          !kl_plain(a->list.items[1]))
        return 0;
      out->valid = a;
    } else if (a->kw && strcmp(a->kw, "space") != 0 && strcmp(a->kw, "pad") != 0) {
      return 0;
    }
  }
  const pto_ir_value *tv = pto__lower_stmt_value_arg(s, 0);
  if (!tv || L->vals[tv->id].kind != LW_V_TENSOR || s->op.nargs < 2 || s->op.args[1].kw) return 0;
  const lw_tensor *T = &L->tensors[L->vals[tv->id].tensor];
  const pto_ir_arg *offs = &s->op.args[1];
  if (T->rank < 2 || T->dt != PTO_DTYPE_F32 || offs->kind != PTO_ARG_LIST ||
      offs->list.n != T->rank)
    return 0;
  for (int d = 0; d < offs->list.n; d++)
    if (!kl_plain(offs->list.items[d])) return 0;
  const pto_ir_type *rt = s->results[0]->type;
  if (rt->dtype != PTO_DTYPE_F32 || (rt->has_valid && !out->valid) ||
      pto__lower_tile_shape(rt, &out->R, &out->C))
    return 0;
  out->load = s;
  out->T = T;
  return 1;
}

/* The load whose result v is, directly or through one tile.move among the body's statements. */
static const pto_ir_stmt *loaded_by(const pto_ir_value *v, pto_ir_stmt *const *st, int n) {
  for (int i = 0; i < n; i++) {
    if (st[i]->kind != PTO_STMT_OP || st[i]->nresults != 1 || st[i]->results[0] != v) continue;
    if (st[i]->op.opc == PTO_OP_TILE_LOAD) return st[i];
    if (st[i]->op.opc != PTO_OP_TILE_MOVE) return NULL;
    const pto_ir_value *src = pto__lower_stmt_value_arg(st[i], 0);
    for (int j = 0; j < n; j++)
      if (st[j]->kind == PTO_STMT_OP && st[j]->nresults == 1 && st[j]->results[0] == src &&
          st[j]->op.opc == PTO_OP_TILE_LOAD)
        return st[j];
    return NULL;
  }
  return NULL;
}

/* Whether the for statement s is the loop above, with the accumulator in buffer acc. */
static int kl_match(lw *L, const pto_ir_stmt *s, LLVMValueRef acc, kl *k) {
  int64_t st = 1;
  const pto_ir_block *body = &s->loop.body;
  if (!pto__lower_host_has("+avx512f") || !acc || s->loop.niters != 1 ||
      (s->loop.step && (pto__lower_static_int(s->loop.step, &st) || st != 1)) || body->n < 4 ||
      body->n > 6 + KL_ASSIGNS)
    return 0;
  const pto_ir_value *it = s->loop.iters[0];
  if (it->type->dtype != PTO_DTYPE_F32 || pto__lower_tile_shape(it->type, &k->M, &k->N) ||
      k->M < KL_MIN_ROWS || (s->nresults == 1 && pto__lower_value_base(L, s->results[0]) != acc))
    return 0;
  /* body: scalar assignments, loads and moves, then matmul_acc(carried, l, r), then yield of
   * its result */
  int n = body->n - 2;
  const pto_ir_stmt *mm = body->stmts[n], *y = body->stmts[n + 1];
  if (mm->kind != PTO_STMT_OP || mm->op.opc != PTO_OP_TILE_MATMUL_ACC || mm->nresults != 1 ||
      y->kind != PTO_STMT_YIELD || y->ret.n != 1 || y->ret.vals[0]->kind != PTO_EXPR_VALUE ||
      y->ret.vals[0]->value != mm->results[0] || pto__lower_stmt_value_arg(mm, 0) != it ||
      mm->op.nargs != 3)
    return 0;
  int loads = 0;
  k->nasg = 0;
  for (int i = 0; i < n; i++) {
    const pto_ir_stmt *b = body->stmts[i];
    if (b->kind == PTO_STMT_ASSIGN && b->nresults == 1 && k->nasg == i && k->nasg < KL_ASSIGNS &&
        b->results[0]->type->kind == PTO_TYPE_SCALAR && kl_plain(b->expr)) {
      k->asg[k->nasg++] = b;
      continue;
    }
    if (b->kind != PTO_STMT_OP || b->nresults != 1 ||
        (b->op.opc != PTO_OP_TILE_LOAD && b->op.opc != PTO_OP_TILE_MOVE))
      return 0;
    loads += b->op.opc == PTO_OP_TILE_LOAD;
  }
  const pto_ir_value *lv = pto__lower_stmt_value_arg(mm, 1), *rv = pto__lower_stmt_value_arg(mm, 2);
  const pto_ir_stmt *la = lv ? loaded_by(lv, body->stmts, n) : NULL;
  const pto_ir_stmt *lb = rv ? loaded_by(rv, body->stmts, n) : NULL;
  /* two loads, each read by the product alone (through at most one move) */
  if (loads != 2 || !la || !lb || la == lb ||
      n != k->nasg + 2 + (lv != la->results[0]) + (rv != lb->results[0]))
    return 0;
  if (!kl_side_of(L, la, &k->a) || !kl_side_of(L, lb, &k->b)) return 0;
  if (k->a.R != k->M || k->b.C != k->N || k->a.C != k->b.R || lv->type->dtype != PTO_DTYPE_F32 ||
      rv->type->dtype != PTO_DTYPE_F32)
    return 0;
  k->KS = k->a.C;
  k->loop = s;
  k->panel = pto__lower_value_base(L, lb->results[0]);
  if (!k->panel) return 0;
  k->acc = (lw_tile){.base = acc, .rows = k->M, .cols = k->N, .dt = PTO_DTYPE_F32};
  return 1;
}

/* Where side x's window of iteration iv starts in its tensor (the offsets evaluated with the
 * loop's induction value bound to iv, and the body's assignments evaluated at it); *ok (when not
 * NULL) is and-ed with "the window lies whole inside the tensor, and valid= (if any) covers the
 * tile". */
static LLVMValueRef kl_window(lw *L, const kl *k, const kl_side *x, LLVMValueRef iv,
                              LLVMValueRef *ok) {
  lw_value *ivv = &L->vals[k->loop->loop.iv->id];
  lw_value saved = *ivv, saved_asg[KL_ASSIGNS];
  ivv->kind = LW_V_SCALAR;
  ivv->v = iv;
  int nsaved = 0;
  for (; nsaved < k->nasg && !L->err; nsaved++) {
    const pto_ir_stmt *s = k->asg[nsaved];
    lw_value *v = &L->vals[s->results[0]->id];
    saved_asg[nsaved] = *v;
    LLVMValueRef e = pto__lower_expr(L, s->expr);
    v->kind = LW_V_SCALAR;
    v->v = e ? pto__lower_convert(L, e, s->expr->dtype, s->results[0]->type->dtype) : NULL;
  }
  const pto_ir_arg *offs = &x->load->op.args[1];
  const lw_tensor *T = x->T;
  LLVMBuilderRef b = L->b;
  LLVMValueRef lin = i64(L, 0), zero = i64(L, 0);
  int rd = T->rank - 2, cd = T->rank - 1;
  for (int d = 0; d < T->rank && !L->err; d++) {
    const pto_ir_expr *e = offs->list.items[d];
    LLVMValueRef o = pto__lower_convert(L, pto__lower_expr(L, e), e->dtype, PTO_DTYPE_INDEX);
    lin = add(L, lin, mul(L, o, T->stride[d]));
    if (!ok) continue;
    int64_t ext = d == rd ? x->R : d == cd ? x->C : 1;
    LLVMValueRef in = LLVMBuildAnd(
        b, LLVMBuildICmp(b, LLVMIntSGE, o, zero, ""),
        LLVMBuildICmp(b, LLVMIntSLE, o, LLVMBuildSub(b, T->shape[d], i64(L, ext), ""), ""), "");
    *ok = LLVMBuildAnd(b, *ok, in, "kl.in");
  }
  for (int d = 0; ok && x->valid && d < 2 && !L->err; d++) {
    /* the load clamps an extent past the tile to it; a negative one fails the launch */
    const pto_ir_expr *e = x->valid->list.items[d];
    LLVMValueRef v = pto__lower_convert(L, pto__lower_expr(L, e), e->dtype, PTO_DTYPE_INDEX);
    LLVMValueRef whole = LLVMBuildICmp(b, LLVMIntSGE, v, i64(L, d ? x->C : x->R), "");
    *ok = LLVMBuildAnd(b, *ok, whole, "kl.whole");
  }
  for (int i = nsaved - 1; i >= 0; i--)
    L->vals[k->asg[i]->results[0]->id] = saved_asg[i];
  *ivv = saved;
  LLVMTypeRef et = pto__lower_storage_type(L, PTO_DTYPE_F32);
  return LLVMBuildGEP2(b, et, T->data, &lin, 1, "kl.win");
}

/* i1: every iteration's windows lie whole inside their tensors, with unit column strides. */
static LLVMValueRef kl_check(lw *L, const kl *k) {
  LLVMValueRef one = i64(L, 1);
  LLVMValueRef ok = LLVMBuildAnd(
      L->b, LLVMBuildICmp(L->b, LLVMIntEQ, k->a.T->stride[k->a.T->rank - 1], one, ""),
      LLVMBuildICmp(L->b, LLVMIntEQ, k->b.T->stride[k->b.T->rank - 1], one, ""), "kl.unit");
  LLVMValueRef flag = pto__lower_entry_alloca(L, L->t_i1, "kl.ok");
  LLVMBuildStore(L->b, ok, flag);
  lw_loop lp;
  LLVMValueRef it = pto__lower_loop_begin(L, &lp, k->lo, k->hi, "kl.chk");
  LLVMValueRef cur = LLVMBuildLoad2(L->b, L->t_i1, flag, "");
  kl_window(L, k, &k->a, it, &cur);
  kl_window(L, k, &k->b, it, &cur);
  LLVMBuildStore(L->b, cur, flag);
  pto__lower_loop_end(L, &lp);
  return LLVMBuildLoad2(L->b, L->t_i1, flag, "kl.ok");
}

/* One element of f32 from a tensor (tagged as tensor memory), or vw of them as a vector. */
static LLVMValueRef kl_tload(lw *L, LLVMValueRef ptr, LLVMValueRef idx, int vw) {
  LLVMTypeRef et = pto__lower_storage_type(L, PTO_DTYPE_F32);
  LLVMValueRef p = LLVMBuildInBoundsGEP2(L->b, et, ptr, &idx, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, vw > 1 ? LLVMVectorType(et, (unsigned)vw) : et, p, "");
  LLVMSetAlignment(v, 4);
  pto__lower_tag(L, v, 1);
  return v;
}

/* Iterations a column slab of NB columns is packed for at a time: as many as b's tile buffer
 * holds (N / NB), at most KL_CHUNK. Two k steps of 64 keep a 48-column panel (24 KiB) in L1
 * beside the rows of a the blocks read; the accumulators then go to memory and back every 128
 * products instead of every 64 (1, 3 and 5 measured no better). */
#define KL_CHUNK 2
static int64_t kl_chunk(const kl *k, int64_t NB) {
  int64_t ch = k->N / NB;
  if (ch > KL_CHUNK) ch = KL_CHUNK;
  return ch < 1 ? 1 : ch;
}

/* Where the panel's next packing reads: the next chunk of the slab, or after its last chunk the
 * first of the next slab (past the last slab a window no one reads). */
typedef struct kl_next {
  LLVMValueRef win[KL_CHUNK]; /* b's windows of the chunk's iterations */
  LLVMValueRef j0;            /* the slab's first column */
  int64_t rows;               /* rows of the chunk: CH x KS */
} kl_next;

/* Prefetches (into L2) row block ib's share of the rows the next packing reads, a burst before the
 * block computes: b's slab streams from memory once per task (at 1024^3 it is four times L2), and
 * this way it comes in while the blocks compute, not while the packing block waits for it
 * (without it the product is 2.5-4% slower). A prefetch never faults, so a window past the tensor
 * or the loop's last iteration costs an instruction and nothing else. */
static void kl_prefetch_next(lw *L, const kl *k, const kl_next *nx, int64_t CH, int nv,
                             LLVMValueRef ib, int64_t nib) {
  int64_t rpb = (nx->rows + nib - 1) / nib;
  LLVMValueRef sb = k->b.T->stride[k->b.T->rank - 2];
  lw_loop lq;
  LLVMValueRef q = pto__lower_loop_begin(L, &lq, i64(L, 0), i64(L, rpb), "kl.pf");
  LLVMValueRef r = pto__lower_smin(L, add(L, mul(L, ib, i64(L, rpb)), q), i64(L, nx->rows - 1));
  LLVMValueRef x = LLVMBuildUDiv(L->b, r, i64(L, k->KS), "");
  LLVMValueRef kn = LLVMBuildURem(L->b, r, i64(L, k->KS), "");
  LLVMValueRef base = nx->win[0];
  for (int64_t c = 1; c < CH; c++)
    base = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, x, i64(L, c), ""), nx->win[c], base,
                           "");
  for (int h = 0; h < nv; h++) {
    LLVMValueRef off = add(L, mul(L, kn, sb), add(L, nx->j0, i64(L, h * KL_VW)));
    pto__lower_prefetch(L, LLVMBuildGEP2(L->b, L->t_f32, base, &off, 1, "kl.pf.next"), 0, 2);
  }
  pto__lower_loop_end(L, &lq);
}

/* A chunk's row blocks: their shape (mr rows by nv vectors, nib of them from row i_lo on), the
 * slab's first column, the chunk's iterations [c0, c1), a's and b's row strides, the
 * accumulators' allocas, where the next packing reads. */
typedef struct kl_rows {
  int mr, nv;
  int64_t i_lo, nib, CH;
  LLVMValueRef j0, c0, c1, sa, sb;
  LLVMValueRef (*accs)[KL_NV_MAX];
  const kl_next *nx;
} kl_rows;

/* acc's row block ib of the chunk (mr rows from i_lo + ib * mr, the slab's columns) += the
 * chunk's products, its accumulators in registers across the chunk's iterations, a's rows read
 * from the tensor. The block reads b's rows from the panel, except with pack (the chunk's first
 * block): then it reads them from the tensor and stores each into the panel as it multiplies by
 * it. The packing is then a store beside each vector of b the block loads anyway, in the slots
 * the multiply-adds leave free, instead of a copy loop of its own that the blocks wait for (at
 * 1024^3 that loop was 2.5-4% of the product). */
static void kl_rowblock(lw *L, const kl *k, const kl_rows *R, LLVMValueRef ib, int pack) {
  int mr = R->mr, nv = R->nv;
  int64_t NB = nv * KL_VW;
  LLVMTypeRef vt = LLVMVectorType(L->t_f32, KL_VW);
  LLVMValueRef oidx[KL_MR][KL_NV_MAX];
  lw_loop lit, lkk;
  LLVMValueRef i0 = add(L, mul(L, ib, i64(L, mr)), i64(L, R->i_lo));
  kl_prefetch_next(L, k, R->nx, R->CH, nv, ib, R->nib);
  for (int ii = 0; ii < mr; ii++)
    for (int h = 0; h < nv; h++) {
      oidx[ii][h] =
          add(L, mul(L, add(L, i0, i64(L, ii)), i64(L, k->N)), add(L, R->j0, i64(L, h * KL_VW)));
      LLVMBuildStore(L->b, pto__lower_vload(L, &k->acc, oidx[ii][h], KL_VW), R->accs[ii][h]);
    }
  LLVMValueRef it = pto__lower_loop_begin(L, &lit, R->c0, R->c1, "kl.it");
  LLVMValueRef pa = kl_window(L, k, &k->a, it, NULL);
  LLVMValueRef pb = pack ? kl_window(L, k, &k->b, it, NULL) : NULL;
  LLVMValueRef prow0 = mul(L, LLVMBuildSub(L->b, it, R->c0, ""), i64(L, k->KS * NB));
  LLVMValueRef kk =
      pto__lower_loop_begin(L, &lkk, i64(L, 0), i64(L, k->KS), pack ? "kl.kp" : "kl.k");
  LLVMValueRef bv[KL_NV_MAX];
  LLVMValueRef brow = add(L, prow0, mul(L, kk, i64(L, NB)));
  for (int h = 0; h < nv; h++) {
    LLVMValueRef pidx = add(L, brow, i64(L, h * KL_VW));
    if (pack) {
      bv[h] = kl_tload(L, pb, add(L, mul(L, kk, R->sb), add(L, R->j0, i64(L, h * KL_VW))), KL_VW);
      pto__lower_scratch_store(L, bv[h], L->t_f32, k->panel, pidx, 64);
    } else {
      bv[h] = pto__lower_scratch_load(L, vt, L->t_f32, k->panel, pidx, 64);
    }
  }
  for (int ii = 0; ii < mr; ii++) {
    LLVMValueRef av = kl_tload(L, pa, add(L, mul(L, add(L, i0, i64(L, ii)), R->sa), kk), 1);
    av = pto__lower_splat(L, av, KL_VW);
    for (int h = 0; h < nv; h++) {
      LLVMValueRef cur = LLVMBuildLoad2(L->b, vt, R->accs[ii][h], "");
      LLVMBuildStore(L->b, pto__lower_mm_step(L, PTO_DTYPE_F32, av, bv[h], cur), R->accs[ii][h]);
    }
  }
  pto__lower_loop_end(L, &lkk);
  pto__lower_loop_end(L, &lit);
  for (int ii = 0; ii < mr; ii++)
    for (int h = 0; h < nv; h++)
      pto__lower_vstore(L, &k->acc, oidx[ii][h], LLVMBuildLoad2(L->b, vt, R->accs[ii][h], ""));
}

/* acc[i_lo..i_hi, j_lo..j_hi) += the loop's product in register blocks of mr rows by nv vectors
 * (i_hi - i_lo a multiple of mr, j_hi - j_lo of nv * KL_VW; nothing when smaller). Column slabs
 * outside, then chunks of iterations; the chunk's first row block packs the slab's rows of b back
 * to back into the panel (b's tile buffer) as it computes, so the other row blocks read them from
 * one place in the caches (b's rows a page apart would share a few cache sets); every row block
 * prefetches its share of the next packing's rows (kl_rowblock). */
static void kl_blocked(lw *L, const kl *k, int mr, int nv, int64_t i_lo, int64_t i_hi, int64_t j_lo,
                       int64_t j_hi) {
  int64_t NB = nv * KL_VW;
  if (i_hi - i_lo < mr || j_hi - j_lo < NB) return;
  int64_t CH = kl_chunk(k, NB);
  LLVMTypeRef vt = LLVMVectorType(L->t_f32, KL_VW);
  LLVMValueRef accs[KL_MR][KL_NV_MAX];
  for (int ii = 0; ii < mr; ii++)
    for (int h = 0; h < nv; h++)
      accs[ii][h] = pto__lower_entry_alloca(L, vt, "kl.acc");
  LLVMValueRef nch = LLVMBuildSDiv(
      L->b, LLVMBuildAdd(L->b, LLVMBuildSub(L->b, k->hi, k->lo, ""), i64(L, CH - 1), ""),
      i64(L, CH), "kl.nch");
  lw_loop ljb, lch, lib;
  LLVMValueRef jb = pto__lower_loop_begin(L, &ljb, i64(L, 0), i64(L, (j_hi - j_lo) / NB), "kl.jb");
  LLVMValueRef j0 = add(L, mul(L, jb, i64(L, NB)), i64(L, j_lo));
  LLVMValueRef ch = pto__lower_loop_begin(L, &lch, i64(L, 0), nch, "kl.ch");
  LLVMValueRef c0 = add(L, k->lo, mul(L, ch, i64(L, CH)));
  LLVMValueRef c1 = pto__lower_smin(L, add(L, c0, i64(L, CH)), k->hi);
  kl_next nx = {.rows = CH * k->KS};
  LLVMValueRef last = LLVMBuildICmp(L->b, LLVMIntEQ, add(L, ch, i64(L, 1)), nch, "");
  LLVMValueRef n0 = LLVMBuildSelect(L->b, last, k->lo, c1, "");
  nx.j0 = LLVMBuildSelect(L->b, last, add(L, j0, i64(L, NB)), j0, "");
  for (int64_t c = 0; c < CH; c++)
    nx.win[c] = kl_window(L, k, &k->b, add(L, n0, i64(L, c)), NULL);
  kl_rows R = {.mr = mr,
               .nv = nv,
               .i_lo = i_lo,
               .nib = (i_hi - i_lo) / mr,
               .CH = CH,
               .j0 = j0,
               .c0 = c0,
               .c1 = c1,
               .sa = k->a.T->stride[k->a.T->rank - 2],
               .sb = k->b.T->stride[k->b.T->rank - 2],
               .accs = accs,
               .nx = &nx};
  kl_rowblock(L, k, &R, i64(L, 0), 1);
  LLVMValueRef ib = pto__lower_loop_begin(L, &lib, i64(L, 1), i64(L, R.nib), "kl.ib");
  kl_rowblock(L, k, &R, ib, 0);
  pto__lower_loop_end(L, &lib);
  pto__lower_loop_end(L, &lch);
  pto__lower_loop_end(L, &ljb);
}

/* acc[0..M, j_lo..N) += the loop's product, element by element (the columns the blocks leave). */
static void kl_simple(lw *L, const kl *k, int64_t j_lo) {
  if (j_lo >= k->N) return;
  LLVMValueRef sa = k->a.T->stride[k->a.T->rank - 2], sb = k->b.T->stride[k->b.T->rank - 2];
  LLVMValueRef sum = pto__lower_entry_alloca(L, L->t_f32, "kl.sum");
  lw_loop li, lj, lit, lkk;
  LLVMValueRef i = pto__lower_loop_begin(L, &li, i64(L, 0), i64(L, k->M), "kl.si");
  LLVMValueRef j = pto__lower_loop_begin(L, &lj, i64(L, j_lo), i64(L, k->N), "kl.sj");
  LLVMValueRef oidx = add(L, mul(L, i, i64(L, k->N)), j);
  LLVMBuildStore(L->b, pto__lower_load_c(L, &k->acc, oidx), sum);
  LLVMValueRef it = pto__lower_loop_begin(L, &lit, k->lo, k->hi, "kl.sit");
  LLVMValueRef pa = kl_window(L, k, &k->a, it, NULL), pb = kl_window(L, k, &k->b, it, NULL);
  LLVMValueRef kk = pto__lower_loop_begin(L, &lkk, i64(L, 0), i64(L, k->KS), "kl.sk");
  LLVMValueRef av = kl_tload(L, pa, add(L, mul(L, i, sa), kk), 1);
  LLVMValueRef bv = kl_tload(L, pb, add(L, mul(L, kk, sb), j), 1);
  LLVMValueRef cur = LLVMBuildLoad2(L->b, L->t_f32, sum, "");
  LLVMBuildStore(L->b, pto__lower_mm_step(L, PTO_DTYPE_F32, av, bv, cur), sum);
  pto__lower_loop_end(L, &lkk);
  pto__lower_loop_end(L, &lit);
  pto__lower_tile_store(L, k->acc.base, PTO_DTYPE_F32, oidx,
                        LLVMBuildLoad2(L->b, L->t_f32, sum, ""));
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &li);
}

/* The whole product, split as mm_blocks splits a matmul (lower_matmul_x86.c): 8 x 48 blocks,
 * then 8 x 32 (one 48-column block fewer when that lets 32-column blocks cover the rest), then
 * 8 x 16, the last M mod 8 rows in blocks of their own at the same columns, and the last N mod
 * 16 columns element by element. */
static void kl_product(lw *L, const kl *k) {
  int64_t M = k->M, N = k->N, M8 = M / KL_MR * KL_MR;
  int64_t j3 = N / (3 * KL_VW) * (3 * KL_VW);
  if ((N - j3) % (2 * KL_VW) && j3 > 0 && (N - j3 + 3 * KL_VW) % (2 * KL_VW) == 0) j3 -= 3 * KL_VW;
  int64_t jw = j3 + (N - j3) / (2 * KL_VW) * (2 * KL_VW);
  int64_t j1 = jw + (N - jw) / KL_VW * KL_VW;
  int mt = (int)(M - M8);
  for (int part = 0; part < 2; part++) {
    int mr = part ? mt : KL_MR;
    int64_t lo = part ? M8 : 0, hi = part ? M : M8;
    if (mr == 0) continue;
    kl_blocked(L, k, mr, 3, lo, hi, 0, j3);
    kl_blocked(L, k, mr, 2, lo, hi, j3, jw);
    kl_blocked(L, k, mr, 1, lo, hi, jw, j1);
  }
  kl_simple(L, k, j1);
  /* 512-bit vector types stay whole instead of being split into 256-bit halves. */
  LLVMAddAttributeAtIndex(L->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(L->c, "min-legal-vector-width", 22, "512", 3));
}

LLVMBasicBlockRef pto__lower_kloop(lw *L, const pto_ir_stmt *s, LLVMValueRef acc, LLVMValueRef lo,
                                   LLVMValueRef hi) {
  kl k;
  if (!kl_match(L, s, acc, &k)) return NULL;
  k.lo = lo;
  k.hi = hi;
  LLVMValueRef ok = kl_check(L, &k);
  LLVMBasicBlockRef fused = LLVMAppendBasicBlockInContext(L->c, L->fn, "kl.fused");
  LLVMBasicBlockRef loop = LLVMAppendBasicBlockInContext(L->c, L->fn, "kl.loop");
  LLVMBuildCondBr(L->b, ok, fused, loop);
  LLVMPositionBuilderAtEnd(L->b, fused);
  kl_product(L, &k);
  LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
  LLVMPositionBuilderAtEnd(L->b, loop);
  return L->err ? NULL : end;
}
