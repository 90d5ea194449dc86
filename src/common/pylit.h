/* The reader of Python literals that grapnel's dictionary texts are written
 * in: the optimizer options ({'constant_folding': True, ...}), TF-TRT
 * conversion parameters, SavedModel save options and the header of a .npy
 * file. One tokenizer, bracket and comma handling, string escapes and
 * integers; each format reads its own keys and values from it.
 *
 * Tokens (whitespace and '#' comments between them are skipped):
 *   STR    a string in ' or " quotes, with Python's escapes (\\ \' \" \a \b
 *          \f \n \r \t \v \<newline> \ooo \xhh \uhhhh \Uhhhhhhhh; code points
 *          are stored as UTF-8); a raw newline ends it as unterminated
 *   PUNCT  one character of the reader's punctuation set (by default
 *          { } [ ] ( ) , : = *)
 *   WORD   any other run of bytes: True, None, 12, -1, 1_000,
 *          VariablePolicy.NONE; what it means is the caller's to decide
 *   END    the end of the text
 * The reader keeps the current token in r->tok (one token of look-ahead).
 *
 * Errors: every failure is a gn__fail with the reader's status code and a
 * message "at offset N: what" (N: the byte offset of the offending token,
 * 0-based), "at offset N (line L:C): what" when the text before it holds a
 * newline. Callers add their own prefix with gn__err_prefix.
 *
 * Nothing here allocates or prints; the reader holds no state but the
 * struct the caller owns. */
#ifndef GN_COMMON_PYLIT_H
#define GN_COMMON_PYLIT_H

#include "common/common.h"

/* Brackets open at once, at most. */
#define GN__PY_MAX_DEPTH 32

typedef enum gn__py_kind { GN__PY_END, GN__PY_PUNCT, GN__PY_STR, GN__PY_WORD } gn__py_kind;

typedef struct gn__py_tok {
    gn__py_kind kind;
    char punct;           /* PUNCT: the character */
    const char *text;     /* STR: between the quotes, escapes as written; WORD: the word */
    size_t len;
    size_t pos;           /* byte offset of the token's first byte */
    bool escapes;         /* STR: holds a backslash (gn__py_str decodes it) */
} gn__py_tok;

typedef struct gn__py {
    const char *s;
    size_t n, i;          /* the text, its length, where the next token starts */
    const char *punct;    /* punctuation characters */
    int depth;            /* brackets open */
    char last;            /* the PUNCT character consumed last (0: none) */
    gn_status code;       /* status of failures: GN_ERR_ARG, GN_ERR_PARSE */
    gn__err *err;
    gn__py_tok tok;       /* the current token */
} gn__py;

/* An open bracket: what closes it, items read so far. */
typedef struct gn__py_seq {
    char close;
    size_t count;
} gn__py_seq;

/* Starts reading s[0..n) and reads its first token. punct: the punctuation
 * set (NULL: the default). */
gn_status gn__py_init(gn__py *r, const char *s, size_t n, const char *punct, gn_status code, gn__err *err);
/* Fails with "at offset POS: " and the formatted message. */
gn_status gn__py_fail(gn__py *r, size_t pos, const char *fmt, ...) GN__PRINTF(3, 4);
/* Reads the next token into r->tok. */
gn_status gn__py_advance(gn__py *r);

/* The current token is punctuation c. */
static inline bool gn__py_is(const gn__py *r, char c) { return r->tok.kind == GN__PY_PUNCT && r->tok.punct == c; }
/* The current token is the word w (exactly). */
bool gn__py_is_word(const gn__py *r, const char *w);
/* Consumes punctuation c, else fails "expected 'c'". */
gn_status gn__py_expect(gn__py *r, char c);

/* Opens a dict, list or tuple: consumes `open` ('{', '[' or '('), else fails
 * "expected 'open'"; fails past GN__PY_MAX_DEPTH brackets. */
gn_status gn__py_open(gn__py *r, char open, gn__py_seq *q);
/* Steps to q's next item: consumes the ',' after the previous one (else
 * fails "expected ',' or 'close'"); *more is false once the closing bracket
 * is consumed (a trailing comma is allowed), true when an item starts at
 * r->tok. */
gn_status gn__py_item(gn__py *r, gn__py_seq *q, bool *more);
/* A dict key at r->tok, consumed: a string, or a word when bare is true;
 * else fails "expected a key or 'close'". */
gn_status gn__py_key(gn__py *r, const gn__py_seq *q, bool bare, gn__py_tok *key);
/* A dict's next entry up to its value: gn__py_item, then (when *more) the key
 * (gn__py_key) and the ':' after it; r->tok is then the value. */
gn_status gn__py_entry(gn__py *r, gn__py_seq *q, bool bare, gn__py_tok *key, bool *more);
/* A string or a word at r->tok, consumed; else fails "expected a value". */
gn_status gn__py_scalar(gn__py *r, gn__py_tok *v);
/* An integer word in [lo, hi] at r->tok, consumed; else fails "expected an
 * integer" or "integer W is out of range [lo, hi]". */
gn_status gn__py_int(gn__py *r, int64_t lo, int64_t hi, int64_t *v);
/* The text is over: fails "unexpected text after ..." otherwise. */
gn_status gn__py_end(gn__py *r);

/* ---- values, without a reader ---- */
/* A STR token's text decoded: writes min(length, cap - 1) bytes and a NUL
 * into buf (cap > 0) and returns the full decoded length. The token must come
 * from the reader (its escapes are checked there). */
size_t gn__py_str(const gn__py_tok *t, char *buf, size_t cap);

typedef enum gn__py_int_result { GN__PY_INT_OK, GN__PY_INT_BAD, GN__PY_INT_RANGE } gn__py_int_result;
/* s[0..n) as a Python decimal integer: an optional sign, digits, single '_'
 * between digits. RANGE: one that does not fit int64_t. */
gn__py_int_result gn__py_parse_int(const char *s, size_t n, int64_t *v);
/* s[0..n) equals w, ASCII case folded. */
bool gn__py_ieq(const char *s, size_t n, const char *w);
/* Appends s[0..n) as a Python string literal, as repr() writes it: in '
 * quotes unless s holds ' and no ", backslash, the quote and control bytes
 * escaped; bytes from 0x80 as they are. gn__py_str reads it back to s. */
void gn__py_quote(gn__buf *b, const char *s, size_t n);

#endif
