/* gn_options: TensorFlow's experimental optimizer dictionary and RewriterConfig
 * as a struct. Every key comes from src/optimizer/options.def through one
 * table (name, kind, offset, width, default, help); nothing below names a key,
 * so adding one is a line in options.def (and a member in options.h).
 *
 * Accepted text (gn_options_parse):
 *   {'constant_folding': True, "min_graph_nodes": -1,}   the dictionary's form
 *   constant_folding=on,min_graph_nodes=-1               key=value form
 * Both are read with the Python-literal reader (common/pylit.h): a value is a
 * string ('...' or "...", Python's escapes) or a bare word/integer; quotes do
 * not change its meaning. Words match case-insensitively. None sets the key
 * back to its default (what dict.update with None does in TensorFlow's
 * context.py: the field is left untouched in the ConfigProto it builds).
 *
 * Thread-safety: no shared state; const tables only. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "common/pylit.h"
#include "grapnel/options.h"
#include "io/graphdef.h"
#include "io/textformat.h"
#include "io/wirecheck.h"
#include "optimizer/options_internal.h"
#include "tensorflow/core/protobuf/rewriter_config.pb-c.h"

/* ---- the table ---------------------------------------------------------------------- */
enum { KIND_TOGGLE, KIND_BOOL, KIND_INT, KIND_ITERS, KIND_LAYOUT, KIND_LPOLICY, KIND_RPOLICY, KIND_STR };

typedef struct opt_row {
    const char *name;
    int kind;
    size_t offset;
    size_t width;       /* 4 or 8 bytes */
    int64_t def;
    const char *help;
} opt_row;

#define GN_OPT(key, kind, def, help)                                                            \
    _Static_assert(sizeof(((gn_options *)0)->key) == 4 ||                                       \
                       (KIND_##kind == KIND_INT && sizeof(((gn_options *)0)->key) == 8),        \
                   #key ": only INT keys may be 64-bit, the others are int32_t");
#define GN_OPTK(member, key, kind, def, help)                                                   \
    _Static_assert(KIND_##kind == KIND_STR ? sizeof(((gn_options *)0)->member) == GN_OPTIONS_STR_MAX \
                                           : sizeof(((gn_options *)0)->member) == 4,           \
                   key ": STR keys are char[GN_OPTIONS_STR_MAX], the others int32_t");
#include "optimizer/options.def"
#undef GN_OPTK
#undef GN_OPT

static const opt_row k_rows[] = {
#define GN_OPT(key, kind, def, help) \
    {#key, KIND_##kind, offsetof(gn_options, key), sizeof(((gn_options *)0)->key), (int64_t)(def), help},
#define GN_OPTK(member, key, kind, def, help) \
    {key, KIND_##kind, offsetof(gn_options, member), sizeof(((gn_options *)0)->member), (int64_t)(def), help},
#include "optimizer/options.def"
#undef GN_OPTK
#undef GN_OPT
};
#define N_ROWS GN__ARRAY_LEN(k_rows)

/* Keys tf.config.optimizer.get_experimental_options() always reports
 * (docs/reference_grappler.md §1.4: the two bools); every other key is printed when it differs
 * from its default, which for the dictionary's toggles is "non-DEFAULT" and for
 * min_graph_nodes "non-zero", as TensorFlow prints them. */
static const char *const k_always_printed[] = {"disable_model_pruning", "disable_meta_optimizer"};

/* Enum names, indexed by value. */
static const char *const k_toggle_names[] = {"DEFAULT", "ON", "OFF", "AGGRESSIVE", "EXPERIMENTAL_MLIR",
                                             "EXPERIMENTAL_BOTH"};
static const char *const k_iters_names[] = {"DEFAULT_NUM_ITERS", "ONE", "TWO"};
static const char *const k_layout_names[] = {"NO_CONVERSION_ON_CPU", "NCHW_TO_NHWC", "NHWC_TO_NCHW"};
static const char *const k_lpolicy_names[] = {"grapnel", "tensorflow", "NCHW", "NHWC"};
static const char *const k_rpolicy_names[] = {"grapnel", "tensorflow"};

static const char *const *kind_names(int kind, size_t *n)
{
    switch (kind) {
    case KIND_TOGGLE: *n = GN__ARRAY_LEN(k_toggle_names); return k_toggle_names;
    case KIND_ITERS: *n = GN__ARRAY_LEN(k_iters_names); return k_iters_names;
    case KIND_LAYOUT: *n = GN__ARRAY_LEN(k_layout_names); return k_layout_names;
    case KIND_LPOLICY: *n = GN__ARRAY_LEN(k_lpolicy_names); return k_lpolicy_names;
    case KIND_RPOLICY: *n = GN__ARRAY_LEN(k_rpolicy_names); return k_rpolicy_names;
    default: *n = 0; return NULL;
    }
}

/* What a bad value message lists. */
static const char *kind_accepted(int kind)
{
    switch (kind) {
    case KIND_TOGGLE:
        return "True, False, None, 'ON', 'OFF', 'AGGRESSIVE', 'DEFAULT', 'EXPERIMENTAL_MLIR', "
               "'EXPERIMENTAL_BOTH' or an integer 0..5";
    case KIND_BOOL: return "True, False, None, 'ON', 'OFF', 0 or 1";
    case KIND_ITERS: return "None, 'DEFAULT_NUM_ITERS', 'ONE', 'TWO' or an integer 0..2";
    case KIND_LAYOUT: return "None, 'NO_CONVERSION_ON_CPU', 'NCHW_TO_NHWC', 'NHWC_TO_NCHW' or an integer 0..2";
    case KIND_LPOLICY: return "None, 'grapnel', 'tensorflow', 'NCHW', 'NHWC' or an integer 0..3";
    case KIND_RPOLICY: return "None, 'grapnel', 'tensorflow' or an integer 0..1";
    case KIND_STR: return "a string of comma-separated names, or None";
    default: return "an integer or None";
    }
}

const char *gn__toggle_name(int32_t t)
{
    if (t < 0 || (size_t)t >= GN__ARRAY_LEN(k_toggle_names)) return "UNKNOWN";
    return k_toggle_names[t];
}

static int64_t row_get(const gn_options *o, const opt_row *r)
{
    const char *p = (const char *)o + r->offset;
    if (r->kind == KIND_STR) return p[0] != '\0'; /* 0: the default "" */
    if (r->width == 8) {
        int64_t v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* v must fit the row's width (checked by the callers). */
static void row_set(gn_options *o, const opt_row *r, int64_t v)
{
    char *p = (char *)o + r->offset;
    if (r->kind == KIND_STR) { /* only the default "" is set this way */
        (void)v;
        memset(p, 0, r->width);
        return;
    }
    if (r->width == 8) {
        memcpy(p, &v, sizeof v);
    } else {
        int32_t w = (int32_t)v;
        memcpy(p, &w, sizeof w);
    }
}

static const opt_row *find_row_n(const char *key, size_t n)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (strlen(k_rows[i].name) == n && memcmp(k_rows[i].name, key, n) == 0) return &k_rows[i];
    return NULL;
}

/* ---- small helpers -------------------------------------------------------------------- */
static char lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

/* Longest value text quoted back in a message. */
#define SHOW_MAX 64
#define SHOW(s, n) (int)((n) > SHOW_MAX ? SHOW_MAX : (n)), (s), ((n) > SHOW_MAX ? "..." : "")

/* ---- values ----------------------------------------------------------------------------- */
static gn_status too_long(const opt_row *r, size_t n, gn__err *err)
{
    return gn__fail(err, GN_ERR_ARG, "option '%s': value is %zu bytes, the limit is %zu", r->name, n, r->width - 1);
}

/* Applies value text v (quotes already stripped) to key r of o. */
static gn_status apply_value(gn_options *o, const opt_row *r, const char *v, size_t n, gn__err *err)
{
    if (gn__py_ieq(v, n, "None")) {
        row_set(o, r, r->def);
        return GN_OK;
    }
    if (r->kind == KIND_STR) {
        if (n >= r->width) return too_long(r, n, err);
        char *p = (char *)o + r->offset;
        memset(p, 0, r->width);
        memcpy(p, v, n);
        return GN_OK;
    }
    int64_t iv = 0;
    gn__py_int_result ir = gn__py_parse_int(v, n, &iv);
    bool is_int = ir == GN__PY_INT_OK, overflow = ir == GN__PY_INT_RANGE;
    switch (r->kind) {
    case KIND_INT: {
        int64_t lo = r->width == 8 ? INT64_MIN : INT32_MIN, hi = r->width == 8 ? INT64_MAX : INT32_MAX;
        if (is_int && iv >= lo && iv <= hi) {
            row_set(o, r, iv);
            return GN_OK;
        }
        if (is_int || overflow)
            return gn__fail(err, GN_ERR_ARG, "option '%s': '%.*s%s' is out of range [%" PRId64 ", %" PRId64 "]",
                            r->name, SHOW(v, n), lo, hi);
        return gn__fail(err, GN_ERR_ARG, "option '%s': '%.*s%s' is not an integer", r->name, SHOW(v, n));
    }
    case KIND_BOOL:
        if (gn__py_ieq(v, n, "True") || gn__py_ieq(v, n, "ON") || (is_int && iv == 1)) {
            row_set(o, r, 1);
            return GN_OK;
        }
        if (gn__py_ieq(v, n, "False") || gn__py_ieq(v, n, "OFF") || (is_int && iv == 0)) {
            row_set(o, r, 0);
            return GN_OK;
        }
        break;
    default: {
        /* True -> ON, False -> OFF: context.py's rewriter_toggle */
        if (r->kind == KIND_TOGGLE && gn__py_ieq(v, n, "True")) {
            row_set(o, r, GN_TOGGLE_ON);
            return GN_OK;
        }
        if (r->kind == KIND_TOGGLE && gn__py_ieq(v, n, "False")) {
            row_set(o, r, GN_TOGGLE_OFF);
            return GN_OK;
        }
        size_t nn;
        const char *const *names = kind_names(r->kind, &nn);
        for (size_t i = 0; i < nn; i++)
            if (gn__py_ieq(v, n, names[i])) {
                row_set(o, r, (int64_t)i);
                return GN_OK;
            }
        if (is_int && iv >= 0 && (uint64_t)iv < nn) {
            row_set(o, r, iv);
            return GN_OK;
        }
        break;
    }
    }
    return gn__fail(err, GN_ERR_ARG, "option '%s': '%.*s%s' is not one of %s", r->name, SHOW(v, n),
                    kind_accepted(r->kind));
}

/* The dictionary spelling of the value of key r in o (a STR value as a
 * Python string literal). */
static void put_value(gn__buf *b, const gn_options *o, const opt_row *r)
{
    if (r->kind == KIND_STR) {
        const char *v = (const char *)o + r->offset;
        gn__py_quote(b, v, strlen(v));
        return;
    }
    int64_t v = row_get(o, r);
    char buf[32];
    size_t len = sizeof buf;
    size_t nn;
    const char *const *names = kind_names(r->kind, &nn);
    if (r->kind == KIND_BOOL) {
        snprintf(buf, len, "%s", v ? "True" : "False");
    } else if (r->kind == KIND_TOGGLE && v == GN_TOGGLE_ON) {
        snprintf(buf, len, "True");
    } else if (r->kind == KIND_TOGGLE && v == GN_TOGGLE_OFF) {
        snprintf(buf, len, "False");
    } else if (names && v >= 0 && (uint64_t)v < nn) {
        snprintf(buf, len, "'%s'", names[v]);
    } else {
        snprintf(buf, len, "%" PRId64, v);
    }
    gn__buf_puts(b, buf);
}

/* ---- unknown keys ------------------------------------------------------------------------ */
/* Optimal-string-alignment distance (Damerau: adjacent swaps count 1), case
 * folded and '-' read as '_'. Strings longer than 64 bytes are not compared. */
#define DIST_MAX 64
static size_t key_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b);
    if (na > DIST_MAX || nb > DIST_MAX) return SIZE_MAX;
    size_t rows[3][DIST_MAX + 1];
    size_t *pp = rows[0], *p = rows[1], *c = rows[2];
    for (size_t j = 0; j <= nb; j++) p[j] = j;
    for (size_t i = 1; i <= na; i++) {
        c[0] = i;
        char ai = a[i - 1] == '-' ? '_' : lower(a[i - 1]);
        for (size_t j = 1; j <= nb; j++) {
            char bj = lower(b[j - 1]);
            size_t cost = ai == bj ? 0 : 1;
            size_t best = p[j - 1] + cost;
            if (p[j] + 1 < best) best = p[j] + 1;
            if (c[j - 1] + 1 < best) best = c[j - 1] + 1;
            if (i > 1 && j > 1) {
                char ap = a[i - 2] == '-' ? '_' : lower(a[i - 2]);
                if (ai == lower(b[j - 2]) && ap == bj && pp[j - 2] + 1 < best) best = pp[j - 2] + 1;
            }
            c[j] = best;
        }
        size_t *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[nb];
}

static bool contains_folded(const char *hay, const char *needle, size_t n)
{
    size_t h = strlen(hay);
    for (size_t i = 0; n && i + n <= h; i++) {
        size_t k = 0;
        while (k < n && lower(hay[i + k]) == (needle[k] == '-' ? '_' : lower(needle[k]))) k++;
        if (k == n) return true;
    }
    return false;
}

/* The nearest key: within max(2, len/4) edits, else a key containing it
 * (3 bytes or more); NULL when none is near. */
static const char *suggest_key(const char *key, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < N_ROWS; i++) {
        size_t d = key_distance(key, n, k_rows[i].name);
        if (d < best_d) {
            best_d = d;
            best = k_rows[i].name;
        }
    }
    if (best && (best_d <= 2 || best_d * 4 <= strlen(best))) return best;
    if (n >= 3)
        for (size_t i = 0; i < N_ROWS; i++)
            if (contains_folded(k_rows[i].name, key, n)) return k_rows[i].name;
    return NULL;
}

static gn_status unknown_key(const char *key, size_t n, gn__err *err)
{
    char list[GN__ERRMSG_MAX];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < N_ROWS && len < sizeof list; i++) {
        int w = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", k_rows[i].name);
        if (w < 0) break;
        len += (size_t)w;
    }
    const char *s = suggest_key(key, n);
    if (s)
        return gn__fail(err, GN_ERR_ARG, "unknown option '%.*s%s'; did you mean '%s'? (valid keys: %s)",
                        SHOW(key, n), s, list);
    return gn__fail(err, GN_ERR_ARG, "unknown option '%.*s%s' (valid keys: %s)", SHOW(key, n), list);
}

/* ---- struct_size: callers built against an older header -------------------------------- */
static bool row_inside(const opt_row *r, uint32_t struct_size) { return r->offset + r->width <= struct_size; }

/* Copies the caller's struct into a full one; members past its struct_size
 * read as their defaults. */
static gn_status load_opts(gn_options *full, const gn_options *o, gn__err *err)
{
    if (!o) return gn__fail(err, GN_ERR_ARG, "gn_options is NULL");
    if (o->struct_size < sizeof(uint32_t))
        return gn__fail(err, GN_ERR_ARG, "gn_options not initialised (struct_size %u): call gn_options_init first",
                        (unsigned)o->struct_size);
    gn_options_init(full);
    size_t n = o->struct_size < sizeof *full ? o->struct_size : sizeof *full;
    memcpy(full, o, n);
    for (size_t i = 0; i < N_ROWS; i++)
        if (!row_inside(&k_rows[i], o->struct_size)) row_set(full, &k_rows[i], k_rows[i].def);
    if (offsetof(gn_options, disabled_patterns) + sizeof full->disabled_patterns > o->struct_size)
        full->disabled_patterns = NULL;
    return GN_OK;
}

static void store_opts(gn_options *o, const gn_options *full)
{
    uint32_t ss = o->struct_size;
    size_t n = ss < sizeof *full ? ss : sizeof *full;
    memcpy(o, full, n);
    o->struct_size = ss;
}

static gn_status check_inside(const opt_row *r, uint32_t struct_size, gn__err *err)
{
    if (row_inside(r, struct_size)) return GN_OK;
    return gn__fail(err, GN_ERR_ARG,
                    "option '%s' is not in this gn_options (struct_size %u: built against an older grapnel/options.h)",
                    r->name, (unsigned)struct_size);
}

static void copy_err(const gn__err *e, gn_status s, char *err, size_t errlen)
{
    if (!err || !errlen) return;
    snprintf(err, errlen, "%s", s == GN_OK ? "" : e->msg);
}

/* ---- public: table ------------------------------------------------------------------------- */
void gn_options_init(gn_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    for (size_t i = 0; i < N_ROWS; i++) row_set(o, &k_rows[i], k_rows[i].def);
    o->disabled_patterns = NULL;
}

size_t gn_options_key_count(void) { return N_ROWS; }
const char *gn_options_key(size_t i) { return i < N_ROWS ? k_rows[i].name : NULL; }
const char *gn_options_key_help(size_t i) { return i < N_ROWS ? k_rows[i].help : NULL; }

/* ---- public: parse --------------------------------------------------------------------------- */
typedef struct parser {
    gn__py r;
    gn_options *o;
    uint32_t struct_size;
    gn__err *err;
} parser;

/* The text of a key or value token: as written, or decoded into buf
 * (cap bytes) when it holds escapes; *full: its whole decoded length, *n the
 * bytes at the pointer returned. */
static const char *tok_text(const gn__py_tok *t, char *buf, size_t cap, size_t *n, size_t *full)
{
    if (!t->escapes) {
        *n = *full = t->len;
        return t->text;
    }
    *full = gn__py_str(t, buf, cap);
    *n = *full < cap ? *full : cap - 1;
    return buf;
}

/* Applies key k and value v (a string or a word; quotes do not change its meaning). */
static gn_status apply_tokens(gn_options *o, uint32_t struct_size, const gn__py_tok *k, const gn__py_tok *v,
                              gn__err *err)
{
    char kbuf[256], vbuf[GN_OPTIONS_STR_MAX + 1];
    size_t kn, vn, full;
    const char *ks = tok_text(k, kbuf, sizeof kbuf, &kn, &full);
    const opt_row *r = find_row_n(ks, kn);
    if (!r) return unknown_key(ks, kn, err);
    GN_TRY(check_inside(r, struct_size, err));
    const char *vs = tok_text(v, vbuf, sizeof vbuf, &vn, &full);
    if (r->kind == KIND_STR && full >= r->width) return too_long(r, full, err);
    return apply_value(o, r, vs, vn, err);
}

/* {'key': value, ...}: a Python dict, keys also bare words. */
static gn_status parse_dict(parser *p)
{
    gn__py *r = &p->r;
    gn__py_seq q;
    GN_TRY(gn__py_open(r, '{', &q));
    for (;;) {
        bool more;
        gn__py_tok k, v;
        GN_TRY(gn__py_entry(r, &q, true, &k, &more));
        if (!more) break;
        GN_TRY(gn__py_scalar(r, &v));
        GN_TRY(apply_tokens(p->o, p->struct_size, &k, &v, p->err));
    }
    return gn__py_end(r);
}

/* key=value,key=value (the reader's punctuation is '=' and ','). */
static gn_status parse_pairs(parser *p)
{
    gn__py *r = &p->r;
    for (;;) {
        if (r->tok.kind == GN__PY_END) return GN_OK;
        gn__py_tok k = r->tok, v;
        if (k.kind != GN__PY_STR && k.kind != GN__PY_WORD) return gn__py_fail(r, k.pos, "expected a key");
        GN_TRY(gn__py_advance(r));
        GN_TRY(gn__py_expect(r, '='));
        GN_TRY(gn__py_scalar(r, &v));
        GN_TRY(apply_tokens(p->o, p->struct_size, &k, &v, p->err));
        if (r->tok.kind == GN__PY_END) return GN_OK;
        if (!gn__py_is(r, ',')) return gn__py_fail(r, r->tok.pos, "expected ','");
        GN_TRY(gn__py_advance(r));
    }
}

gn_status gn_options_parse(gn_options *o, const char *text, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    gn_options tmp;
    gn_status s = text ? load_opts(&tmp, o, &e) : gn__fail(&e, GN_ERR_ARG, "options text is NULL");
    if (s == GN_OK) {
        parser p = {.o = &tmp, .struct_size = o->struct_size, .err = &e};
        size_t n = strlen(text);
        s = gn__py_init(&p.r, text, n, NULL, GN_ERR_ARG, &e);
        if (s == GN_OK && gn__py_is(&p.r, '{')) s = parse_dict(&p);
        else if (s == GN_OK && (s = gn__py_init(&p.r, text, n, "=,", GN_ERR_ARG, &e)) == GN_OK) s = parse_pairs(&p);
        if (s == GN_OK) store_opts(o, &tmp);
    }
    copy_err(&e, s, err, errlen);
    return s;
}

/* One value as text: a bare word (spaces around it dropped, inner ones
 * kept), or one string literal. */
static gn_status set_value(gn_options *o, const opt_row *r, const char *value, gn__err *err)
{
    size_t b = 0, n = strlen(value);
    while (b < n && (value[b] == ' ' || (value[b] >= '\t' && value[b] <= '\r'))) b++;
    while (n > b && (value[n - 1] == ' ' || (value[n - 1] >= '\t' && value[n - 1] <= '\r'))) n--;
    if (n == b || (value[b] != '\'' && value[b] != '"')) return apply_value(o, r, value + b, n - b, err);
    gn__py rd;
    gn_status s = gn__py_init(&rd, value + b, n - b, "", GN_ERR_ARG, err);
    gn__py_tok v = rd.tok;
    if (s == GN_OK) s = gn__py_advance(&rd);
    if (s == GN_OK && rd.tok.kind != GN__PY_END)
        s = gn__py_fail(&rd, rd.tok.pos, "unexpected text after the string");
    if (s != GN_OK) {
        gn__err_prefix(err, "option '%s'", r->name);
        return s;
    }
    char vbuf[GN_OPTIONS_STR_MAX + 1];
    size_t vn, full;
    const char *vs = tok_text(&v, vbuf, sizeof vbuf, &vn, &full);
    if (r->kind == KIND_STR && full >= r->width) return too_long(r, full, err);
    return apply_value(o, r, vs, vn, err);
}

gn_status gn_options_set(gn_options *o, const char *key, const char *value, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    gn_options tmp;
    gn_status s;
    if (!key || !value) {
        s = gn__fail(&e, GN_ERR_ARG, "%s is NULL", key ? "value" : "key");
    } else if ((s = load_opts(&tmp, o, &e)) == GN_OK) {
        const opt_row *r = find_row_n(key, strlen(key));
        if (!r) s = unknown_key(key, strlen(key), &e);
        else if ((s = check_inside(r, o->struct_size, &e)) == GN_OK) s = set_value(&tmp, r, value, &e);
        if (s == GN_OK) store_opts(o, &tmp);
    }
    copy_err(&e, s, err, errlen);
    return s;
}

gn_status gn_options_get(const gn_options *o, const char *key, char *buf, size_t buflen)
{
    if (buf && buflen) buf[0] = '\0';
    if (!key || !buf || !buflen) return GN_ERR_ARG;
    gn_options full;
    GN_TRY(load_opts(&full, o, NULL));
    const opt_row *r = find_row_n(key, strlen(key));
    if (!r) return GN_ERR_ARG;
    gn__buf b;
    gn__buf_init(&b);
    put_value(&b, &full, r);
    gn_status s = b.oom ? GN_ERR_NOMEM : b.len >= buflen ? GN_ERR_ARG : GN_OK;
    if (s == GN_OK) {
        memcpy(buf, b.data, b.len);
        buf[b.len] = '\0';
    }
    gn__buf_free(&b);
    return s;
}

/* ---- public: print -------------------------------------------------------------------------- */
static bool always_printed(const char *name)
{
    for (size_t i = 0; i < GN__ARRAY_LEN(k_always_printed); i++)
        if (strcmp(k_always_printed[i], name) == 0) return true;
    return false;
}

gn_status gn_options_to_string(const gn_options *o, char **text)
{
    if (!text) return GN_ERR_ARG;
    *text = NULL;
    gn_options full;
    GN_TRY(load_opts(&full, o, NULL));
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_putc(&b, '{');
    bool first = true;
    for (size_t i = 0; i < N_ROWS; i++) {
        const opt_row *r = &k_rows[i];
        int64_t v = row_get(&full, r);
        if (v == r->def && !always_printed(r->name)) continue;
        gn__buf_printf(&b, "%s'%s': ", first ? "" : ", ", r->name);
        put_value(&b, &full, r);
        first = false;
    }
    gn__buf_putc(&b, '}');
    char *s = gn__buf_take(&b);
    if (!s) {
        gn__buf_free(&b);
        return GN_ERR_NOMEM;
    }
    *text = s;
    return GN_OK;
}

/* ---- public: RewriterConfig -------------------------------------------------------------------- */
static const char *pb_enum_name(const ProtobufCFieldDescriptor *f)
{
    const ProtobufCEnumDescriptor *ed = f->descriptor;
    return ed ? ed->name : "enum";
}

/* Reads field f of message m into *v (0 when absent). */
static gn_status read_field(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const opt_row *r, int64_t *v,
                            gn__err *err)
{
    const char *base = (const char *)m;
    *v = r->def;
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return gn__fail(err, GN_ERR_INTERNAL, "RewriterConfig field '%s' is repeated", f->name);
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset && f->type != PROTOBUF_C_TYPE_MESSAGE &&
        f->type != PROTOBUF_C_TYPE_STRING) {
        protobuf_c_boolean has;
        memcpy(&has, base + f->quantifier_offset, sizeof has);
        if (!has) return GN_OK;
    }
    const char *p = base + f->offset;
    switch (f->type) {
    case PROTOBUF_C_TYPE_ENUM: {
        int e;
        memcpy(&e, p, sizeof e);
        size_t nn;
        kind_names(r->kind, &nn);
        if (!nn) break;
        if (e < 0 || (size_t)e >= nn)
            return gn__fail(err, GN_ERR_PARSE, "RewriterConfig field '%s': %d is not a valid %s", f->name, e,
                            pb_enum_name(f));
        *v = e;
        return GN_OK;
    }
    case PROTOBUF_C_TYPE_BOOL: {
        if (r->kind != KIND_BOOL) break;
        protobuf_c_boolean b;
        memcpy(&b, p, sizeof b);
        *v = b ? 1 : 0;
        return GN_OK;
    }
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: {
        if (r->kind != KIND_INT) break;
        int32_t i;
        memcpy(&i, p, sizeof i);
        *v = i;
        return GN_OK;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: {
        if (r->kind != KIND_INT) break;
        int64_t i;
        memcpy(&i, p, sizeof i);
        if (r->width == 4 && (i < INT32_MIN || i > INT32_MAX))
            return gn__fail(err, GN_ERR_PARSE, "RewriterConfig field '%s': %" PRId64 " is out of range", f->name, i);
        *v = i;
        return GN_OK;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        /* a bool key backed by an options message reads its `enable` field
         * (auto_parallel { enable: true num_replicas: 2 }) */
        if (r->kind != KIND_BOOL) break;
        const ProtobufCMessageDescriptor *sd = f->descriptor;
        const ProtobufCFieldDescriptor *ef = sd ? protobuf_c_message_descriptor_get_field_by_name(sd, "enable") : NULL;
        if (!ef || ef->type != PROTOBUF_C_TYPE_BOOL || ef->label == PROTOBUF_C_LABEL_REPEATED) break;
        const ProtobufCMessage *sub;
        memcpy(&sub, p, sizeof sub);
        if (!sub) {
            *v = 0;
            return GN_OK;
        }
        protobuf_c_boolean b;
        memcpy(&b, (const char *)sub + ef->offset, sizeof b);
        *v = b ? 1 : 0;
        return GN_OK;
    }
    default: break;
    }
    return gn__fail(err, GN_ERR_INTERNAL, "RewriterConfig field '%s' does not fit option kind of '%s'", f->name,
                    r->name);
}

/* A dotted key "msg.field" names field `field` of RewriterConfig's message
 * field `msg` (auto_parallel.num_replicas, scoped_allocator_opts.enable_op):
 * reads it into *v (INT) or into tmp's string (STR: a repeated string, joined
 * with commas). *found: the key is such a field. */
static gn_status read_nested(const ProtobufCMessage *m, const ProtobufCMessageDescriptor *d, const opt_row *r,
                             gn_options *tmp, bool *found, gn__err *err)
{
    *found = false;
    const char *dot = strchr(r->name, '.');
    if (!dot || (size_t)(dot - r->name) >= 64) return GN_OK;
    char head[64];
    memcpy(head, r->name, (size_t)(dot - r->name));
    head[dot - r->name] = '\0';
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, head);
    if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || !f->descriptor) return GN_OK;
    const ProtobufCFieldDescriptor *sf =
        protobuf_c_message_descriptor_get_field_by_name(f->descriptor, dot + 1);
    if (!sf) return GN_OK;
    *found = true;
    const ProtobufCMessage *sub;
    memcpy(&sub, (const char *)m + f->offset, sizeof sub);
    if (r->kind == KIND_STR && sf->type == PROTOBUF_C_TYPE_STRING && sf->label == PROTOBUF_C_LABEL_REPEATED) {
        char *out = (char *)tmp + r->offset;
        memset(out, 0, r->width);
        if (!sub) return GN_OK;
        size_t n, at = 0;
        char **items;
        memcpy(&n, (const char *)sub + sf->quantifier_offset, sizeof n);
        memcpy(&items, (const char *)sub + sf->offset, sizeof items);
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(items[i]);
            if (at + len + (i > 0) >= r->width)
                return gn__fail(err, GN_ERR_PARSE, "RewriterConfig field '%s': the list is over %zu bytes", r->name,
                                r->width - 1);
            if (i > 0) out[at++] = ',';
            memcpy(out + at, items[i], len);
            at += len;
        }
        return GN_OK;
    }
    if (r->kind == KIND_INT && sf->type == PROTOBUF_C_TYPE_INT32 && sf->label != PROTOBUF_C_LABEL_REPEATED) {
        int32_t i = (int32_t)r->def;
        if (sub) memcpy(&i, (const char *)sub + sf->offset, sizeof i);
        row_set(tmp, r, i);
        return GN_OK;
    }
    return gn__fail(err, GN_ERR_INTERNAL, "RewriterConfig field '%s' does not fit option kind of '%s'", r->name,
                    r->name);
}

gn_status gn_options_from_rewriter_config(gn_options *o, const void *data, size_t size, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    gn_options tmp;
    gn_status s = (!data && size) ? gn__fail(&e, GN_ERR_ARG, "data is NULL") : load_opts(&tmp, o, &e);
    if (s != GN_OK) {
        copy_err(&e, s, err, errlen);
        return s;
    }
    const ProtobufCMessageDescriptor *d = &tensorflow__rewriter_config__descriptor;
    static const uint8_t empty[1] = {0};
    const uint8_t *bytes = size ? (const uint8_t *)data : empty;
    gn__arena arena;
    gn__arena_init(&arena, 4096);
    ProtobufCAllocator alloc;
    gn__arena_pb_allocator(&arena, &alloc);
    ProtobufCMessage *m = NULL;
    if (size && gn__looks_like_text(bytes, size)) {
        s = gn__text_parse(d, (const char *)bytes, size, &alloc, &m, &e);
    } else {
        s = gn__wire_check(d, bytes, size, GN__MAX_PROTO_DEPTH, &e);
        if (s == GN_OK) {
            m = protobuf_c_message_unpack(d, &alloc, size, bytes);
            if (!m && arena.oom) s = gn__fail(&e, GN_ERR_NOMEM, "out of memory reading %s", d->name);
            else if (!m) s = gn__fail(&e, GN_ERR_PARSE, "not a valid %s", d->name);
        }
    }
    if (s != GN_OK && s != GN_ERR_NOMEM && s != GN_ERR_INTERNAL) gn__err_prefix(&e, "RewriterConfig");
    for (size_t i = 0; s == GN_OK && i < N_ROWS; i++) {
        const opt_row *r = &k_rows[i];
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, r->name);
        if (!f) {
            bool nested;
            if (row_inside(r, o->struct_size)) s = read_nested(m, d, r, &tmp, &nested, &e);
            continue; /* else grapnel's own key */
        }
        int64_t v;
        s = read_field(m, f, r, &v, &e);
        if (s != GN_OK) break;
        if (v != r->def && (s = check_inside(r, o->struct_size, &e)) != GN_OK) break;
        if (row_inside(r, o->struct_size)) row_set(&tmp, r, v);
    }
    if (s == GN_OK) store_opts(o, &tmp);
    gn__arena_free(&arena);
    copy_err(&e, s, err, errlen);
    return s;
}
