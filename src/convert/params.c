/* ConversionParams: TensorFlow's six fields, their defaults, validation and
 * the dictionary text (docs/reference_formats.md §A1). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/common.h"
#include "common/pylit.h"
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

/* v: a string or a word; only words are None, True, False or integers. */
static gn_status set_field(gn_conversion_params *p, int f, const gn__py_tok *t, gn__err *e)
{
    char buf[64];
    size_t full = t->kind == GN__PY_STR && t->escapes ? gn__py_str(t, buf, sizeof buf) : 0;
    const char *v = t->escapes ? buf : t->text;
    size_t vn = t->escapes ? (full < sizeof buf ? full : sizeof buf - 1) : t->len;
    bool quoted = t->kind == GN__PY_STR;
    gn_conversion_params d;
    gn_conversion_params_init(&d);
    bool none = !quoted && gn__py_ieq(v, vn, "None");
    if (f == F_PRECISION) {
        if (none) {
            p->precision_mode = d.precision_mode;
            return GN_OK;
        }
        for (int k = 0; k < 3; k++)
            if (gn__py_ieq(v, vn, k_precisions[k])) {
                p->precision_mode = k;
                return GN_OK;
            }
        return gn__fail(e, GN_ERR_ARG, "precision_mode '%.*s' is not one of FP32, FP16, INT8 (either case)", (int)vn, v);
    }
    if (f == F_CALIBRATION || f == F_BUILD) {
        int32_t *dst = f == F_CALIBRATION ? &p->use_calibration : &p->allow_build_at_runtime;
        if (none) *dst = f == F_CALIBRATION ? d.use_calibration : d.allow_build_at_runtime;
        else if (!quoted && gn__py_ieq(v, vn, "True")) *dst = 1;
        else if (!quoted && gn__py_ieq(v, vn, "False")) *dst = 0;
        else return gn__fail(e, GN_ERR_ARG, "%s: '%.*s' is not True, False or None", k_fields[f], (int)vn, v);
        return GN_OK;
    }
    if (none) {
        if (f == F_WORKSPACE) p->max_workspace_size_bytes = d.max_workspace_size_bytes;
        if (f == F_MIN_SEGMENT) p->minimum_segment_size = d.minimum_segment_size;
        if (f == F_MAX_ENGINES) p->maximum_cached_engines = d.maximum_cached_engines;
        return GN_OK;
    }
    int64_t x = 0;
    if (quoted || gn__py_parse_int(v, vn, &x) != GN__PY_INT_OK)
        return gn__fail(e, GN_ERR_ARG, "%s: '%.*s' is not an integer", k_fields[f], (int)vn, v);
    if (f == F_WORKSPACE) {
        p->max_workspace_size_bytes = x;
    } else {
        if (x < INT32_MIN || x > INT32_MAX)
            return gn__fail(e, GN_ERR_ARG, "%s: %.*s is out of range", k_fields[f], (int)vn, v);
        if (f == F_MIN_SEGMENT) p->minimum_segment_size = (int32_t)x;
        else p->maximum_cached_engines = (int32_t)x;
    }
    return GN_OK;
}

/* {'field': value, ...}: keys in quotes or bare. Syntax errors name the
 * offset ("conversion params: at offset N: ..."). */
static gn_status parse(gn_conversion_params *p, const char *s, gn__err *e)
{
    gn__py r;
    gn__py_seq q;
    gn_status st = gn__py_init(&r, s, strlen(s), NULL, GN_ERR_ARG, e);
    if (st == GN_OK) st = gn__py_open(&r, '{', &q);
    for (bool more = true; st == GN_OK && more;) {
        gn__py_tok k, v;
        if ((st = gn__py_item(&r, &q, &more)) != GN_OK || !more) break;
        if ((st = gn__py_key(&r, &q, true, &k)) != GN_OK) break;
        char kb[256];
        size_t kn = k.kind == GN__PY_STR ? gn__py_str(&k, kb, sizeof kb)
                                         : (size_t)snprintf(kb, sizeof kb, "%.*s", (int)k.len, k.text);
        int f = -1;
        for (int j = 0; j < F_COUNT; j++)
            if (strlen(k_fields[j]) == kn && !memcmp(k_fields[j], kb, kn)) f = j;
        if (f < 0)
            return gn__fail(e, GN_ERR_ARG,
                            "unknown conversion parameter '%s' (valid: max_workspace_size_bytes, precision_mode, "
                            "minimum_segment_size, maximum_cached_engines, use_calibration, allow_build_at_runtime)",
                            kb);
        if ((st = gn__py_expect(&r, ':')) != GN_OK || (st = gn__py_scalar(&r, &v)) != GN_OK) break;
        if ((st = set_field(p, f, &v, e)) != GN_OK) return st;
    }
    if (st == GN_OK) st = gn__py_end(&r);
    if (st != GN_OK) gn__err_prefix(e, "conversion params");
    return st;
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
