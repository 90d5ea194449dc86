/* The Python-literal reader (common/pylit.h). */
#include "common/pylit.h"

#include <inttypes.h>
#include <stdio.h>

static const char k_default_punct[] = "{}[](),:=*";

/* Longest word quoted back in a message. */
#define SHOW_MAX 64

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_octal(char c) { return c >= '0' && c <= '7'; }

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

gn_status gn__py_fail(gn__py *r, size_t pos, const char *fmt, ...)
{
    char what[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (pos > r->n) pos = r->n;
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos; i++)
        if (r->s[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    if (line > 1)
        return gn__fail(r->err, r->code, "at offset %zu (line %zu:%zu): %s", pos, line, pos - line_start + 1, what);
    return gn__fail(r->err, r->code, "at offset %zu: %s", pos, what);
}

/* ---- escapes ------------------------------------------------------------------------ */
/* The escape at t[i] == '\\' (i + 1 < n): its length in bytes, its code point
 * in *cp (-1: a line continuation, nothing); 0 when it is not one, with *why
 * saying what is wrong. */
static size_t escape_at(const char *t, size_t n, size_t i, long *cp, const char **why)
{
    char c = t[i + 1];
    *why = NULL;
    switch (c) {
    case '\\': *cp = '\\'; return 2;
    case '\'': *cp = '\''; return 2;
    case '"': *cp = '"'; return 2;
    case 'a': *cp = 7; return 2;
    case 'b': *cp = 8; return 2;
    case 'f': *cp = 12; return 2;
    case 'n': *cp = 10; return 2;
    case 'r': *cp = 13; return 2;
    case 't': *cp = 9; return 2;
    case 'v': *cp = 11; return 2;
    case '\n': *cp = -1; return 2;
    case 'N': *why = "named characters are not supported"; return 0;
    case 'x':
    case 'u':
    case 'U': {
        size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        long v = 0;
        for (size_t k = 0; k < digits; k++) {
            int h = i + 2 + k < n ? hex_value(t[i + 2 + k]) : -1;
            if (h < 0) {
                *why = c == 'x' ? "it needs 2 hex digits" : c == 'u' ? "it needs 4 hex digits" : "it needs 8 hex digits";
                return 0;
            }
            v = v * 16 + h;
        }
        if (v > 0x10FFFF) {
            *why = "not a Unicode code point";
            return 0;
        }
        if (v >= 0xD800 && v <= 0xDFFF) {
            *why = "a surrogate is not a character";
            return 0;
        }
        *cp = v;
        return 2 + digits;
    }
    default:
        if (is_octal(c)) {
            size_t k = 1;
            long v = c - '0';
            while (k < 3 && i + 1 + k < n && is_octal(t[i + 1 + k])) v = v * 8 + (t[i + 1 + k++] - '0');
            *cp = v;
            return 1 + k;
        }
        return 0;
    }
}

static size_t utf8_put(long cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t gn__py_str(const gn__py_tok *t, char *buf, size_t cap)
{
    size_t len = 0;
    for (size_t i = 0; i < t->len;) {
        char enc[4];
        size_t m;
        long cp;
        const char *why;
        size_t k = t->text[i] == '\\' && i + 1 < t->len ? escape_at(t->text, t->len, i, &cp, &why) : 0;
        if (k) {
            i += k;
            if (cp < 0) continue;
            m = utf8_put(cp, enc);
        } else {
            enc[0] = t->text[i++];
            m = 1;
        }
        for (size_t j = 0; j < m; j++, len++)
            if (len + 1 < cap) buf[len] = enc[j];
    }
    if (cap) buf[len < cap ? len : cap - 1] = '\0';
    return len;
}

/* ---- tokens --------------------------------------------------------------------------- */
static gn_status read_string(gn__py *r, size_t start)
{
    const char *s = r->s;
    char q = s[start];
    size_t i = start + 1;
    bool esc = false;
    for (;;) {
        if (i >= r->n || s[i] == '\n' || s[i] == '\r') return gn__py_fail(r, start, "unterminated string");
        if (s[i] == q) break;
        if (s[i] != '\\') {
            i++;
            continue;
        }
        if (i + 1 >= r->n) return gn__py_fail(r, start, "unterminated string");
        long cp;
        const char *why;
        size_t k = escape_at(s, r->n, i, &cp, &why);
        if (!k) {
            unsigned char c = (unsigned char)s[i + 1];
            if (why) return gn__py_fail(r, i, "bad escape '\\%c' in a string: %s", c, why);
            if (c > 0x20 && c < 0x7F) return gn__py_fail(r, i, "bad escape '\\%c' in a string", c);
            return gn__py_fail(r, i, "bad escape in a string: '\\' before byte 0x%02x", c);
        }
        esc = true;
        i += k;
    }
    r->tok = (gn__py_tok){GN__PY_STR, 0, s + start + 1, i - start - 1, start, esc};
    r->i = i + 1;
    return GN_OK;
}

gn_status gn__py_advance(gn__py *r)
{
    const char *s = r->s;
    size_t i = r->i;
    for (;;) {
        while (i < r->n && is_space(s[i])) i++;
        if (i < r->n && s[i] == '#') {
            while (i < r->n && s[i] != '\n') i++;
            continue;
        }
        break;
    }
    if (i >= r->n) {
        r->i = r->n;
        r->tok = (gn__py_tok){GN__PY_END, 0, s + r->n, 0, r->n, false};
        return GN_OK;
    }
    if (s[i] == '\'' || s[i] == '"') return read_string(r, i);
    if (s[i] && strchr(r->punct, s[i])) {
        r->tok = (gn__py_tok){GN__PY_PUNCT, s[i], s + i, 1, i, false};
        r->i = i + 1;
        return GN_OK;
    }
    size_t b = i;
    while (i < r->n && !is_space(s[i]) && s[i] != '\'' && s[i] != '"' && s[i] != '#' &&
           !(s[i] && strchr(r->punct, s[i])))
        i++;
    r->tok = (gn__py_tok){GN__PY_WORD, 0, s + b, i - b, b, false};
    r->i = i;
    return GN_OK;
}

gn_status gn__py_init(gn__py *r, const char *s, size_t n, const char *punct, gn_status code, gn__err *err)
{
    *r = (gn__py){.s = s, .n = n, .punct = punct ? punct : k_default_punct, .code = code, .err = err};
    return gn__py_advance(r);
}

/* ---- structure ------------------------------------------------------------------------- */
bool gn__py_is_word(const gn__py *r, const char *w)
{
    return r->tok.kind == GN__PY_WORD && strlen(w) == r->tok.len && memcmp(r->tok.text, w, r->tok.len) == 0;
}

static gn_status consume_punct(gn__py *r)
{
    r->last = r->tok.punct;
    return gn__py_advance(r);
}

gn_status gn__py_expect(gn__py *r, char c)
{
    if (!gn__py_is(r, c)) return gn__py_fail(r, r->tok.pos, "expected '%c'", c);
    return consume_punct(r);
}

gn_status gn__py_open(gn__py *r, char open, gn__py_seq *q)
{
    if (!gn__py_is(r, open)) return gn__py_fail(r, r->tok.pos, "expected '%c'", open);
    if (r->depth >= GN__PY_MAX_DEPTH)
        return gn__py_fail(r, r->tok.pos, "brackets nested deeper than %d", GN__PY_MAX_DEPTH);
    r->depth++;
    q->close = open == '{' ? '}' : open == '[' ? ']' : ')';
    q->count = 0;
    return consume_punct(r);
}

gn_status gn__py_item(gn__py *r, gn__py_seq *q, bool *more)
{
    if (q->count) {
        if (gn__py_is(r, ',')) GN_TRY(consume_punct(r));
        else if (!gn__py_is(r, q->close))
            return gn__py_fail(r, r->tok.pos, "expected ',' or '%c'", q->close);
    }
    if (gn__py_is(r, q->close)) {
        r->depth--;
        *more = false;
        return consume_punct(r);
    }
    q->count++;
    *more = true;
    return GN_OK;
}

gn_status gn__py_key(gn__py *r, const gn__py_seq *q, bool bare, gn__py_tok *key)
{
    if (r->tok.kind != GN__PY_STR && !(bare && r->tok.kind == GN__PY_WORD))
        return gn__py_fail(r, r->tok.pos, r->tok.kind == GN__PY_WORD ? "expected a key in quotes or '%c'"
                                                                       : "expected a key or '%c'",
                           q->close);
    *key = r->tok;
    r->last = 0;
    return gn__py_advance(r);
}

gn_status gn__py_entry(gn__py *r, gn__py_seq *q, bool bare, gn__py_tok *key, bool *more)
{
    GN_TRY(gn__py_item(r, q, more));
    if (!*more) return GN_OK;
    GN_TRY(gn__py_key(r, q, bare, key));
    return gn__py_expect(r, ':');
}

gn_status gn__py_scalar(gn__py *r, gn__py_tok *v)
{
    if (r->tok.kind != GN__PY_STR && r->tok.kind != GN__PY_WORD) return gn__py_fail(r, r->tok.pos, "expected a value");
    *v = r->tok;
    r->last = 0;
    return gn__py_advance(r);
}

gn_status gn__py_int(gn__py *r, int64_t lo, int64_t hi, int64_t *v)
{
    const gn__py_tok *t = &r->tok;
    int64_t x = 0;
    gn__py_int_result res = t->kind == GN__PY_WORD ? gn__py_parse_int(t->text, t->len, &x) : GN__PY_INT_BAD;
    if (res == GN__PY_INT_BAD) return gn__py_fail(r, t->pos, "expected an integer");
    if (res == GN__PY_INT_RANGE || x < lo || x > hi)
        return gn__py_fail(r, t->pos, "integer %.*s%s is out of range [%" PRId64 ", %" PRId64 "]",
                           (int)(t->len > SHOW_MAX ? SHOW_MAX : t->len), t->text, t->len > SHOW_MAX ? "..." : "", lo,
                           hi);
    *v = x;
    r->last = 0;
    return gn__py_advance(r);
}

gn_status gn__py_end(gn__py *r)
{
    if (r->tok.kind == GN__PY_END) return GN_OK;
    if (r->last) return gn__py_fail(r, r->tok.pos, "unexpected text after '%c'", r->last);
    return gn__py_fail(r, r->tok.pos, "unexpected text after the value");
}

/* ---- values ----------------------------------------------------------------------------- */
gn__py_int_result gn__py_parse_int(const char *s, size_t n, int64_t *v)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return GN__PY_INT_BAD;
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t acc = 0;
    bool over = false;
    for (; i < n; i++) {
        if (s[i] == '_' && i > 0 && is_digit(s[i - 1]) && i + 1 < n && is_digit(s[i + 1])) continue;
        if (!is_digit(s[i])) return GN__PY_INT_BAD; /* "12x" after an overflow is not an integer either */
        unsigned d = (unsigned)(s[i] - '0');
        if (over || acc > (lim - d) / 10) over = true;
        else acc = acc * 10 + d;
    }
    if (over) return GN__PY_INT_RANGE;
    *v = !neg ? (int64_t)acc : acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
    return GN__PY_INT_OK;
}

static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

bool gn__py_ieq(const char *s, size_t n, const char *w)
{
    if (strlen(w) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (lower(s[i]) != lower(w[i])) return false;
    return true;
}

void gn__py_quote(gn__buf *b, const char *s, size_t n)
{
    char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
    gn__buf_putc(b, q);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == (unsigned char)q) {
            gn__buf_putc(b, '\\');
            gn__buf_putc(b, (char)c);
        } else if (c == '\n') {
            gn__buf_puts(b, "\\n");
        } else if (c == '\r') {
            gn__buf_puts(b, "\\r");
        } else if (c == '\t') {
            gn__buf_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7F) {
            gn__buf_printf(b, "\\x%02x", c);
        } else {
            gn__buf_putc(b, (char)c);
        }
    }
    gn__buf_putc(b, q);
}
