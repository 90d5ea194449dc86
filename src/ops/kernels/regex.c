/* TensorFlow's regex ops: RegexReplace, StaticRegexReplace, RegexFullMatch,
 * StaticRegexFullMatch (tensorflow/core/kernels/regex_replace_op.cc,
 * regex_full_match_op.cc), which use RE2. What text preprocessing graphs
 * use them for: Keras' TextVectorization strips punctuation with
 * StaticRegexReplace, tf.strings.regex_full_match filters.
 *
 * The engine is RE2's semantics on the syntax below, compiled to a program
 * run by a Pike VM (a Thompson NFA simulated with capture slots): time linear
 * in the text times the program, no backtracking, so no pattern can make a
 * match run away. The text is UTF-8, matched by code point (an ill-formed
 * byte is one character that nothing matches, as in RE2), alternation
 * is leftmost-first (Perl's, RE2's default), '.' does not match '\n'.
 *
 * Syntax (RE2's): literals and escaped punctuation; \n \t \r \f \v \a,
 * \xhh, \x{h..}, \Q..\E; . ; classes [..] with ranges, negation, escapes,
 * \d \s \w \D \S \W and [:alpha:]-style ASCII classes ([:^alpha:] negated);
 * groups (..), (?:..), (?P<name>..), (?<name>..); flags (?i) (?s) (?m) and
 * (?flags:..), '-' to clear; * + ? {n} {n,} {n,m} (n, m <= 1000), each
 * lazy with a trailing ?; |; ^ $ \A \z \b \B. Refused with a message naming
 * the pattern: Unicode classes (\p, \pN), \C, and what RE2 refuses too
 * (backreferences, lookaround). (?i) folds ASCII letters only, where RE2
 * folds all of Unicode's simple case pairs.
 *
 * Replacement (RE2::Replace / GlobalReplace, which TensorFlow calls without
 * checking the rewrite first): \0..\9 name groups and \\ is a backslash. A
 * rewrite naming a group the pattern lacks replaces nothing; another escape
 * ends the rewrite there (global) or cancels the replacement (first match
 * only). A global replace takes the matches left to right without overlap;
 * an empty match right where the previous one ended is skipped by one
 * character. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "opdef/registry.h"
#include "ops/kernel.h"
#include "ops/op_fns.h"

#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL

#define RX_MAX_REPEAT 1000
#define RX_MAX_PROG 200000      /* instructions (RE2 refuses what passes its 8 MiB budget) */
#define RX_MAX_SLOTS (1u << 22)  /* capture slots of a thread list: threads x 2 (groups + 1) */
#define RX_MAX_DEPTH 1000        /* nesting of groups */

/* ---- program ----------------------------------------------------------------------------------- */
enum { I_CHAR, I_ANY, I_CLASS, I_SPLIT, I_JMP, I_SAVE, I_MATCH, I_ASSERT };
enum { A_BOL, A_EOL, A_BOT, A_EOT, A_WORD, A_NWORD };

typedef struct rx_inst {
    uint8_t op;
    uint8_t fold;     /* I_CHAR, I_CLASS: ASCII case-insensitive */
    uint8_t flag;     /* I_ANY: matches '\n'; I_CLASS: negated; I_ASSERT: kind */
    uint32_t a, b;    /* I_CHAR: code point; I_CLASS: first range, count; I_SPLIT: x (preferred), y; I_JMP: x;
                       * I_SAVE: slot */
} rx_inst;

typedef struct rx_range {
    uint32_t lo, hi;
} rx_range;

typedef struct rx_regex {
    rx_inst *prog;
    uint32_t n, cap;
    rx_range *ranges;
    uint32_t n_ranges, cap_ranges;
    uint32_t groups;   /* capturing groups, not counting the whole match */
} rx_regex;

/* ---- parser: pattern -> tree ----------------------------------------------------------------- */
enum { N_EMPTY, N_LIT, N_ANY, N_CLASS, N_CAT, N_ALT, N_REP, N_GROUP, N_ASSERT };

typedef struct rx_node {
    uint8_t kind;
    uint8_t fold, flag, greedy;
    uint32_t cp;                  /* N_LIT */
    uint32_t r0, nr;              /* N_CLASS: ranges in the regex's array */
    int32_t min, max;             /* N_REP (max -1: unbounded) */
    int32_t cap;                  /* N_GROUP: capture index, -1 none */
    struct rx_node **kid;
    uint32_t n_kid, cap_kid;
} rx_node;

typedef struct rx_parser {
    const char *p, *end, *pat;
    size_t pat_len;
    bool fold, dotnl, multiline;
    rx_regex *re;
    int depth;
    char *err;
    size_t err_len;
    bool failed;
} rx_parser;

static bool fail(rx_parser *ps, const char *what)
{
    if (!ps->failed) {
        snprintf(ps->err, ps->err_len, "invalid pattern '%.*s' at offset %zu: %s", (int)(ps->pat_len > 200 ? 200 : ps->pat_len),
                 ps->pat, (size_t)(ps->p - ps->pat), what);
        ps->failed = true;
    }
    return false;
}

static rx_node *node_new(rx_parser *ps, uint8_t kind)
{
    rx_node *n = calloc(1, sizeof *n);
    if (!n) {
        fail(ps, "out of memory");
        return NULL;
    }
    n->kind = kind;
    n->cap = -1;
    return n;
}

static void node_free(rx_node *n)
{
    if (!n) return;
    for (uint32_t i = 0; i < n->n_kid; i++) node_free(n->kid[i]);
    free(n->kid);
    free(n);
}

static bool node_add(rx_parser *ps, rx_node *n, rx_node *k)
{
    if (n->n_kid == n->cap_kid) {
        uint32_t c = n->cap_kid ? 2 * n->cap_kid : 4;
        rx_node **v = realloc(n->kid, c * sizeof *v);
        if (!v) {
            node_free(k);
            return fail(ps, "out of memory");
        }
        n->kid = v;
        n->cap_kid = c;
    }
    n->kid[n->n_kid++] = k;
    return true;
}

static bool range_add(rx_parser *ps, uint32_t lo, uint32_t hi)
{
    rx_regex *re = ps->re;
    if (re->n_ranges == re->cap_ranges) {
        uint32_t c = re->cap_ranges ? 2 * re->cap_ranges : 16;
        rx_range *v = realloc(re->ranges, c * sizeof *v);
        if (!v) return fail(ps, "out of memory");
        re->ranges = v;
        re->cap_ranges = c;
    }
    re->ranges[re->n_ranges++] = (rx_range){lo, hi};
    return true;
}

/* The code point at *i of s (n bytes), *i advanced; an ill-formed byte is
 * 0x110000 + the byte (no code point, matched by nothing), one byte long. */
static uint32_t utf8_at(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char b = s[*i];
    if (b < 0x80) {
        (*i)++;
        return b;
    }
    size_t len;
    uint32_t cp, min;
    if (b >= 0xc2 && b <= 0xdf) len = 2, cp = b & 0x1fu, min = 0x80;
    else if (b >= 0xe0 && b <= 0xef) len = 3, cp = b & 0x0fu, min = 0x800;
    else if (b >= 0xf0 && b <= 0xf4) len = 4, cp = b & 0x07u, min = 0x10000;
    else {
        (*i)++;
        return 0x110000u + b;
    }
    if (*i + len > n) {
        (*i)++;
        return 0x110000u + b;
    }
    for (size_t k = 1; k < len; k++) {
        unsigned char t = s[*i + k];
        if ((t & 0xc0) != 0x80) {
            (*i)++;
            return 0x110000u + b;
        }
        cp = (cp << 6) | (t & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        (*i)++;
        return 0x110000u + b;
    }
    *i += len;
    return cp;
}

static bool more(const rx_parser *ps) { return ps->p < ps->end; }

static uint32_t next_cp(rx_parser *ps)
{
    size_t i = 0;
    uint32_t cp = utf8_at((const unsigned char *)ps->p, (size_t)(ps->end - ps->p), &i);
    ps->p += i;
    return cp;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* ASCII classes, by name ([:name:]) or by Perl letter. */
typedef struct ascii_class {
    const char *name;
    const char *ranges;   /* pairs lo, hi */
} ascii_class;
static const ascii_class ASCII_CLASSES[] = {
    {"alnum", "09AZaz"}, {"alpha", "AZaz"},   {"ascii", "\x01\x7f"}, {"blank", "\t\t  "},
    {"cntrl", "\x01\x1f\x7f\x7f"},            {"digit", "09"},       {"graph", "!~"},
    {"lower", "az"},     {"print", " ~"},     {"punct", "!/:@[`{~"}, {"space", "\t\r  "},
    {"upper", "AZ"},     {"word", "09AZ__az"}, {"xdigit", "09AFaf"},
};

/* Adds the ranges of class spec (pairs), or their complement, to the regex. */
static bool add_spec(rx_parser *ps, const char *spec, size_t len, bool negate, bool nul)
{
    /* [:ascii:] and [:cntrl:] include NUL: "\x01" stands for 0 there */
    uint32_t lo[16], hi[16];
    size_t k = 0;
    for (size_t i = 0; i + 1 < len; i += 2, k++) {
        lo[k] = (unsigned char)spec[i];
        hi[k] = (unsigned char)spec[i + 1];
        if (nul && lo[k] == 1 && i == 0) lo[k] = 0;
    }
    if (!negate) {
        for (size_t i = 0; i < k; i++)
            if (!range_add(ps, lo[i], hi[i])) return false;
        return true;
    }
    uint32_t from = 0;
    for (size_t i = 0; i < k; i++) {
        if (lo[i] > from && !range_add(ps, from, lo[i] - 1)) return false;
        from = hi[i] + 1;
    }
    return range_add(ps, from, 0x10ffff);
}

/* \d \s \w and their negations, as ranges; false if c is not one. */
static bool perl_class(rx_parser *ps, char c, bool *ok)
{
    const char *spec;
    size_t len;
    switch (c) {
    case 'd': case 'D': spec = "09", len = 2; break;
    case 's': case 'S': spec = "\t\n\f\r  ", len = 6; break;
    case 'w': case 'W': spec = "09AZ__az", len = 8; break;
    default: return false;
    }
    *ok = add_spec(ps, spec, len, c == 'D' || c == 'S' || c == 'W', false);
    return true;
}

/* An escape after '\' that stands for one code point (or the refusal). */
static bool escape_cp(rx_parser *ps, uint32_t *cp)
{
    if (!more(ps)) return fail(ps, "trailing \\");
    char c = *ps->p++;
    switch (c) {
    case 'n': *cp = '\n'; return true;
    case 't': *cp = '\t'; return true;
    case 'r': *cp = '\r'; return true;
    case 'f': *cp = '\f'; return true;
    case 'v': *cp = '\v'; return true;
    case 'a': *cp = '\a'; return true;
    case 'x': {
        uint32_t v = 0;
        if (more(ps) && *ps->p == '{') {
            ps->p++;
            int digits = 0;
            while (more(ps) && *ps->p != '}') {
                int h = hexval(*ps->p++);
                if (h < 0 || ++digits > 8) return fail(ps, "bad \\x{...} escape");
                v = v * 16 + (uint32_t)h;
            }
            if (!more(ps) || digits == 0) return fail(ps, "bad \\x{...} escape");
            ps->p++;
        } else {
            for (int k = 0; k < 2; k++) {
                int h = more(ps) ? hexval(*ps->p++) : -1;
                if (h < 0) return fail(ps, "bad \\x escape");
                v = v * 16 + (uint32_t)h;
            }
        }
        if (v > 0x10ffff) return fail(ps, "\\x escape out of range");
        *cp = v;
        return true;
    }
    case '0': {   /* octal, RE2: \0 followed by up to two more digits */
        uint32_t v = 0;
        for (int k = 0; k < 2 && more(ps) && *ps->p >= '0' && *ps->p <= '7'; k++) v = v * 8 + (uint32_t)(*ps->p++ - '0');
        *cp = v;
        return true;
    }
    default: break;
    }
    if (c >= '1' && c <= '9') return fail(ps, "backreferences are not supported (RE2 has none)");
    if (c == 'p' || c == 'P') return fail(ps, "Unicode classes (\\p) are not supported");
    if (c == 'C') return fail(ps, "\\C is not supported");
    if ((c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)) {
        *cp = (unsigned char)c;
        return true;
    }
    ps->p--;
    return fail(ps, "unknown escape");
}

/* A bracket class; ps->p just past '['. */
static rx_node *parse_class(rx_parser *ps)
{
    rx_node *n = node_new(ps, N_CLASS);
    if (!n) return NULL;
    n->fold = ps->fold;
    n->r0 = ps->re->n_ranges;
    if (more(ps) && *ps->p == '^') {
        n->flag = 1;
        ps->p++;
    }
    bool first = true;
    for (;;) {
        if (!more(ps)) {
            fail(ps, "missing ]");
            break;
        }
        if (*ps->p == ']' && !first) {
            ps->p++;
            n->nr = ps->re->n_ranges - n->r0;
            return n;
        }
        first = false;
        if (*ps->p == '[' && ps->p + 1 < ps->end && ps->p[1] == ':') {
            const char *close = NULL;
            for (const char *q = ps->p + 2; q + 1 < ps->end; q++)
                if (q[0] == ':' && q[1] == ']') {
                    close = q;
                    break;
                }
            if (close) {
                const char *nm = ps->p + 2;
                bool neg = nm < close && *nm == '^';
                if (neg) nm++;
                const ascii_class *ac = NULL;
                for (size_t i = 0; i < sizeof ASCII_CLASSES / sizeof ASCII_CLASSES[0]; i++)
                    if (strlen(ASCII_CLASSES[i].name) == (size_t)(close - nm) &&
                        !memcmp(ASCII_CLASSES[i].name, nm, (size_t)(close - nm)))
                        ac = &ASCII_CLASSES[i];
                if (!ac) {
                    fail(ps, "unknown [:class:]");
                    break;
                }
                bool nul = !strcmp(ac->name, "ascii") || !strcmp(ac->name, "cntrl");
                if (!add_spec(ps, ac->ranges, strlen(ac->ranges), neg, nul)) break;
                ps->p = close + 2;
                continue;
            }
        }
        uint32_t lo;
        if (*ps->p == '\\') {
            ps->p++;
            bool ok = true;
            if (more(ps) && perl_class(ps, *ps->p, &ok)) {
                ps->p++;
                if (!ok) break;
                continue;
            }
            if (!escape_cp(ps, &lo)) break;
        } else {
            lo = next_cp(ps);
        }
        uint32_t hi = lo;
        if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] != ']') {
            ps->p++;
            if (*ps->p == '\\') {
                ps->p++;
                if (!escape_cp(ps, &hi)) break;
            } else {
                hi = next_cp(ps);
            }
            if (hi < lo) {
                fail(ps, "bad character class range");
                break;
            }
        }
        if (!range_add(ps, lo, hi)) break;
    }
    node_free(n);
    return NULL;
}

static rx_node *parse_alt(rx_parser *ps);

/* (?flags) or (?flags:...); ps->p just past "(?". *n NULL for a bare flag group. */
static bool parse_flags(rx_parser *ps, rx_node **n)
{
    bool neg = false, any = false;
    bool fold = ps->fold, dotnl = ps->dotnl, ml = ps->multiline;
    while (more(ps)) {
        char c = *ps->p++;
        if (c == '-') {
            if (neg) return fail(ps, "bad flags");
            neg = true;
            continue;
        }
        if (c == 'i') fold = !neg;
        else if (c == 's') dotnl = !neg;
        else if (c == 'm') ml = !neg;
        else if (c == 'U') return fail(ps, "the U flag is not supported");
        else if (c == ')' || c == ':') {
            if (!any && !(c == ':' && !neg)) return fail(ps, "bad flags");
            if (c == ')') {
                ps->fold = fold, ps->dotnl = dotnl, ps->multiline = ml;
                *n = NULL;
                return true;
            }
            bool sf = ps->fold, sd = ps->dotnl, sm = ps->multiline;
            ps->fold = fold, ps->dotnl = dotnl, ps->multiline = ml;
            rx_node *g = node_new(ps, N_GROUP);
            rx_node *k = g ? parse_alt(ps) : NULL;
            ps->fold = sf, ps->dotnl = sd, ps->multiline = sm;
            if (!k) {
                node_free(g);
                return false;
            }
            if (!more(ps) || *ps->p != ')') {
                node_free(k);
                node_free(g);
                return fail(ps, "missing )");
            }
            ps->p++;
            if (!node_add(ps, g, k)) {
                node_free(g);
                return false;
            }
            *n = g;
            return true;
        } else {
            ps->p--;
            return fail(ps, "unknown flag or group syntax (lookaround is not supported)");
        }
        any = true;
    }
    return fail(ps, "missing )");
}

static rx_node *parse_atom(rx_parser *ps)
{
    char c = *ps->p;
    if (c == '(') {
        ps->p++;
        if (++ps->depth > RX_MAX_DEPTH) {
            fail(ps, "groups nested too deep");
            return NULL;
        }
        int32_t cap = -1;
        if (more(ps) && *ps->p == '?') {
            ps->p++;
            if (more(ps) && (*ps->p == 'P' || *ps->p == '<')) {
                if (*ps->p == 'P') ps->p++;
                if (!more(ps) || *ps->p != '<') {
                    fail(ps, "bad named group");
                    return NULL;
                }
                const char *q = memchr(ps->p, '>', (size_t)(ps->end - ps->p));
                if (!q || q == ps->p + 1) {
                    fail(ps, "bad named group");
                    return NULL;
                }
                ps->p = q + 1;
                cap = (int32_t)++ps->re->groups;
            } else {
                rx_node *g = NULL;
                if (!parse_flags(ps, &g)) return NULL;
                ps->depth--;
                return g ? g : node_new(ps, N_EMPTY);
            }
        } else {
            cap = (int32_t)++ps->re->groups;
        }
        rx_node *g = node_new(ps, N_GROUP);
        if (!g) return NULL;
        g->cap = cap;
        rx_node *k = parse_alt(ps);
        if (!k || !node_add(ps, g, k)) {
            node_free(g);
            return NULL;
        }
        if (!more(ps) || *ps->p != ')') {
            fail(ps, "missing )");
            node_free(g);
            return NULL;
        }
        ps->p++;
        ps->depth--;
        return g;
    }
    if (c == '[') {
        ps->p++;
        return parse_class(ps);
    }
    if (c == '.') {
        ps->p++;
        rx_node *n = node_new(ps, N_ANY);
        if (n) n->flag = ps->dotnl;
        return n;
    }
    if (c == '^' || c == '$') {
        ps->p++;
        rx_node *n = node_new(ps, N_ASSERT);
        if (n) n->flag = c == '^' ? (ps->multiline ? A_BOL : A_BOT) : (ps->multiline ? A_EOL : A_EOT);
        return n;
    }
    if (c == '\\') {
        ps->p++;
        if (!more(ps)) {
            fail(ps, "trailing \\");
            return NULL;
        }
        char e = *ps->p;
        int as = e == 'A' ? A_BOT : e == 'z' ? A_EOT : e == 'b' ? A_WORD : e == 'B' ? A_NWORD : -1;
        if (as >= 0) {
            ps->p++;
            rx_node *n = node_new(ps, N_ASSERT);
            if (n) n->flag = (uint8_t)as;
            return n;
        }
        if (e == 'Q') {   /* literal text up to \E */
            ps->p++;
            rx_node *cat = node_new(ps, N_CAT);
            while (cat && more(ps)) {
                if (*ps->p == '\\' && ps->p + 1 < ps->end && ps->p[1] == 'E') {
                    ps->p += 2;
                    break;
                }
                rx_node *l = node_new(ps, N_LIT);
                if (!l) break;
                l->cp = next_cp(ps);
                l->fold = ps->fold;
                if (!node_add(ps, cat, l)) break;
            }
            if (ps->failed) {
                node_free(cat);
                return NULL;
            }
            return cat;
        }
        rx_node *n = node_new(ps, N_CLASS);
        if (!n) return NULL;
        n->r0 = ps->re->n_ranges;
        bool ok = true;
        if (perl_class(ps, e, &ok)) {
            ps->p++;
            n->nr = ps->re->n_ranges - n->r0;
            if (!ok) {
                node_free(n);
                return NULL;
            }
            return n;
        }
        n->kind = N_LIT;
        n->fold = ps->fold;
        if (!escape_cp(ps, &n->cp)) {
            node_free(n);
            return NULL;
        }
        return n;
    }
    if (c == '*' || c == '+' || c == '?') {
        fail(ps, "missing argument to repetition operator");
        return NULL;
    }
    rx_node *n = node_new(ps, N_LIT);
    if (!n) return NULL;
    n->cp = next_cp(ps);
    n->fold = ps->fold;
    return n;
}

/* {n}, {n,}, {n,m} at ps->p: true with *min, *max set, ps->p past it; false
 * (and ps->p unmoved) where the brace is a literal, as in RE2. */
static bool parse_braces(rx_parser *ps, int32_t *min, int32_t *max)
{
    const char *q = ps->p + 1;
    int64_t a = -1, b;
    while (q < ps->end && *q >= '0' && *q <= '9') {
        a = (a < 0 ? 0 : a) * 10 + (*q++ - '0');
        if (a > 100000) a = 100000;
    }
    if (a < 0 || q >= ps->end) return false;
    if (*q == '}') {
        b = a;
    } else if (*q == ',') {
        q++;
        b = -1;
        if (q < ps->end && *q >= '0' && *q <= '9') {
            b = 0;
            while (q < ps->end && *q >= '0' && *q <= '9') {
                b = b * 10 + (*q++ - '0');
                if (b > 100000) b = 100000;
            }
        }
        if (q >= ps->end || *q != '}') return false;
    } else {
        return false;
    }
    ps->p = q + 1;
    *min = (int32_t)a;
    *max = (int32_t)b;
    return true;
}

static rx_node *parse_repeat(rx_parser *ps)
{
    rx_node *a = parse_atom(ps);
    while (a && more(ps)) {
        char c = *ps->p;
        int32_t min, max;
        if (c == '*') min = 0, max = -1, ps->p++;
        else if (c == '+') min = 1, max = -1, ps->p++;
        else if (c == '?') min = 0, max = 1, ps->p++;
        else if (c == '{' && parse_braces(ps, &min, &max)) {
            if (min > RX_MAX_REPEAT || max > RX_MAX_REPEAT || (max >= 0 && max < min)) {
                fail(ps, "bad repetition count (at most 1000)");
                node_free(a);
                return NULL;
            }
        } else {
            break;
        }
        if (a->kind == N_REP) {
            /* RE2 refuses a**, as Perl does */
            fail(ps, "bad repetition operator");
            node_free(a);
            return NULL;
        }
        rx_node *r = node_new(ps, N_REP);
        if (!r || !node_add(ps, r, a)) {
            node_free(r);
            return NULL;
        }
        r->min = min;
        r->max = max;
        r->greedy = 1;
        if (more(ps) && *ps->p == '?') {
            r->greedy = 0;
            ps->p++;
        }
        a = r;
    }
    return a;
}

static rx_node *parse_cat(rx_parser *ps)
{
    rx_node *cat = node_new(ps, N_CAT);
    while (cat && more(ps) && *ps->p != '|' && *ps->p != ')') {
        rx_node *k = parse_repeat(ps);
        if (!k || !node_add(ps, cat, k)) {
            node_free(cat);
            return NULL;
        }
    }
    return cat;
}

static rx_node *parse_alt(rx_parser *ps)
{
    rx_node *alt = node_new(ps, N_ALT);
    for (;;) {
        rx_node *k = alt ? parse_cat(ps) : NULL;
        if (!k || !node_add(ps, alt, k)) {
            node_free(alt);
            return NULL;
        }
        if (!more(ps) || *ps->p != '|') break;
        ps->p++;
    }
    return alt;
}

/* ---- code generation ---------------------------------------------------------------------------- */
static bool emit(rx_parser *ps, rx_inst in, uint32_t *at)
{
    rx_regex *re = ps->re;
    if (re->n >= RX_MAX_PROG) return fail(ps, "pattern too large");
    if (re->n == re->cap) {
        uint32_t c = re->cap ? 2 * re->cap : 64;
        rx_inst *v = realloc(re->prog, c * sizeof *v);
        if (!v) return fail(ps, "out of memory");
        re->prog = v;
        re->cap = c;
    }
    if (at) *at = re->n;
    re->prog[re->n++] = in;
    return true;
}

static bool gen(rx_parser *ps, const rx_node *n)
{
    rx_regex *re = ps->re;
    switch (n->kind) {
    case N_EMPTY: return true;
    case N_LIT: return emit(ps, (rx_inst){.op = I_CHAR, .fold = n->fold, .a = n->cp}, NULL);
    case N_ANY: return emit(ps, (rx_inst){.op = I_ANY, .flag = n->flag}, NULL);
    case N_CLASS: return emit(ps, (rx_inst){.op = I_CLASS, .fold = n->fold, .flag = n->flag, .a = n->r0, .b = n->nr}, NULL);
    case N_ASSERT: return emit(ps, (rx_inst){.op = I_ASSERT, .flag = n->flag}, NULL);
    case N_CAT:
        for (uint32_t i = 0; i < n->n_kid; i++)
            if (!gen(ps, n->kid[i])) return false;
        return true;
    case N_GROUP:
        if (n->cap >= 0 && !emit(ps, (rx_inst){.op = I_SAVE, .a = 2u * (uint32_t)n->cap}, NULL)) return false;
        if (!gen(ps, n->kid[0])) return false;
        return n->cap < 0 || emit(ps, (rx_inst){.op = I_SAVE, .a = 2u * (uint32_t)n->cap + 1}, NULL);
    case N_ALT: {
        if (n->n_kid == 1) return gen(ps, n->kid[0]);
        /* SPLIT L1, next; L1: kid0; JMP end; next: SPLIT L2, next2; ... last kid */
        uint32_t *jumps = malloc(n->n_kid * sizeof *jumps);
        if (!jumps) return fail(ps, "out of memory");
        bool ok = true;
        for (uint32_t i = 0; ok && i < n->n_kid; i++) {
            uint32_t split = 0;
            bool last = i + 1 == n->n_kid;
            if (!last) ok = emit(ps, (rx_inst){.op = I_SPLIT}, &split);
            if (ok) {
                if (!last) re->prog[split].a = re->n;
                ok = gen(ps, n->kid[i]);
            }
            if (ok && !last) {
                ok = emit(ps, (rx_inst){.op = I_JMP}, &jumps[i]);
                if (ok) re->prog[split].b = re->n;
            }
        }
        for (uint32_t i = 0; ok && i + 1 < n->n_kid; i++) re->prog[jumps[i]].a = re->n;
        free(jumps);
        return ok;
    }
    case N_REP: {
        const rx_node *k = n->kid[0];
        for (int32_t i = 0; i < n->min; i++)
            if (!gen(ps, k)) return false;
        if (n->max < 0) {   /* L: SPLIT body, out; body; JMP L */
            uint32_t split;
            if (!emit(ps, (rx_inst){.op = I_SPLIT}, &split)) return false;
            uint32_t body = re->n;
            if (!gen(ps, k)) return false;
            if (!emit(ps, (rx_inst){.op = I_JMP, .a = split}, NULL)) return false;
            re->prog[split].a = n->greedy ? body : re->n;
            re->prog[split].b = n->greedy ? re->n : body;
            return true;
        }
        /* (k(k(k)?)?)? for the optional max - min */
        int32_t opt = n->max - n->min;
        uint32_t *splits = opt ? malloc((size_t)opt * sizeof *splits) : NULL;
        if (opt && !splits) return fail(ps, "out of memory");
        bool ok = true;
        for (int32_t i = 0; ok && i < opt; i++) {
            ok = emit(ps, (rx_inst){.op = I_SPLIT}, &splits[i]);
            if (ok) {
                re->prog[splits[i]].a = re->n;   /* the body; patched for lazy below */
                ok = gen(ps, k);
            }
        }
        for (int32_t i = 0; ok && i < opt; i++) {
            uint32_t body = splits[i] + 1;
            re->prog[splits[i]].a = n->greedy ? body : re->n;
            re->prog[splits[i]].b = n->greedy ? re->n : body;
        }
        free(splits);
        return ok;
    }
    default: return fail(ps, "internal: unknown node");
    }
}

static void regex_free(rx_regex *re)
{
    if (!re) return;
    free(re->prog);
    free(re->ranges);
    free(re);
}

/* Compiles pattern (len bytes); full: anchored at both ends (FullMatch). NULL
 * with err filled on a bad pattern or no memory. */
static rx_regex *regex_compile(const char *pattern, size_t len, bool full, char *err, size_t err_len)
{
    rx_regex *re = calloc(1, sizeof *re);
    if (!re) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    rx_parser ps = {.p = pattern, .end = pattern + len, .pat = pattern, .pat_len = len, .re = re, .err = err,
                    .err_len = err_len};
    for (size_t i = 0; i < len;) {   /* RE2 takes UTF-8 patterns only */
        size_t at = i;
        if (utf8_at((const unsigned char *)pattern, len, &i) > 0x10ffff) {
            ps.p = pattern + at;
            fail(&ps, "invalid UTF-8");
            regex_free(re);
            return NULL;
        }
    }
    rx_node *root = parse_alt(&ps);
    if (root && more(&ps)) fail(&ps, "unmatched )");
    bool ok = root && !ps.failed;
    /* SAVE 0; [BOT]; root; [EOT]; SAVE 1; MATCH */
    if (ok) ok = emit(&ps, (rx_inst){.op = I_SAVE, .a = 0}, NULL);
    if (ok && full) ok = emit(&ps, (rx_inst){.op = I_ASSERT, .flag = A_BOT}, NULL);
    if (ok) ok = gen(&ps, root);
    if (ok && full) ok = emit(&ps, (rx_inst){.op = I_ASSERT, .flag = A_EOT}, NULL);
    if (ok) ok = emit(&ps, (rx_inst){.op = I_SAVE, .a = 1}, NULL);
    if (ok) ok = emit(&ps, (rx_inst){.op = I_MATCH}, NULL);
    node_free(root);
    uint32_t threads = 0;   /* the instructions a thread can wait on */
    for (uint32_t i = 0; ok && i < re->n; i++) threads += re->prog[i].op <= I_CLASS || re->prog[i].op == I_MATCH;
    if (ok && (uint64_t)threads * 2 * (re->groups + 1) > RX_MAX_SLOTS) {
        ps.p = ps.end;
        ok = fail(&ps, "pattern too large");
    }
    if (!ok) {
        if (!ps.failed) snprintf(err, err_len, "invalid pattern");
        regex_free(re);
        return NULL;
    }
    return re;
}

/* ---- Pike VM ---------------------------------------------------------------------------------- */
typedef struct rx_vm {
    const rx_regex *re;
    uint32_t ncap;
    uint32_t *pcs[2];      /* thread lists: pcs */
    size_t *caps[2];       /* their capture slots, ncap per thread */
    uint32_t n[2];
    uint32_t *mark;        /* the step a pc was last added at */
    uint32_t step;
    size_t *stack;         /* addthread's work: (kind, a, b) triples */
    size_t stack_cap;
    size_t *tmp;           /* caps being threaded */
} rx_vm;

static bool is_word(uint32_t cp)
{
    return (cp >= '0' && cp <= '9') || (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z') || cp == '_';
}

static uint32_t fold_ascii(uint32_t cp) { return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp; }

static bool class_has(const rx_regex *re, const rx_inst *in, uint32_t cp)
{
    bool hit = false;
    for (uint32_t r = 0; r < in->b && !hit; r++) {
        const rx_range *x = &re->ranges[in->a + r];
        hit = cp >= x->lo && cp <= x->hi;
        if (!hit && in->fold && cp < 128) {
            uint32_t o = cp >= 'a' && cp <= 'z' ? cp - 32 : cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
            hit = o >= x->lo && o <= x->hi;
        }
    }
    return in->flag ? !hit : hit;
}

/* NOCP: no character (before the text's start, after its end) */
#define NOCP 0xffffffffu

static bool assert_ok(int kind, uint32_t prev, uint32_t cur)
{
    switch (kind) {
    case A_BOT: return prev == NOCP;
    case A_EOT: return cur == NOCP;
    case A_BOL: return prev == NOCP || prev == '\n';
    case A_EOL: return cur == NOCP || cur == '\n';
    case A_WORD:
    case A_NWORD: {
        bool b = (prev != NOCP && is_word(prev)) != (cur != NOCP && is_word(cur));
        return kind == A_WORD ? b : !b;
    }
    default: return false;
    }
}

static bool push(rx_vm *vm, size_t *sp, size_t kind, size_t a, size_t b)
{
    if (*sp + 3 > vm->stack_cap) {
        size_t c = vm->stack_cap ? 2 * vm->stack_cap : 192;
        size_t *v = realloc(vm->stack, c * sizeof *v);
        if (!v) return false;
        vm->stack = v;
        vm->stack_cap = c;
    }
    vm->stack[(*sp)++] = kind;
    vm->stack[(*sp)++] = a;
    vm->stack[(*sp)++] = b;
    return true;
}

/* Adds pc with captures vm->tmp (modified and restored as it goes) to list l,
 * following jumps, splits, saves and assertions, in priority order. */
static bool add_thread(rx_vm *vm, int l, uint32_t pc0, size_t pos, uint32_t prev, uint32_t cur)
{
    size_t sp = 0;
    if (!push(vm, &sp, 0, pc0, 0)) return false;
    while (sp) {
        sp -= 3;
        size_t kind = vm->stack[sp], a = vm->stack[sp + 1], b = vm->stack[sp + 2];
        if (kind == 1) {   /* restore a capture slot */
            vm->tmp[a] = b;
            continue;
        }
        uint32_t pc = (uint32_t)a;
        if (vm->mark[pc] == vm->step) continue;
        vm->mark[pc] = vm->step;
        const rx_inst *in = &vm->re->prog[pc];
        switch (in->op) {
        case I_JMP:
            if (!push(vm, &sp, 0, in->a, 0)) return false;
            break;
        case I_SPLIT:   /* b below a: a runs first */
            if (!push(vm, &sp, 0, in->b, 0) || !push(vm, &sp, 0, in->a, 0)) return false;
            break;
        case I_SAVE:
            if (in->a < vm->ncap) {
                if (!push(vm, &sp, 1, in->a, vm->tmp[in->a])) return false;
                vm->tmp[in->a] = pos;
            }
            if (!push(vm, &sp, 0, pc + 1, 0)) return false;
            break;
        case I_ASSERT:
            if (assert_ok(in->flag, prev, cur) && !push(vm, &sp, 0, pc + 1, 0)) return false;
            break;
        default: {
            uint32_t k = vm->n[l]++;
            vm->pcs[l][k] = pc;
            memcpy(vm->caps[l] + (size_t)k * vm->ncap, vm->tmp, vm->ncap * sizeof *vm->tmp);
            break;
        }
        }
    }
    return true;
}

static void vm_free(rx_vm *vm)
{
    for (int i = 0; i < 2; i++) {
        free(vm->pcs[i]);
        free(vm->caps[i]);
    }
    free(vm->mark);
    free(vm->stack);
    free(vm->tmp);
}

static bool vm_init(rx_vm *vm, const rx_regex *re, uint32_t ncap)
{
    memset(vm, 0, sizeof *vm);
    vm->re = re;
    vm->ncap = ncap;
    for (int i = 0; i < 2; i++) {
        vm->pcs[i] = malloc(re->n * sizeof *vm->pcs[i]);
        vm->caps[i] = malloc((size_t)re->n * ncap * sizeof *vm->caps[i]);
    }
    vm->mark = calloc(re->n, sizeof *vm->mark);
    vm->tmp = malloc(ncap * sizeof *vm->tmp);
    if (!vm->pcs[0] || !vm->pcs[1] || !vm->caps[0] || !vm->caps[1] || !vm->mark || !vm->tmp) {
        vm_free(vm);
        return false;
    }
    return true;
}

/* A fresh generation for a thread list's marks. */
static void next_gen(rx_vm *vm)
{
    if (++vm->step == 0) {   /* the counter wrapped: no stale marks */
        memset(vm->mark, 0, vm->re->n * sizeof *vm->mark);
        vm->step = 1;
    }
}

/* The leftmost-first match in s[0..n) starting at or after byte `from` (the
 * text before `from` is context for ^ and \b): 1 with cap[0..ncap) (byte
 * offsets, SIZE_MAX for a group that did not take part), 0 none, -1 no memory.
 * Each thread list is filled under one generation: the threads a step adds
 * for position p, then the new thread seeded at p (lowest priority), so that
 * no instruction is on a list twice. */
static int vm_search(rx_vm *vm, const char *s, size_t n, size_t from, size_t *cap)
{
    const unsigned char *t = (const unsigned char *)s;
    uint32_t prev = NOCP;
    if (from > 0) {   /* the character before from */
        size_t b = from - 1;
        while (b > 0 && from - b < 4 && (t[b] & 0xc0) == 0x80) b--;
        size_t i = b;
        uint32_t cp = utf8_at(t, n, &i);
        prev = i == from ? cp : 0x110000u + t[from - 1];
    }
    bool matched = false;
    int cl = 0;
    vm->n[0] = vm->n[1] = 0;
    next_gen(vm);
    size_t pos = from;
    for (;;) {
        size_t next = pos;
        uint32_t cur = pos < n ? utf8_at(t, n, &next) : NOCP;
        if (!matched) {
            for (uint32_t k = 0; k < vm->ncap; k++) vm->tmp[k] = SIZE_MAX;
            if (!add_thread(vm, cl, 0, pos, prev, cur)) return -1;
        }
        if (vm->n[cl] == 0 && matched) break;   /* empty and not matched: on to the next start */
        int nl = cl ^ 1;
        vm->n[nl] = 0;
        next_gen(vm);
        uint32_t after = NOCP;   /* the character after cur: context at next */
        if (cur != NOCP && next < n) {
            size_t j = next;
            after = utf8_at(t, n, &j);
        }
        for (uint32_t i = 0; i < vm->n[cl]; i++) {
            const rx_inst *in = &vm->re->prog[vm->pcs[cl][i]];
            size_t *tc = vm->caps[cl] + (size_t)i * vm->ncap;
            bool adv = false;
            switch (in->op) {
            case I_MATCH:
                memcpy(cap, tc, vm->ncap * sizeof *cap);
                matched = true;
                i = vm->n[cl];   /* the lower-priority threads are cut */
                continue;
            case I_CHAR:
                adv = cur <= 0x10ffff && (cur == in->a || (in->fold && fold_ascii(cur) == fold_ascii(in->a)));
                break;
            case I_ANY: adv = cur <= 0x10ffff && (in->flag || cur != '\n'); break;
            case I_CLASS: adv = cur <= 0x10ffff && class_has(vm->re, in, cur); break;
            default: break;
            }
            if (adv) {
                memcpy(vm->tmp, tc, vm->ncap * sizeof *vm->tmp);
                if (!add_thread(vm, nl, vm->pcs[cl][i] + 1, next, cur, after)) return -1;
            }
        }
        if (cur == NOCP) break;
        cl = nl;
        prev = cur;
        pos = next;
    }
    return matched ? 1 : 0;
}

/* ---- replacement ------------------------------------------------------------------------------- */
/* RE2::MaxSubmatch: the largest \digit the rewrite names (0 for none). */
static uint32_t max_submatch(const char *rw, size_t len)
{
    uint32_t max = 0;
    for (size_t i = 0; i < len; i++)
        if (rw[i] == '\\' && ++i < len && rw[i] >= '0' && rw[i] <= '9' && (uint32_t)(rw[i] - '0') > max)
            max = (uint32_t)(rw[i] - '0');
    return max;
}

typedef struct rx_out {
    char *p;
    size_t n, cap;
} rx_out;

static bool out_put(rx_out *o, const char *s, size_t n)
{
    if (o->n + n > o->cap) {
        size_t c = o->cap ? o->cap : 64;
        while (c < o->n + n) c *= 2;
        char *v = realloc(o->p, c);
        if (!v) return false;
        o->p = v;
        o->cap = c;
    }
    if (n) memcpy(o->p + o->n, s, n);
    o->n += n;
    return true;
}

/* RE2::Rewrite: 1 done, 0 a bad escape (what came before it written), -1 no
 * memory. */
static int rewrite(rx_out *o, const char *rw, size_t len, const char *s, const size_t *cap)
{
    for (size_t i = 0; i < len; i++) {
        if (rw[i] != '\\') {
            if (!out_put(o, &rw[i], 1)) return -1;
            continue;
        }
        char c = ++i < len ? rw[i] : 0;
        if (c == '\\') {
            if (!out_put(o, "\\", 1)) return -1;
        } else if (c >= '0' && c <= '9') {
            size_t g = (size_t)(c - '0');
            if (cap[2 * g] != SIZE_MAX && cap[2 * g + 1] != SIZE_MAX &&
                !out_put(o, s + cap[2 * g], cap[2 * g + 1] - cap[2 * g]))
                return -1;
        } else {
            return 0;
        }
    }
    return 1;
}

/* s with the first match (or every one, global) replaced, as RE2::Replace and
 * RE2::GlobalReplace do: a rewrite naming a group the pattern lacks replaces
 * nothing; a bad escape in it ends that rewrite there (global) or cancels the
 * replacement (first match only). *o filled; the count, -1 no memory. */
static int replace(rx_vm *vm, const char *s, size_t n, const char *rw, size_t rwl, bool global, rx_out *o,
                   size_t *cap)
{
    o->n = 0;
    if (max_submatch(rw, rwl) > vm->re->groups) return out_put(o, s, n) ? 0 : -1;
    size_t p = 0, lastend = SIZE_MAX;
    int count = 0;
    while (p <= n) {
        int m = vm_search(vm, s, n, p, cap);
        if (m < 0) return -1;
        if (!m) break;
        if (!global) {
            if (!out_put(o, s, cap[0])) return -1;
            int r = rewrite(o, rw, rwl, s, cap);
            if (r < 0) return -1;
            if (r == 0) break;   /* nothing replaced */
            if (!out_put(o, s + cap[1], n - cap[1])) return -1;
            return 1;
        }
        if (p < cap[0] && !out_put(o, s + p, cap[0] - p)) return -1;
        if (cap[0] == lastend && cap[1] == cap[0]) {
            /* an empty match where the last one ended: skip one character */
            if (p < n) {
                size_t i = p;
                (void)utf8_at((const unsigned char *)s, n, &i);
                if (!out_put(o, s + p, i - p)) return -1;
                p = i;
            } else {
                p++;
            }
            continue;
        }
        if (rewrite(o, rw, rwl, s, cap) < 0) return -1;
        p = cap[1];
        lastend = p;
        count++;
    }
    if (count && p < n && !out_put(o, s + p, n - p)) return -1;
    if (!count) {
        o->n = 0;
        if (!out_put(o, s, n)) return -1;
    }
    return count;
}

/* ---- kernels ----------------------------------------------------------------------------------- */
static gn_status need_strings(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    for (uint32_t i = 0; i < n; i++)
        if (c->in[i].dtype != DT_STRING)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u must be string, got %s", i, gn__dtype_name(c->in[i].dtype));
    return GN_OK;
}

/* A scalar string input or attr. */
static gn_status string_arg(gn__kctx *c, int input, const char *attr, const char **s, size_t *len)
{
    if (input >= 0) {
        const gn__tensor *t = &c->in[input];
        if (gn__tensor_numel(t) != 1 || t->rank != 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%s must be a scalar", input == 1 ? "Pattern" : "Rewrite");
        const gn__tstring *v = t->data;
        *s = v->ptr;
        *len = v->len;
        return GN_OK;
    }
    if (!gn__attr_get_string(c->g, c->node, attr, s, len))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr '%s' is missing", attr);
    return GN_OK;
}

static gn_status compile_for(gn__kctx *c, const char *pat, size_t len, bool full, rx_regex **re)
{
    char err[512];
    *re = regex_compile(pat, len, full, err, sizeof err);
    if (!*re) return gn__kctx_fail(c, GN_ERR_GRAPH, "%s", err);
    return GN_OK;
}

static gn_status run_replace(gn__kctx *c, bool is_static)
{
    GN_TRY(need_strings(c, is_static ? 1 : 3));
    const char *pat, *rw;
    size_t pl, rwl;
    GN_TRY(string_arg(c, is_static ? -1 : 1, "pattern", &pat, &pl));
    GN_TRY(string_arg(c, is_static ? -1 : 2, "rewrite", &rw, &rwl));
    bool global = true;
    (void)gn__attr_get_bool(c->g, c->node, "replace_global", &global);
    rx_regex *re;
    GN_TRY(compile_for(c, pat, pl, false, &re));
    const gn__tensor *x = &c->in[0];
    int64_t n = gn__tensor_numel(x);
    const gn__tstring *s = x->data;
    uint32_t ncap = 2 * (re->groups + 1);
    rx_vm vm;
    size_t *cap = malloc(ncap * sizeof *cap);
    rx_out *outs = calloc((size_t)(n > 0 ? n : 1), sizeof *outs);
    gn_status st = GN_OK;
    if (!cap || !outs || !vm_init(&vm, re, ncap)) {
        uint32_t insts = re->n;
        free(cap);
        free(outs);
        regex_free(re);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory for a regex of %u instructions", insts);
    }
    size_t bytes = 0;
    for (int64_t i = 0; i < n && st == GN_OK; i++) {
        if (replace(&vm, s[i].ptr, s[i].len, rw, rwl, global, &outs[i], cap) < 0)
            st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory replacing in element %lld", (long long)i);
        bytes += outs[i].n;
    }
    vm_free(&vm);
    free(cap);
    regex_free(re);
    gn__tensor *t;
    char *storage;
    if (st == GN_OK) st = gn__kctx_output_strings(c, 0, x->rank, x->dims, bytes, &t, &storage);
    if (st == GN_OK) {
        gn__tstring *o = t->data;
        for (int64_t i = 0; i < n; i++) {
            if (outs[i].n) memcpy(storage, outs[i].p, outs[i].n);
            o[i] = (gn__tstring){storage, outs[i].n};
            storage += outs[i].n;
        }
    }
    for (int64_t i = 0; i < n; i++) free(outs[i].p);
    free(outs);
    return st;
}

static gn_status run_full_match(gn__kctx *c, bool is_static)
{
    GN_TRY(need_strings(c, is_static ? 1 : 2));
    const char *pat;
    size_t pl;
    GN_TRY(string_arg(c, is_static ? -1 : 1, "pattern", &pat, &pl));
    rx_regex *re;
    GN_TRY(compile_for(c, pat, pl, true, &re));
    const gn__tensor *x = &c->in[0];
    int64_t n = gn__tensor_numel(x);
    const gn__tstring *s = x->data;
    rx_vm vm;
    size_t cap[2];
    if (!vm_init(&vm, re, 2)) {
        uint32_t insts = re->n;
        regex_free(re);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory for a regex of %u instructions", insts);
    }
    gn__tensor *t;
    gn_status st = gn__kctx_output(c, 0, DT_BOOL, x->rank, x->dims, &t);
    for (int64_t i = 0; i < n && st == GN_OK; i++) {
        int m = vm_search(&vm, s[i].ptr, s[i].len, 0, cap);
        if (m < 0) st = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory matching element %lld", (long long)i);
        else ((uint8_t *)t->data)[i] = (uint8_t)m;
    }
    vm_free(&vm);
    regex_free(re);
    return st;
}

gn_status gn__str_k_regex_replace(gn__kctx *c) { return run_replace(c, false); }
gn_status gn__str_k_static_regex_replace(gn__kctx *c) { return run_replace(c, true); }
gn_status gn__str_k_regex_full_match(gn__kctx *c) { return run_full_match(c, false); }
gn_status gn__str_k_static_regex_full_match(gn__kctx *c) { return run_full_match(c, true); }
