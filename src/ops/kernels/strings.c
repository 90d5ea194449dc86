/* String ops of feature-column and text-preprocessing graphs: AsString,
 * StringToHashBucket, StringToHashBucketStrong, StringLower, StringUpper,
 * StringStrip, StringSplitV2. After TensorFlow's
 * tensorflow/core/kernels/{as_string_op, string_to_hash_bucket_op,
 * string_lower_op, string_upper_op, string_strip_op, string_split_op}.cc,
 * tsl/platform/hash.cc (Hash64), highwayhash's SipHash-2-4 (StrongKeyedHash)
 * and ICU's case mapping (strings_case.inc, generated from TensorFlow). */
#include "ops/kernels/math_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "opdef/registry.h"
#include "ops/kernels/array_impl.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_HALF TENSORFLOW__DATA_TYPE__DT_HALF
#define DT_BFLOAT16 TENSORFLOW__DATA_TYPE__DT_BFLOAT16
#define DT_COMPLEX64 TENSORFLOW__DATA_TYPE__DT_COMPLEX64
#define DT_COMPLEX128 TENSORFLOW__DATA_TYPE__DT_COMPLEX128
#define DT_INT8 TENSORFLOW__DATA_TYPE__DT_INT8
#define DT_INT16 TENSORFLOW__DATA_TYPE__DT_INT16
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_UINT8 TENSORFLOW__DATA_TYPE__DT_UINT8
#define DT_UINT16 TENSORFLOW__DATA_TYPE__DT_UINT16
#define DT_UINT32 TENSORFLOW__DATA_TYPE__DT_UINT32
#define DT_UINT64 TENSORFLOW__DATA_TYPE__DT_UINT64
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

static gn_status need(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

static gn_status need_string(gn__kctx *c, uint32_t i)
{
    if (c->in[i].dtype != DT_STRING)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u must be string, got %s", i, gn__dtype_name(c->in[i].dtype));
    return GN_OK;
}

/* ---- AsString ------------------------------------------------------------------------------- */
/* TensorFlow formats each element with absl::StrFormat("%<fill>*.*<c>", width,
 * precision, x) where c is u / d (integers), g / e / f (floating and complex:
 * shortest / scientific / neither), s (strings); fill is one of " +-0#" or
 * empty; width < 0 counts as 0 and precision < 0 as unset. Half and bfloat16
 * are formatted as float, complex as "(re,im)", bool as true / false; a
 * string input without a width is forwarded. */
enum { AS_INT, AS_UINT, AS_FLOAT, AS_COMPLEX, AS_BOOL, AS_STRING };

typedef struct as_fmt {
    int kind;
    int width, precision;
    char fill;          /* 0: none */
    char fmt[12];       /* "%<fill>*.*ll<c>" / "%<fill>*.*<c>" */
} as_fmt;

static double as_real(const gn__tensor *x, int64_t i, int part)
{
    switch (x->dtype) {
    case DT_HALF: return gn__km_h2f(((const uint16_t *)x->data)[i]);
    case DT_BFLOAT16: return gn__km_bitsf((uint32_t)((const uint16_t *)x->data)[i] << 16);
    case DT_FLOAT: return ((const float *)x->data)[i];
    case DT_DOUBLE: return ((const double *)x->data)[i];
    case DT_COMPLEX64: return ((const float *)x->data)[2 * i + part];
    default: return ((const double *)x->data)[2 * i + part];   /* DT_COMPLEX128 */
    }
}

static long long as_int(const gn__tensor *x, int64_t i)
{
    switch (x->dtype) {
    case DT_INT8: return ((const int8_t *)x->data)[i];
    case DT_INT16: return ((const int16_t *)x->data)[i];
    case DT_INT32: return ((const int32_t *)x->data)[i];
    default: return ((const int64_t *)x->data)[i];
    }
}

static unsigned long long as_uint(const gn__tensor *x, int64_t i)
{
    switch (x->dtype) {
    case DT_UINT8: return ((const uint8_t *)x->data)[i];
    case DT_UINT16: return ((const uint16_t *)x->data)[i];
    case DT_UINT32: return ((const uint32_t *)x->data)[i];
    default: return ((const uint64_t *)x->data)[i];
    }
}

/* Writes element i into dst (room for cap bytes and a NUL; dst NULL with cap
 * 0 only measures) and returns its length, or -1 when it cannot be written. */
static long long as_one(const as_fmt *f, const gn__tensor *x, int64_t i, char *dst, size_t cap)
{
    switch (f->kind) {
    case AS_BOOL: {
        const char *s = ((const uint8_t *)x->data)[i] ? "true" : "false";
        size_t n = strlen(s);
        if (dst) memcpy(dst, s, n);
        return (long long)n;
    }
    case AS_STRING: {
        /* absl pads strings with spaces (on the right under '-'); the precision truncates */
        const gn__tstring *s = &((const gn__tstring *)x->data)[i];
        size_t len = s->len;
        if (f->precision >= 0 && (size_t)f->precision < len) len = (size_t)f->precision;
        size_t pad = (size_t)f->width > len ? (size_t)f->width - len : 0;
        if (dst) {
            bool left = f->fill == '-';
            memset(dst + (left ? len : 0), ' ', pad);
            if (len) memcpy(dst + (left ? 0 : pad), s->ptr, len);
        }
        return (long long)(len + pad);
    }
    case AS_INT: return snprintf(dst, dst ? cap + 1 : 0, f->fmt, f->width, f->precision, as_int(x, i));
    case AS_UINT: return snprintf(dst, dst ? cap + 1 : 0, f->fmt, f->width, f->precision, as_uint(x, i));
    case AS_FLOAT: return snprintf(dst, dst ? cap + 1 : 0, f->fmt, f->width, f->precision, as_real(x, i, 0));
    default: {   /* AS_COMPLEX */
        int a = snprintf(NULL, 0, f->fmt, f->width, f->precision, as_real(x, i, 0));
        int b = snprintf(NULL, 0, f->fmt, f->width, f->precision, as_real(x, i, 1));
        if (a < 0 || b < 0) return -1;
        if (dst) {
            dst[0] = '(';
            snprintf(dst + 1, (size_t)a + 1, f->fmt, f->width, f->precision, as_real(x, i, 0));
            dst[1 + a] = ',';
            snprintf(dst + 2 + a, (size_t)b + 1, f->fmt, f->width, f->precision, as_real(x, i, 1));
            dst[2 + a + b] = ')';
        }
        return (long long)a + b + 3;
    }
    }
}

gn_status gn__str_k_as_string(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    const gn__tensor *x = &c->in[0];
    const char *dname = gn__dtype_name(x->dtype);
    int64_t precision = -1, width = -1;
    bool scientific = false, shortest = false;
    const char *fill = "";
    size_t fill_len = 0;
    (void)gn__attr_get_int(c->g, c->node, "precision", &precision);
    (void)gn__attr_get_int(c->g, c->node, "width", &width);
    (void)gn__attr_get_bool(c->g, c->node, "scientific", &scientific);
    (void)gn__attr_get_bool(c->g, c->node, "shortest", &shortest);
    (void)gn__attr_get_string(c->g, c->node, "fill", &fill, &fill_len);
    as_fmt f = {0};
    switch (x->dtype) {
    case DT_INT8: case DT_INT16: case DT_INT32: case DT_INT64: f.kind = AS_INT; break;
    case DT_UINT8: case DT_UINT16: case DT_UINT32: case DT_UINT64: f.kind = AS_UINT; break;
    case DT_HALF: case DT_BFLOAT16: case DT_FLOAT: case DT_DOUBLE: f.kind = AS_FLOAT; break;
    case DT_COMPLEX64: case DT_COMPLEX128: f.kind = AS_COMPLEX; break;
    case DT_BOOL: f.kind = AS_BOOL; break;
    case DT_STRING: f.kind = AS_STRING; break;
    default: f.kind = -1;
    }
    if (f.kind != AS_STRING && f.kind != AS_FLOAT && f.kind != AS_COMPLEX) {
        if (scientific || shortest)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "scientific and shortest format not supported for datatype %s", dname);
        if (precision >= 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "precision not supported for datatype %s", dname);
    }
    if (fill_len > 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "Fill string must be one or fewer characters");
    if (scientific && shortest)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Cannot select both scientific and shortest notation");
    if (fill_len && !strchr(" +-0#", fill[0]))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Fill argument not supported: \"%.*s\"", (int)fill_len, fill);
    if (f.kind < 0) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "Type not supported: %s", dname);
    if (width > INT32_MAX || precision > INT32_MAX)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'width' / 'precision' out of range");
    f.width = width < 0 ? 0 : (int)width;
    f.precision = precision < 0 ? -1 : (int)precision;
    f.fill = fill_len ? fill[0] : 0;
    if (f.kind == AS_STRING && f.width == 0) return gn__kctx_forward(c, 0, 0);
    const char *conv = f.kind == AS_INT ? "lld" : f.kind == AS_UINT ? "llu" : shortest ? "g" : scientific ? "e" : "f";
    snprintf(f.fmt, sizeof f.fmt, "%%%s*.*%s", f.fill ? (char[2]){f.fill, 0} : "", conv);

    int64_t n = gn__tensor_numel(x);
    size_t bytes = 0;
    for (int64_t i = 0; i < n; i++) {
        long long len = as_one(&f, x, i, NULL, 0);
        if (len < 0) return gn__kctx_fail(c, GN_ERR_LIMIT, "element %lld does not fit a string", (long long)i);
        bytes += (size_t)len;
    }
    gn__tensor *t;
    char *storage;
    /* one byte more: snprintf ends what it writes with a NUL */
    GN_TRY(gn__kctx_output_strings(c, 0, x->rank, x->dims, bytes + 1, &t, &storage));
    gn__tstring *o = t->data;
    for (int64_t i = 0; i < n; i++) {
        size_t len = (size_t)as_one(&f, x, i, NULL, 0);
        as_one(&f, x, i, storage, len);
        o[i] = (gn__tstring){storage, len};
        storage += len;
    }
    return GN_OK;
}

/* ---- StringToHashBucket (Hash64), StringToHashBucketStrong (SipHash-2-4) ---------------------- */
static uint64_t load64_le(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

/* TensorFlow's Hash64(s) (tsl/platform/hash.cc, a MurmurHash2 variant) with
 * the seed of its one-argument form, 0xDECAFCAFFE. */
static uint64_t tf_hash64(const char *data, size_t n)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const int r = 47;
    const unsigned char *p = (const unsigned char *)data;
    uint64_t h = 0xDECAFCAFFEull ^ (n * m);
    while (n >= 8) {
        uint64_t k = load64_le(p);
        p += 8;
        n -= 8;
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    if (n) {
        for (size_t j = n; j-- > 0;) h ^= (uint64_t)p[j] << (8 * j);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                                       \
    do {                                                                                                               \
        v0 += v1; v1 = ROTL64(v1, 13); v1 ^= v0; v0 = ROTL64(v0, 32);                                                  \
        v2 += v3; v3 = ROTL64(v3, 16); v3 ^= v2;                                                                       \
        v0 += v3; v3 = ROTL64(v3, 21); v3 ^= v0;                                                                       \
        v2 += v1; v1 = ROTL64(v1, 17); v1 ^= v2; v2 = ROTL64(v2, 32);                                                  \
    } while (0)

/* SipHash-2-4 of data under the key (k0, k1), the two words of the 16-byte key. */
static uint64_t siphash24(uint64_t k0, uint64_t k1, const char *data, size_t n)
{
    uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
    uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    const unsigned char *p = (const unsigned char *)data;
    size_t left = n;
    for (; left >= 8; left -= 8, p += 8) {
        uint64_t m = load64_le(p);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t j = 0; j < left; j++) b |= (uint64_t)p[j] << (8 * j);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static gn_status hash_bucket(gn__kctx *c, bool strong)
{
    GN_TRY(need(c, 1));
    GN_TRY(need_string(c, 0));
    const gn__tensor *in = &c->in[0];
    int64_t nb = 0;
    if (!gn__attr_get_int(c->g, c->node, "num_buckets", &nb) || nb < 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'num_buckets' must be >= 1");
    uint64_t key[2] = {0, 0};
    if (strong) {
        const Tensorflow__AttrValue *v = gn__node_attr(c->g, c->node, "key");
        if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !v->list || v->list->n_i != 2)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Key must have 2 elements");
        key[0] = (uint64_t)v->list->i[0];
        key[1] = (uint64_t)v->list->i[1];
    }
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_INT64, in->rank, in->dims, &o));
    const gn__tstring *s = in->data;
    int64_t *y = o->data;
    for (int64_t i = 0, n = gn__tensor_numel(in); i < n; i++) {
        uint64_t h = strong ? siphash24(key[0], key[1], s[i].ptr, s[i].len) : tf_hash64(s[i].ptr, s[i].len);
        y[i] = (int64_t)(h % (uint64_t)nb);
    }
    return GN_OK;
}

gn_status gn__str_k_string_to_hash_bucket(gn__kctx *c) { return hash_bucket(c, false); }
gn_status gn__str_k_string_to_hash_bucket_strong(gn__kctx *c) { return hash_bucket(c, true); }

/* ---- StringLower, StringUpper, StringStrip ---------------------------------------------------- */
/* absl::ascii_isspace: space, \t, \n, \v, \f, \r. */
static bool ascii_space(unsigned char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r'); }

/* ---- Unicode case mapping (encoding 'utf-8') ---------------------------------------------------- */
/* TensorFlow hands the bytes to ICU as a C string in UTF-8: the text ends at
 * the first NUL, an ill-formed sequence becomes one U+FFFD per maximal
 * subpart (Unicode's recommended practice), and ICU's full case mapping of
 * the root locale applies: tables generated from TensorFlow itself by
 * tools/gen_unicode_case.py, with Final_Sigma (U+03A3 lowers to U+03C2 after
 * a cased letter and not before one, case-ignorable code points skipped). */
typedef struct gn__case_run {
    uint32_t start, len, step;
    int32_t delta;
} gn__case_run;
typedef struct gn__case_special {
    uint32_t cp;
    const char *lower, *upper;
} gn__case_special;
typedef struct gn__case_kind {
    uint32_t start;
    uint8_t kind;   /* 1 cased, 2 case-ignorable */
} gn__case_kind;
#include "ops/kernels/strings_case.inc"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The code point at s[*i] (n bytes), *i advanced past it; U+FFFD for an
 * ill-formed sequence, *i past its maximal subpart (at least one byte). */
static uint32_t utf8_next(const unsigned char *s, size_t n, size_t *i)
{
    unsigned char b = s[*i];
    if (b < 0x80) {
        (*i)++;
        return b;
    }
    size_t len;
    uint32_t cp;
    unsigned char lo = 0x80, hi = 0xbf;   /* the second byte's range */
    if (b >= 0xc2 && b <= 0xdf) len = 2, cp = b & 0x1fu;
    else if (b >= 0xe0 && b <= 0xef) len = 3, cp = b & 0x0fu, lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
    else if (b >= 0xf0 && b <= 0xf4) len = 4, cp = b & 0x07u, lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
    else {
        (*i)++;
        return 0xfffd;
    }
    for (size_t k = 1; k < len; k++) {
        unsigned char t = *i + k < n ? s[*i + k] : 0;
        if (*i + k >= n || t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xbf)) {
            *i += k;
            return 0xfffd;
        }
        cp = (cp << 6) | (t & 0x3fu);
    }
    *i += len;
    return cp;
}

static size_t utf8_put(uint32_t cp, char *o)
{
    if (cp < 0x80) return o[0] = (char)cp, 1;
    if (cp < 0x800) return o[0] = (char)(0xc0 | (cp >> 6)), o[1] = (char)(0x80 | (cp & 0x3f)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xe0 | (cp >> 12)), o[1] = (char)(0x80 | ((cp >> 6) & 0x3f)),
               o[2] = (char)(0x80 | (cp & 0x3f)), 3;
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static int case_kind(uint32_t cp)
{
    size_t lo = 0, hi = N_OF(GN__CASE_KIND);   /* the last run starting at or before cp */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (GN__CASE_KIND[mid].start <= cp) lo = mid;
        else hi = mid;
    }
    return GN__CASE_KIND[lo].kind;
}

static uint32_t case_run(const gn__case_run *r, size_t n, uint32_t cp)
{
    size_t lo = 0, hi = n;   /* the last run starting at or before cp */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].start <= cp) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return cp;
    const gn__case_run *x = &r[lo - 1];
    uint32_t off = cp - x->start;
    return off % x->step == 0 && off / x->step < x->len ? (uint32_t)((int64_t)cp + x->delta) : cp;
}

/* The case of cps[k] (of n) as UTF-8 into o (room for 16 bytes); its length. */
static size_t case_map(const uint32_t *cps, size_t n, size_t k, bool upper, char *o)
{
    uint32_t cp = cps[k];
    if (!upper && cp == 0x3a3) {
        bool before = false, after = false;
        for (size_t j = k; j-- > 0;) {
            int t = case_kind(cps[j]);
            if (t == 2) continue;
            before = t == 1;
            break;
        }
        for (size_t j = k + 1; j < n; j++) {
            int t = case_kind(cps[j]);
            if (t == 2) continue;
            after = t == 1;
            break;
        }
        return utf8_put(before && !after ? 0x3c2 : 0x3c3, o);
    }
    size_t lo = 0, hi = N_OF(GN__CASE_SPECIAL);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (GN__CASE_SPECIAL[mid].cp < cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo < N_OF(GN__CASE_SPECIAL) && GN__CASE_SPECIAL[lo].cp == cp) {
        const char *s = upper ? GN__CASE_SPECIAL[lo].upper : GN__CASE_SPECIAL[lo].lower;
        size_t len = strlen(s);
        memcpy(o, s, len);
        return len;
    }
    return utf8_put(upper ? case_run(GN__CASE_UPPER, N_OF(GN__CASE_UPPER), cp)
                          : case_run(GN__CASE_LOWER, N_OF(GN__CASE_LOWER), cp), o);
}

/* s mapped (up to its first NUL) into dst (NULL: measured only); the length.
 * cps: room for len code points. */
static size_t case_utf8(const gn__tstring *s, bool upper, uint32_t *cps, char *dst)
{
    const unsigned char *p = (const unsigned char *)s->ptr;
    const char *nul = s->len ? memchr(s->ptr, 0, s->len) : NULL;
    size_t len = nul ? (size_t)(nul - s->ptr) : s->len, n = 0, out = 0;
    for (size_t i = 0; i < len;) cps[n++] = utf8_next(p, len, &i);
    char buf[16];
    for (size_t k = 0; k < n; k++) {
        size_t m = case_map(cps, n, k, upper, buf);
        if (dst) memcpy(dst + out, buf, m);
        out += m;
    }
    return out;
}

/* Case mapping: encoding "" maps ASCII letters only (absl::AsciiStrToLower /
 * Upper), other bytes kept; "utf-8" is the Unicode mapping above. */
static gn_status change_case(gn__kctx *c, bool upper)
{
    GN_TRY(need(c, 1));
    GN_TRY(need_string(c, 0));
    const gn__tensor *x = &c->in[0];
    const char *enc = "";
    size_t enc_len = 0;
    (void)gn__attr_get_string(c->g, c->node, "encoding", &enc, &enc_len);
    bool utf8 = enc_len == 5 && !memcmp(enc, "utf-8", 5);
    if (enc_len && !utf8)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "only utf-8 or '' (no encoding) is supported, received %.*s", (int)enc_len,
                             enc);
    int64_t n = gn__tensor_numel(x);
    const gn__tstring *s = x->data;
    size_t bytes = 0, longest = 0;
    for (int64_t i = 0; i < n; i++) {
        bytes += s[i].len;
        if (s[i].len > longest) longest = s[i].len;
    }
    uint32_t *cps = NULL;
    if (utf8) {
        cps = malloc((longest ? longest : 1) * sizeof *cps);
        if (!cps) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory for %zu code points", longest);
        bytes = 0;
        for (int64_t i = 0; i < n; i++) bytes += case_utf8(&s[i], upper, cps, NULL);
    }
    gn__tensor *t;
    char *storage;
    gn_status st = gn__kctx_output_strings(c, 0, x->rank, x->dims, bytes, &t, &storage);
    if (st != GN_OK) {
        free(cps);
        return st;
    }
    gn__tstring *o = t->data;
    for (int64_t i = 0; i < n; i++) {
        size_t len = s[i].len;
        if (utf8) {
            len = case_utf8(&s[i], upper, cps, storage);
        } else {
            for (size_t k = 0; k < len; k++) {
                unsigned char ch = (unsigned char)s[i].ptr[k];
                if (upper && ch >= 'a' && ch <= 'z') ch = (unsigned char)(ch - 'a' + 'A');
                else if (!upper && ch >= 'A' && ch <= 'Z') ch = (unsigned char)(ch - 'A' + 'a');
                storage[k] = (char)ch;
            }
        }
        o[i] = (gn__tstring){storage, len};
        storage += len;
    }
    free(cps);
    return GN_OK;
}

gn_status gn__str_k_string_lower(gn__kctx *c) { return change_case(c, false); }
gn_status gn__str_k_string_upper(gn__kctx *c) { return change_case(c, true); }

gn_status gn__str_k_string_strip(gn__kctx *c)
{
    GN_TRY(need(c, 1));
    GN_TRY(need_string(c, 0));
    const gn__tensor *x = &c->in[0];
    int64_t n = gn__tensor_numel(x);
    const gn__tstring *s = x->data;
    size_t bytes = 0;
    for (int64_t i = 0; i < n; i++) bytes += s[i].len;
    gn__tensor *t;
    char *storage;
    GN_TRY(gn__kctx_output_strings(c, 0, x->rank, x->dims, bytes, &t, &storage));
    gn__tstring *o = t->data;
    for (int64_t i = 0; i < n; i++) {
        size_t a = 0, b = s[i].len;
        while (a < b && ascii_space((unsigned char)s[i].ptr[a])) a++;
        while (b > a && ascii_space((unsigned char)s[i].ptr[b - 1])) b--;
        if (b > a) memcpy(storage, s[i].ptr + a, b - a);
        o[i] = (gn__tstring){storage, b - a};
        storage += b - a;
    }
    return GN_OK;
}

/* ---- StringSplitV2(input [N], sep []) -> indices [n,2], values [n], shape [2] ------------------- */
/* Python's str.split: with a separator, every occurrence splits (empty tokens
 * kept, "" gives [""]); with an empty one, runs of ASCII whitespace split and
 * leading / trailing whitespace gives no token. maxsplit > 0 stops after that
 * many splits, the rest (after the whitespace that follows the last token,
 * when sep is empty) being the last token; maxsplit 0 gives the whole string. */
typedef struct split_tok {
    int64_t row, col;
    const char *ptr;
    size_t len;
} split_tok;

typedef struct split_out {
    split_tok *v;
    size_t n, cap;
} split_out;

static bool split_push(split_out *o, int64_t row, int64_t col, const char *p, size_t len)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 16;
        split_tok *v = realloc(o->v, cap * sizeof *v);
        if (!v) return false;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = (split_tok){row, col, p, len};
    return true;
}

/* Appends the tokens of s; returns its token count, or -1 on OOM. */
static int64_t split_one(split_out *o, int64_t row, const char *s, size_t len, const char *sep, size_t seplen,
                         int64_t maxsplit)
{
    int64_t col = 0;
    if (maxsplit == 0) return split_push(o, row, col, s, len) ? 1 : -1;
    size_t pos = 0;
    if (!seplen) {
        while (pos < len && ascii_space((unsigned char)s[pos])) pos++;
        while (pos < len) {
            size_t end = pos;
            while (end < len && !ascii_space((unsigned char)s[end])) end++;
            if (!split_push(o, row, col++, s + pos, end - pos)) return -1;
            pos = end;
            while (pos < len && ascii_space((unsigned char)s[pos])) pos++;
            if (maxsplit > 0 && col == maxsplit) return split_push(o, row, col++, s + pos, len - pos) ? col : -1;
        }
        return col;
    }
    for (;;) {
        size_t hit = len;
        for (size_t k = pos; k + seplen <= len; k++)
            if (!memcmp(s + k, sep, seplen)) {
                hit = k;
                break;
            }
        if (hit == len) break;
        if (!split_push(o, row, col++, s + pos, hit - pos)) return -1;
        pos = hit + seplen;
        if (maxsplit > 0 && col == maxsplit) break;
    }
    return split_push(o, row, col++, s + pos, len - pos) ? col : -1;
}

gn_status gn__str_k_string_split_v2(gn__kctx *c)
{
    GN_TRY(need(c, 2));
    GN_TRY(need_string(c, 0));
    GN_TRY(need_string(c, 1));
    const gn__tensor *x = &c->in[0], *sep = &c->in[1];
    char sb[GN__AK_SHAPE_STR];
    if (x->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be a vector, got shape: %s", gn__ak_tshape(sb, x));
    if (sep->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sep must be a scalar, got shape: %s", gn__ak_tshape(sb, sep));
    int64_t maxsplit = -1;
    (void)gn__attr_get_int(c->g, c->node, "maxsplit", &maxsplit);
    /* TensorFlow keeps the attr in an int */
    maxsplit = (int64_t)(int32_t)maxsplit;
    const gn__tstring *s = x->data, *sp = sep->data;
    split_out o = {0};
    int64_t batch = x->dims[0], width = 0;
    for (int64_t i = 0; i < batch; i++) {
        int64_t k = split_one(&o, i, s[i].ptr, s[i].len, sp->ptr, sp->len, maxsplit);
        if (k < 0) {
            free(o.v);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory splitting %lld strings", (long long)batch);
        }
        if (k > width) width = k;
    }
    size_t bytes = 0;
    for (size_t k = 0; k < o.n; k++) bytes += o.v[k].len;
    int64_t dims_i[2] = {(int64_t)o.n, 2}, dims_v[1] = {(int64_t)o.n}, dims_s[1] = {2};
    gn__tensor *ti, *tv, *ts;
    char *storage;
    gn_status st = gn__kctx_output(c, 0, DT_INT64, 2, dims_i, &ti);
    if (st == GN_OK) st = gn__kctx_output_strings(c, 1, 1, dims_v, bytes, &tv, &storage);
    if (st == GN_OK) st = gn__kctx_output(c, 2, DT_INT64, 1, dims_s, &ts);
    if (st == GN_OK) {
        int64_t *ix = ti->data, *sh = ts->data;
        gn__tstring *v = tv->data;
        for (size_t k = 0; k < o.n; k++) {
            ix[2 * k] = o.v[k].row;
            ix[2 * k + 1] = o.v[k].col;
            if (o.v[k].len) memcpy(storage, o.v[k].ptr, o.v[k].len);
            v[k] = (gn__tstring){storage, o.v[k].len};
            storage += o.v[k].len;
        }
        sh[0] = batch;
        sh[1] = width;
    }
    free(o.v);
    return st;
}

/* ---- UnsortedSegmentJoin (unsorted_segment_join_op.cc) -------------------------------------------- */
/* output[s, ...] = the strings of inputs whose segment_ids entry is s, in
 * input order, joined with `separator` (empty for a segment no id names);
 * segment_ids covers a prefix of inputs' dimensions. Ids outside
 * [0, num_segments) are an error, as in TensorFlow. */
static int64_t seg_id_at(const gn__tensor *t, int64_t i)
{
    return t->dtype == DT_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

gn_status gn__str_k_unsorted_segment_join(gn__kctx *c)
{
    GN_TRY(need(c, 3));
    GN_TRY(need_string(c, 0));
    const gn__tensor *x = &c->in[0], *ids = &c->in[1], *ns = &c->in[2];
    if ((ids->dtype != DT_INT32 && ids->dtype != DT_INT64) || (ns->dtype != DT_INT32 && ns->dtype != DT_INT64) ||
        gn__tensor_numel(ns) != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids must be int32 or int64, num_segments a scalar of either");
    if (ids->rank > x->rank) return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids must not have more dimensions than inputs");
    for (int32_t d = 0; d < ids->rank; d++)
        if (ids->dims[d] != x->dims[d])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "segment_ids.shape must be a prefix of inputs.shape");
    int64_t segs = seg_id_at(ns, 0);
    if (segs < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Number of segments cannot be negative.");
    const char *sep = "";
    size_t sep_len = 0;
    (void)gn__attr_get_string(c->g, c->node, "separator", &sep, &sep_len);
    int64_t n = gn__tensor_numel(ids), inner = 1;
    for (int32_t d = ids->rank; d < x->rank; d++) inner *= x->dims[d];
    int64_t slots;
    if (__builtin_mul_overflow(segs, inner, &slots)) return gn__kctx_fail(c, GN_ERR_GRAPH, "the output shape overflows");
    const gn__tstring *s = x->data;
    /* per output string: its pieces and its bytes */
    int64_t *pieces = calloc((size_t)(slots > 0 ? slots : 1), sizeof *pieces);
    size_t *bytes = calloc((size_t)(slots > 0 ? slots : 1), sizeof *bytes);
    if (!pieces || !bytes) {
        free(pieces);
        free(bytes);
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    }
    size_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t g = seg_id_at(ids, i);
        if (g < 0 || g >= segs) {
            free(pieces);
            free(bytes);
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "segment_ids are not allowed to exceed num_segments or to have negative values.");
        }
        for (int64_t e = 0; e < inner; e++) {
            int64_t k = g * inner + e;
            size_t add = s[i * inner + e].len + (pieces[k] ? sep_len : 0);
            bytes[k] += add;
            total += add;
            pieces[k]++;
        }
    }
    int64_t dims[GN__MAX_DIMS];
    int32_t rank = 1 + x->rank - ids->rank;
    dims[0] = segs;
    for (int32_t d = ids->rank; d < x->rank; d++) dims[1 + d - ids->rank] = x->dims[d];
    gn__tensor *t;
    char *storage;
    gn_status st = gn__kctx_output_strings(c, 0, rank, dims, total, &t, &storage);
    if (st == GN_OK) {
        gn__tstring *o = t->data;
        for (int64_t k = 0; k < slots; k++) {   /* each output's bytes in turn; filled from empty below */
            o[k] = (gn__tstring){storage, 0};
            storage += bytes[k];
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = 0; e < inner; e++) {
                int64_t k = seg_id_at(ids, i) * inner + e;
                char *w = (char *)o[k].ptr + o[k].len;
                if (pieces[k] < 0) {   /* not the first piece: the separator before it */
                    memcpy(w, sep, sep_len);
                    w += sep_len;
                    o[k].len += sep_len;
                }
                pieces[k] = -1;
                if (s[i * inner + e].len) memcpy(w, s[i * inner + e].ptr, s[i * inner + e].len);
                o[k].len += s[i * inner + e].len;
            }
    }
    free(pieces);
    free(bytes);
    return st;
}
