/* The PTIR parser: a lexer and an LL(2) recursive-descent parser for the grammar of
 * docs/language.md.
 *
 * It handles syntax only: every node is created and type-checked by the builder, so parsed and
 * C-built programs are the same IR. Two passes over the token array let functions call each other
 * in any textual order: pass 1 builds every header (and the dynamic declarations) and skips bodies
 * by brace matching; pass 2 builds the bodies. Errors are "file:line:col: message" naming what was
 * expected and what was found. Recursion is bounded (expressions and blocks), so no input can blow
 * the stack; every allocation is freed on every path. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"
#include "pto/arena.h"

enum { MAX_DEPTH = 200 };

typedef enum tok_kind {
  T_EOF = 0,
  T_ERROR, /* a lexical error: its message is in the token */
  T_VALUE,
  T_FUNC,
  T_WORD,
  T_INT,
  T_FLOAT,
  T_STRING,
  T_LPAREN,
  T_RPAREN,
  T_LBRACK,
  T_RBRACK,
  T_LBRACE,
  T_RBRACE,
  T_COMMA,
  T_COLON,
  T_ASSIGN,
  T_EQ,
  T_NE,
  T_LT,
  T_LE,
  T_GT,
  T_GE,
  T_PLUS,
  T_MINUS,
  T_STAR,
  T_SLASH,
  T_NOT,
  T_AND,
  T_OR,
  T_ARROW,
  T_DOT,
} tok_kind;

typedef struct tok {
  tok_kind kind;
  const char *s; /* the token's text in the source (VALUE/FUNC without the sigil) */
  size_t n;
  pto_loc loc;
  uint64_t u;      /* INT magnitude */
  double f;        /* FLOAT */
  const char *msg; /* T_ERROR: static message */
  char bad;        /* T_ERROR: the offending character, if has_bad */
  int has_bad;
} tok;

typedef struct src_comment {
  int line, eol, blank_before, blank_after;
  const char *s;
  size_t n;
} src_comment;

typedef struct parser {
  const char *src;
  size_t len;
  tok *toks;
  int ntoks, cap;
  int pos;
  pto_ir_builder *b;
  char *scratch; /* unescaped strings, names */
  size_t scratch_cap;
  int depth;
  /* What pto_ir_format needs beyond the IR (pto_ir_source_notes), copied into the program at the
   * end. Comment texts point into src until then. */
  src_comment *cmts;
  int ncmts, cmtcap;
  int *closes;
  int ncloses, closecap;
  int program_line, dynamic_line;
} parser;

/* ---- lexer ---------------------------------------------------------------------------- */

static int is_alpha(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int is_hex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static tok *push_tok(parser *p, tok_kind k, const char *s, size_t n, pto_loc loc) {
  if (pto_grow_int(&p->toks, sizeof *p->toks, &p->cap, p->ntoks + 1)) return NULL;
  tok *t = &p->toks[p->ntoks++];
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->s = s;
  t->n = n;
  t->loc = loc;
  return t;
}

static int note_comment(parser *p, src_comment c) {
  if (pto_grow_int(&p->cmts, sizeof *p->cmts, &p->cmtcap, p->ncmts + 1)) return -1;
  p->cmts[p->ncmts++] = c;
  return 0;
}

static int note_close(parser *p, int line) {
  if (pto_grow_int(&p->closes, sizeof *p->closes, &p->closecap, p->ncloses + 1)) return -1;
  p->closes[p->ncloses++] = line;
  return 0;
}

/* Lexes the whole source. A lexical error ends the array with a T_ERROR token, so the parser
 * reports it when it gets there and errors come out in text order. Returns -1 when out of
 * memory. */
static int lex(parser *p) {
  const char *s = p->src, *end = p->src + p->len;
  int line = 1;
  const char *line_start = s;
  int line_used = 0, prev_blank = 0; /* for comments: code or a comment on this / the last line */
  while (s < end) {
    char c = *s;
    if (c == '\n') {
      /* A blank line ends here: the full-line comment just above it has a blank after it. */
      if (!line_used && p->ncmts && p->cmts[p->ncmts - 1].line == line - 1 &&
          !p->cmts[p->ncmts - 1].eol)
        p->cmts[p->ncmts - 1].blank_after = 1;
      line++;
      line_start = ++s;
      prev_blank = !line_used;
      line_used = 0;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      s++;
      continue;
    }
    int eol = line_used;
    line_used = 1;
    if (c == '#') {
      const char *st = s;
      while (s < end && *s != '\n')
        s++;
      size_t n = (size_t)(s - st);
      while (n > 1 && (st[n - 1] == ' ' || st[n - 1] == '\t' || st[n - 1] == '\r'))
        n--;
      if (note_comment(p, (src_comment){line, eol, !eol && line > 1 && prev_blank, 0, st, n}))
        return -1;
      continue;
    }
    pto_loc loc = {line, (int)(s - line_start) + 1};
    const char *st = s;
    tok *t = NULL;
    if (c == '%' || c == '@') {
      s++;
      if (s >= end || !is_alpha(*s)) {
        t = push_tok(p, T_ERROR, st, 1, loc);
        if (!t) return -1;
        t->msg = c == '%' ? "'%' must start a value name like %x (a remainder is mod(a, b))"
                          : "'@' must start a function name like @f";
        return 0;
      }
      while (s < end && is_alnum(*s))
        s++;
      t = push_tok(p, c == '%' ? T_VALUE : T_FUNC, st + 1, (size_t)(s - st - 1), loc);
    } else if (is_alpha(c)) {
      while (s < end && is_alnum(*s))
        s++;
      size_t n = (size_t)(s - st);
      if ((n == 3 && memcmp(st, "inf", 3) == 0) || (n == 3 && memcmp(st, "nan", 3) == 0)) {
        t = push_tok(p, T_FLOAT, st, n, loc);
        if (t) t->f = st[0] == 'i' ? INFINITY : NAN;
      } else {
        t = push_tok(p, T_WORD, st, n, loc);
      }
    } else if (is_digit(c)) {
      int is_float = 0, bad = 0;
      uint64_t u = 0;
      if (c == '0' && s + 1 < end && s[1] == 'x') {
        s += 2;
        if (s >= end || !is_hex(*s)) bad = 1;
        while (s < end && is_hex(*s)) {
          int d = is_digit(*s) ? *s - '0' : (*s | 32) - 'a' + 10;
          if (u >> 60) bad = 2;
          u = u * 16 + (uint64_t)d;
          s++;
        }
      } else {
        while (s < end && is_digit(*s)) {
          uint64_t d = (uint64_t)(*s - '0');
          if (u > (UINT64_MAX - d) / 10) bad = 2;
          u = u * 10 + d;
          s++;
        }
        if (s < end && *s == '.') {
          is_float = 1;
          s++;
          while (s < end && is_digit(*s))
            s++;
        }
        if (s < end && (*s == 'e' || *s == 'E')) {
          const char *e = s + 1;
          if (e < end && (*e == '+' || *e == '-')) e++;
          if (e < end && is_digit(*e)) {
            is_float = 1;
            s = e;
            while (s < end && is_digit(*s))
              s++;
          } else {
            bad = 1;
          }
        }
      }
      if (!bad && s < end && is_alnum(*s)) bad = 1;
      if (bad) {
        t = push_tok(p, T_ERROR, st, (size_t)(s - st), loc);
        if (!t) return -1;
        t->msg =
            bad == 2 ? "integer literal out of range (" PTO__LIT_HIGHEST ")" : "malformed number";
        return 0;
      }
      t = push_tok(p, is_float ? T_FLOAT : T_INT, st, (size_t)(s - st), loc);
      if (t && is_float) {
        /* strtod needs a terminated copy; a literal of any length reads whole (a long one,
         * e.g. 1. and 140 zeros then e-30, must not be cut to a different number). */
        char small[128], *buf = small;
        size_t n = (size_t)(s - st);
        if (n >= sizeof small && !(buf = pto_malloc(n + 1))) return -1;
        memcpy(buf, st, n);
        buf[n] = 0;
        errno = 0;
        t->f = strtod(buf, NULL);
        if (buf != small) free(buf);
        if (errno == ERANGE && isinf(t->f)) {
          t->kind = T_ERROR;
          t->msg = "float literal out of range";
          return 0;
        }
      } else if (t) {
        t->u = u;
      }
    } else if (c == '"') {
      s++;
      const char *msg = NULL;
      while (s < end && *s != '"') {
        if (*s == '\n') {
          msg = "unterminated string (a string ends on its line)";
          break;
        }
        if (*s == '\\') {
          if (s + 1 >= end || !strchr("\"\\nt", s[1])) {
            pto_loc el = {line, (int)(s - line_start) + 1};
            t = push_tok(p, T_ERROR, s, 2, el);
            if (!t) return -1;
            t->msg = "unknown escape in a string (the escapes are \\\" \\\\ \\n \\t)";
            return 0;
          }
          s += 2;
          continue;
        }
        s++;
      }
      if (!msg && s >= end) msg = "unterminated string";
      if (msg) {
        t = push_tok(p, T_ERROR, st, 1, loc);
        if (!t) return -1;
        t->msg = msg;
        return 0;
      }
      s++;
      t = push_tok(p, T_STRING, st + 1, (size_t)(s - st - 2), loc);
    } else {
      tok_kind k;
      size_t n = 1;
      char d = s + 1 < end ? s[1] : 0;
      switch (c) {
      case '(': k = T_LPAREN; break;
      case ')': k = T_RPAREN; break;
      case '[': k = T_LBRACK; break;
      case ']': k = T_RBRACK; break;
      case '{': k = T_LBRACE; break;
      case '}': k = T_RBRACE; break;
      case ',': k = T_COMMA; break;
      case ':': k = T_COLON; break;
      case '.': k = T_DOT; break;
      case '+': k = T_PLUS; break;
      case '*': k = T_STAR; break;
      case '/': k = T_SLASH; break;
      case '-':
        k = d == '>' ? T_ARROW : T_MINUS;
        n = d == '>' ? 2 : 1;
        break;
      case '=':
        k = d == '=' ? T_EQ : T_ASSIGN;
        n = d == '=' ? 2 : 1;
        break;
      case '!':
        k = d == '=' ? T_NE : T_NOT;
        n = d == '=' ? 2 : 1;
        break;
      case '<':
        k = d == '=' ? T_LE : T_LT;
        n = d == '=' ? 2 : 1;
        break;
      case '>':
        k = d == '=' ? T_GE : T_GT;
        n = d == '=' ? 2 : 1;
        break;
      case '&':
      case '|':
        if (d == c) {
          k = c == '&' ? T_AND : T_OR;
          n = 2;
          break;
        }
        /* fallthrough */
      default:
        t = push_tok(p, T_ERROR, st, 1, loc);
        if (!t) return -1;
        t->msg = (c == '&' || c == '|') ? "a single '&' or '|' is not an operator (write && or ||)"
                                        : "unexpected character";
        t->bad = c;
        t->has_bad = c != '&' && c != '|';
        return 0;
      }
      s += n;
      t = push_tok(p, k, st, n, loc);
      if (k == T_RBRACE && note_close(p, line)) return -1;
    }
    if (!t) return -1;
  }
  pto_loc loc = {line, (int)(s - line_start) + 1};
  return push_tok(p, T_EOF, s, 0, loc) ? 0 : -1;
}

/* ---- token helpers -------------------------------------------------------------------- */

static tok *peek(parser *p) { return &p->toks[p->pos]; }
static tok *peek2(parser *p) {
  return p->toks[p->pos].kind == T_EOF || p->toks[p->pos].kind == T_ERROR ? &p->toks[p->pos]
                                                                          : &p->toks[p->pos + 1];
}
static tok *next(parser *p) {
  tok *t = &p->toks[p->pos];
  if (t->kind != T_EOF && t->kind != T_ERROR) p->pos++;
  return t;
}

static int is_word(const tok *t, const char *w) {
  return t->kind == T_WORD && strlen(w) == t->n && memcmp(t->s, w, t->n) == 0;
}

static const char *kind_text(tok_kind k) {
  switch (k) {
  case T_LPAREN: return "'('";
  case T_RPAREN: return "')'";
  case T_LBRACK: return "'['";
  case T_RBRACK: return "']'";
  case T_LBRACE: return "'{'";
  case T_RBRACE: return "'}'";
  case T_COMMA: return "','";
  case T_COLON: return "':'";
  case T_ASSIGN: return "'='";
  case T_ARROW: return "'->'";
  case T_DOT: return "'.'";
  case T_VALUE: return "a value name";
  case T_FUNC: return "a function name";
  case T_WORD: return "a word";
  case T_STRING: return "a string";
  case T_INT: return "an integer";
  default: return "?";
  }
}

/* What a token is, for "found ..." */
static void describe(const tok *t, char *out, size_t n) {
  switch (t->kind) {
  case T_EOF: snprintf(out, n, "end of file"); break;
  case T_ERROR: snprintf(out, n, "an invalid token"); break;
  case T_VALUE: snprintf(out, n, "%%%.*s", (int)(t->n > 60 ? 60 : t->n), t->s); break;
  case T_FUNC: snprintf(out, n, "@%.*s", (int)(t->n > 60 ? 60 : t->n), t->s); break;
  case T_WORD: snprintf(out, n, "'%.*s'", (int)(t->n > 60 ? 60 : t->n), t->s); break;
  case T_INT:
  case T_FLOAT: snprintf(out, n, "number %.*s", (int)(t->n > 60 ? 60 : t->n), t->s); break;
  case T_STRING: snprintf(out, n, "a string"); break;
  default: snprintf(out, n, "'%.*s'", (int)t->n, t->s); break;
  }
}

static pto_status err_at(parser *p, const tok *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static pto_status err_at(parser *p, const tok *t, const char *fmt, ...) {
  char msg[700];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pto_ir_builder_set_loc(p->b, t->loc);
  return pto_ir_builder_fail(p->b, "%s", msg);
}

/* The lexical error a T_ERROR token carries. */
static pto_status lex_error(parser *p, const tok *t) {
  unsigned char c = (unsigned char)t->bad;
  if (t->has_bad && c >= 0x20 && c < 0x7f) return err_at(p, t, "%s '%c'", t->msg, c);
  if (t->has_bad) return err_at(p, t, "%s (byte 0x%02x)", t->msg, c);
  return err_at(p, t, "%s", t->msg);
}

/* "expected WHAT, found TOKEN" at the current token. */
static pto_status expected(parser *p, const char *what) {
  tok *t = peek(p);
  if (t->kind == T_ERROR) return lex_error(p, t);
  char found[96];
  describe(t, found, sizeof found);
  return err_at(p, t, "expected %s, found %s", what, found);
}

static pto_status expect(parser *p, tok_kind k, const char *what, tok **out) {
  if (peek(p)->kind != k) {
    char w[96];
    snprintf(w, sizeof w, "%s%s%s", kind_text(k), what ? " " : "", what ? what : "");
    return expected(p, w);
  }
  tok *t = next(p);
  if (out) *out = t;
  return PTO_OK;
}

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    pto_status s__ = (expr);                                                                       \
    if (s__) return s__;                                                                           \
  } while (0)

/* The token's text as a NUL-terminated string in the parser's scratch buffer (valid until the
 * next call). */
static const char *text(parser *p, const tok *t) {
  if (pto_grow(&p->scratch, 1, &p->scratch_cap, t->n + 1)) return NULL;
  memcpy(p->scratch, t->s, t->n);
  p->scratch[t->n] = 0;
  return p->scratch;
}

/* OUT_OF_MEMORY, not a syntax error: the CLI must not call an exhausted heap bad input. */
static pto_status oom(parser *p) { return pto__ir_builder_oom(p->b); }

/* A STRING token's value, unescaped, in scratch. */
static const char *unescape(parser *p, const tok *t) {
  if (!text(p, t)) return NULL;
  char *o = p->scratch;
  for (const char *s = p->scratch; *s; s++) {
    if (*s == '\\') {
      s++;
      *o++ = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
    } else {
      *o++ = *s;
    }
  }
  *o = 0;
  return p->scratch;
}

/* ---- expressions ---------------------------------------------------------------------- */

static pto_status sexpr(parser *p, pto_ir_expr **out);

static pto_status enter(parser *p, const tok *t) {
  if (++p->depth > MAX_DEPTH)
    return err_at(p, t, "nested too deeply (more than %d levels)", MAX_DEPTH);
  return PTO_OK;
}

static pto_status int_literal(parser *p, const tok *t, int negate, pto_ir_expr **out) {
  pto_ir_builder_set_loc(p->b, t->loc);
  if (t->u > (uint64_t)INT64_MAX) { /* -2^63 (i64's lowest), or a u64 literal */
    if (!negate) return pto_ir_builder_uint(p->b, t->u, out);
    if (t->u == (uint64_t)INT64_MAX + 1) return pto_ir_builder_int(p->b, INT64_MIN, out);
    return err_at(p, t, "integer literal -%.*s out of range (" PTO__LIT_LOWEST ")", (int)t->n,
                  t->s);
  }
  return pto_ir_builder_int(p->b, negate ? -(int64_t)t->u : (int64_t)t->u, out);
}

/* The top-level `dynamic` declaration naming the word sym, or NULL. Pass 1 reads declarations
 * and headers in textual order, so a header may use only the symbols declared above it; a use
 * before a later declaration says where that declaration is. */
static const tok *later_dynamic(const parser *p, const tok *sym) {
  int depth = 0;
  for (int i = 0; i < p->ntoks; i++) {
    const tok *t = &p->toks[i];
    if (t->kind == T_EOF || t->kind == T_ERROR) break;
    if (t->kind == T_LBRACE) depth++;
    if (t->kind == T_RBRACE) depth--;
    if (depth != 0 || !is_word(t, "dynamic")) continue;
    for (int j = i + 1; j < p->ntoks && p->toks[j].kind == T_WORD; j += 2) {
      const tok *w = &p->toks[j];
      if (w->n == sym->n && memcmp(w->s, sym->s, w->n) == 0) return w;
      if (j + 1 >= p->ntoks || p->toks[j + 1].kind != T_COMMA) break;
    }
  }
  return NULL;
}

static pto_status atom(parser *p, pto_ir_expr **out) {
  tok *t = peek(p);
  pto_ir_builder *b = p->b;
  switch (t->kind) {
  case T_VALUE: {
    next(p);
    const char *name = text(p, t);
    if (!name) return oom(p);
    pto_ir_builder_set_loc(b, t->loc);
    pto_ir_value *v;
    TRY(pto_ir_builder_lookup(b, name, &v));
    return pto_ir_builder_use(b, v, out);
  }
  case T_INT: next(p); return int_literal(p, t, 0, out);
  case T_FLOAT:
    next(p);
    pto_ir_builder_set_loc(b, t->loc);
    return pto_ir_builder_float(b, t->f, out);
  case T_LPAREN: {
    next(p);
    TRY(enter(p, t));
    TRY(sexpr(p, out));
    p->depth--;
    return expect(p, T_RPAREN, "to close the '('", NULL);
  }
  case T_WORD: {
    tok *t2 = peek2(p);
    if (is_word(t, "true") || is_word(t, "false")) {
      next(p);
      pto_ir_builder_set_loc(b, t->loc);
      return pto_ir_builder_bool(b, is_word(t, "true"), out);
    }
    int fn = is_word(t, "min")   ? PTO_EOP_MIN
             : is_word(t, "max") ? PTO_EOP_MAX
             : is_word(t, "mod") ? PTO_EOP_MOD
                                 : 0;
    int dt = pto_dtype_from_name(t->s, t->n);
    if ((fn || dt >= 0) && t2->kind == T_LPAREN) {
      next(p);
      next(p);
      TRY(enter(p, t));
      pto_ir_expr *a, *c;
      TRY(sexpr(p, &a));
      if (fn) {
        TRY(expect(p, T_COMMA,
                   fn == PTO_EOP_MOD ? "between the arguments of mod" : "between the two arguments",
                   NULL));
        TRY(sexpr(p, &c));
      }
      TRY(expect(p, T_RPAREN, "to close the call", NULL));
      p->depth--;
      pto_ir_builder_set_loc(b, t->loc);
      if (fn) return pto_ir_builder_binary(b, (pto_expr_op)fn, a, c, out);
      return pto_ir_builder_cast(b, (pto_dtype)dt, a, out);
    }
    if (t2->kind == T_DOT)
      return err_at(p, t,
                    "op calls do not nest (PTIR is three-address): name the result first, like %%t "
                    "= %.*s.%.*s(...)",
                    (int)t->n, t->s, (int)(peek(p) + 2)->n, (peek(p) + 2)->s);
    next(p);
    int sym = pto_ir_builder_find_sym(b, t->s, t->n);
    if (sym < 0) {
      if (fn || dt >= 0)
        return err_at(p, t, "'%.*s' needs arguments: %.*s(...)", (int)t->n, t->s, (int)t->n, t->s);
      const tok *d = later_dynamic(p, t);
      if (d)
        return err_at(p, t,
                      "dynamic symbol '%.*s' is used here before its declaration at %d:%d; "
                      "declare it before its first use",
                      (int)t->n, t->s, d->loc.line, d->loc.col);
      return err_at(p, t, "undeclared dynamic symbol '%.*s' (declare it with: dynamic %.*s)",
                    (int)t->n, t->s, (int)t->n, t->s);
    }
    pto_ir_builder_set_loc(b, t->loc);
    return pto_ir_builder_sym(b, sym, out);
  }
  case T_ERROR: return lex_error(p, t);
  default: return expected(p, "an expression");
  }
}

static pto_status unary(parser *p, pto_ir_expr **out) {
  tok *t = peek(p);
  if (t->kind != T_MINUS && t->kind != T_NOT) return atom(p, out);
  next(p);
  TRY(enter(p, t));
  pto_ir_expr *a;
  /* -9223372036854775808 is a literal even though its magnitude alone is not. */
  if (t->kind == T_MINUS && peek(p)->kind == T_INT && peek(p)->u == (uint64_t)INT64_MAX + 1) {
    tok *it = next(p);
    p->depth--;
    pto_status s = int_literal(p, it, 1, out);
    if (!s) (*out)->loc = t->loc;
    return s;
  }
  TRY(unary(p, &a));
  p->depth--;
  pto_ir_builder_set_loc(p->b, t->loc);
  return pto_ir_builder_unary(p->b, t->kind == T_MINUS ? PTO_EOP_NEG : PTO_EOP_NOT, a, out);
}

static pto_expr_op binop(tok_kind k) {
  switch (k) {
  case T_PLUS: return PTO_EOP_ADD;
  case T_MINUS: return PTO_EOP_SUB;
  case T_STAR: return PTO_EOP_MUL;
  case T_SLASH: return PTO_EOP_DIV;
  case T_EQ: return PTO_EOP_EQ;
  case T_NE: return PTO_EOP_NE;
  case T_LT: return PTO_EOP_LT;
  case T_LE: return PTO_EOP_LE;
  case T_GT: return PTO_EOP_GT;
  case T_GE: return PTO_EOP_GE;
  case T_AND: return PTO_EOP_AND;
  case T_OR: return PTO_EOP_OR;
  default: return PTO_EOP_NONE;
  }
}

static int is_cmp_tok(tok_kind k) { return k >= T_EQ && k <= T_GE; }

static pto_status binary_level(parser *p, int level, pto_ir_expr **out);

/* Levels: 0 or, 1 and, 2 cmp, 3 add, 4 mul. */
static int at_level(tok_kind k, int level) {
  switch (level) {
  case 0: return k == T_OR;
  case 1: return k == T_AND;
  case 2: return is_cmp_tok(k);
  case 3: return k == T_PLUS || k == T_MINUS;
  case 4: return k == T_STAR || k == T_SLASH;
  }
  return 0;
}

static pto_status binary_level(parser *p, int level, pto_ir_expr **out) {
  if (level > 4) return unary(p, out);
  pto_ir_expr *lhs;
  TRY(binary_level(p, level + 1, &lhs));
  while (at_level(peek(p)->kind, level)) {
    tok *op = next(p);
    pto_ir_expr *rhs;
    TRY(binary_level(p, level + 1, &rhs));
    pto_ir_builder_set_loc(p->b, op->loc);
    TRY(pto_ir_builder_binary(p->b, binop(op->kind), lhs, rhs, &lhs));
    if (level == 2) {
      if (is_cmp_tok(peek(p)->kind))
        return err_at(p, peek(p), "comparisons do not chain: add parentheses, e.g. (a < b) == c");
      break;
    }
  }
  *out = lhs;
  return PTO_OK;
}

static pto_status sexpr(parser *p, pto_ir_expr **out) {
  TRY(enter(p, peek(p)));
  pto_status s = binary_level(p, 0, out);
  p->depth--;
  return s;
}

/* sexpr {',' sexpr} into a malloc'd array. */
typedef struct exprs {
  pto_ir_expr **v;
  int n, cap;
} exprs;

static int exprs_push(exprs *es, pto_ir_expr *e) {
  if (pto_grow_int(&es->v, sizeof *es->v, &es->cap, es->n + 1)) return -1;
  es->v[es->n++] = e;
  return 0;
}

static pto_status expr_list(parser *p, exprs *es) {
  for (;;) {
    pto_ir_expr *e;
    TRY(sexpr(p, &e));
    if (exprs_push(es, e)) return oom(p);
    if (peek(p)->kind != T_COMMA) return PTO_OK;
    next(p);
  }
}

/* ---- types ---------------------------------------------------------------------------- */

static pto_status dims(parser *p, pto_ir_expr **out, int *n) {
  tok *open = NULL;
  TRY(expect(p, T_LBRACK, "to start the dims", &open));
  *n = 0;
  for (;;) {
    if (*n == PTO_MAX_RANK)
      return err_at(p, peek(p), "more than %d dims (rank is 1 to %d)", PTO_MAX_RANK, PTO_MAX_RANK);
    TRY(sexpr(p, &out[(*n)++]));
    if (peek(p)->kind != T_COMMA) break;
    next(p);
  }
  return expect(p, T_RBRACK, "to close the dims", NULL);
}

static pto_status dtype_word(parser *p, pto_dtype *out) {
  tok *t = peek(p);
  int dt = t->kind == T_WORD ? pto_dtype_from_name(t->s, t->n) : -1;
  if (dt < 0)
    return expected(p, "a dtype (bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 index)");
  next(p);
  *out = (pto_dtype)dt;
  return PTO_OK;
}

static pto_status type(parser *p, const pto_ir_type **out) {
  tok *t = peek(p);
  pto_ir_builder *b = p->b;
  pto_ir_expr *d[PTO_MAX_RANK];
  int n = 0;
  pto_dtype dt;
  if (is_word(t, "tensor") || is_word(t, "dtensor")) {
    int dten = is_word(t, "dtensor");
    next(p);
    if (peek(p)->kind == T_LBRACK)
      TRY(dims(p, d, &n));
    else if (dten)
      return expected(p, "'[' (a dtensor has a shape)");
    TRY(dtype_word(p, &dt));
    pto_ir_builder_set_loc(b, t->loc);
    if (dten) return pto_ir_builder_dtensor_type(b, dt, n, d, out);
    return pto_ir_builder_tensor_type(b, dt, n ? n : -1, d, out);
  }
  if (is_word(t, "tile")) {
    next(p);
    TRY(dims(p, d, &n));
    TRY(dtype_word(p, &dt));
    pto_space space = PTO_SPACE_VEC;
    if (peek(p)->kind == T_FUNC) {
      tok *st = next(p);
      int sp = pto_space_from_name(st->s, st->n);
      if (sp < 0)
        return err_at(p, st, "unknown memory space @%.*s (spaces: vec, mat, left, right, acc)",
                      (int)st->n, st->s);
      space = (pto_space)sp;
    }
    pto_ir_expr *v[PTO_MAX_RANK];
    int nv = 0;
    if (is_word(peek(p), "valid") && peek2(p)->kind == T_LBRACK) {
      next(p);
      TRY(dims(p, v, &nv));
    }
    pto_ir_builder_set_loc(b, t->loc);
    return pto_ir_builder_tile_type(b, dt, n, d, space, nv, v, out);
  }
  if (t->kind == T_WORD && pto_dtype_from_name(t->s, t->n) >= 0) {
    TRY(dtype_word(p, &dt));
    pto_ir_builder_set_loc(b, t->loc);
    return pto_ir_builder_scalar_type(b, dt, out);
  }
  return expected(p, "a type (a dtype, tensor[..] dt, dtensor[..] dt or tile[..] dt)");
}

/* ---- headers (pass 1) ----------------------------------------------------------------- */

static pto_status literal(parser *p, pto_ir_expr **out) {
  tok *t = peek(p);
  if (is_word(t, "true") || is_word(t, "false")) {
    next(p);
    pto_ir_builder_set_loc(p->b, t->loc);
    return pto_ir_builder_bool(p->b, is_word(t, "true"), out);
  }
  int neg = 0;
  tok *minus = NULL;
  if (t->kind == T_MINUS) {
    minus = next(p);
    neg = 1;
    t = peek(p);
  }
  if (t->kind == T_INT) {
    next(p);
    TRY(int_literal(p, t, neg, out));
  } else if (t->kind == T_FLOAT) {
    next(p);
    pto_ir_builder_set_loc(p->b, t->loc);
    TRY(pto_ir_builder_float(p->b, neg ? -t->f : t->f, out));
  } else {
    return expected(p,
                    neg ? "a number after '-'" : "a literal (a number, true or false) or runtime");
  }
  if (minus) (*out)->loc = minus->loc;
  return PTO_OK;
}

static pto_status param(parser *p) {
  tok *t = peek(p);
  pto_dir dir = PTO_DIR_IN;
  int dir_written = 0;
  if (t->kind == T_WORD && peek2(p)->kind == T_VALUE) {
    if (is_word(t, "in") || is_word(t, "out") || is_word(t, "inout")) {
      dir = is_word(t, "in") ? PTO_DIR_IN : is_word(t, "out") ? PTO_DIR_OUT : PTO_DIR_INOUT;
      dir_written = 1;
      next(p);
    } else {
      char f[96];
      describe(t, f, sizeof f);
      return err_at(p, t, "expected a direction (in, out or inout) or a parameter, found %s", f);
    }
  }
  tok *nt = NULL;
  TRY(expect(p, T_VALUE, "(a parameter like %x: f32)", &nt));
  TRY(expect(p, T_COLON, "after the parameter name", NULL));
  const pto_ir_type *ty;
  TRY(type(p, &ty));
  pto_bind_kind bind = PTO_BIND_NONE;
  pto_ir_expr *lit = NULL;
  if (peek(p)->kind == T_ASSIGN) {
    next(p);
    if (is_word(peek(p), "runtime")) {
      next(p);
      bind = PTO_BIND_RUNTIME;
    } else {
      TRY(literal(p, &lit));
      bind = PTO_BIND_LITERAL;
    }
  }
  const char *name = text(p, nt);
  if (!name) return oom(p);
  pto_ir_builder_set_loc(p->b, nt->loc);
  return pto_ir_builder_param(p->b, name, ty, dir, dir_written, bind, lit, NULL);
}

static pto_status header(parser *p, pto_ir_func **out) {
  tok *kt = next(p);
  pto_func_kind kind = is_word(kt, "kernel") ? PTO_FUNC_KERNEL
                       : is_word(kt, "orch") ? PTO_FUNC_ORCH
                                             : PTO_FUNC_HOST;
  tok *nt = NULL;
  TRY(expect(p, T_FUNC, "(the function name, like @main)", &nt));
  const char *name = text(p, nt);
  if (!name) return oom(p);
  pto_ir_builder_set_loc(p->b, nt->loc);
  TRY(pto_ir_builder_func_begin(p->b, kind, name, out));
  (*out)->loc = kt->loc;
  TRY(expect(p, T_LPAREN, "to start the parameters", NULL));
  if (peek(p)->kind != T_RPAREN) {
    for (;;) {
      TRY(param(p));
      if (peek(p)->kind != T_COMMA) break;
      next(p);
    }
  }
  TRY(expect(p, T_RPAREN, "to close the parameters", NULL));
  if (peek(p)->kind == T_ARROW) {
    tok *at = next(p);
    TRY(expect(p, T_LPAREN, "after '->'", NULL));
    const pto_ir_type *types[64];
    int n = 0;
    for (;;) {
      if (n == 64) return err_at(p, peek(p), "more than 64 types in a -> list");
      TRY(type(p, &types[n++]));
      if (peek(p)->kind != T_COMMA) break;
      next(p);
    }
    TRY(expect(p, T_RPAREN, "to close the -> list", NULL));
    pto_ir_builder_set_loc(p->b, at->loc);
    TRY(pto_ir_builder_func_rets(p->b, types, n));
  }
  pto_ir_builder_set_loc(p->b, kt->loc);
  return pto_ir_builder_header_end(p->b);
}

/* ---- statements (pass 2) -------------------------------------------------------------- */

static pto_status block(parser *p, int kind);

/* Parsed results of an assignment: names and optional types. */
typedef struct results {
  pto_ir_result r[64];
  char *names[64];
  int n;
} results;

static void results_free(results *rs) {
  for (int i = 0; i < rs->n; i++)
    free(rs->names[i]);
  rs->n = 0;
}

static pto_status result_list(parser *p, results *rs) {
  for (;;) {
    if (rs->n == 64) return err_at(p, peek(p), "more than 64 results");
    tok *vt = NULL;
    TRY(expect(p, T_VALUE, "(a result name)", &vt));
    int i = rs->n++;
    rs->names[i] = pto_strndup(vt->s, vt->n);
    if (!rs->names[i]) return oom(p);
    rs->r[i] = (pto_ir_result){rs->names[i], NULL, vt->loc};
    if (peek(p)->kind == T_COLON) {
      next(p);
      TRY(type(p, &rs->r[i].type));
    }
    if (peek(p)->kind != T_COMMA) break;
    next(p);
  }
  return expect(p, T_ASSIGN, "after the results", NULL);
}

typedef struct args {
  pto_ir_arg *v;
  int n, cap;
  char **strs; /* malloc'd kw/str texts */
  int nstrs, capstrs;
  exprs lists; /* items of every list, in order; arg list.items point into it after parsing */
} args;

static void args_free(args *a) {
  for (int i = 0; i < a->nstrs; i++)
    free(a->strs[i]);
  free(a->strs);
  free(a->v);
  free(a->lists.v);
  memset(a, 0, sizeof *a);
}

static char *args_str(args *a, const char *s, size_t n) {
  if (pto_grow_int(&a->strs, sizeof *a->strs, &a->capstrs, a->nstrs + 1)) return NULL;
  char *d = pto_strndup(s, n);
  if (d) a->strs[a->nstrs++] = d;
  return d;
}

static pto_ir_arg *args_push(args *a) {
  if (pto_grow_int(&a->v, sizeof *a->v, &a->cap, a->n + 1)) return NULL;
  pto_ir_arg *r = &a->v[a->n++];
  memset(r, 0, sizeof *r);
  return r;
}

/* list := '[' [sexpr {',' sexpr}] ']'; items go to a->lists, list.items is fixed up later (the
 * array may move while parsing). The start index is parked in list.n's sibling. */
static pto_status list_arg(parser *p, args *a, pto_ir_arg *arg, int *start) {
  next(p);
  *start = a->lists.n;
  if (peek(p)->kind != T_RBRACK) TRY(expr_list(p, &a->lists));
  arg->kind = PTO_ARG_LIST;
  arg->list.n = a->lists.n - *start;
  return expect(p, T_RBRACK, "to close the list", NULL);
}

static pto_status op_args(parser *p, args *a, int **starts) {
  int cap = 0;
  *starts = NULL;
  if (peek(p)->kind == T_RPAREN) return PTO_OK;
  for (;;) {
    tok *t = peek(p), *t2 = peek2(p);
    pto_ir_arg *arg = args_push(a);
    int idx = a->n - 1;
    if (!arg) return oom(p);
    if (pto_grow_int(starts, sizeof **starts, &cap, a->n)) return oom(p);
    (*starts)[idx] = -1;
    arg->loc = t->loc;
    if (t->kind == T_WORD && t2->kind == T_ASSIGN) {
      if (!(arg->kw = args_str(a, t->s, t->n))) return oom(p);
      next(p);
      next(p);
      t = peek(p);
      t2 = peek2(p);
      arg->loc = t->loc;
      if (t->kind == T_LBRACK) {
        int st;
        TRY(list_arg(p, a, arg = &a->v[idx], &st));
        (*starts)[idx] = st;
      } else if (t->kind == T_STRING) {
        next(p);
        const char *u = unescape(p, t);
        if (!u || !(a->v[idx].str = args_str(a, u, strlen(u)))) return oom(p);
        a->v[idx].kind = PTO_ARG_STRING;
      } else if (t->kind == T_WORD && (t2->kind == T_COMMA || t2->kind == T_RPAREN)) {
        /* After kw= a word is a plain word: pad=min, space=vec. */
        next(p);
        if (!(a->v[idx].str = args_str(a, t->s, t->n))) return oom(p);
        a->v[idx].kind = PTO_ARG_WORD;
      } else {
        pto_ir_expr *e;
        TRY(sexpr(p, &e));
        a->v[idx].kind = PTO_ARG_EXPR;
        a->v[idx].expr = e;
      }
    } else if (t->kind == T_LBRACK) {
      int st;
      TRY(list_arg(p, a, arg, &st));
      (*starts)[idx] = st;
    } else if (t->kind == T_STRING) {
      next(p);
      const char *u = unescape(p, t);
      if (!u || !(a->v[idx].str = args_str(a, u, strlen(u)))) return oom(p);
      a->v[idx].kind = PTO_ARG_STRING;
    } else if (t->kind == T_WORD && pto_dtype_from_name(t->s, t->n) >= 0 &&
               (t2->kind == T_COMMA || t2->kind == T_RPAREN)) {
      next(p);
      a->v[idx].kind = PTO_ARG_DTYPE;
      a->v[idx].dtype = (pto_dtype)pto_dtype_from_name(t->s, t->n);
    } else {
      pto_ir_expr *e;
      TRY(sexpr(p, &e));
      a->v[idx].kind = PTO_ARG_EXPR;
      a->v[idx].expr = e;
    }
    if (peek(p)->kind != T_COMMA) return PTO_OK;
    next(p);
  }
}

static pto_status opcall(parser *p, results *rs) {
  tok *ns = next(p);
  next(p); /* '.' */
  tok *nm = peek(p);
  /* After '.', any word is the op's name (inf and nan lex as FLOAT but read as words here). */
  if (nm->kind != T_WORD && !(nm->kind == T_FLOAT && is_alpha(nm->s[0])))
    return expected(p, "an op name after '.'");
  next(p);
  size_t len = (size_t)(nm->s + nm->n - ns->s);
  int op = (nm->s == ns->s + ns->n + 1) ? pto_op_lookup(ns->s, len) : -1;
  if (op < 0) {
    char name[128];
    snprintf(name, sizeof name, "%.*s.%.*s", (int)(ns->n > 50 ? 50 : ns->n), ns->s,
             (int)(nm->n > 50 ? 50 : nm->n), nm->s);
    op = pto_op_lookup(name, strlen(name));
    if (op < 0) return err_at(p, ns, "unknown op '%s'", name);
  }
  TRY(expect(p, T_LPAREN, "after the op name", NULL));
  args a = {0};
  int *starts = NULL;
  pto_status s = op_args(p, &a, &starts);
  if (!s) s = expect(p, T_RPAREN, "to close the arguments", NULL);
  if (!s) {
    for (int i = 0; i < a.n; i++)
      if (a.v[i].kind == PTO_ARG_LIST) /* no list items at all: lists.v is NULL (fuzz_ptir) */
        a.v[i].list.items = a.lists.v ? a.lists.v + starts[i] : NULL;
    pto_ir_builder_set_loc(p->b, ns->loc);
    s = pto_ir_builder_op(p->b, (pto_opcode)op, a.v, a.n, rs ? rs->r : NULL, rs ? rs->n : 0, NULL);
  }
  free(starts);
  args_free(&a);
  return s;
}

static pto_status callexpr(parser *p, results *rs) {
  tok *ct = next(p);
  tok *ft = NULL;
  TRY(expect(p, T_FUNC, "after call (the callee, like @f)", &ft));
  const char *name = text(p, ft);
  if (!name) return oom(p);
  pto_ir_func *callee = pto__ir_builder_find_func(p->b, name);
  if (!callee) return err_at(p, ft, "unknown function @%s", name);
  TRY(expect(p, T_LPAREN, "after the callee", NULL));
  exprs es = {0};
  pto_status s = PTO_OK;
  if (peek(p)->kind != T_RPAREN) s = expr_list(p, &es);
  if (!s) s = expect(p, T_RPAREN, "to close the arguments", NULL);
  pto_ir_expr *device = NULL;
  if (!s && is_word(peek(p), "device") && peek2(p)->kind == T_ASSIGN) {
    next(p);
    next(p);
    s = sexpr(p, &device);
  }
  if (!s) {
    pto_ir_builder_set_loc(p->b, ct->loc);
    s = pto_ir_builder_call(p->b, callee, es.v, es.n, device, rs ? rs->r : NULL, rs ? rs->n : 0,
                            NULL);
  }
  free(es.v);
  return s;
}

enum { BLK_FOR, BLK_THEN, BLK_ELSE, BLK_INCORE };

static pto_status forexpr(parser *p, results *rs) {
  tok *ft = next(p);
  tok *iv = NULL;
  TRY(expect(p, T_VALUE, "after for (the loop variable)", &iv));
  if (!is_word(peek(p), "in")) return expected(p, "'in'");
  next(p);
  int parallel;
  if (is_word(peek(p), "range"))
    parallel = 0;
  else if (is_word(peek(p), "parallel"))
    parallel = 1;
  else
    return expected(p, "'range' or 'parallel'");
  next(p);
  TRY(expect(p, T_LPAREN, "after range", NULL));
  pto_ir_expr *lo, *hi, *step = NULL;
  TRY(sexpr(p, &lo));
  TRY(expect(p, T_COMMA, "between the bounds", NULL));
  TRY(sexpr(p, &hi));
  if (peek(p)->kind == T_COMMA) {
    next(p);
    TRY(sexpr(p, &step));
  }
  TRY(expect(p, T_RPAREN, "to close the range", NULL));
  results iters = {0};
  exprs inits = {0};
  pto_status s = PTO_OK;
  if (is_word(peek(p), "iter") && peek2(p)->kind == T_LPAREN) {
    next(p);
    next(p);
    for (;;) {
      if (iters.n == 64) {
        s = err_at(p, peek(p), "more than 64 iter variables");
        break;
      }
      tok *vt = NULL;
      if ((s = expect(p, T_VALUE, "(an iter variable)", &vt))) break;
      int i = iters.n++;
      if (!(iters.names[i] = pto_strndup(vt->s, vt->n))) {
        s = oom(p);
        break;
      }
      iters.r[i] = (pto_ir_result){iters.names[i], NULL, vt->loc};
      if (peek(p)->kind == T_COLON) {
        next(p);
        if ((s = type(p, &iters.r[i].type))) break;
      }
      if ((s = expect(p, T_ASSIGN, "after the iter variable", NULL))) break;
      pto_ir_expr *e;
      if ((s = sexpr(p, &e))) break;
      if (exprs_push(&inits, e)) {
        s = oom(p);
        break;
      }
      if (peek(p)->kind != T_COMMA) break;
      next(p);
    }
    if (!s) s = expect(p, T_RPAREN, "to close iter(...)", NULL);
  }
  if (!s) {
    const char *ivname = text(p, iv);
    if (!ivname) s = oom(p);
    if (!s) {
      pto_ir_builder_set_loc(p->b, ft->loc);
      s = pto_ir_builder_for_begin(p->b, ivname, parallel, lo, hi, step, iters.r, inits.v, iters.n,
                                   rs ? rs->r : NULL, rs ? rs->n : 0, NULL);
    }
  }
  results_free(&iters);
  free(inits.v);
  TRY(s);
  return block(p, BLK_FOR);
}

static pto_status ifexpr(parser *p, results *rs) {
  tok *it = next(p);
  pto_ir_expr *cond;
  TRY(sexpr(p, &cond));
  pto_ir_builder_set_loc(p->b, it->loc);
  TRY(pto_ir_builder_if_begin(p->b, cond, rs ? rs->r : NULL, rs ? rs->n : 0, NULL));
  return block(p, BLK_THEN);
}

static pto_status incore(parser *p) {
  tok *it = next(p);
  const char *name = NULL;
  if (peek(p)->kind == T_STRING) {
    name = unescape(p, next(p));
    if (!name) return oom(p);
  }
  pto_ir_builder_set_loc(p->b, it->loc);
  TRY(pto_ir_builder_incore_begin(p->b, name, NULL));
  return block(p, BLK_INCORE);
}

static pto_status last(parser *p) {
  tok *t = next(p);
  int is_yield = is_word(t, "yield");
  exprs es = {0};
  pto_status s = PTO_OK;
  if (peek(p)->kind != T_RBRACE) s = expr_list(p, &es);
  if (!s) {
    pto_ir_builder_set_loc(p->b, t->loc);
    s = is_yield ? pto_ir_builder_yield(p->b, es.v, es.n) : pto_ir_builder_return(p->b, es.v, es.n);
  }
  free(es.v);
  TRY(s);
  if (peek(p)->kind != T_RBRACE) {
    char w[64];
    snprintf(w, sizeof w, "'}' after %s (it is the last statement of its block)",
             is_yield ? "yield" : "return");
    return expected(p, w);
  }
  return PTO_OK;
}

static pto_status statement(parser *p) {
  tok *t = peek(p), *t2 = peek2(p);
  if (t->kind == T_VALUE && (t2->kind == T_ASSIGN || t2->kind == T_COMMA || t2->kind == T_COLON)) {
    results rs = {0};
    pto_status s = result_list(p, &rs);
    if (!s) {
      tok *r = peek(p), *r2 = peek2(p);
      if (r->kind == T_WORD && r2->kind == T_DOT)
        s = opcall(p, &rs);
      else if (is_word(r, "call") && r2->kind == T_FUNC)
        s = callexpr(p, &rs);
      else if (is_word(r, "for") && r2->kind == T_VALUE)
        s = forexpr(p, &rs);
      else if (is_word(r, "if"))
        s = ifexpr(p, &rs);
      else {
        pto_ir_expr *e;
        s = sexpr(p, &e);
        if (!s && rs.n != 1)
          s = err_at(p, t, "an expression gives one value, but %d results are named", rs.n);
        if (!s) {
          pto_ir_builder_set_loc(p->b, t->loc);
          s = pto_ir_builder_assign(p->b, &rs.r[0], e, NULL);
        }
      }
    }
    results_free(&rs);
    return s;
  }
  if (t->kind == T_WORD && t2->kind == T_DOT) return opcall(p, NULL);
  if (is_word(t, "call") && t2->kind == T_FUNC) return callexpr(p, NULL);
  if (is_word(t, "for") && t2->kind == T_VALUE) return forexpr(p, NULL);
  if (is_word(t, "if")) return ifexpr(p, NULL);
  if (is_word(t, "incore")) return incore(p);
  if (is_word(t, "yield") || is_word(t, "return")) return last(p);
  if (t->kind == T_VALUE) {
    /* A value starts an assignment: say what is missing after it (or what the lexer refused
     * there), not that %x cannot start a statement. */
    if (t2->kind == T_ERROR) return lex_error(p, t2);
    char name[96], found[96];
    describe(t, name, sizeof name);
    describe(t2, found, sizeof found);
    return err_at(
        p, t2, "expected '=' after %s (a statement that starts with a value assigns it), found %s",
        name, found);
  }
  return expected(p, "a statement");
}

/* Statements up to the closing '}' (consumed); *close is that brace. */
static pto_status items(parser *p, tok **close) {
  while (peek(p)->kind != T_RBRACE) {
    if (peek(p)->kind == T_EOF) return expected(p, "'}' to close the block");
    TRY(statement(p));
  }
  *close = next(p);
  return PTO_OK;
}

static pto_status block(parser *p, int kind) {
  tok *open = peek(p);
  TRY(expect(p, T_LBRACE, kind == BLK_ELSE ? "after else" : "to start the block", NULL));
  TRY(enter(p, open));
  tok *close = NULL;
  TRY(items(p, &close));
  p->depth--;
  pto_ir_builder_set_loc(p->b, close->loc);
  switch (kind) {
  case BLK_FOR: return pto_ir_builder_for_end(p->b);
  case BLK_INCORE: return pto_ir_builder_incore_end(p->b);
  case BLK_THEN:
    if (is_word(peek(p), "else")) {
      tok *et = next(p);
      pto_ir_builder_set_loc(p->b, et->loc);
      TRY(pto_ir_builder_else(p->b));
      return block(p, BLK_ELSE);
    }
    return pto_ir_builder_if_end(p->b);
  default: return pto_ir_builder_if_end(p->b);
  }
}

/* ---- program -------------------------------------------------------------------------- */

typedef struct body_ref {
  pto_ir_func *f;
  int start; /* token index of the body's '{' */
} body_ref;

static pto_status program(parser *p, body_ref **bodies, int *nbodies) {
  pto_ir_builder *b = p->b;
  if (!is_word(peek(p), "program"))
    return expected(p, "'program' (a file starts with: program NAME)");
  p->program_line = next(p)->loc.line;
  tok *nt = peek(p);
  if (nt->kind != T_WORD) return expected(p, "the program name");
  next(p);
  pto_ir_program *prog = pto_ir_builder_program(b);
  if (!(prog->name = pto_arena_strndup(prog->arena, nt->s, nt->n))) return oom(p);
  int cap = 0;
  for (;;) {
    tok *t = peek(p);
    if (t->kind == T_EOF) return PTO_OK;
    if (is_word(t, "dynamic")) {
      next(p);
      for (;;) {
        tok *st = peek(p);
        if (st->kind != T_WORD) return expected(p, "a symbol name");
        next(p);
        const char *name = text(p, st);
        if (!name) return oom(p);
        pto_ir_builder_set_loc(b, st->loc);
        TRY(pto_ir_builder_dynamic(b, name, NULL));
        p->dynamic_line = st->loc.line;
        if (peek(p)->kind != T_COMMA) break;
        next(p);
      }
      continue;
    }
    if (is_word(t, "kernel") || is_word(t, "orch") || is_word(t, "host")) {
      pto_ir_func *f;
      TRY(header(p, &f));
      if (peek(p)->kind != T_LBRACE) return expected(p, "'{' to start the body");
      if (pto_grow_int(bodies, sizeof **bodies, &cap, *nbodies + 1)) return oom(p);
      (*bodies)[(*nbodies)++] = (body_ref){f, p->pos};
      /* Skip the body; an unbalanced one runs to the end, and pass 2 reports where it broke. */
      int depth = 0;
      for (;;) {
        tok *x = peek(p);
        if (x->kind == T_EOF || x->kind == T_ERROR) return PTO_OK;
        next(p);
        if (x->kind == T_LBRACE) depth++;
        if (x->kind == T_RBRACE && --depth == 0) break;
      }
      continue;
    }
    return expected(p, "'dynamic', 'kernel', 'orch' or 'host'");
  }
}

/* Copies the comments and '}' lines into the program's arena. Returns -1 when out of memory. */
static int keep_notes(parser *p, pto_ir_program *prog) {
  pto_ir_source_notes *n = &prog->notes;
  n->program_line = p->program_line;
  pto_ir_comment *cs = NULL;
  int *closes = NULL;
  if (p->ncmts && !(cs = pto_arena_alloc(prog->arena, sizeof *cs * (size_t)p->ncmts))) return -1;
  for (int i = 0; i < p->ncmts; i++) {
    const src_comment *c = &p->cmts[i];
    cs[i] = (pto_ir_comment){
        c->line,       pto_arena_strndup(prog->arena, c->s, c->n), c->n, c->eol, c->blank_before,
        c->blank_after};
    if (!cs[i].text) return -1;
  }
  if (p->ncloses && !(closes = pto_arena_alloc(prog->arena, sizeof *closes * (size_t)p->ncloses)))
    return -1;
  if (p->ncloses) memcpy(closes, p->closes, sizeof *closes * (size_t)p->ncloses);
  *n = (pto_ir_source_notes){cs, p->ncmts, p->program_line, p->dynamic_line, closes, p->ncloses};
  return 0;
}

pto_status pto_ir_parse_string(const char *src, size_t len, const char *filename,
                               pto_ir_program **out_program) {
  if (!out_program)
    return pto_status_make(PTO_STATUS_INVALID_ARGUMENT, "pto_ir_parse_string: out_program is NULL");
  *out_program = NULL;
  parser p = {.src = src ? src : "", .len = src ? len : 0};
  pto_status s = pto_ir_builder_create(NULL, filename ? filename : "<string>", &p.b);
  if (s) return s;
  body_ref *bodies = NULL;
  int nbodies = 0;
  if (lex(&p)) {
    s = oom(&p);
    goto done;
  }
  s = program(&p, &bodies, &nbodies);
  for (int i = 0; !s && i < nbodies; i++) {
    p.pos = bodies[i].start;
    tok *open = next(&p);
    pto_ir_builder_set_loc(p.b, open->loc);
    s = pto_ir_builder_body_begin(p.b, bodies[i].f);
    tok *close = NULL;
    if (!s) s = items(&p, &close);
    if (!s) {
      pto_ir_builder_set_loc(p.b, close->loc);
      s = pto_ir_builder_body_end(p.b);
    }
  }
  if (!s) s = pto_ir_builder_finish(p.b, out_program);
  if (!s && keep_notes(&p, *out_program)) {
    pto_ir_program_destroy(*out_program);
    *out_program = NULL;
    s = oom(&p);
  }
done:
  free(p.cmts);
  free(p.closes);
  free(bodies);
  free(p.toks);
  free(p.scratch);
  pto_ir_builder_destroy(p.b);
  return s;
}
