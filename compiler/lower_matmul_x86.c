/* The matmul's register-blocked microkernel, tuned for x86-64 (lower_matmul in lower_ops.c calls
 * pto__lower_mm_blocks; the edges it leaves run lower_ops.c's simple loop): register blocks sized
 * for 16 or 32 vector registers, 16-lane blocks where the host has AVX-512, a decode step's wide
 * rows, and bf16 products on vdpbf16ps (AVX512_BF16). Every choice of host feature goes through
 * pto__lower_host_has(); the 8-lane blocks are plain LLVM vectors and run on any host. Each
 * output element sums its products in k order, one fmaf per product in f32: the interpreter's
 * bits (test_lower's matmul groups). */
#include <stdint.h>

#include "lower.h"
#include "lower_kernel_internal.h"

static LLVMValueRef mul(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildMul(L->b, a, b, "");
}
static LLVMValueRef add(lw *L, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildAdd(L->b, a, b, "");
}

#define MM_MR_MAX 8 /* rows of a register block: 8 with 32 vector registers, else 4 */
#define MM_NV 2     /* accumulator vectors per row: the block is mr x (nv * vw), nv = 2 or 3 */
#define MM_NV_MAX                                                                                  \
  16                 /* 8 x 3 accumulators + 3 of r + 1 broadcast fit 32 vector registers; a       \
                      * decode row (mm_rows_wide) 16 accumulators, r as memory operands */
#define MM_VW_MAX 16 /* lanes of the widest accumulator vector (AVX-512) */
#define MM_PF_MAX 4  /* prefetches of the next iteration's loads a k step, at most */

#define MM_REST_MAX 8 /* lines of the rest of r's row prefetched a k step (mm_blocked), at most */
#define MM_KCHUNK 32  /* k steps of a chunk of an M <= 8 product's blocks (mm_blocks), or: */
#define MM_KCHUNK_MIN 16 /* where the window's rows are not a multiple of MM_KCHUNK */
#define MM_L1_AHEAD 16   /* rows ahead at which a chunk's slab prefetches its columns into L1 */
#define MM_L2_AHEAD 56   /* and into L2 (mm_blocks) */

/* Inputs the register-blocked kernel converts with vector ops: f32/f16/bf16 into f32, and
 * integers of up to 32 bits into i32. */
static int mm_vector_ok(pto_dtype in, pto_dtype out) {
  if (out == PTO_DTYPE_F32)
    return in == PTO_DTYPE_F32 || in == PTO_DTYPE_F16 || in == PTO_DTYPE_BF16;
  if (out == PTO_DTYPE_I32)
    return in == PTO_DTYPE_I8 || in == PTO_DTYPE_U8 || in == PTO_DTYPE_I16 || in == PTO_DTYPE_U16 ||
           in == PTO_DTYPE_I32 || in == PTO_DTYPE_U32;
  return 0;
}

/* A vector of vw storage values of dt to the accumulation dtype odt (see mm_vector_ok). */
static LLVMValueRef vconvert(lw *L, LLVMValueRef v, pto_dtype dt, pto_dtype odt, int vw) {
  LLVMBuilderRef b = L->b;
  LLVMTypeRef of = LLVMVectorType(pto__lower_compute_type(L, odt), (unsigned)vw);
  switch (dt) {
  case PTO_DTYPE_F16: return LLVMBuildFPExt(b, v, of, "");
  case PTO_DTYPE_BF16: {
    LLVMTypeRef vi = LLVMVectorType(L->t_i32, (unsigned)vw);
    LLVMValueRef w = LLVMBuildZExt(b, v, vi, "");
    LLVMValueRef sixteen[MM_VW_MAX];
    for (int i = 0; i < vw; i++)
      sixteen[i] = LLVMConstInt(L->t_i32, 16, 0);
    w = LLVMBuildShl(b, w, LLVMConstVector(sixteen, (unsigned)vw), "");
    return LLVMBuildBitCast(b, w, of, "");
  }
  case PTO_DTYPE_I8:
  case PTO_DTYPE_I16: return LLVMBuildSExt(b, v, of, "");
  case PTO_DTYPE_U8:
  case PTO_DTYPE_U16: return LLVMBuildZExt(b, v, of, "");
  default: return v;
  }
}

/* One software prefetch (into L2: locality 2, prefetcht1 on x86; the data is needed an iteration
 * later, after this matmul has cycled L1 many times) of line g of the next windows' lines, numbered
 * window by window, row by row (g clamped to the last line: a prefetch never faults, so a row past
 * a tensor's end, or a repeat, costs an instruction and nothing else). */
static void mm_prefetch_line(lw *L, LLVMValueRef g) {
  LLVMValueRef addr = NULL;
  int64_t first = 0;
  for (int e = 0; e < L->loop.nnext; e++) {
    const lw_next_window *nw = &L->loop.next[e];
    int64_t lpr = (nw->row_bytes + 63) / 64, lines = nw->rows * lpr;
    LLVMValueRef gl = LLVMBuildSub(L->b, g, pto__lower_i64(L, first), "");
    gl = LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, gl, pto__lower_i64(L, lines), ""),
                         gl, pto__lower_i64(L, lines - 1), "");
    LLVMValueRef row = LLVMBuildUDiv(L->b, gl, pto__lower_i64(L, lpr), "");
    LLVMValueRef col =
        mul(L, LLVMBuildURem(L->b, gl, pto__lower_i64(L, lpr), ""), pto__lower_i64(L, 64));
    LLVMValueRef off = add(
        L, mul(L, mul(L, row, nw->sr), pto__lower_i64(L, (int64_t)pto_dtype_size(nw->dt))), col);
    LLVMValueRef a = LLVMBuildGEP2(L->b, L->t_i8, nw->ptr, &off, 1, "pf.next");
    addr = addr ? LLVMBuildSelect(L->b,
                                  LLVMBuildICmp(L->b, LLVMIntSLT, g, pto__lower_i64(L, first), ""),
                                  addr, a, "")
                : a;
    first += lines;
  }
  pto__lower_prefetch(L, addr, 0, 2);
}

/* Lines of the next windows in all (see mm_prefetch_line). */
static int64_t mm_next_lines(const lw *L) {
  int64_t n = 0;
  for (int e = 0; e < L->loop.nnext; e++)
    n += L->loop.next[e].rows * ((L->loop.next[e].row_bytes + 63) / 64);
  return n;
}

/* bf16 dot products (see "bf16 dot products" below): the packed operands of a matmul, l as
 * rows x P and r as P x rstride 32-bit pairs, the pair of k = 2p and 2p + 1 with k = 2p in the
 * high half; check_acc: the accumulators may be out of range (matmul_acc). */
typedef struct mm_dp {
  LLVMValueRef lp, rp;
  int64_t P, rstride;
  int check_acc;
} mm_dp;

/* A 32-bit pair broadcast or a vector of them as 2 x vw bf16 lanes. */
static LLVMValueRef as_bf16_pairs(lw *L, LLVMValueRef v, int vw) {
  return LLVMBuildBitCast(L->b, v, LLVMVectorType(LLVMBFloatTypeInContext(L->c), 2u * (unsigned)vw),
                          "");
}

static LLVMValueRef dp_outside(lw *L, LLVMValueRef x, int f32);

/* One register block's place: rows i0.., columns j0.., its accumulators (allocas of vt), its
 * prefetch slot (step0 + k, ppk lines a step; ppk 0: none), the columns [rest_lo, rest_hi)
 * of r's row k + rest_ahead it prefetches at step k (none when empty; from j0 with rest_own: see
 * mm_blocked), and its k steps: all K, or with k0 the kn steps from k0 (a chunk, mm_blocks). */
typedef struct mm_blk {
  int mr, nv, vw;
  LLVMValueRef i0, j0, step0;
  LLVMValueRef (*accs)[MM_NV_MAX];
  LLVMTypeRef vt;
  int64_t ppk;
  int64_t rest_lo, rest_hi, rest_ahead;
  int rest_own;
  LLVMValueRef k0;
  int64_t kn;
} mm_blk;

/* Rows ahead of its k step at which a one-row product's block prefetches r (mm_row_ahead): the
 * first line into L1, or on Zen 4 the whole piece into L2. */
#define MM_AHEAD_ROWS 16
#define MM_L2_ROW_AHEAD 60

/* Prefetches, a line at a time, columns [lo, hi) (from j0 where given) of r's row k + ahead, with
 * the locality of pto__lower_prefetch (3: into L1, 2: into L2), each address named name. */
static void mm_prefetch_cols(lw *L, const lw_tile *r, LLVMValueRef k, int64_t ahead,
                             LLVMValueRef j0, int64_t lo, int64_t hi, const char *name,
                             int locality) {
  LLVMValueRef row = pto__lower_mm_rrow(L, r, add(L, k, pto__lower_i64(L, ahead)));
  int64_t es = (int64_t)pto_dtype_size(r->dt);
  for (int64_t c = lo; c < hi; c += 64 / es) {
    LLVMValueRef col = pto__lower_i64(L, c);
    if (j0) col = add(L, j0, col);
    LLVMValueRef off = mul(L, add(L, row, col), pto__lower_i64(L, es));
    pto__lower_prefetch(L, LLVMBuildGEP2(L->b, L->t_i8, r->base, &off, 1, name), 0, locality);
  }
}

/* A decode step's single row ([1, K] x a view of a weight, mm_rows_wide's blocks on 512-bit
 * vectors): at step k the block prefetches (into L1) the first line of its columns of r's row
 * k + MM_AHEAD_ROWS, one prefetch a row whatever the block's width. Each row piece (up to 1 KiB)
 * lies in a page of its own, rows a weight's width apart, and without this the product read W
 * at 1.01-1.14x the time of a plain sequential read: the memory saw each row's piece only when
 * the loads reached it. Touching each row early starts its stream 16 rows ahead, and the product
 * reads W faster than the plain read: [1, 4096] x [4096, 4096] on one thread, paired in one
 * process, 0.80-0.96x the read's time and 1.18-1.26x cblas_sgemv's (before 0.87-0.99x); bf16 W
 * 1.14-1.23x the read's time, from 1.42-1.59x (bench/RESULTS.md, round 12, "m1"). Prefetching every
 * line of the row ahead, or one line into L2 or non-temporal, did worse; 8 to 32 rows ahead did
 * alike, 4 less well. On Zen 4 (family 25 model 17, LLVM's znver4; round 13's host) the same
 * product read W at 0.39-0.52x cblas_sgemv's rate with that prefetch alone: the first line did
 * not start the row's stream there. Each block also prefetching every line of its piece of the
 * row MM_L2_ROW_AHEAD ahead into L2 took it to 0.86-0.95x (one thread; 32 rows ahead 0.67-0.76x,
 * 96 0.65-0.70x, 128 0.89-0.95x, 192 0.80x: rows 16 KiB apart share L2 sets, so the distance has
 * cliffs; non-temporal 0.49-0.51x; the pieces into L1 16 ahead 0.51x). With that L2 prefetch
 * the first line into L1 only cost: with 1024-column tasks (bench/kernels' @m1), one thread,
 * 8 runs alternated, 1.01-1.08x sgemv's rate by the minimum and 0.93-1.00x by the median without
 * it, 0.97-1.03x and 0.91-0.98x with it (round 14, "m1z4"; 256-column tasks alike within the
 * noise), so on Zen 4 the block prefetches into L2 alone. The distance, scanned again then
 * without the L1 prefetch (1024-column tasks, 2 runs each, sgemv's rate by the minimum): 40 rows
 * 0.81-0.84x, 48 0.87-0.93x, 52 0.90-0.91x, 56 1.02-1.03x, 58 1.06-1.07x, 60 1.07-1.14x, 62
 * 1.02-1.03x, 64 0.95-1.08x, 68 0.92x, 72 0.88-0.91x; with 256-column tasks 60 rows 1.00-1.06x
 * against 64's 0.91-0.94x. Past 64 rows (1 MiB at 16 KiB a row) the rows in flight overflow
 * their L2 sets; 60 leaves some slack. It is asked only of znver4
 * (pto__lower_host_has: the host CPU is part of the cache key): on round 12's Zen 5 the first line
 * alone gave 1.13-1.26x sgemv, and no other CPU was measured with the L2 prefetch. Rows past the
 * end of r's tile are those the loop's next tile.load reads when it walks K down the tensor; past
 * the tensor's end a prefetch touches nothing (it never faults) and costs an instruction. */
static void mm_row_ahead(lw *L, const lw_tile *l, const lw_tile *r, const mm_blk *B,
                         LLVMValueRef k) {
  if (l->rows != 1 || B->vw != MM_VW_MAX || !r->rs || r->ri) return;
  /* On Zen 4 every line of the block's piece of row k + MM_L2_ROW_AHEAD into L2, and no first
   * line into L1 (above). */
  if (pto__lower_host_has("cpu=znver4;"))
    mm_prefetch_cols(L, r, k, MM_L2_ROW_AHEAD, B->j0, 0, B->nv * B->vw, "pf.rowl2", 2);
  else
    mm_prefetch_cols(L, r, k, MM_AHEAD_ROWS, B->j0, 0, 1, "pf.ahead", 3);
}

/* The k loop of a register block: one fma per k step, or (dp) one vdpbf16ps per pair of steps
 * on the packed operands and an odd K's last step as one fma. */
static void mm_block_k(lw *L, const lw_tile *l, const lw_tile *r, pto_dtype odt, const mm_blk *B,
                       const mm_dp *dp) {
  int64_t K = l->cols, KS = dp ? dp->P : K;
  int mr = B->mr, nv = B->nv, vw = B->vw;
  LLVMValueRef Kv = pto__lower_i64(L, K);
  LLVMValueRef KSv = pto__lower_i64(L, KS);
  lw_loop lk;
  LLVMValueRef k = pto__lower_loop_begin(L, &lk, pto__lower_i64(L, 0),
                                         B->k0 ? pto__lower_i64(L, B->kn) : KSv, "mm.k");
  if (B->ppk > 0) {
    LLVMValueRef step = add(L, B->step0, k);
    for (int64_t q = 0; q < B->ppk; q++)
      mm_prefetch_line(L, add(L, mul(L, step, pto__lower_i64(L, B->ppk)), pto__lower_i64(L, q)));
  }
  if (dp) {
    LLVMTypeRef pv = LLVMVectorType(L->t_i32, (unsigned)vw);
    LLVMValueRef bv[MM_NV_MAX];
    for (int h = 0; h < nv; h++) {
      LLVMValueRef idx = add(L, mul(L, k, pto__lower_i64(L, dp->rstride)),
                             add(L, B->j0, pto__lower_i64(L, h * vw)));
      bv[h] = as_bf16_pairs(L, pto__lower_scratch_load(L, pv, L->t_i32, dp->rp, idx, 4), vw);
    }
    const char *fn =
        vw == 16 ? "llvm.x86.avx512bf16.dpbf16ps.512" : "llvm.x86.avx512bf16.dpbf16ps.256";
    for (int ii = 0; ii < mr; ii++) {
      LLVMValueRef lidx = add(L, mul(L, add(L, B->i0, pto__lower_i64(L, ii)), KSv), k);
      LLVMValueRef a = pto__lower_scratch_load(L, L->t_i32, L->t_i32, dp->lp, lidx, 4);
      LLVMValueRef av = as_bf16_pairs(L, pto__lower_splat(L, a, vw), vw);
      for (int h = 0; h < nv; h++) {
        LLVMValueRef args[3] = {LLVMBuildLoad2(L->b, B->vt, B->accs[ii][h], ""), av, bv[h]};
        LLVMBuildStore(L->b, pto__lower_call_intrinsic(L, fn, NULL, 0, args, 3, ""),
                       B->accs[ii][h]);
      }
    }
    pto__lower_loop_end(L, &lk);
  }
  /* the k steps one at a time: all of them, or an odd K's last after the pairs */
  LLVMValueRef k1 = NULL;
  if (!dp)
    k1 = B->k0 ? add(L, B->k0, k) : k;
  else if (K % 2)
    k1 = pto__lower_i64(L, K - 1);
  if (k1) {
    mm_row_ahead(L, l, r, B, k1);
    if (B->rest_hi > B->rest_lo) {
      mm_prefetch_cols(L, r, k1, B->rest_ahead, B->rest_own ? B->j0 : NULL, B->rest_lo, B->rest_hi,
                       B->rest_own ? "pf.chunk" : "pf.rest", B->rest_ahead ? 3 : 2);
      /* in chunks, the same columns of row k + MM_L2_AHEAD into L2 (mm_blocks says why) */
      if (B->rest_own)
        mm_prefetch_cols(L, r, k1, MM_L2_AHEAD, B->j0, B->rest_lo, B->rest_hi, "pf.l2", 2);
    }
    LLVMValueRef bv[MM_NV_MAX];
    for (int h = 0; h < nv; h++)
      bv[h] = vconvert(L,
                       pto__lower_vload(L, r,
                                        add(L, pto__lower_mm_rrow(L, r, k1),
                                            add(L, B->j0, pto__lower_i64(L, h * vw))),
                                        vw),
                       r->dt, odt, vw);
    for (int ii = 0; ii < mr; ii++) {
      LLVMValueRef lidx = add(L, mul(L, add(L, B->i0, pto__lower_i64(L, ii)), Kv), k1);
      LLVMValueRef av =
          pto__lower_splat(L, pto__lower_convert(L, pto__lower_load_c(L, l, lidx), l->dt, odt), vw);
      for (int h = 0; h < nv; h++) {
        LLVMValueRef cur = LLVMBuildLoad2(L->b, B->vt, B->accs[ii][h], "");
        LLVMBuildStore(L->b, pto__lower_mm_step(L, odt, av, bv[h], cur), B->accs[ii][h]);
      }
    }
  }
  if (!dp) pto__lower_loop_end(L, &lk);
}

/* One of two forms of the same register block, chosen at run time: basic blocks name[0] and
 * name[1] (appended and filled in that order) run block k[i] with dp[i]; cond true takes
 * name[t]. */
static void mm_block_k_if(lw *L, LLVMValueRef cond, int t, const lw_tile *l, const lw_tile *r,
                          pto_dtype odt, const mm_blk *const k[2], const mm_dp *const dp[2],
                          const char *const name[2]) {
  LLVMBasicBlockRef bb[2] = {LLVMAppendBasicBlockInContext(L->c, L->fn, name[0]),
                             LLVMAppendBasicBlockInContext(L->c, L->fn, name[1])};
  LLVMBasicBlockRef join = LLVMAppendBasicBlockInContext(L->c, L->fn, "mm.blk.join");
  LLVMBuildCondBr(L->b, cond, bb[t], bb[1 - t]);
  for (int i = 0; i < 2; i++) {
    LLVMPositionBuilderAtEnd(L->b, bb[i]);
    mm_block_k(L, l, r, odt, k[i], dp[i]);
    LLVMBuildBr(L->b, join);
  }
  LLVMPositionBuilderAtEnd(L->b, join);
}

/* out[i_lo..i_hi, j_lo..j_hi) += l x r in register blocks of mr rows by nv vectors of vw
 * lanes (i_hi - i_lo a multiple of mr, j_hi - j_lo of nv * vw): the accumulators stay in
 * vector registers across k (with k0, across the kn steps of a chunk from k0), each lane summing
 * its products in k order. With dp, on bf16 dot products (mm_block_k); a block whose accumulators
 * are out of their range (dp->check_acc) runs its fma steps instead. */
static void mm_blocked(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t, int mr, int nv,
                       int vw, int64_t i_lo, int64_t i_hi, int64_t j_lo, int64_t j_hi,
                       int *prefetch, const mm_dp *dp, int *rest, LLVMValueRef k0, int64_t kn) {
  if (i_hi - i_lo < mr || j_hi - j_lo < nv * vw) return;
  /* With rest (r a view of a tensor in memory, f32 steps): the first slab's first row block
   * prefetches, at each k step, the rest of r's row k (up to MM_REST_MAX lines past its own
   * columns), which the later slabs read: the first pass over r's window then asks the memory for
   * whole row pieces, as mm_rows_wide's blocks do, instead of a slab's 192 bytes of each row per
   * pass. In chunks (k0, mm_blocks), instead every slab's first row block (of the rows from
   * 0: the slab's other row blocks read the same lines) prefetches its own columns of row
   * k + MM_L1_AHEAD into L1 and of row k + MM_L2_AHEAD into L2 (mm_blocks says why). */
  int64_t rest_lo = j_lo + nv * vw, rest_hi = rest_lo, ahead = 0;
  int own = 0;
  if (rest && k0 && i_lo == 0 && !dp && r->rs) {
    own = 1;
    rest_lo = 0;
    rest_hi = nv * vw;
    ahead = MM_L1_AHEAD;
  } else if (rest && *rest && !k0) {
    int64_t most = rest_lo + MM_REST_MAX * 64 / (int64_t)pto_dtype_size(r->dt);
    if (!dp && r->rs) rest_hi = r->cols < most ? r->cols : most;
    *rest = 0;
  }
  /* With prefetch: the next loop iteration's tile.load windows come into the caches while
   * this computes, spread over the k steps (ppk lines a step) so the loads are never a burst. */
  int64_t pf_lines = *prefetch ? mm_next_lines(L) : 0;
  int64_t KS = dp ? dp->P : l->cols, nib = (i_hi - i_lo) / mr;
  int64_t slots = (j_hi - j_lo) / (nv * vw) * nib * KS;
  int64_t ppk = slots > 0 ? (pf_lines + slots - 1) / slots : 0;
  if (ppk > MM_PF_MAX) ppk = MM_PF_MAX; /* a hint: past that many a step, some lines go without */
  *prefetch = 0;
  pto_dtype odt = t->dt;
  int64_t NB = nv * vw, N = r->cols;
  LLVMTypeRef vt = LLVMVectorType(pto__lower_compute_type(L, odt), (unsigned)vw);
  LLVMValueRef accs[MM_MR_MAX][MM_NV_MAX];
  for (int ii = 0; ii < mr; ii++)
    for (int h = 0; h < nv; h++)
      accs[ii][h] = pto__lower_entry_alloca(L, vt, "mmacc");
  LLVMValueRef Nv = pto__lower_i64(L, N);
  /* Column slabs outside: the K x NB slab of r stays in L1 while the row blocks pass. */
  lw_loop lb, ljb;
  LLVMValueRef jb = pto__lower_loop_begin(L, &ljb, pto__lower_i64(L, 0),
                                          pto__lower_i64(L, (j_hi - j_lo) / NB), "mm.jb");
  LLVMValueRef j0 = add(L, mul(L, jb, pto__lower_i64(L, NB)), pto__lower_i64(L, j_lo));
  LLVMValueRef ib = pto__lower_loop_begin(L, &lb, pto__lower_i64(L, 0),
                                          pto__lower_i64(L, (i_hi - i_lo) / mr), "mm.ib");
  LLVMValueRef i0 = add(L, mul(L, ib, pto__lower_i64(L, mr)), pto__lower_i64(L, i_lo));
  LLVMValueRef oidx[MM_MR_MAX][MM_NV_MAX], out = NULL;
  for (int ii = 0; ii < mr; ii++)
    for (int h = 0; h < nv; h++) {
      oidx[ii][h] = add(L, mul(L, add(L, i0, pto__lower_i64(L, ii)), Nv),
                        add(L, j0, pto__lower_i64(L, h * vw)));
      LLVMValueRef v = pto__lower_vload(L, t, oidx[ii][h], vw);
      LLVMBuildStore(L->b, v, accs[ii][h]);
      if (dp && dp->check_acc) {
        LLVMTypeRef it = LLVMVectorType(L->t_i32, (unsigned)vw);
        LLVMValueRef o = dp_outside(L, LLVMBuildBitCast(L->b, v, it, ""), 1);
        out = out ? LLVMBuildOr(L->b, out, o, "") : o;
      }
    }
  /* line numbers: block by block, ppk lines a k step */
  mm_blk B = {.mr = mr,
              .nv = nv,
              .vw = vw,
              .i0 = i0,
              .j0 = j0,
              .step0 =
                  mul(L, add(L, mul(L, jb, pto__lower_i64(L, nib)), ib), pto__lower_i64(L, KS)),
              .accs = accs,
              .vt = vt,
              .ppk = ppk,
              .k0 = k0,
              .kn = kn};
  if (rest_hi > rest_lo) {
    LLVMValueRef first = LLVMBuildICmp(L->b, LLVMIntEQ, ib, pto__lower_i64(L, 0), "");
    if (!own)
      first = LLVMBuildAnd(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, jb, pto__lower_i64(L, 0), ""),
                           first, "");
    mm_blk BR = B;
    BR.rest_own = own;
    BR.rest_lo = rest_lo;
    BR.rest_hi = rest_hi;
    BR.rest_ahead = ahead;
    mm_block_k_if(L, first, 0, l, r, odt, (const mm_blk *[2]){&BR, &B}, (const mm_dp *[2]){dp, dp},
                  (const char *[2]){"mm.blk.rest", "mm.blk.plain"});
  } else if (out) {
    LLVMTypeRef bt = LLVMTypeOf(out);
    out = pto__lower_call_intrinsic(L, "llvm.vector.reduce.or", &bt, 1, &out, 1, "");
    mm_block_k_if(L, out, 1, l, r, odt, (const mm_blk *[2]){&B, &B}, (const mm_dp *[2]){dp, NULL},
                  (const char *[2]){"mm.blk.dp", "mm.blk.fma"});
  } else {
    mm_block_k(L, l, r, odt, &B, dp);
  }
  for (int ii = 0; ii < mr; ii++)
    for (int h = 0; h < nv; h++)
      pto__lower_vstore(L, t, oidx[ii][h], LLVMBuildLoad2(L->b, vt, accs[ii][h], ""));
  pto__lower_loop_end(L, &lb);
  pto__lower_loop_end(L, &ljb);
}

/* A decode step's product: M < 4 rows ([1, K] x [K, N]) on 512-bit vectors, from column 0 to j
 * (returned). Each row block is up to 256 columns wide at M = 1 (16 accumulators) and 128 at
 * M = 2 and 3 (16 and 24), then half as wide, so a k step reads up to 1 KiB of r's row back to
 * back, and without the next windows' software prefetches: r is then a stream of whole row
 * pieces that the hardware prefetchers follow (r typically a view of a weight much larger than
 * the caches, plan_views), where 48-column blocks with prefetches read each row in pieces and
 * waited on the miss queue (bench/RESULTS.md, kperf2: 0.6x cblas_sgemv before, about 1.0x
 * after). */
static int64_t mm_rows_wide(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t) {
  int64_t M = l->rows, N = r->cols, j = 0;
  int none = 0;
  for (int nv = M == 1 ? 16 : 8; nv >= 1; nv /= 2) {
    int64_t jw = j + (N - j) / (nv * MM_VW_MAX) * (nv * MM_VW_MAX);
    mm_blocked(L, l, r, t, (int)M, nv, MM_VW_MAX, 0, M, j, jw, &none, NULL, NULL, NULL, 0);
    j = jw;
  }
  return j;
}

/* The register blocks of out[0..M, 0..j) (j returned): 16-lane vectors where the host has them,
 * then 8-lane ones; the right edge is left to mm_simple. Rows in blocks of 8 and 4, and the last
 * M mod 4 rows in blocks of their own (for M < 4 on 512-bit vectors, a decode step's [1, K] or
 * [2, K] x [K, N], the wide blocks of mm_rows_wide), so that every row keeps its accumulators in
 * registers across k and reads r a vector at a time. The same blocks with or without dp; the last
 * rows always on the fmaf path (packed l holds whole blocks of 4 rows).
 *
 * The first register-blocked part prefetches the loop's next tile.loads, except on 512-bit
 * vectors for M <= 8 (a decode step's batch: [8, K] x a view of a weight, plan_views): there a
 * k step has at most 24 fmas per block beside up to MM_PF_MAX prefetches and their address
 * arithmetic, which cost more than the lines they bring. Measured on the decode step's
 * projections, one thread, W out of the cache (bench/RESULTS.md, "m8read"): 9-20% less time in
 * f32 at M = 5..8 (none lost at M = 4), 27% in bf16, and twice the rate with W in the cache.
 * Instead, in f32, the first block that runs prefetches the rest of each row of r as it reads
 * its own columns (mm_blocked's rest): a 128-column window is read in three passes of 48, 48 and
 * 32 columns, and the first asked the memory for 192 bytes of each row, rows a weight's width
 * apart, which the hardware prefetchers do not follow; a read of the window in the blocks' order
 * alone took about as long as the product (bench/RESULTS.md, "m8ovl"). Measured the same way
 * (medians): 13-17% less time for the logits projection of the decode step at batch 8, 11-16%
 * for q/k/v, 11-21% for SwiGLU, 6-13% for down; none lost with W in the cache.
 *
 * Still, the three passes over a window added memory time and compute time: the first pass
 * waited on the memory, the other two computed from the caches while the memory idled. So when
 * the window's rows are a multiple of MM_KCHUNK_MIN, the blocks go chunk by chunk of 16 rows
 * (MM_KCHUNK, 32, where the window's rows are a multiple of it: see below), all the window's
 * slabs over one chunk before the next, and each slab's first row block prefetches its own
 * columns of the row 16 rows ahead (MM_L1_AHEAD, into L1: into L2 alone it lost more than the
 * chunks gained): the rows come in while every slab computes. Measured one thread, W out of
 * the cache, the decode step's shapes at batch 8 (bench/RESULTS.md, "m8"), with the first block
 * prefetching the whole row ahead: 1-15% less time (medians; 128-row windows: 9-15% for the
 * logits' shape, 8-15% SwiGLU's, 4-9% q/k/v's, 1-7% down's; 7-10% bench_kernels' decode shape);
 * chunks of 32 rows gained 3-6%, chunks without the prefetch lost 12%. Each slab fetching its
 * own columns instead (3 or 2 lines a k step in every slab, not 8-16 in the first) took 3-9% less
 * time again for the logits' shape, 17-26% SwiGLU's, 2-5% bench_kernels' (round 12, "m8v2");
 * the first line of each row ahead (as mm_row_ahead at M = 1), 2 or 4 lines, or the row 8, 24 or
 * 32 rows ahead did worse. With W in the cache the chunks cost 12-16% (the accumulators go to t
 * and back at each chunk; the prefetches cost nothing there), and chunks of 32 or 64 rows, which
 * cut that to 6-9%, took 2-12% more time out of the cache: the decode step's weights are far
 * larger than the caches.
 *
 * Prefetches into L1 alone left the product reading W at 11-12 GB/s where a plain read of the
 * same bytes did 25-32 (one thread, this host), and a panel-major W (each task's [K, 128] slab
 * contiguous, rows 512 bytes apart, so the hardware prefetchers stream it) was no faster: what
 * bounded it was how many lines were in flight, not where they lay. A prefetch into L1 holds one
 * of the core's few L1 miss buffers for the whole trip to the memory. So each slab's first row
 * block also prefetches its own columns of the row MM_L2_AHEAD rows ahead into L2 (prefetcht1),
 * and the L1 prefetch 16 rows ahead then finds its line in L2. Measured in one process, one
 * thread, W out of the cache, paired medians against the L1 prefetch alone (round 13, "m8rd"):
 * 34% less time for the logits' shape, 39% q/k/v's, 42% SwiGLU's, 44% down's, 47% bench_kernels'
 * decode shape; 24 rows ahead gained less, 32 to 64 alike, prefetcht2 the same as prefetcht1;
 * with W in the cache unchanged. With those prefetches, chunks of 32 rows (the L1 prefetch
 * still 16 rows ahead, the L2 one 56) took 2-5% less time than chunks of 16 for the logits',
 * q/k/v, down and bench_kernels' shapes (SwiGLU's -3 to +1%) and 5% less with W in the cache,
 * where each chunk's accumulator traffic is what the chunks cost (no chunks there: 10% less);
 * the L1 prefetch as far ahead as the chunk (32) lost 50-78%, the L2 one 48 or 64 ahead up to
 * 8-22% on the logits' shape, and no chunks (with the L2 prefetch of each row's piece from the
 * first slab) 18-68%. */
static int64_t mm_blocks(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t,
                         const mm_dp *dp) {
  int64_t M = l->rows, N = r->cols, M4 = M / 4 * 4, j = 0;
  int mt = (int)(M - M4);
  int pf = !(pto__lower_host_has("+avx512f") && M <= MM_MR_MAX);
  int rest = !pf;
  /* 512-bit registers: 16-lane blocks, twice the work per instruction of 8 lanes (the products
   * and sums stay separate, so this is the only way to more throughput without changing the
   * rounding) */
  if (pto__lower_host_has("+avx512f") && M < 4 && N >= MM_VW_MAX) {
    j = mm_rows_wide(L, l, r, t);
    mt = 0; /* the 8-lane blocks below come in 16 columns: none are left */
    LLVMAddAttributeAtIndex(
        L->fn, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(L->c, "min-legal-vector-width", 22, "512", 3));
  } else if (pto__lower_host_has("+avx512f") && N >= MM_NV * MM_VW_MAX) {
    /* 8 x 48 blocks (24 accumulators: 24 fmas per 3 loads of r and 8 broadcasts of l), then
     * 8 x 32, then 4-row edges and the last rows, split at the same columns (a 48-column part
     * that is not a multiple of 32 columns left 16 of them out of a 4-row edge: M = 4, N = 48);
     * one 48-column block fewer when that lets 32-column blocks cover the rest (N = 64, 256:
     * not 16 columns left to the 8-lane kernel) */
    int64_t M8 = M / 8 * 8, j3 = N / (3 * MM_VW_MAX) * (3 * MM_VW_MAX);
    if ((N - j3) % (MM_NV * MM_VW_MAX) && j3 > 0 &&
        (N - j3 + 3 * MM_VW_MAX) % (MM_NV * MM_VW_MAX) == 0)
      j3 -= 3 * MM_VW_MAX;
    int64_t jw = j3 + (N - j3) / (MM_NV * MM_VW_MAX) * (MM_NV * MM_VW_MAX);
    /* M <= 8 in f32 on a view of a tensor (a decode step's batch times a weight's window): the
     * blocks run chunk by chunk of MM_KCHUNK (or MM_KCHUNK_MIN) k steps, every block's chunk
     * before the next chunk
     * (the accumulators go back to t between chunks; each element still sums in k order), so
     * that the window's rows come from the memory while all its slabs compute, not only while
     * the first does: each slab prefetches its columns of the rows ahead (mm_blocked's rest). */
    int64_t K = l->cols, kn = K > MM_KCHUNK && K % MM_KCHUNK == 0 ? MM_KCHUNK : MM_KCHUNK_MIN;
    lw_loop lc;
    LLVMValueRef k0 = NULL;
    if (rest && !dp && r->rs && !r->ri && K > kn && K % kn == 0) {
      LLVMValueRef c =
          pto__lower_loop_begin(L, &lc, pto__lower_i64(L, 0), pto__lower_i64(L, K / kn), "mm.kc");
      k0 = mul(L, c, pto__lower_i64(L, kn));
    }
    mm_blocked(L, l, r, t, 8, 3, MM_VW_MAX, 0, M8, 0, j3, &pf, dp, &rest, k0, kn);
    mm_blocked(L, l, r, t, 8, MM_NV, MM_VW_MAX, 0, M8, j3, jw, &pf, dp, &rest, k0, kn);
    mm_blocked(L, l, r, t, 4, 3, MM_VW_MAX, M8, M4, 0, j3, &pf, dp, &rest, k0, kn);
    mm_blocked(L, l, r, t, 4, MM_NV, MM_VW_MAX, M8, M4, j3, jw, &pf, dp, &rest, k0, kn);
    if (mt > 0) {
      mm_blocked(L, l, r, t, mt, 3, MM_VW_MAX, M4, M, 0, j3, &pf, NULL, &rest, k0, kn);
      mm_blocked(L, l, r, t, mt, MM_NV, MM_VW_MAX, M4, M, j3, jw, &pf, NULL, &rest, k0, kn);
    }
    if (k0) pto__lower_loop_end(L, &lc);
    j = jw;
    /* 512-bit vector types stay whole instead of being split into 256-bit halves. */
    LLVMAddAttributeAtIndex(
        L->fn, LLVMAttributeFunctionIndex,
        LLVMCreateStringAttribute(L->c, "min-legal-vector-width", 22, "512", 3));
  }
  int64_t jn = j + (N - j) / (MM_NV * 8) * (MM_NV * 8);
  mm_blocked(L, l, r, t, 4, MM_NV, 8, 0, M4, j, jn, &pf, dp, NULL, NULL, 0);
  if (mt > 0) mm_blocked(L, l, r, t, mt, MM_NV, 8, M4, M, j, jn, &pf, NULL, NULL, NULL, 0);
  return jn;
}

/* ---- bf16 dot products ----------------------------------------------------------------------
 *
 * vdpbf16ps (AVX512_BF16) does, in each f32 lane, two fused multiply-adds of a pair of bf16
 * products: the pair's odd element first, then the even one, each rounded to nearest even
 * (Intel's SDM; measured the same on AMD Zen 5), but it reads denormal inputs as zero and
 * flushes denormal results to zero. With each pair packed k = 2p in the high half and 2p + 1 in
 * the low one, a lane computes fmaf(l[2p+1], r[2p+1], fmaf(l[2p], r[2p], sum)): the interpreter's
 * k order, bit for bit as long as no denormal appears and nothing overflows. That is so when
 * every nonzero bf16 input lies in [2^-56, 2^51) in magnitude and every nonzero accumulator in
 * [2^-103, 2^126): products are multiples of 2^-126 (two bf16 quanta of at least 2^-63), so is
 * an accumulator, so is every sum, and a rounded sum stays one; a nonzero multiple of 2^-126 is
 * a normal number. Products stay below 2^102 and K below 2^24, so no sum reaches 2^127. The
 * kernel checks the ranges at run time: the operands as it packs them (work linear in their
 * size, beside the product's M x N x K; when some element is outside, every block runs its fmaf
 * steps), a matmul_acc's accumulators block by block as they come into registers (a block with
 * one outside runs its fmaf steps). inf and NaN are outside. */

static int mm_dp_host(void) {
  return pto__lower_host_has("+avx512bf16") && pto__lower_host_has("+avx512vl");
}

/* Pairs packed a vector at a time (512 bits); every register block's columns are a multiple. */
#define DP_PACK_W 16

/* Bytes of packed l (the rows of whole register blocks, M / 4 * 4, by K / 2 pairs), 64-aligned;
 * packed r follows: K / 2 pairs by the columns of whole register blocks, N / 16 * 16. */
static int64_t mm_dp_lbytes(int64_t M, int64_t K) {
  return (M / 4 * 4 * (K / 2) * 4 + 63) / 64 * 64;
}

int64_t pto__lower_mm_pack_bytes(pto_dtype l, pto_dtype r, int64_t M, int64_t K, int64_t N) {
  if (l != PTO_DTYPE_BF16 || r != PTO_DTYPE_BF16 || M < 4 || K < 2 || N < 16 || !mm_dp_host())
    return 0;
  return mm_dp_lbytes(M, K) + K / 2 * (N / DP_PACK_W * DP_PACK_W) * 4;
}

/* A constant of integer type t (a vector: in every lane). */
static LLVMValueRef const_int_like(LLVMTypeRef t, uint64_t v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstInt(t, v, 0);
  LLVMValueRef e[MM_VW_MAX * 2];
  unsigned n = LLVMGetVectorSize(t);
  for (unsigned i = 0; i < n; i++)
    e[i] = LLVMConstInt(LLVMGetElementType(t), v, 0);
  return LLVMConstVector(e, n);
}

/* Per lane of x (bf16 bits in i16, or f32 bits in i32): is the element outside the range in
 * which vdpbf16ps equals fmaf (see above)? */
static LLVMValueRef dp_outside(lw *L, LLVMValueRef x, int f32) {
  LLVMTypeRef t = LLVMTypeOf(x);
  uint64_t mask = f32 ? 0x7fffffffu : 0x7fffu;
  uint64_t lo = f32 ? 24u << 23 : 71u << 7; /* 2^-103, 2^-56 */
  uint64_t span = f32 ? ((252u - 24u) << 23 | 0x7fffffu) : ((177u - 71u) << 7 | 0x7fu);
  LLVMValueRef mag = LLVMBuildAnd(L->b, x, const_int_like(t, mask), "");
  LLVMValueRef off = LLVMBuildSub(L->b, mag, const_int_like(t, lo), "");
  return LLVMBuildAnd(L->b, LLVMBuildICmp(L->b, LLVMIntNE, mag, const_int_like(t, 0), ""),
                      LLVMBuildICmp(L->b, LLVMIntUGT, off, const_int_like(t, span), ""), "");
}

/* Where packing notes bf16 elements out of range: DP_PACK_W lanes of 32-bit pairs, ORed lane by
 * lane (a reduction per vector would cost more than the test), and a scalar for the rest. */
typedef struct dp_flags {
  LLVMValueRef vec, one; /* allocas: <2 DP_PACK_W x i16>, i8 */
} dp_flags;

static void dp_note_outside(lw *L, LLVMValueRef v, const dp_flags *f) {
  LLVMTypeRef t = LLVMTypeOf(v);
  unsigned n = LLVMGetTypeKind(t) == LLVMVectorTypeKind ? LLVMGetVectorSize(t) : 1;
  LLVMTypeRef ht = LLVMVectorType(L->t_i16, 2 * n);
  LLVMValueRef o = dp_outside(L, LLVMBuildBitCast(L->b, v, ht, ""), 0);
  if (n == DP_PACK_W) {
    LLVMValueRef cur = LLVMBuildLoad2(L->b, ht, f->vec, "");
    LLVMBuildStore(L->b, LLVMBuildOr(L->b, cur, LLVMBuildZExt(L->b, o, ht, ""), ""), f->vec);
    return;
  }
  LLVMTypeRef ot = LLVMTypeOf(o);
  o = pto__lower_call_intrinsic(L, "llvm.vector.reduce.or", &ot, 1, &o, 1, "");
  LLVMValueRef cur = LLVMBuildLoad2(L->b, L->t_i8, f->one, "");
  LLVMBuildStore(L->b, LLVMBuildOr(L->b, cur, LLVMBuildZExt(L->b, o, L->t_i8, ""), ""), f->one);
}

/* Packs rows [0, rows) of l: lp[i][p] = the 32 bits of l[i][2p..2p+1] rotated by 16 (l[i][2p] in
 * the high half), DP_PACK_W pairs at a time, the rest one by one; notes elements out of range in
 * flag. */
static void dp_pack_l(lw *L, const lw_tile *l, LLVMValueRef lp, int64_t rows, int64_t P,
                      const dp_flags *flag) {
  int64_t K = l->cols, PW = P / DP_PACK_W * DP_PACK_W;
  lw_loop li, lq;
  LLVMValueRef i =
      pto__lower_loop_begin(L, &li, pto__lower_i64(L, 0), pto__lower_i64(L, rows), "dp.pl.i");
  for (int part = 0; part < 2; part++) {
    int64_t lo = part ? PW : 0, hi = part ? P : PW, step = part ? 1 : DP_PACK_W;
    if (lo >= hi) continue;
    LLVMTypeRef t = part ? L->t_i32 : LLVMVectorType(L->t_i32, DP_PACK_W);
    LLVMValueRef q = pto__lower_loop_begin(L, &lq, pto__lower_i64(L, 0),
                                           pto__lower_i64(L, (hi - lo) / step), "dp.pl.p");
    LLVMValueRef p = add(L, mul(L, q, pto__lower_i64(L, step)), pto__lower_i64(L, lo));
    LLVMValueRef src = add(L, mul(L, i, pto__lower_i64(L, K)), mul(L, p, pto__lower_i64(L, 2)));
    LLVMValueRef v = pto__lower_scratch_load(L, t, L->t_i16, l->base, src, 2);
    dp_note_outside(L, v, flag);
    LLVMValueRef args[3] = {v, v, const_int_like(t, 16)};
    v = pto__lower_call_intrinsic(L, "llvm.fshl", &t, 1, args, 3, "");
    pto__lower_scratch_store(L, v, L->t_i32, lp, add(L, mul(L, i, pto__lower_i64(L, P)), p), 4);
    pto__lower_loop_end(L, &lq);
  }
  pto__lower_loop_end(L, &li);
}

/* Packs r: rp[p][j] = r[2p][j] << 16 | r[2p+1][j] for j in [0, cols) (a multiple of DP_PACK_W,
 * as every register block's columns are), DP_PACK_W columns at a time; notes elements out of
 * range in flag. */
static void dp_pack_r(lw *L, const lw_tile *r, LLVMValueRef rp, int64_t P, int64_t cols,
                      const dp_flags *flag) {
  LLVMTypeRef t16 = LLVMVectorType(L->t_i16, DP_PACK_W), t32 = LLVMVectorType(L->t_i32, DP_PACK_W);
  LLVMValueRef W = pto__lower_i64(L, DP_PACK_W);
  lw_loop lp, lj;
  LLVMValueRef p =
      pto__lower_loop_begin(L, &lp, pto__lower_i64(L, 0), pto__lower_i64(L, P), "dp.pr.p");
  LLVMValueRef j = mul(L,
                       pto__lower_loop_begin(L, &lj, pto__lower_i64(L, 0),
                                             pto__lower_i64(L, cols / DP_PACK_W), "dp.pr.j"),
                       W);
  LLVMValueRef half[2];
  for (int h = 0; h < 2; h++) {
    LLVMValueRef row = add(L, mul(L, p, pto__lower_i64(L, 2)), pto__lower_i64(L, h));
    LLVMValueRef v = pto__lower_scratch_load(L, t16, L->t_i16, r->base,
                                             add(L, pto__lower_mm_rrow(L, r, row), j), 2);
    half[h] = LLVMBuildZExt(L->b, v, t32, "");
  }
  LLVMValueRef v =
      LLVMBuildOr(L->b, LLVMBuildShl(L->b, half[0], const_int_like(t32, 16), ""), half[1], "");
  dp_note_outside(L, v, flag);
  pto__lower_scratch_store(L, v, L->t_i32, rp, add(L, mul(L, p, pto__lower_i64(L, cols)), j), 4);
  pto__lower_loop_end(L, &lj);
  pto__lower_loop_end(L, &lp);
}

/* The register blocks of a bf16 matmul (the planner gave it the packed buffer pack): the
 * operands are packed, and when every element the pairs use is in range, the blocks run on
 * vdpbf16ps (each block checking its own accumulators, matmul_acc), else mm_blocks' fmaf path.
 * Returns j as mm_blocks does. */
static int64_t mm_blocks_dp(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t,
                            int with_acc, LLVMValueRef pack) {
  int64_t M = l->rows, K = l->cols, N = r->cols, P = K / 2;
  LLVMValueRef off = pto__lower_i64(L, mm_dp_lbytes(M, K));
  mm_dp dp = {.lp = pack,
              .rp = LLVMBuildInBoundsGEP2(L->b, L->t_i8, pack, &off, 1, "dp.rp"),
              .P = P,
              .rstride = N / DP_PACK_W * DP_PACK_W,
              .check_acc = with_acc};
  LLVMTypeRef vt = LLVMVectorType(L->t_i16, 2 * DP_PACK_W);
  dp_flags flag = {pto__lower_entry_alloca(L, vt, "dp.out"),
                   pto__lower_entry_alloca(L, L->t_i8, "dp.out1")};
  LLVMBuildStore(L->b, LLVMConstNull(vt), flag.vec);
  LLVMBuildStore(L->b, LLVMConstInt(L->t_i8, 0, 0), flag.one);
  dp_pack_l(L, l, dp.lp, M / 4 * 4, P, &flag);
  dp_pack_r(L, r, dp.rp, P, dp.rstride, &flag);
  LLVMValueRef v = LLVMBuildLoad2(L->b, vt, flag.vec, "");
  v = pto__lower_call_intrinsic(L, "llvm.vector.reduce.or", &vt, 1, &v, 1, "");
  v = LLVMBuildOr(L->b, LLVMBuildTrunc(L->b, v, L->t_i8, ""),
                  LLVMBuildLoad2(L->b, L->t_i8, flag.one, ""), "");
  LLVMValueRef out = LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstInt(L->t_i8, 0, 0), "");
  LLVMBasicBlockRef bdp = LLVMAppendBasicBlockInContext(L->c, L->fn, "mm.dp"),
                    bfma = LLVMAppendBasicBlockInContext(L->c, L->fn, "mm.fma"),
                    join = LLVMAppendBasicBlockInContext(L->c, L->fn, "mm.join");
  LLVMBuildCondBr(L->b, out, bfma, bdp);
  LLVMPositionBuilderAtEnd(L->b, bdp);
  int64_t j = mm_blocks(L, l, r, t, &dp);
  LLVMBuildBr(L->b, join);
  LLVMPositionBuilderAtEnd(L->b, bfma);
  mm_blocks(L, l, r, t, NULL); /* the same blocks: they depend on the shapes alone */
  LLVMBuildBr(L->b, join);
  LLVMPositionBuilderAtEnd(L->b, join);
  return j;
}

int64_t pto__lower_mm_blocks(lw *L, const lw_tile *l, const lw_tile *r, const lw_tile *t,
                             int with_acc, LLVMValueRef pack) {
  if (pack && t->dt == PTO_DTYPE_F32) return mm_blocks_dp(L, l, r, t, with_acc, pack);
  if (mm_vector_ok(l->dt, t->dt) && mm_vector_ok(r->dt, t->dt)) return mm_blocks(L, l, r, t, NULL);
  return 0;
}
