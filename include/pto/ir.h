/* pto IR: the in-memory form of a PTIR program (see docs/language.md).
 *
 * A program owns every node through one arena: nodes are created by the builder (which the parser
 * drives, so text and C API produce the same IR), never freed one by one, and all go away with
 * pto_ir_program_destroy. After pto_ir_builder_finish a program is immutable and may be read from
 * several threads at once.
 *
 * Shape of the IR: SSA values (pto_ir_value) with types (pto_ir_type); statements (pto_ir_stmt)
 * in blocks; scalar expressions (pto_ir_expr) as trees in operand positions, exactly as the
 * grammar allows them (three-address: never a nested op call). Every expression has a deduced
 * dtype after building; integer and float literals already carry the dtype their context gave.
 *
 * Names (of values and dynamic symbols) and source positions are for people: structural hash
 * and equality ignore them. Function names are part of the ABI (exported kernel symbols, task
 * names) and are hashed. */
#ifndef PTO_IR_H
#define PTO_IR_H

#include <stdint.h>
#include <stdio.h>

#include "pto/export.h"
#include "pto/status.h"
#include "pto/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pto_loc {
  int line; /* 1-based; 0 = unknown (built by the C API without a position) */
  int col;  /* 1-based */
} pto_loc;

typedef struct pto_ir_expr pto_ir_expr;
typedef struct pto_ir_value pto_ir_value;
typedef struct pto_ir_stmt pto_ir_stmt;
typedef struct pto_ir_func pto_ir_func;
typedef struct pto_ir_program pto_ir_program;

/* ---- types ---------------------------------------------------------------------------- */

typedef enum pto_type_kind {
  PTO_TYPE_SCALAR = 0,
  PTO_TYPE_TENSOR,
  PTO_TYPE_DTENSOR,
  PTO_TYPE_TILE,
} pto_type_kind;

typedef struct pto_ir_type {
  pto_type_kind kind;
  pto_dtype dtype;
  /* Tensor/dtensor/tile: 1..5 (tiles: 2). Scalar: 0. An unshaped entry tensor ('tensor f32'):
   * -1, dims unused. */
  int rank;
  /* Each dim is an expression of dtype index: an INT literal (static) or a SYM (dynamic) for
   * tensors; INT literals for tile shapes. Tile valid dims may be any index expression.
   * Parameter and '->' types hold only INT and SYM dims. The type deduced for an op result may
   * hold a derived extent, any index expression over symbols and values in scope: tensor.slice
   * gives min(extent, dim - offset) where that is not static (e.g. min(32, M - %row0)), and
   * tensor.create its shape list's expressions. Such an extent is dynamic, bound at launch. */
  pto_ir_expr *dims[PTO_MAX_RANK];
  pto_space space; /* tile only; PTO_SPACE_VEC when not written */
  int has_valid;   /* tile only */
  pto_ir_expr *valid[PTO_MAX_RANK];
} pto_ir_type;

/* ---- expressions ---------------------------------------------------------------------- */

typedef enum pto_expr_kind {
  PTO_EXPR_INT = 0, /* literal; dtype = the int or float dtype its context gave it */
  PTO_EXPR_FLOAT,   /* literal; f.. dtype */
  PTO_EXPR_BOOL,    /* true / false */
  PTO_EXPR_VALUE,   /* a use of an SSA value (any type: scalar, tensor, tile) */
  PTO_EXPR_SYM,     /* a dynamic dim symbol, dtype index */
  PTO_EXPR_UNARY,   /* op: NEG NOT */
  PTO_EXPR_BINARY,  /* op: ADD..OR, MIN MAX MOD */
  PTO_EXPR_CAST,    /* dtype(x) */
} pto_expr_kind;

typedef enum pto_expr_op {
  PTO_EOP_NONE = 0,
  PTO_EOP_NEG,
  PTO_EOP_NOT,
  PTO_EOP_ADD,
  PTO_EOP_SUB,
  PTO_EOP_MUL,
  PTO_EOP_DIV, /* floors on integers */
  PTO_EOP_MOD, /* mod(a,b): sign of b */
  PTO_EOP_MIN,
  PTO_EOP_MAX,
  PTO_EOP_EQ,
  PTO_EOP_NE,
  PTO_EOP_LT,
  PTO_EOP_LE,
  PTO_EOP_GT,
  PTO_EOP_GE,
  PTO_EOP_AND,
  PTO_EOP_OR,
} pto_expr_op;

struct pto_ir_expr {
  pto_expr_kind kind;
  pto_expr_op op;
  pto_dtype dtype; /* scalar dtype of the result; for VALUE of a non-scalar: the value's dtype */
  pto_loc loc;
  /* The anonymous unions of this header (and the anonymous struct in this one) are C11; in C++
   * they are an extension GCC and Clang accept, marked __extension__ so that a C++ includer's
   * -pedantic stays quiet (test public_headers_alone). */
  __extension__ union {
    int64_t i;           /* INT (also the bits of u64 literals) */
    double f;            /* FLOAT */
    int b;               /* BOOL */
    pto_ir_value *value; /* VALUE */
    int sym;             /* SYM: index into program->syms */
    pto_ir_expr *a;      /* UNARY, CAST operand */
    struct {
      pto_ir_expr *lhs, *rhs; /* BINARY */
    };
  };
  /* Levels below this node (0 for a leaf). The builder refuses a tree higher than
   * PTO_IR_MAX_EXPR_HEIGHT, so every recursive walk over an expression is bounded. */
  int height;
  /* 1 on the extent of a tensor.slice that does not fit its static tensor (min(shape, dim - off)
   * of static operands): it stays dynamic, bound at launch (docs/language.md), so
   * pto_ir_expr_static_int does not fold it, nor any expression over it. */
  int at_launch;
};

/* The highest expression tree the builder accepts: a chain of this many binary operators (or
 * nested unary operators, casts, parentheses) is an error naming the limit. */
#define PTO_IR_MAX_EXPR_HEIGHT 256

/* The deepest nesting of blocks (for, if/else, incore) inside a function body the builder
 * accepts; one more is an error naming the limit. (The parser stops at 200 levels of any
 * nesting first.) */
#define PTO_IR_MAX_BLOCK_DEPTH 256

/* ---- values --------------------------------------------------------------------------- */

typedef enum pto_dir {
  PTO_DIR_IN = 0, /* also a tensor parameter written without a direction */
  PTO_DIR_OUT,
  PTO_DIR_INOUT,
} pto_dir;

struct pto_ir_value {
  const char *name; /* without '%' */
  const pto_ir_type *type;
  int id; /* dense per function, in definition order (params first) */
  pto_loc loc;
  pto_ir_stmt *def; /* NULL for parameters and loop/iter variables */
  int param_index;  /* >= 0 for a parameter */
  /* A write result (tile.store, call with out/inout) aliases its target: the target's value.
   * NULL otherwise. */
  pto_ir_value *alias_of;
};

/* ---- ops ------------------------------------------------------------------------------ */

typedef enum pto_opcode {
  PTO_OP_TILE_LOAD = 0,
  PTO_OP_TILE_STORE,
  PTO_OP_TILE_CREATE,
  PTO_OP_TILE_FULL,
  PTO_OP_TILE_MOVE,
  PTO_OP_TILE_ADD,
  PTO_OP_TILE_SUB,
  PTO_OP_TILE_MUL,
  PTO_OP_TILE_DIV,
  PTO_OP_TILE_MAX,
  PTO_OP_TILE_MIN,
  PTO_OP_TILE_ADDS,
  PTO_OP_TILE_SUBS,
  PTO_OP_TILE_MULS,
  PTO_OP_TILE_DIVS,
  PTO_OP_TILE_MAXS,
  PTO_OP_TILE_MINS,
  PTO_OP_TILE_EXP,
  PTO_OP_TILE_LOG,
  PTO_OP_TILE_SQRT,
  PTO_OP_TILE_RSQRT,
  PTO_OP_TILE_RECIP,
  PTO_OP_TILE_RELU,
  PTO_OP_TILE_NEG,
  PTO_OP_TILE_ABS,
  PTO_OP_TILE_CAST,
  PTO_OP_TILE_ROW_SUM,
  PTO_OP_TILE_ROW_MAX,
  PTO_OP_TILE_ROW_MIN,
  PTO_OP_TILE_COL_SUM,
  PTO_OP_TILE_COL_MAX,
  PTO_OP_TILE_COL_MIN,
  PTO_OP_TILE_ROW_EXPAND_ADD,
  PTO_OP_TILE_ROW_EXPAND_SUB,
  PTO_OP_TILE_ROW_EXPAND_MUL,
  PTO_OP_TILE_ROW_EXPAND_DIV,
  PTO_OP_TILE_COL_EXPAND_ADD,
  PTO_OP_TILE_COL_EXPAND_SUB,
  PTO_OP_TILE_COL_EXPAND_MUL,
  PTO_OP_TILE_COL_EXPAND_DIV,
  PTO_OP_TILE_MATMUL,
  PTO_OP_TILE_MATMUL_ACC,
  /* second set: structural */
  PTO_OP_TILE_ROW_PROD,
  PTO_OP_TILE_COL_PROD,
  PTO_OP_TILE_ROW_ARGMAX,
  PTO_OP_TILE_ROW_ARGMIN,
  PTO_OP_TILE_COL_ARGMAX,
  PTO_OP_TILE_COL_ARGMIN,
  PTO_OP_TILE_ROW_EXPAND,
  PTO_OP_TILE_COL_EXPAND,
  PTO_OP_TILE_TRANSPOSE,
  PTO_OP_TILE_EXTRACT,
  PTO_OP_TILE_ASSEMBLE,
  PTO_OP_TILE_CONCAT,
  PTO_OP_TILE_RESHAPE,
  PTO_OP_TILE_FILLPAD,
  PTO_OP_TILE_CI,
  PTO_OP_TILE_TRI,
  PTO_OP_TILE_GATHER,
  PTO_OP_TILE_GATHER_ROWS,
  PTO_OP_TILE_SCATTER_ROWS,
  PTO_OP_TILE_SORT_IDX,
  PTO_OP_TILE_MATMUL_BIAS,
  /* second set: elementwise */
  PTO_OP_TILE_CMP,
  PTO_OP_TILE_CMPS,
  PTO_OP_TILE_SEL,
  PTO_OP_TILE_SELS,
  PTO_OP_TILE_AND,
  PTO_OP_TILE_OR,
  PTO_OP_TILE_XOR,
  PTO_OP_TILE_ANDS,
  PTO_OP_TILE_ORS,
  PTO_OP_TILE_XORS,
  PTO_OP_TILE_NOT,
  PTO_OP_TILE_SHL,
  PTO_OP_TILE_SHR,
  PTO_OP_TILE_SHLS,
  PTO_OP_TILE_SHRS,
  PTO_OP_TILE_ROW_EXPAND_MAX,
  PTO_OP_TILE_ROW_EXPAND_MIN,
  PTO_OP_TILE_COL_EXPAND_MAX,
  PTO_OP_TILE_COL_EXPAND_MIN,
  PTO_OP_TILE_ROW_EXPAND_EXPDIF,
  PTO_OP_TILE_COL_EXPAND_EXPDIF,
  PTO_OP_TILE_LRELU,
  PTO_OP_TILE_PRELU,
  PTO_OP_TILE_REM,
  PTO_OP_TILE_REMS,
  PTO_OP_TILE_FMOD,
  PTO_OP_TILE_FMODS,
  PTO_OP_TILE_SIN,
  PTO_OP_TILE_COS,
  PTO_OP_TENSOR_CREATE,
  PTO_OP_TENSOR_SLICE,
  PTO_OP_TENSOR_DIM,
  PTO_OP_TENSOR_READ,
  PTO_OP_TENSOR_RESHAPE,
  PTO_OP_TENSOR_SELECT,
  PTO_OP_DIST_WORLD_SIZE,
  PTO_OP_DIST_ALLOC_WINDOW,
  PTO_OP_DIST_WINDOW,
  PTO_OP_DIST_COMM_CTX,
  PTO_OP_DIST_RANK,
  PTO_OP_DIST_NRANKS,
  PTO_OP_DIST_NOTIFY,
  PTO_OP_DIST_WAIT,
  PTO_OP_DIST_REMOTE_LOAD,
  PTO_OP_DIST_REMOTE_STORE,
  PTO_OP_DIST_BARRIER,
  PTO_OP_DIST_ALLREDUCE,
  PTO_OP_DIST_BROADCAST,
  PTO_OP_DIST_ALLGATHER,
  PTO_OP_DIST_REDUCE_SCATTER,
  PTO_OP_TILE_SIGMOID,
  PTO_OP_COUNT
} pto_opcode;

/* Bits of pto_op_info.allowed_in. */
enum { PTO_IN_KERNEL = 1, PTO_IN_ORCH = 2, PTO_IN_HOST = 4 };

typedef enum pto_arg_kind {
  PTO_ARG_EXPR = 0, /* a scalar expression or a value (tensor, tile, scalar) */
  PTO_ARG_DTYPE,
  PTO_ARG_LIST, /* [a, b, ...] */
  PTO_ARG_STRING,
  PTO_ARG_WORD, /* a plain word: pad=min, space=vec, op=set, cmp=ge */
} pto_arg_kind;

typedef struct pto_ir_arg {
  pto_arg_kind kind;
  const char *kw; /* NULL for a positional argument */
  pto_loc loc;
  __extension__ union {
    pto_ir_expr *expr;
    pto_dtype dtype;
    struct {
      pto_ir_expr **items;
      int n;
    } list;
    const char *str; /* STRING (unescaped) or WORD */
  };
} pto_ir_arg;

/* What kind of op it is: the builder, the interpreter, the verifier and the lowering dispatch on
 * this, so an op of an existing class is one row of the op table plus its scalar semantics. */
typedef enum pto_op_class {
  PTO_OPC_OTHER = 0,     /* handled op by op: memory, tensor and dist ops */
  PTO_OPC_BINARY,        /* tile op tile, elementwise, same shape */
  PTO_OPC_BINARY_SCALAR, /* tile op scalar, elementwise */
  PTO_OPC_UNARY,         /* op(tile), elementwise */
  PTO_OPC_CAST,          /* tile.cast */
  PTO_OPC_REDUCE_ROW,    /* [R,C] -> [R,1] */
  PTO_OPC_REDUCE_COL,    /* [R,C] -> [1,C] */
  PTO_OPC_EXPAND_ROW,    /* tile op row vector [R,1] */
  PTO_OPC_EXPAND_COL,    /* tile op column vector [1,C] */
  PTO_OPC_MATMUL,
  /* second set: structural */
  PTO_OPC_LAYOUT, /* moves elements without arithmetic: broadcasts, transpose, extract, gather */
  /* second set: elementwise */
  PTO_OPC_SELECT, /* mask ? tile : tile-or-scalar, elementwise */
} pto_op_class;

/* The scalar function an elementwise, reduction or expansion op applies to each element. */
typedef enum pto_op_fn {
  PTO_FN_NONE = 0,
  PTO_FN_ADD,
  PTO_FN_SUB,
  PTO_FN_MUL,
  PTO_FN_DIV,
  PTO_FN_MAX,
  PTO_FN_MIN,
  PTO_FN_EXP,
  PTO_FN_LOG,
  PTO_FN_SQRT,
  PTO_FN_RSQRT,
  PTO_FN_RECIP,
  PTO_FN_RELU,
  PTO_FN_NEG,
  PTO_FN_ABS,
  PTO_FN_SIGMOID,
  /* second set: structural */
  PTO_FN_ARGMAX, /* reductions to the i32 index of the first extreme (NaN first) */
  PTO_FN_ARGMIN,
  /* second set: elementwise */
  PTO_FN_CMP, /* the comparison its cmp= keyword names; the result is bool */
  PTO_FN_SEL,
  PTO_FN_AND, /* bitwise (bool: logical) */
  PTO_FN_OR,
  PTO_FN_XOR,
  PTO_FN_NOT,
  PTO_FN_SHL,    /* a count outside [0, bits) gives 0 */
  PTO_FN_SHR,    /* arithmetic on signed, logical on unsigned; outside [0, bits): sign fill or 0 */
  PTO_FN_EXPDIF, /* exp(a - b): the difference rounded once as tile.sub, then tile.exp */
  PTO_FN_LRELU,  /* a >= 0 ? a : a * b */
  PTO_FN_REM,    /* floored remainder, the sign of the divisor (as mod) */
  PTO_FN_FMOD,   /* C's fmod: the sign of the dividend */
  PTO_FN_SIN,    /* f32: pto_sinf / pto_cosf (pto/mathf.h) */
  PTO_FN_COS,
} pto_op_fn;

typedef struct pto_op_info {
  const char *name;     /* "tile.load" */
  int allowed_in;       /* PTO_IN_* bits */
  int min_pos, max_pos; /* positional argument count range */
  const char *keywords; /* space-separated allowed keywords in canonical print order, "" none */
  int nresults;         /* 0 or 1; optional (0 or 1 named) for ops with a write_mask */
  /* Per positional argument: 1 if the op writes that operand (tile.store's target, dist writes).
   * Bit i of write_mask is positional argument i. */
  unsigned write_mask;
  pto_op_class cls;
  pto_op_fn fn;
  int float_only; /* its operands must be float tiles */
  /* which dtypes its tiles may have beyond float_only (PTO_OPD_*; 0: any) */
  int dtypes;
} pto_op_info;

/* Bits of pto_op_info.dtypes: integers, bool, floats. */
enum { PTO_OPD_INT = 1, PTO_OPD_BOOL = 2, PTO_OPD_FLOAT = 4 };

PTO_API const pto_op_info *pto_op_info_get(pto_opcode op);
/* Returns -1 when name[0..len) names no op. */
PTO_API int pto_op_lookup(const char *name, size_t len);

/* ---- statements ----------------------------------------------------------------------- */

typedef struct pto_ir_block {
  pto_ir_stmt **stmts;
  int n, cap;
} pto_ir_block;

typedef enum pto_stmt_kind {
  PTO_STMT_ASSIGN = 0, /* %x = sexpr */
  PTO_STMT_OP,         /* [results =] ns.name(args) */
  PTO_STMT_CALL,       /* [results =] call @f(args) [device=e] */
  PTO_STMT_FOR,
  PTO_STMT_IF,
  PTO_STMT_INCORE,
  PTO_STMT_YIELD,
  PTO_STMT_RETURN,
} pto_stmt_kind;

struct pto_ir_stmt {
  pto_stmt_kind kind;
  pto_loc loc;
  pto_ir_value **results;
  int nresults;
  __extension__ union {
    pto_ir_expr *expr; /* ASSIGN */
    struct {
      pto_opcode opc;
      pto_ir_arg *args; /* positional first, then keywords in canonical order */
      int nargs;
    } op;
    struct {
      pto_ir_func *callee;
      pto_ir_expr **args;
      int nargs;
      pto_ir_expr *device; /* NULL unless device= */
    } call;
    struct {
      pto_ir_value *iv; /* dtype index */
      int parallel;
      pto_ir_expr *lo, *hi, *step; /* step NULL when not written (1) */
      pto_ir_value **iters;        /* loop-carried values, visible in the body */
      pto_ir_expr **inits;
      int niters;
      pto_ir_block body; /* ends with a yield of niters values when niters > 0 */
    } loop;
    struct {
      pto_ir_expr *cond;
      pto_ir_block then_body;
      pto_ir_block else_body;
      int has_else;
    } branch;
    struct {
      const char *name; /* the optional STRING, or NULL */
      pto_ir_block body;
    } incore;
    struct {
      pto_ir_expr **vals;
      int n;
    } ret; /* YIELD and RETURN */
  };
};

/* ---- functions and programs ------------------------------------------------------------ */

typedef enum pto_func_kind { PTO_FUNC_KERNEL = 0, PTO_FUNC_ORCH, PTO_FUNC_HOST } pto_func_kind;

typedef enum pto_bind_kind {
  PTO_BIND_NONE = 0, /* no default: must be bound at compile time (entry scalars) */
  PTO_BIND_LITERAL,  /* '= literal': specialized */
  PTO_BIND_RUNTIME,  /* '= runtime' */
} pto_bind_kind;

typedef struct pto_ir_param {
  pto_ir_value *value;
  pto_dir dir;          /* scalars: IN */
  int dir_written;      /* the direction word was present in the source */
  pto_bind_kind bind;   /* scalars only */
  pto_ir_expr *literal; /* BIND_LITERAL: a literal expr of the parameter's dtype */
} pto_ir_param;

struct pto_ir_func {
  pto_func_kind kind;
  const char *name; /* without '@' */
  pto_loc loc;
  int index; /* position in program->funcs */
  pto_ir_param *params;
  int nparams;
  const pto_ir_type **rets; /* the '->' list */
  int nrets;
  pto_ir_block body;
  int nvalues; /* values defined in this function; ids are 0..nvalues-1 */
  /* The orch pto_ir_program_kernel_entry makes to run a kernel as the entry: that kernel's name,
   * the entry as the user named it (messages, the signature, the manifest, 'pto cache ls' show
   * it); NULL for every other function. Copies of the program keep it (it is part of
   * pto_ir_program_hash); the text form has no syntax for it. */
  const char *kernel_entry;
};

/* A '#' comment of a parsed source, kept for pto_ir_format. */
typedef struct pto_ir_comment {
  int line;         /* 1-based line of the '#' */
  const char *text; /* from '#' to the end of its line, trailing blanks dropped */
  size_t len;       /* its bytes in the source: more than strlen(text) if it holds a NUL */
  int eol;          /* code precedes it on its line */
  int blank_before; /* a full-line comment with a blank line above it */
  int blank_after;  /* a full-line comment with a blank line below it */
} pto_ir_comment;

/* What the parser keeps of the source that the IR does not hold, so pto_ir_format can put the
 * comments back: the comments in source order, the lines of 'program' and 'dynamic', the line of
 * every '}' in source order (a comment above a '}' stays inside that block). Zero for C-built
 * programs. */
typedef struct pto_ir_source_notes {
  const pto_ir_comment *comments;
  int ncomments;
  int program_line;
  int dynamic_line; /* of the last 'dynamic' symbol; 0 when none */
  const int *close_lines;
  int nclose;
} pto_ir_source_notes;

struct pto_ir_program {
  const char *name;
  const char *file;  /* source path for messages; "<builder>" for the C API */
  const char **syms; /* dynamic dim symbols in declaration order */
  int nsyms;
  pto_ir_func **funcs;
  int nfuncs;
  struct pto_arena *arena; /* owns every node */
  /* Unique in the process and never reused (set at creation): what a cache outside the program
   * keys on, e.g. pto_compile's memo of pto_ir_program_hash. */
  uint64_t serial;
  pto_ir_source_notes notes; /* set by the parser only; never copied, hashed or compiled */
  /* pto_ir_program_find_func's hash index of funcs by name (pto_ir_builder_finish sets it, in the
   * arena; private): func_slots_cap slots, each a funcs index + 1 or 0, valid while nfuncs is
   * func_slots_n. NULL: none (lookups compare every name). */
  const int *func_slots;
  int func_slots_cap, func_slots_n;
};

/* ---- reading, printing, checking ------------------------------------------------------- */

PTO_API PTO_MUST_USE pto_status pto_ir_parse_file(const char *path, pto_ir_program **out_program);
/* filename is used in messages only. */
PTO_API PTO_MUST_USE pto_status pto_ir_parse_string(const char *text, size_t len,
                                                    const char *filename,
                                                    pto_ir_program **out_program);
PTO_API void pto_ir_program_destroy(pto_ir_program *p);

/* Canonical text. print(parse(print(p))) == print(p) byte for byte. *out_text is freed with
 * pto_free. */
PTO_API PTO_MUST_USE pto_status pto_ir_print(const pto_ir_program *p, char **out_text);
PTO_API PTO_MUST_USE pto_status pto_ir_print_file(const pto_ir_program *p, FILE *f);
/* pto_ir_print's text with the parsed source's comments put back (what `pto fmt` writes):
 * full-line comments before the statement, function or '}' they preceded, at its indentation
 * (a blank line above or below a group is kept), end-of-line comments after their line's
 * statement or header; a comment the printer has no place for (inside a multi-line expression or
 * header) goes before the next statement. Every comment is printed once, in source order, and
 * format(parse(format(p))) == format(p). Without notes it is pto_ir_print. *out_text is freed
 * with pto_free. */
PTO_API PTO_MUST_USE pto_status pto_ir_format(const pto_ir_program *p, char **out_text);
/* The text of one type / expression (freed with pto_free), for messages. */
PTO_API char *pto_ir_type_str(const pto_ir_program *p, const pto_ir_type *t);
PTO_API char *pto_ir_expr_str(const pto_ir_program *p, const pto_ir_expr *e);

/* Every static rule of docs/language.md. Messages: "file:line:col: what is wrong". The builder
 * already checks types as statements are added; this adds the whole-function rules and re-checks
 * programs assembled through the C API. */
PTO_API PTO_MUST_USE pto_status pto_ir_verify(const pto_ir_program *p);

/* Launches that will fail for certain, in a valid program: a tensor.slice that runs past its
 * tensor's static edge has a dynamic extent (docs/language.md), so passing it where the callee
 * declares another static extent is a launch error, not a verifier one. fn gets one message per
 * such argument and dim, "FILE:LINE:COL: call @k: argument N for %p: ..." naming both extents;
 * `pto check` and `pto compile` print them as warnings. */
typedef void (*pto_ir_warning_fn)(void *ctx, const char *message);
PTO_API PTO_MUST_USE pto_status pto_ir_launch_warnings(const pto_ir_program *p,
                                                       pto_ir_warning_fn fn, void *ctx);

/* Structural hash (XXH3-128) and equality: ignore value and symbol names and positions. */
typedef struct pto_ir_hash128 {
  uint64_t lo, hi;
} pto_ir_hash128;
PTO_API pto_ir_hash128 pto_ir_program_hash(const pto_ir_program *p);
PTO_API int pto_ir_program_equal(const pto_ir_program *a, const pto_ir_program *b);

/* The function named name, or NULL; by a hash index of the names (a program of N functions looked
 * up N times costs O(N)), on a program the builder or the parser made. */
PTO_API pto_ir_func *pto_ir_program_find_func(const pto_ir_program *p, const char *name);
/* The entry: the named function if name != NULL (a kernel too), else the single host, else the
 * single orch. */
PTO_API PTO_MUST_USE pto_status pto_ir_program_entry(const pto_ir_program *p, const char *name,
                                                     pto_ir_func **out_func);
/* The program to compile or interpret for entry name (as pto_ir_program_entry resolves it). When
 * it is a kernel K: a copy of p with one more orch, last, named K_entry (or K_entry0, K_entry1,
 * ... while the name is taken by a function or an incore scope's kernel), whose parameters are
 * K's and which calls K once, as one task, and whose kernel_entry is K's name; *out_program is
 * that copy (the caller's, freed with pto_ir_program_destroy) and *out_entry its orch's name. A
 * kernel with a dtensor parameter (comm windows, which dist.* ops need) is refused. Otherwise
 * *out_program is NULL (p is the program) and *out_entry the entry's name in p. */
PTO_API PTO_MUST_USE pto_status pto_ir_program_kernel_entry(const pto_ir_program *p,
                                                            const char *name,
                                                            pto_ir_program **out_program,
                                                            const char **out_entry);

/* Statements of f in pre-order (a statement, then the bodies it holds: for, then/else, incore),
 * numbered from 0. Structurally equal functions number their statements alike, whatever their
 * positions, so launch errors name a statement by this index (an "op id") and find its position
 * in whichever program shares the binary. stmt_at gives NULL past the end; stmt_index gives the
 * index of the statement at loc (-1 when loc is unknown or no statement starts there). */
PTO_API const pto_ir_stmt *pto_ir_func_stmt_at(const pto_ir_func *f, int index);
PTO_API int pto_ir_func_stmt_index(const pto_ir_func *f, pto_loc loc);
/* An integer '/' or mod in x by anything but a nonzero literal: a scalar assignment holding one
 * fails its launch on a runtime zero divisor, so it has an op id like the ops that can fail.
 * false for a NULL x. */
PTO_API bool pto_ir_expr_divides_int(const pto_ir_expr *x);
/* Calls visit on each expression s holds itself, not those of the statements in its bodies: an
 * assignment's, an op's arguments (and their list items), a call's arguments and device=, a
 * for's bounds, step and inits, an if's condition, a yield's or a return's values. Stops at the
 * first nonzero visit and returns it; 0 after all (and for a NULL s or visit). */
PTO_API int pto_ir_stmt_each_expr(const pto_ir_stmt *s,
                                  int (*visit)(void *ctx, const pto_ir_expr *e), void *ctx);
/* pto_ir_expr_divides_int of one of s's own expressions (pto_ir_stmt_each_expr): in a kernel,
 * such a statement names itself when the divide meets a runtime zero (positions.c). */
PTO_API bool pto_ir_stmt_divides_int(const pto_ir_stmt *s);

/* An operator's PTIR spelling ("+", "mod", "min", "!", ...; "?" for none), and whether PTIR
 * writes it between its operands (a + b) rather than as a call (mod(a, b)): one table for the
 * printer and the code emitters. */
PTO_API const char *pto_expr_op_name(pto_expr_op op);
PTO_API bool pto_expr_op_is_infix(pto_expr_op op);

/* The same numbering over one block (an incore scope's body is its kernel's body). */
PTO_API const pto_ir_stmt *pto_ir_block_stmt_at(const pto_ir_block *b, int index);

/* The incore scopes of p's orch and host functions, in function order and pre-order within each,
 * each with the name of the kernel it becomes when outlined (its string made an identifier, else
 * <func>_incore; a name already taken gets 0, 1, ...): the outlined kernel's body is the scope's
 * body, statement for statement, then a return. visit returning nonzero stops the walk. */
#define PTO_IR_KERNEL_NAME_MAX 128
PTO_API PTO_MUST_USE pto_status pto_ir_each_incore(const pto_ir_program *p,
                                                   int (*visit)(void *ctx, const pto_ir_func *f,
                                                                const pto_ir_stmt *scope,
                                                                const char *kernel),
                                                   void *ctx);

/* Every statement of f in pre-order, in one walk: (*out_stmts)[i] is pto_ir_func_stmt_at(f, i)
 * (a pass over all of them is linear, where calling stmt_at for each index is quadratic).
 * *out_stmts is the caller's, freed with pto_free; NULL when f has no statement. */
PTO_API PTO_MUST_USE pto_status pto_ir_func_stmts(const pto_ir_func *f,
                                                  const pto_ir_stmt ***out_stmts, int *out_n);

/* Returns the keyword argument named kw of an op statement, or NULL. */
PTO_API const pto_ir_arg *pto_ir_stmt_kwarg(const pto_ir_stmt *s, const char *kw);
/* Evaluates an index expression made of INT literals only; returns 0 and sets *out if static. */
PTO_API int pto_ir_expr_static_int(const pto_ir_expr *e, int64_t *out);
/* The same, also through at_launch extents (a tensor.slice clamped at a static edge): the value
 * it will have at launch, for warnings and for kernels outlined from incore scopes. Types keep
 * such an extent dynamic. */
PTO_API int pto_ir_expr_launch_int(const pto_ir_expr *e, int64_t *out);
/* Bytes of tiles per space that f's ops allocate (nested blocks included; in-place results such
 * as tile.matmul_acc's add nothing). The verifier checks kernels against the sim capacities. */
PTO_API void pto_ir_kernel_footprint(const pto_ir_func *f, uint64_t out_bytes[PTO_SPACE_COUNT]);

/* ---- the reference interpreter -------------------------------------------------------- */

/* One argument of an interpreted launch, in parameter order: a host tensor for a tensor
 * parameter (written in place for out/inout), a scalar for a scalar parameter (ignored for a
 * specialized one, whose literal wins). */
typedef struct pto_ir_interp_arg {
  int is_tensor;
  pto_host_tensor tensor;
  pto_scalar scalar;
} pto_ir_interp_arg;

/* Runs func (an orch or kernel) on host memory, written for obvious correctness. Dynamic dims
 * are bound from the tensor arguments. A host function needs pto_ir_interp_run_host; dist.* ops
 * in a kernel run this way fail (they need a rank). */
PTO_API PTO_MUST_USE pto_status pto_ir_interp_run(const pto_ir_program *p, const pto_ir_func *func,
                                                  pto_ir_interp_arg *args, int nargs);

/* The default deadline of a dist.wait, a barrier or a collective, and the most ranks. */
#define PTO_IR_INTERP_DIST_TIMEOUT_MS 5000
#define PTO_IR_INTERP_MAX_RANKS 256

/* Runs a host function (L3) with nranks simulated ranks, rank r standing for device=r (the
 * world size of dist.world_size()). The host body runs on the calling thread; each rank on a
 * thread of its own. A `call @orch(..) device=d` is queued on rank d and the host goes on (a
 * call without device= goes to rank 0): calls to one rank run in issue order, calls to different
 * ranks concurrently, and a call also waits for earlier calls on other ranks whose tensors
 * overlap its own with a write on either side. The function returns once every call has
 * finished, with the first failure (its message names the call, device= and the rank).
 *
 * dist.alloc_window allocates nranks zeroed copies; dist.window(%w) passed to device=d is copy d.
 * Kernel-side dist.* ops run with docs/language.md's semantics; the collectives are computed
 * directly at a rendezvous of all ranks on the signal window and leave it untouched (zero). A
 * dist.wait, barrier or collective that is not satisfied while no other rank and not the host
 * makes progress (completes a statement or enters a wait) for wait_timeout_ms fails naming the
 * rank, the window, the offsets, and the expected and current value (or the ranks that did not
 * arrive): a deadlock fails within one to two wait_timeout_ms, a slow peer does not; after any
 * failure everything still waiting stops at once. wait_timeout_ms <= 0: the
 * environment's PTO_DIST_TIMEOUT_MS, else PTO_IR_INTERP_DIST_TIMEOUT_MS. */
PTO_API PTO_MUST_USE pto_status pto_ir_interp_run_host(const pto_ir_program *p,
                                                       const pto_ir_func *func,
                                                       pto_ir_interp_arg *args, int nargs,
                                                       int nranks, int64_t wait_timeout_ms);
/* The deadline pto_ir_interp_run_host uses for wait_timeout_ms (resolving <= 0 as it does); -1
 * when $PTO_DIST_TIMEOUT_MS is not an integer from 1 to PTO_DIST_TIMEOUT_MS_MAX (the run then
 * fails, naming the variable and the range). */
PTO_API int64_t pto_ir_interp_dist_timeout_ms(int64_t wait_timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
