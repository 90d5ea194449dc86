/* ConversionParams: TensorFlow's six fields, their defaults, validation and
 * the dictionary text (docs/reference_formats.md §A1). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "grapnel/convert.h"

#define DEFAULT_WORKSPACE ((int64_t)1 << 30)

void gn_conversion_params_init(gn_conversion_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->max_workspace_size_bytes = DEFAULT_WORKSPACE;
    p->precision_mode = GN_PRECISION_FP32;
    p->minimum_segment_size = 3;
    p->maximum_cached_engines = 1;
    p->use_calibration = 1;
    p->allow_build_at_runtime = 1;
}

static const char *const k_precisions[] = {"FP32", "FP16", "INT8"};

static void copy_err(char *err, size_t errlen, const gn__err *e)
{
    if (err && errlen) snprintf(err, errlen, "%s", e->msg);
}

static gn_status validate(const gn_conversion_params *p, gn__err *e)
{
    if (p->max_workspace_size_bytes <= 0)
        return gn__fail(e, GN_ERR_ARG, "max_workspace_size_bytes must be positive, got %" PRId64,
                        p->max_workspace_size_bytes);
    if (p->precision_mode < 0 || p->precision_mode > GN_PRECISION_INT8)
        return gn__fail(e, GN_ERR_ARG, "precision_mode %d is not one of FP32, FP16, INT8", p->precision_mode);
    if (p->minimum_segment_size <= 0 && p->minimum_segment_size != -1)
        return gn__fail(e, GN_ERR_ARG, "minimum_segment_size should be positive or -1 (to disable main graph "
                                       "conversion), got %d", p->minimum_segment_size);
    if (p->maximum_cached_engines < 1)
        return gn__fail(e, GN_ERR_ARG, "maximum_cached_engines must be >= 1, got %d", p->maximum_cached_engines);
    return GN_OK;
}

gn_status gn_conversion_params_validate(const gn_conversion_params *p, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    gn_status s = p ? validate(p, &e) : gn__fail(&e, GN_ERR_ARG, "conversion params are NULL");
    copy_err(err, errlen, &e);
    return s;
}

/* ---- the dictionary text ----------------------------------------------------------- */
enum { F_WORKSPACE, F_PRECISION, F_MIN_SEGMENT, F_MAX_ENGINES, F_CALIBRATION, F_BUILD, F_COUNT };
static const char *const k_fields[F_COUNT] = {"max_workspace_size_bytes", "precision_mode",
                                              "minimum_segment_size",     "maximum_cached_engines",
                                              "use_calibration",          "allow_build_at_runtime"};

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static char upper(char c) { return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c; }

static bool ieq(const char *s, size_t n, const char *w)
{
    if (strlen(w) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (upper(s[i]) != upper(w[i])) return false;
    return true;
}

/* A quoted string or a bare word; *q tells whether it was quoted. */
static bool token(const char *s, size_t n, size_t *i, const char **t, size_t *tl, bool *q)
{
    while (*i < n && is_space(s[*i])) (*i)++;
    if (*i >= n) return false;
    if (s[*i] == '\'' || s[*i] == '"') {
        char c = s[(*i)++];
        size_t b = *i;
        while (*i < n && s[*i] != c) (*i)++;
        if (*i >= n) return false;
        *t = s + b;
        *tl = *i - b;
        (*i)++;
        *q = true;
        return true;
    }
    size_t b = *i;
    while (*i < n && !is_space(s[*i]) && s[*i] != ':' && s[*i] != ',' && s[*i] != '}') (*i)++;
    *t = s + b;
    *tl = *i - b;
    *q = false;
    return *tl > 0;
}

static gn_status set_field(gn_conversion_params *p, int f, const char *v, size_t vn, bool quoted, gn__err *e)
{
    gn_conversion_params d;
    gn_conversion_params_init(&d);
    bool none = !quoted && ieq(v, vn, "None");
    if (f == F_PRECISION) {
        if (none) {
            p->precision_mode = d.precision_mode;
            return GN_OK;
        }
        for (int k = 0; k < 3; k++)
            if (ieq(v, vn, k_precisions[k])) {
                p->precision_mode = k;
                return GN_OK;
            }
        return gn__fail(e, GN_ERR_ARG, "precision_mode '%.*s' is not one of FP32, FP16, INT8 (either case)", (int)vn, v);
    }
    if (f == F_CALIBRATION || f == F_BUILD) {
        int32_t *dst = f == F_CALIBRATION ? &p->use_calibration : &p->allow_build_at_runtime;
        if (none) *dst = f == F_CALIBRATION ? d.use_calibration : d.allow_build_at_runtime;
        else if (!quoted && ieq(v, vn, "True")) *dst = 1;
        else if (!quoted && ieq(v, vn, "False")) *dst = 0;
        else return gn__fail(e, GN_ERR_ARG, "%s: '%.*s' is not True, False or None", k_fields[f], (int)vn, v);
        return GN_OK;
    }
    if (none) {
        if (f == F_WORKSPACE) p->max_workspace_size_bytes = d.max_workspace_size_bytes;
        if (f == F_MIN_SEGMENT) p->minimum_segment_size = d.minimum_segment_size;
        if (f == F_MAX_ENGINES) p->maximum_cached_engines = d.maximum_cached_engines;
        return GN_OK;
    }
    char buf[32];
    if (quoted || vn == 0 || vn >= sizeof buf) return gn__fail(e, GN_ERR_ARG, "%s: '%.*s' is not an integer", k_fields[f], (int)vn, v);
    memcpy(buf, v, vn);
    buf[vn] = '\0';
    char *end = NULL;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (*end || errno) return gn__fail(e, GN_ERR_ARG, "%s: '%s' is not an integer", k_fields[f], buf);
    if (f == F_WORKSPACE) {
        p->max_workspace_size_bytes = x;
    } else {
        if (x < INT32_MIN || x > INT32_MAX) return gn__fail(e, GN_ERR_ARG, "%s: %s is out of range", k_fields[f], buf);
        if (f == F_MIN_SEGMENT) p->minimum_segment_size = (int32_t)x;
        else p->maximum_cached_engines = (int32_t)x;
    }
    return GN_OK;
}

static gn_status parse(gn_conversion_params *p, const char *s, gn__err *e)
{
    size_t n = strlen(s), i = 0;
    while (i < n && is_space(s[i])) i++;
    if (i >= n || s[i] != '{') return gn__fail(e, GN_ERR_ARG, "conversion params: expected '{' at offset %zu", i);
    i++;
    for (;;) {
        while (i < n && is_space(s[i])) i++;
        if (i < n && s[i] == '}') {
            i++;
            break;
        }
        const char *k, *v;
        size_t kn, vn;
        bool kq, vq;
        if (!token(s, n, &i, &k, &kn, &kq))
            return gn__fail(e, GN_ERR_ARG, "conversion params: expected a key at offset %zu", i);
        int f = -1;
        for (int j = 0; j < F_COUNT; j++)
            if (strlen(k_fields[j]) == kn && !memcmp(k_fields[j], k, kn)) f = j;
        if (f < 0)
            return gn__fail(e, GN_ERR_ARG,
                            "unknown conversion parameter '%.*s' (valid: max_workspace_size_bytes, precision_mode, "
                            "minimum_segment_size, maximum_cached_engines, use_calibration, allow_build_at_runtime)",
                            (int)kn, k);
        while (i < n && is_space(s[i])) i++;
        if (i >= n || s[i] != ':') return gn__fail(e, GN_ERR_ARG, "conversion params: expected ':' at offset %zu", i);
        i++;
        if (!token(s, n, &i, &v, &vn, &vq))
            return gn__fail(e, GN_ERR_ARG, "conversion params: expected a value for '%s'", k_fields[f]);
        GN_TRY(set_field(p, f, v, vn, vq, e));
        while (i < n && is_space(s[i])) i++;
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == '}') {
            i++;
            break;
        }
        return gn__fail(e, GN_ERR_ARG, "conversion params: expected ',' or '}' at offset %zu", i);
    }
    while (i < n && is_space(s[i])) i++;
    if (i < n) return gn__fail(e, GN_ERR_ARG, "conversion params: unexpected text at offset %zu", i);
    return GN_OK;
}

gn_status gn_conversion_params_parse(gn_conversion_params *p, const char *text, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    gn_status s = GN_OK;
    if (!p || !text) {
        s = gn__fail(&e, GN_ERR_ARG, "conversion params or text is NULL");
    } else {
        gn_conversion_params tmp = *p;
        s = parse(&tmp, text, &e);
        if (s == GN_OK) s = validate(&tmp, &e);
        if (s == GN_OK) *p = tmp;
    }
    copy_err(err, errlen, &e);
    return s;
}

gn_status gn_conversion_params_to_string(const gn_conversion_params *p, char **text)
{
    if (!p || !text) return GN_ERR_ARG;
    gn__buf b;
    gn__buf_init(&b);
    const char *prec = p->precision_mode >= 0 && p->precision_mode <= 2 ? k_precisions[p->precision_mode] : "?";
    gn__buf_printf(&b,
                   "{'max_workspace_size_bytes': %" PRId64 ", 'precision_mode': '%s', 'minimum_segment_size': %d, "
                   "'maximum_cached_engines': %d, 'use_calibration': %s, 'allow_build_at_runtime': %s}",
                   p->max_workspace_size_bytes, prec, p->minimum_segment_size, p->maximum_cached_engines,
                   p->use_calibration ? "True" : "False", p->allow_build_at_runtime ? "True" : "False");
    *text = gn__buf_take(&b);
    if (!*text) {
        gn__buf_free(&b);
        return GN_ERR_NOMEM;
    }
    return GN_OK;
}
