/* grapnel run: a fetched tensor printed the way numpy prints an array
 * (numpy.array2string with numpy's defaults: line width 75, summarized past
 * 1000 elements with 3 at each edge, the shortest repr that round-trips), and
 * its elements as JSON. Public API only. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* ---- growable string -------------------------------------------------------------------- */
typedef struct dstr {
    char *s;
    size_t n, cap;
    int oom;
} dstr;

static void ds_putn(dstr *d, const char *p, size_t n)
{
    if (d->oom) return;
    if (d->n + n + 1 > d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        while (cap < d->n + n + 1) cap *= 2;
        char *q = realloc(d->s, cap);
        if (!q) {
            d->oom = 1;
            return;
        }
        d->s = q;
        d->cap = cap;
    }
    memcpy(d->s + d->n, p, n);
    d->n += n;
    d->s[d->n] = 0;
}

static void ds_puts(dstr *d, const char *s)
{
    ds_putn(d, s, strlen(s));
}

static void ds_pad(dstr *d, int n)
{
    for (int i = 0; i < n; i++) ds_putn(d, " ", 1);
}

static const char *ds_str(const dstr *d)
{
    return d->s ? d->s : "";
}

/* ---- numpy-style printing ----------------------------------------------------------------- */
#define NP_LINE_WIDTH 75
#define NP_EDGE 3
#define NP_THRESHOLD 1000
#define NP_PRECISION 8

typedef struct npfmt {
    const gn_tensor *t;
    int kind;              /* 0 float, 1 integer, 2 bool, 3 string */
    int summarize;
    int exp;
    int pad_left, pad_right, precision, exp_size;
    int int_width;
} npfmt;

static double elem_f(const gn_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DT_FLOAT: return ((const float *)t->data)[i];
    case DT_DOUBLE: return ((const double *)t->data)[i];
    case DT_HALF: return (double)((const _Float16 *)t->data)[i];
    default: return 0;
    }
}

static int roundtrips(double v, int dtype, const char *s)
{
    double r = strtod(s, NULL);
    switch (dtype) {
    case DT_FLOAT: return (float)r == (float)v;
    case DT_HALF: return (_Float16)r == (_Float16)v;
    default: return r == v;
    }
}

/* The shortest positional digits (at most 8 after the point) that read back
 * as v in its own precision, numpy's "unique" mode. */
static void uniq_pos(double v, int dtype, char *buf, size_t n)
{
    for (int p = 0; p <= NP_PRECISION; p++) {
        snprintf(buf, n, "%.*f", p, v);
        if (roundtrips(v, dtype, buf)) break;
    }
    if (!strchr(buf, '.')) {
        size_t l = strlen(buf);
        if (l + 1 < n) {
            buf[l] = '.';
            buf[l + 1] = 0;
        }
    }
}

/* Scientific: mantissa digits and exponent, shortest unique (<= 8 digits). */
static void uniq_exp(double v, int dtype, char *mant, size_t mn, int *exp10)
{
    char buf[64];
    for (int p = 0; p <= NP_PRECISION; p++) {
        snprintf(buf, sizeof buf, "%.*e", p, v);
        if (roundtrips(v, dtype, buf)) break;
    }
    char *e = strchr(buf, 'e');
    *exp10 = e ? atoi(e + 1) : 0;
    if (e) *e = 0;
    snprintf(mant, mn, "%s", buf);
    if (!strchr(mant, '.')) {
        size_t l = strlen(mant);
        if (l + 1 < mn) {
            mant[l] = '.';
            mant[l + 1] = 0;
        }
    }
}

static int ndigits(int e)
{
    int n = 1;
    e = e < 0 ? -e : e;
    while (e >= 10) {
        e /= 10;
        n++;
    }
    return n;
}

typedef void (*elem_visit)(npfmt *f, int64_t flat, void *u);

/* Visits the elements numpy would show (edge items of each summarized axis). */
static void visit_shown(npfmt *f, elem_visit fn, void *u)
{
    const gn_tensor *t = f->t;
    int r = t->rank;
    int64_t idx[GN_TENSOR_MAX_DIMS] = {0};
    for (int64_t n = gn_tensor_numel(t); n > 0;) {
        int64_t flat = 0;
        for (int d = 0; d < r; d++) flat = flat * t->dims[d] + idx[d];
        fn(f, flat, u);
        int d = r - 1;
        for (; d >= 0; d--) {
            idx[d]++;
            if (f->summarize && t->dims[d] > 2 * NP_EDGE && idx[d] == NP_EDGE) idx[d] = t->dims[d] - NP_EDGE;
            if (idx[d] < t->dims[d]) break;
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}

typedef struct fstats {
    int any_finite, any_nonfinite, neg_inf;
    double max_abs, min_abs;
    int have_nz;
} fstats;

static void collect_float(npfmt *f, int64_t i, void *u)
{
    fstats *s = u;
    double v = elem_f(f->t, i);
    if (!isfinite(v)) {
        s->any_nonfinite = 1;
        if (isinf(v) && v < 0) s->neg_inf = 1;
        return;
    }
    s->any_finite = 1;
    double a = fabs(v);
    if (a != 0) {
        if (!s->have_nz || a > s->max_abs) s->max_abs = a;
        if (!s->have_nz || a < s->min_abs) s->min_abs = a;
        s->have_nz = 1;
    }
}

static void measure_float(npfmt *f, int64_t i, void *u)
{
    (void)u;
    double v = elem_f(f->t, i);
    if (!isfinite(v)) return;
    if (f->exp) {
        char m[64];
        int e;
        uniq_exp(v, f->t->dtype, m, sizeof m, &e);
        char *dot = strchr(m, '.');
        int il = (int)(dot - m), fl = (int)strlen(dot + 1);
        if (il > f->pad_left) f->pad_left = il;
        if (fl > f->precision) f->precision = fl;
        int ed = ndigits(e) < 2 ? 2 : ndigits(e);
        if (ed > f->exp_size) f->exp_size = ed;
    } else {
        char b[512];
        uniq_pos(v, f->t->dtype, b, sizeof b);
        char *dot = strchr(b, '.');
        int il = (int)(dot - b), fl = (int)strlen(dot + 1);
        if (il > f->pad_left) f->pad_left = il;
        if (fl > f->pad_right) f->pad_right = fl;
    }
}

static void measure_int(npfmt *f, int64_t i, void *u)
{
    (void)u;
    char b[32];
    const gn_tensor *t = f->t;
    switch (t->dtype) {
    case DT_INT32: snprintf(b, sizeof b, "%d", ((const int32_t *)t->data)[i]); break;
    case DT_INT64: snprintf(b, sizeof b, "%" PRId64, ((const int64_t *)t->data)[i]); break;
    case DT_UINT8: snprintf(b, sizeof b, "%u", ((const uint8_t *)t->data)[i]); break;
    case DT_INT8: snprintf(b, sizeof b, "%d", ((const int8_t *)t->data)[i]); break;
    case DT_INT16: snprintf(b, sizeof b, "%d", ((const int16_t *)t->data)[i]); break;
    case DT_UINT16: snprintf(b, sizeof b, "%u", ((const uint16_t *)t->data)[i]); break;
    case DT_UINT32: snprintf(b, sizeof b, "%" PRIu32, ((const uint32_t *)t->data)[i]); break;
    case DT_UINT64: snprintf(b, sizeof b, "%" PRIu64, ((const uint64_t *)t->data)[i]); break;
    default: b[0] = 0; break;
    }
    int l = (int)strlen(b);
    if (l > f->int_width) f->int_width = l;
}

static int fmt_prepare(npfmt *f, const gn_tensor *t)
{
    memset(f, 0, sizeof *f);
    f->t = t;
    f->summarize = gn_tensor_numel(t) > NP_THRESHOLD;
    switch (t->dtype) {
    case DT_FLOAT:
    case DT_DOUBLE:
    case DT_HALF: {
        f->kind = 0;
        fstats s = {0};
        visit_shown(f, collect_float, &s);
        if (s.have_nz && (s.max_abs >= 1e8 || s.min_abs < 1e-4 || s.max_abs / s.min_abs > 1e3)) f->exp = 1;
        if (s.any_finite) visit_shown(f, measure_float, NULL);
        if (f->exp) {
            f->pad_right = f->exp_size + 2 + f->precision;
        }
        if (s.any_nonfinite) {
            int off = f->pad_right + 1;
            int inflen = 3 + s.neg_inf;
            if (3 - off > f->pad_left) f->pad_left = 3 - off;
            if (inflen - off > f->pad_left) f->pad_left = inflen - off;
        }
        return 0;
    }
    case DT_BOOL: f->kind = 2; return 0;
    case DT_STRING: f->kind = 3; return 0;
    case DT_INT32:
    case DT_INT64:
    case DT_UINT8:
    case DT_INT8:
    case DT_INT16:
    case DT_UINT16:
    case DT_UINT32:
    case DT_UINT64:
        f->kind = 1;
        visit_shown(f, measure_int, NULL);
        return 0;
    default: return -1;
    }
}

static void fmt_elem(const npfmt *f, int64_t i, dstr *d)
{
    const gn_tensor *t = f->t;
    char b[600];
    if (f->kind == 0) {
        double v = elem_f(t, i);
        if (!isfinite(v)) {
            const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
            ds_pad(d, f->pad_left + f->pad_right + 1 - (int)strlen(s));
            ds_puts(d, s);
            return;
        }
        if (f->exp) {
            /* numpy prints min_digits = precision real digits (not zeros) */
            char m[64];
            snprintf(m, sizeof m, "%.*e", f->precision, v);
            char *e = strchr(m, 'e');
            int ex = e ? atoi(e + 1) : 0;
            if (e) *e = 0;
            if (!strchr(m, '.')) strcat(m, ".");
            char *dot = strchr(m, '.');
            int il = (int)(dot - m);
            ds_pad(d, f->pad_left - il);
            ds_puts(d, m);
            snprintf(b, sizeof b, "e%c%0*d", ex < 0 ? '-' : '+', f->exp_size, ex < 0 ? -ex : ex);
            ds_puts(d, b);
        } else {
            uniq_pos(v, t->dtype, b, sizeof b);
            char *dot = strchr(b, '.');
            int il = (int)(dot - b), fl = (int)strlen(dot + 1);
            ds_pad(d, f->pad_left - il);
            ds_puts(d, b);
            ds_pad(d, f->pad_right - fl);
        }
        return;
    }
    if (f->kind == 2) {
        int v = ((const uint8_t *)t->data)[i] != 0;
        ds_puts(d, v ? (t->rank ? " True" : "True") : "False");
        return;
    }
    if (f->kind == 3) {
        const gn_string *s = &((const gn_string *)t->data)[i];
        ds_puts(d, "b'");
        for (size_t k = 0; k < s->len; k++) {
            unsigned char c = (unsigned char)s->data[k];
            if (c == '\\' || c == '\'') {
                char e[3] = {'\\', (char)c, 0};
                ds_puts(d, e);
            } else if (c == '\n') ds_puts(d, "\\n");
            else if (c == '\t') ds_puts(d, "\\t");
            else if (c == '\r') ds_puts(d, "\\r");
            else if (c < 0x20 || c >= 0x7f) {
                snprintf(b, sizeof b, "\\x%02x", c);
                ds_puts(d, b);
            } else ds_putn(d, (const char *)&c, 1);
        }
        ds_puts(d, "'");
        return;
    }
    switch (t->dtype) {
    case DT_INT32: snprintf(b, sizeof b, "%d", ((const int32_t *)t->data)[i]); break;
    case DT_INT64: snprintf(b, sizeof b, "%" PRId64, ((const int64_t *)t->data)[i]); break;
    case DT_UINT8: snprintf(b, sizeof b, "%u", ((const uint8_t *)t->data)[i]); break;
    case DT_INT8: snprintf(b, sizeof b, "%d", ((const int8_t *)t->data)[i]); break;
    case DT_INT16: snprintf(b, sizeof b, "%d", ((const int16_t *)t->data)[i]); break;
    case DT_UINT16: snprintf(b, sizeof b, "%u", ((const uint16_t *)t->data)[i]); break;
    case DT_UINT32: snprintf(b, sizeof b, "%" PRIu32, ((const uint32_t *)t->data)[i]); break;
    case DT_UINT64: snprintf(b, sizeof b, "%" PRIu64, ((const uint64_t *)t->data)[i]); break;
    default: b[0] = 0; break;
    }
    ds_pad(d, f->int_width - (int)strlen(b));
    ds_puts(d, b);
}

/* numpy's _extendLine */
static void extend_line(dstr *s, dstr *line, const char *word, int width, const char *prefix)
{
    int needs_wrap = (int)(line->n + strlen(word)) > width;
    if ((int)line->n <= (int)strlen(prefix)) needs_wrap = 0;
    if (needs_wrap) {
        size_t n = line->n;
        while (n && line->s[n - 1] == ' ') n--;
        ds_putn(s, line->s, n);
        ds_puts(s, "\n");
        line->n = 0;
        ds_puts(line, prefix);
    }
    ds_puts(line, word);
}

/* numpy's _formatArray recurser (recursion over the rank, at most 8). */
static void format_rec(const npfmt *f, int64_t *idx, int axis, const char *hanging, int width, dstr *out)
{
    const gn_tensor *t = f->t;
    if (axis == t->rank) {
        int64_t flat = 0;
        for (int d = 0; d < t->rank; d++) flat = flat * t->dims[d] + idx[d];
        fmt_elem(f, flat, out);
        return;
    }
    size_t hl = strlen(hanging);
    char *next_hanging = malloc(hl + 2);
    if (!next_hanging) return;
    memcpy(next_hanging, hanging, hl);
    next_hanging[hl] = ' ';
    next_hanging[hl + 1] = 0;
    int next_width = width - 1;
    int64_t len = t->dims[axis];
    int show = f->summarize && 2 * NP_EDGE < len;
    int64_t leading = show ? NP_EDGE : 0, trailing = show ? NP_EDGE : len;
    int axes_left = t->rank - axis;
    dstr s = {0};
    if (axes_left == 1) {
        int elem_width = width - 1;
        dstr line = {0};
        ds_puts(&line, hanging);
        for (int64_t i = 0; i < leading; i++) {
            dstr w = {0};
            idx[axis] = i;
            format_rec(f, idx, axis + 1, next_hanging, next_width, &w);
            extend_line(&s, &line, ds_str(&w), elem_width, hanging);
            ds_puts(&line, " ");
            free(w.s);
        }
        if (show) {
            extend_line(&s, &line, "...", elem_width, hanging);
            ds_puts(&line, " ");
        }
        for (int64_t i = trailing; i > 1; i--) {
            dstr w = {0};
            idx[axis] = len - i;
            format_rec(f, idx, axis + 1, next_hanging, next_width, &w);
            extend_line(&s, &line, ds_str(&w), elem_width, hanging);
            ds_puts(&line, " ");
            free(w.s);
        }
        dstr w = {0};
        idx[axis] = len - 1;
        format_rec(f, idx, axis + 1, next_hanging, next_width, &w);
        extend_line(&s, &line, ds_str(&w), elem_width, hanging);
        free(w.s);
        ds_putn(&s, line.s, line.n);
        free(line.s);
    } else {
        char sep[16];
        int nl = axes_left - 1 < 15 ? axes_left - 1 : 15;
        memset(sep, '\n', (size_t)nl);
        sep[nl] = 0;
        for (int64_t i = 0; i < leading; i++) {
            idx[axis] = i;
            ds_puts(&s, hanging);
            format_rec(f, idx, axis + 1, next_hanging, next_width, &s);
            ds_puts(&s, sep);
        }
        if (show) {
            ds_puts(&s, hanging);
            ds_puts(&s, "...");
            ds_puts(&s, sep);
        }
        for (int64_t i = trailing; i > 1; i--) {
            idx[axis] = len - i;
            ds_puts(&s, hanging);
            format_rec(f, idx, axis + 1, next_hanging, next_width, &s);
            ds_puts(&s, sep);
        }
        idx[axis] = len - 1;
        ds_puts(&s, hanging);
        format_rec(f, idx, axis + 1, next_hanging, next_width, &s);
    }
    ds_puts(out, "[");
    if (s.n >= hl) ds_putn(out, s.s + hl, s.n - hl);
    ds_puts(out, "]");
    free(s.s);
    free(next_hanging);
}

/* numpy's str(array). */
char *gn_cli_format_array(const gn_tensor *t)
{
    dstr out = {0};
    npfmt f;
    if (fmt_prepare(&f, t) != 0) {
        char b[128];
        snprintf(b, sizeof b, "<%s values>", gn_dtype_numpy_name(t->dtype));
        ds_puts(&out, b);
    } else if (gn_tensor_numel(t) == 0) {
        ds_puts(&out, "[]");
    } else if (t->rank == 0) {
        fmt_elem(&f, 0, &out);
    } else {
        int64_t idx[GN_TENSOR_MAX_DIMS] = {0};
        format_rec(&f, idx, 0, " ", NP_LINE_WIDTH, &out);
    }
    if (out.oom) {
        free(out.s);
        return NULL;
    }
    if (!out.s) return calloc(1, 1);
    return out.s;
}

void gn_cli_shape_tuple(const gn_tensor *t, char *buf, size_t n)
{
    size_t o = (size_t)snprintf(buf, n, "(");
    for (int32_t i = 0; i < t->rank && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%" PRId64, i ? ", " : "", t->dims[i]);
    if (o < n) snprintf(buf + o, n - o, "%s)", t->rank == 1 ? "," : "");
}

/* A tensor's elements, flat in row-major order (null for dtypes without a JSON form). */
void gn_cli_json_values(gn_json *j, const gn_tensor *t)
{
    int64_t n = gn_tensor_numel(t);
    npfmt f;
    if (fmt_prepare(&f, t) != 0) {
        gn_json_null(j);
        return;
    }
    gn_json_begin_inline(j, '[');
    for (int64_t i = 0; i < n; i++) {
        if (f.kind == 0 && t->dtype != DT_DOUBLE) gn_json_float(j, (float)elem_f(t, i));
        else if (f.kind == 0) gn_json_num(j, elem_f(t, i));
        else if (f.kind == 2) gn_json_bool(j, ((const uint8_t *)t->data)[i] != 0);
        else if (f.kind == 3) gn_json_strn(j, ((const gn_string *)t->data)[i].data, ((const gn_string *)t->data)[i].len);
        else if (t->dtype == DT_UINT64) gn_json_uint(j, ((const uint64_t *)t->data)[i]);
        else {
            int64_t v = 0;
            switch (t->dtype) {
            case DT_INT32: v = ((const int32_t *)t->data)[i]; break;
            case DT_INT64: v = ((const int64_t *)t->data)[i]; break;
            case DT_UINT8: v = ((const uint8_t *)t->data)[i]; break;
            case DT_INT8: v = ((const int8_t *)t->data)[i]; break;
            case DT_INT16: v = ((const int16_t *)t->data)[i]; break;
            case DT_UINT16: v = ((const uint16_t *)t->data)[i]; break;
            case DT_UINT32: v = ((const uint32_t *)t->data)[i]; break;
            default: break;
            }
            gn_json_int(j, v);
        }
    }
    gn_json_end(j, ']');
}
