/* The op registry: one row per op of docs/language.md's op tables (first and second set), with its
 * class and scalar function, on which the builder, interpreter, verifier and lowering dispatch.
 * Adding an op of an existing class is a row here (and its opcode) plus, for a new scalar function,
 * its semantics in the interpreter (ir/interp.c) and the lowering (compiler/lower_kernel.c);
 * never the grammar. */
#include <string.h>

#include "pto/ir.h"

#define K PTO_IN_KERNEL
#define O PTO_IN_ORCH
#define H PTO_IN_HOST
#define I PTO_OPD_INT
#define IB (PTO_OPD_INT | PTO_OPD_BOOL)
#define N (PTO_OPD_INT | PTO_OPD_FLOAT)
#define F PTO_OPD_FLOAT

/* Indexed by pto_opcode; the order must match the enum. */
static const pto_op_info k_ops[PTO_OP_COUNT] = {
    [PTO_OP_TILE_LOAD] = {"tile.load", K, 3, 3, "space valid pad", 1, 0},
    [PTO_OP_TILE_STORE] = {"tile.store", K, 3, 3, "", 1, 1u << 2},
    [PTO_OP_TILE_CREATE] = {"tile.create", K, 2, 2, "space", 1, 0},
    [PTO_OP_TILE_FULL] = {"tile.full", K, 3, 3, "space", 1, 0},
    [PTO_OP_TILE_MOVE] = {"tile.move", K, 1, 1, "space", 1, 0},
    [PTO_OP_TILE_ADD] = {"tile.add", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_ADD},
    [PTO_OP_TILE_SUB] = {"tile.sub", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_SUB},
    [PTO_OP_TILE_MUL] = {"tile.mul", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_MUL},
    [PTO_OP_TILE_DIV] = {"tile.div", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_DIV},
    [PTO_OP_TILE_MAX] = {"tile.max", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_MAX},
    [PTO_OP_TILE_MIN] = {"tile.min", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_MIN},
    [PTO_OP_TILE_ADDS] = {"tile.adds", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_ADD},
    [PTO_OP_TILE_SUBS] = {"tile.subs", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_SUB},
    [PTO_OP_TILE_MULS] = {"tile.muls", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_MUL},
    [PTO_OP_TILE_DIVS] = {"tile.divs", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_DIV},
    [PTO_OP_TILE_MAXS] = {"tile.maxs", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_MAX},
    [PTO_OP_TILE_MINS] = {"tile.mins", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_MIN},
    [PTO_OP_TILE_EXP] = {"tile.exp", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_EXP, 1},
    [PTO_OP_TILE_LOG] = {"tile.log", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_LOG, 1},
    [PTO_OP_TILE_SQRT] = {"tile.sqrt", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_SQRT, 1},
    [PTO_OP_TILE_RSQRT] = {"tile.rsqrt", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_RSQRT, 1},
    [PTO_OP_TILE_RECIP] = {"tile.recip", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_RECIP, 1},
    [PTO_OP_TILE_RELU] = {"tile.relu", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_RELU},
    [PTO_OP_TILE_NEG] = {"tile.neg", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_NEG},
    [PTO_OP_TILE_ABS] = {"tile.abs", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_ABS},
    [PTO_OP_TILE_SIGMOID] = {"tile.sigmoid", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_SIGMOID, 1},
    [PTO_OP_TILE_CAST] = {"tile.cast", K, 2, 2, "", 1, 0, PTO_OPC_CAST, PTO_FN_NONE},
    [PTO_OP_TILE_ROW_SUM] = {"tile.row_sum", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_ROW, PTO_FN_ADD},
    [PTO_OP_TILE_ROW_MAX] = {"tile.row_max", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_ROW, PTO_FN_MAX},
    [PTO_OP_TILE_ROW_MIN] = {"tile.row_min", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_ROW, PTO_FN_MIN},
    [PTO_OP_TILE_COL_SUM] = {"tile.col_sum", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_COL, PTO_FN_ADD},
    [PTO_OP_TILE_COL_MAX] = {"tile.col_max", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_COL, PTO_FN_MAX},
    [PTO_OP_TILE_COL_MIN] = {"tile.col_min", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_COL, PTO_FN_MIN},
    [PTO_OP_TILE_ROW_EXPAND_ADD] = {"tile.row_expand_add", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_ROW,
                                    PTO_FN_ADD},
    [PTO_OP_TILE_ROW_EXPAND_SUB] = {"tile.row_expand_sub", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_ROW,
                                    PTO_FN_SUB},
    [PTO_OP_TILE_ROW_EXPAND_MUL] = {"tile.row_expand_mul", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_ROW,
                                    PTO_FN_MUL},
    [PTO_OP_TILE_ROW_EXPAND_DIV] = {"tile.row_expand_div", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_ROW,
                                    PTO_FN_DIV},
    [PTO_OP_TILE_COL_EXPAND_ADD] = {"tile.col_expand_add", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL,
                                    PTO_FN_ADD},
    [PTO_OP_TILE_COL_EXPAND_SUB] = {"tile.col_expand_sub", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL,
                                    PTO_FN_SUB},
    [PTO_OP_TILE_COL_EXPAND_MUL] = {"tile.col_expand_mul", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL,
                                    PTO_FN_MUL},
    [PTO_OP_TILE_COL_EXPAND_DIV] = {"tile.col_expand_div", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL,
                                    PTO_FN_DIV},
    [PTO_OP_TILE_MATMUL] = {"tile.matmul", K, 2, 2, "", 1, 0, PTO_OPC_MATMUL, PTO_FN_NONE},
    [PTO_OP_TILE_MATMUL_ACC] = {"tile.matmul_acc", K, 3, 3, "", 1, 0, PTO_OPC_MATMUL, PTO_FN_NONE},
    /* second set: structural */
    [PTO_OP_TILE_ROW_PROD] = {"tile.row_prod", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_ROW, PTO_FN_MUL},
    [PTO_OP_TILE_COL_PROD] = {"tile.col_prod", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_COL, PTO_FN_MUL},
    [PTO_OP_TILE_ROW_ARGMAX] = {"tile.row_argmax", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_ROW,
                                PTO_FN_ARGMAX},
    [PTO_OP_TILE_ROW_ARGMIN] = {"tile.row_argmin", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_ROW,
                                PTO_FN_ARGMIN},
    [PTO_OP_TILE_COL_ARGMAX] = {"tile.col_argmax", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_COL,
                                PTO_FN_ARGMAX},
    [PTO_OP_TILE_COL_ARGMIN] = {"tile.col_argmin", K, 1, 1, "", 1, 0, PTO_OPC_REDUCE_COL,
                                PTO_FN_ARGMIN},
    [PTO_OP_TILE_ROW_EXPAND] = {"tile.row_expand", K, 2, 2, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_COL_EXPAND] = {"tile.col_expand", K, 2, 2, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_TRANSPOSE] = {"tile.transpose", K, 1, 1, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_EXTRACT] = {"tile.extract", K, 3, 3, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_ASSEMBLE] = {"tile.assemble", K, 3, 3, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_CONCAT] = {"tile.concat", K, 2, 2, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_RESHAPE] = {"tile.reshape", K, 2, 2, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_FILLPAD] = {"tile.fillpad", K, 1, 1, "pad", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_CI] = {"tile.ci", K, 2, 2, "dtype descending", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_TRI] = {"tile.tri", K, 2, 2, "dtype upper", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_GATHER] = {"tile.gather", K, 2, 2, "", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_GATHER_ROWS] = {"tile.gather_rows", K, 4, 4, "", 1, 0, PTO_OPC_LAYOUT},
    /* writes %t (its result aliases it), as tile.store does */
    [PTO_OP_TILE_SCATTER_ROWS] = {"tile.scatter_rows", K, 4, 4, "", 1, 1u << 3, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_SORT_IDX] = {"tile.sort_idx", K, 1, 1, "order", 1, 0, PTO_OPC_LAYOUT},
    [PTO_OP_TILE_MATMUL_BIAS] = {"tile.matmul_bias", K, 3, 3, "", 1, 0, PTO_OPC_MATMUL,
                                 PTO_FN_NONE},
    /* second set: elementwise */
    [PTO_OP_TILE_CMP] = {"tile.cmp", K, 2, 2, "cmp", 1, 0, PTO_OPC_BINARY, PTO_FN_CMP},
    [PTO_OP_TILE_CMPS] = {"tile.cmps", K, 2, 2, "cmp", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_CMP},
    [PTO_OP_TILE_SEL] = {"tile.sel", K, 3, 3, "", 1, 0, PTO_OPC_SELECT, PTO_FN_SEL},
    [PTO_OP_TILE_SELS] = {"tile.sels", K, 3, 3, "", 1, 0, PTO_OPC_SELECT, PTO_FN_SEL},
    [PTO_OP_TILE_AND] = {"tile.and", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_AND, 0, IB},
    [PTO_OP_TILE_OR] = {"tile.or", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_OR, 0, IB},
    [PTO_OP_TILE_XOR] = {"tile.xor", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_XOR, 0, IB},
    [PTO_OP_TILE_ANDS] = {"tile.ands", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_AND, 0, I},
    [PTO_OP_TILE_ORS] = {"tile.ors", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_OR, 0, I},
    [PTO_OP_TILE_XORS] = {"tile.xors", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_XOR, 0, I},
    [PTO_OP_TILE_NOT] = {"tile.not", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_NOT, 0, IB},
    [PTO_OP_TILE_SHL] = {"tile.shl", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_SHL, 0, I},
    [PTO_OP_TILE_SHR] = {"tile.shr", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_SHR, 0, I},
    [PTO_OP_TILE_SHLS] = {"tile.shls", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_SHL, 0, I},
    [PTO_OP_TILE_SHRS] = {"tile.shrs", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_SHR, 0, I},
    [PTO_OP_TILE_ROW_EXPAND_MAX] = {"tile.row_expand_max", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_ROW,
                                    PTO_FN_MAX, 0, N},
    [PTO_OP_TILE_ROW_EXPAND_MIN] = {"tile.row_expand_min", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_ROW,
                                    PTO_FN_MIN, 0, N},
    [PTO_OP_TILE_COL_EXPAND_MAX] = {"tile.col_expand_max", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL,
                                    PTO_FN_MAX, 0, N},
    [PTO_OP_TILE_COL_EXPAND_MIN] = {"tile.col_expand_min", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL,
                                    PTO_FN_MIN, 0, N},
    [PTO_OP_TILE_ROW_EXPAND_EXPDIF] = {"tile.row_expand_expdif", K, 2, 2, "", 1, 0,
                                       PTO_OPC_EXPAND_ROW, PTO_FN_EXPDIF, 1, F},
    [PTO_OP_TILE_COL_EXPAND_EXPDIF] = {"tile.col_expand_expdif", K, 2, 2, "", 1, 0,
                                       PTO_OPC_EXPAND_COL, PTO_FN_EXPDIF, 1, F},
    [PTO_OP_TILE_LRELU] = {"tile.lrelu", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_LRELU, 0,
                           N},
    [PTO_OP_TILE_PRELU] = {"tile.prelu", K, 2, 2, "", 1, 0, PTO_OPC_EXPAND_COL, PTO_FN_LRELU, 0, N},
    [PTO_OP_TILE_REM] = {"tile.rem", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_REM, 0, N},
    [PTO_OP_TILE_REMS] = {"tile.rems", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_REM, 0, N},
    [PTO_OP_TILE_FMOD] = {"tile.fmod", K, 2, 2, "", 1, 0, PTO_OPC_BINARY, PTO_FN_FMOD, 1, F},
    [PTO_OP_TILE_FMODS] = {"tile.fmods", K, 2, 2, "", 1, 0, PTO_OPC_BINARY_SCALAR, PTO_FN_FMOD, 1,
                           F},
    [PTO_OP_TILE_SIN] = {"tile.sin", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_SIN, 1, F},
    [PTO_OP_TILE_COS] = {"tile.cos", K, 1, 1, "", 1, 0, PTO_OPC_UNARY, PTO_FN_COS, 1, F},
    [PTO_OP_TENSOR_CREATE] = {"tensor.create", O | H, 2, 2, "", 1, 0},
    [PTO_OP_TENSOR_SLICE] = {"tensor.slice", O | H, 3, 3, "", 1, 0},
    [PTO_OP_TENSOR_DIM] = {"tensor.dim", K | O | H, 2, 2, "", 1, 0},
    [PTO_OP_TENSOR_READ] = {"tensor.read", O, 2, 2, "", 1, 0},
    [PTO_OP_TENSOR_RESHAPE] = {"tensor.reshape", O | H, 2, 2, "", 1, 0},
    [PTO_OP_TENSOR_SELECT] = {"tensor.select", O | H, 2, 2, "", 1, 0},
    [PTO_OP_DIST_WORLD_SIZE] = {"dist.world_size", H, 0, 0, "", 1, 0},
    [PTO_OP_DIST_ALLOC_WINDOW] = {"dist.alloc_window", H, 2, 2, "", 1, 0},
    [PTO_OP_DIST_WINDOW] = {"dist.window", H, 1, 1, "", 1, 0},
    [PTO_OP_DIST_COMM_CTX] = {"dist.comm_ctx", K, 1, 1, "", 1, 0},
    [PTO_OP_DIST_RANK] = {"dist.rank", K, 1, 1, "", 1, 0},
    [PTO_OP_DIST_NRANKS] = {"dist.nranks", K, 1, 1, "", 1, 0},
    [PTO_OP_DIST_NOTIFY] = {"dist.notify", K, 4, 4, "op", 1, 1u << 0},
    [PTO_OP_DIST_WAIT] = {"dist.wait", K, 3, 3, "cmp", 0, 0},
    [PTO_OP_DIST_REMOTE_LOAD] = {"dist.remote_load", K, 4, 4, "", 1, 0},
    [PTO_OP_DIST_REMOTE_STORE] = {"dist.remote_store", K, 4, 4, "", 1, 1u << 1},
    /* Collectives write the window (the result aliases it) and use the signal window, which they
     * leave zero; barrier writes only the signal window and has no result. */
    [PTO_OP_DIST_BARRIER] = {"dist.barrier", K, 1, 1, "", 0, 1u << 0},
    [PTO_OP_DIST_ALLREDUCE] = {"dist.allreduce", K, 2, 2, "op mode", 1, 3u},
    [PTO_OP_DIST_BROADCAST] = {"dist.broadcast", K, 3, 3, "", 1, 3u},
    [PTO_OP_DIST_ALLGATHER] = {"dist.allgather", K, 2, 2, "", 1, 3u},
    [PTO_OP_DIST_REDUCE_SCATTER] = {"dist.reduce_scatter", K, 2, 2, "op", 1, 3u},
};

const pto_op_info *pto_op_info_get(pto_opcode op) {
  return (unsigned)op < PTO_OP_COUNT ? &k_ops[op] : NULL;
}

int pto_op_lookup(const char *name, size_t len) {
  for (int i = 0; i < PTO_OP_COUNT; i++)
    if (strlen(k_ops[i].name) == len && memcmp(k_ops[i].name, name, len) == 0) return i;
  return -1;
}
