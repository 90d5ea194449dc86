/* NumPy .npy files (format versions 1.0, 2.0, 3.0).
 *
 *   "\x93NUMPY" major minor  header_len (uint16 LE in 1.0; uint32 LE in 2.0/3.0)
 *   header: a Python dict literal, e.g.
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *   padded with spaces and ended by '\n'; then the raw data, C order.
 *
 * The header is read by the library's Python-literal reader (common/pylit.h:
 * strings in either quote with their escapes, True/False, tuples of integers),
 * never by pattern matching, so that a bad header gets an error naming what is
 * wrong and at which offset of the header. */
#include "io/npy.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/pylit.h"
#include "graph/tensor.h"
#include "ops/kernel.h"
#include "tensorflow/core/framework/types.pb-c.h"

/* ---- the header literal ---------------------------------------------------------------- */
/* 'shape': a tuple of non-negative integers (a Python 2 long's L allowed). */
static gn_status shape_lit(gn__py *r, int64_t *dims, int32_t *rank)
{
    if (!gn__py_is(r, '(')) return gn__py_fail(r, r->tok.pos, "'shape' must be a tuple such as (2, 3)");
    gn__py_seq q;
    GN_TRY(gn__py_open(r, '(', &q));
    *rank = 0;
    for (;;) {
        bool more;
        GN_TRY(gn__py_item(r, &q, &more));
        if (!more) return GN_OK;
        const gn__py_tok *t = &r->tok;
        size_t len = t->len;
        if (t->kind == GN__PY_WORD && len > 1 && (t->text[len - 1] == 'L' || t->text[len - 1] == 'l')) len--;
        int64_t v = -1;
        gn__py_int_result res = t->kind == GN__PY_WORD ? gn__py_parse_int(t->text, len, &v) : GN__PY_INT_BAD;
        if (res == GN__PY_INT_RANGE && t->text[0] != '-')
            return gn__py_fail(r, t->pos, "a dimension in 'shape' is too large");
        if (res != GN__PY_INT_OK || v < 0) return gn__py_fail(r, t->pos, "'shape' must hold non-negative integers");
        if (*rank >= GN_TENSOR_MAX_DIMS) {
            r->code = GN_ERR_UNSUPPORTED; /* a valid header, past what a gn_tensor holds */
            return gn__py_fail(r, t->pos, "'shape' has more than %d dimensions", GN_TENSOR_MAX_DIMS);
        }
        dims[(*rank)++] = v;
        GN_TRY(gn__py_advance(r));
    }
}

/* The header dict: 'descr' (a string, cut to dn - 1 bytes), 'fortran_order'
 * (True or False) and 'shape', each once at least. */
static gn_status parse_header(gn__py *r, char *descr, size_t dn, bool *fortran, int64_t *dims, int32_t *rank)
{
    bool have_d = false, have_f = false, have_s = false;
    gn__py_seq q;
    GN_TRY(gn__py_open(r, '{', &q));
    for (;;) {
        bool more;
        gn__py_tok k;
        GN_TRY(gn__py_entry(r, &q, false, &k, &more));
        if (!more) break;
        char key[64];
        gn__py_str(&k, key, sizeof key);
        if (strcmp(key, "descr") == 0) {
            if (r->tok.kind != GN__PY_STR) return gn__py_fail(r, r->tok.pos, "'descr' must be a string such as '<f4'");
            gn__py_str(&r->tok, descr, dn);
            have_d = true;
        } else if (strcmp(key, "fortran_order") == 0) {
            bool t = gn__py_is_word(r, "True");
            if (!t && !gn__py_is_word(r, "False"))
                return gn__py_fail(r, r->tok.pos, "'fortran_order' must be True or False");
            *fortran = t;
            have_f = true;
        } else if (strcmp(key, "shape") == 0) {
            GN_TRY(shape_lit(r, dims, rank));
            have_s = true;
            continue;
        } else {
            return gn__py_fail(r, k.pos, "unknown key '%s'", key);
        }
        GN_TRY(gn__py_advance(r));
    }
    GN_TRY(gn__py_end(r));
    const char *missing = !have_d ? "descr" : !have_f ? "fortran_order" : !have_s ? "shape" : NULL;
    if (missing) return gn__fail(r->err, r->code, "missing key '%s'", missing);
    return GN_OK;
}

/* ---- reading --------------------------------------------------------------------------------- */
gn_status gn__npy_parse(const uint8_t *data, size_t size, const char *name, gn_tensor *out, gn__err *err)
{
    memset(out, 0, sizeof *out);
    if (!name) name = "<buffer>";
    if (size < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
        return gn__fail(err, GN_ERR_PARSE, "%s: not a .npy file (no \\x93NUMPY magic)", name);
    uint8_t major = data[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)data[8] | (size_t)data[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) return gn__fail(err, GN_ERR_PARSE, "%s: header is truncated", name);
        hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 | (size_t)data[11] << 24;
        hstart = 12;
    } else {
        return gn__fail(err, GN_ERR_UNSUPPORTED, "%s: .npy format version %u.%u is not supported (1.0, 2.0, 3.0 are)",
                        name, major, data[7]);
    }
    if (hlen > size - hstart)
        return gn__fail(err, GN_ERR_PARSE, "%s: header is truncated (%zu bytes announced, %zu present)", name, hlen,
                        size - hstart);
    char descr[64] = "";
    bool fortran = false;
    int64_t dims[GN_TENSOR_MAX_DIMS];
    int32_t rank = 0;
    gn__py r;
    gn_status hs = gn__py_init(&r, (const char *)data + hstart, hlen, NULL, GN_ERR_PARSE, err);
    if (hs == GN_OK) hs = parse_header(&r, descr, sizeof descr, &fortran, dims, &rank);
    if (hs != GN_OK) {
        gn__err_prefix(err, "%s: header", name);
        return hs;
    }
    if (fortran)
        return gn__fail(err, GN_ERR_UNSUPPORTED, "%s: header: fortran_order True is not supported (C order only)",
                        name);
    /* the dtype */
    char order = descr[0];
    const char *code = descr + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        order = '=';
        code = descr;
    }
    int32_t dtype = 0;
    size_t esz = 0;
    bool strings = false;
    if (code[0] == 'S' && code[1]) {
        char *endp;
        long n = strtol(code + 1, &endp, 10);
        if (*endp || n <= 0 || n > (1L << 30))
            return gn__fail(err, GN_ERR_PARSE, "%s: header: bad descr '%s'", name, descr);
        strings = true;
        dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
        esz = (size_t)n;
    } else {
        dtype = gn__dtype_from_npy(code);   /* the descrs of src/opdef/dtypes.def */
        esz = gn__dtype_size(dtype);
        if (!dtype)
            return gn__fail(err, GN_ERR_UNSUPPORTED,
                            "%s: dtype '%s' is not supported (float16/32/64, int8/16/32/64, uint8/16/32/64, bool, "
                            "bytes)",
                            name, descr);
        if (order == '>' && esz > 1)
            return gn__fail(err, GN_ERR_UNSUPPORTED,
                            "%s: big-endian data ('%s') is not supported (save with dtype '<%s')", name, descr, code);
    }
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] && n > INT64_MAX / dims[i]) return gn__fail(err, GN_ERR_PARSE, "%s: header: shape overflows", name);
        n *= dims[i];
    }
    size_t dstart = hstart + hlen;
    if ((uint64_t)n > SIZE_MAX / esz) return gn__fail(err, GN_ERR_PARSE, "%s: header: shape overflows", name);
    size_t need = (size_t)n * esz, have = size - dstart;
    if (have != need)
        return gn__fail(err, GN_ERR_PARSE, "%s: data is %zu bytes, but shape and dtype '%s' need %zu", name, have,
                        descr, need);
    const uint8_t *src = data + dstart;
    gn__buffer *b;
    if (strings) {
        size_t head = (size_t)n * sizeof(gn_string);
        b = gn__buffer_new(head + need + 1);
        if (!b) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        gn_string *s = b->data;
        char *p = (char *)b->data + head;
        memcpy(p, src, need);
        for (int64_t i = 0; i < n; i++) {
            size_t len = esz;
            while (len && p[(size_t)i * esz + len - 1] == 0) len--;
            s[i].data = p + (size_t)i * esz;
            s[i].len = len;
        }
        out->nbytes = head;
    } else {
        b = gn__buffer_new(need);
        if (!b) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        if (need) memcpy(b->data, src, need);
        if (dtype == TENSORFLOW__DATA_TYPE__DT_BOOL) {
            uint8_t *q = b->data;
            for (size_t i = 0; i < need; i++) q[i] = q[i] != 0;
        }
        out->nbytes = need;
    }
    out->dtype = dtype;
    out->rank = rank;
    for (int32_t i = 0; i < rank; i++) out->dims[i] = dims[i];
    out->data = b->data;
    out->internal = b;
    return GN_OK;
}

/* ---- writing --------------------------------------------------------------------------------- */
gn_status gn__npy_encode(const gn_tensor *t, uint8_t **data, size_t *size, gn__err *err)
{
    *data = NULL;
    *size = 0;
    if (t->rank < 0 || t->rank > GN_TENSOR_MAX_DIMS)
        return gn__fail(err, GN_ERR_ARG, "rank %d is outside 0..%d", t->rank, GN_TENSOR_MAX_DIMS);
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return gn__fail(err, GN_ERR_ARG, "dimension %d is negative", i);
        n *= t->dims[i];
    }
    char descr[32];
    size_t esz;
    bool strings = t->dtype == TENSORFLOW__DATA_TYPE__DT_STRING;
    if (strings) {
        const gn_string *s = t->data;
        size_t w = 1;
        for (int64_t i = 0; i < n; i++)
            if (s[i].len > w) w = s[i].len;
        snprintf(descr, sizeof descr, "|S%zu", w);
        esz = w;
    } else {
        const char *d = gn__dtype_npy_descr(t->dtype);
        if (!d)
            return gn__fail(err, GN_ERR_UNSUPPORTED, "dtype %s cannot be written as .npy",
                            gn_dtype_numpy_name(t->dtype));
        snprintf(descr, sizeof descr, "%s", d);
        esz = gn__dtype_size(t->dtype);
        if (t->nbytes != (size_t)n * esz)
            return gn__fail(err, GN_ERR_ARG, "tensor has %zu bytes, its shape needs %zu", t->nbytes, (size_t)n * esz);
    }
    char dict[512];
    size_t o = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int32_t i = 0; i < t->rank; i++)
        o += (size_t)snprintf(dict + o, sizeof dict - o, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    o += (size_t)snprintf(dict + o, sizeof dict - o, "%s), }", t->rank == 1 ? "," : "");
    size_t pre = 10, total_h = pre + o + 1;
    size_t padded = (total_h + 63) / 64 * 64;
    size_t hlen = padded - pre;
    size_t body = (size_t)n * esz;
    uint8_t *buf = malloc(padded + body + 1);
    if (!buf) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + pre, dict, o);
    memset(buf + pre + o, ' ', hlen - o - 1);
    buf[padded - 1] = '\n';
    if (strings) {
        const gn_string *s = t->data;
        memset(buf + padded, 0, body);
        for (int64_t i = 0; i < n; i++)
            if (s[i].len) memcpy(buf + padded + (size_t)i * esz, s[i].data, s[i].len);
    } else if (body) {
        memcpy(buf + padded, t->data, body);
    }
    *data = buf;
    *size = padded + body;
    return GN_OK;
}

/* ---- public calls -------------------------------------------------------------------------------- */
static gn_status report(gn_status s, const gn__err *e, char *err, size_t errlen)
{
    if (err && errlen) snprintf(err, errlen, "%s", s == GN_OK ? "" : e->msg);
    return s;
}

gn_status gn_npy_parse(const void *data, size_t size, const char *name, gn_tensor *out, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    if (!out || (!data && size)) return report(gn__fail(&e, GN_ERR_ARG, "gn_npy_parse: NULL argument"), &e, err, errlen);
    return report(gn__npy_parse(data, size, name, out, &e), &e, err, errlen);
}

gn_status gn_npy_read(const char *path, gn_tensor *out, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    if (!path || !out) return report(gn__fail(&e, GN_ERR_ARG, "gn_npy_read: NULL argument"), &e, err, errlen);
    memset(out, 0, sizeof *out);
    uint8_t *data = NULL;
    size_t size = 0;
    gn_status s = gn__read_file(path, &data, &size, &e);
    if (s == GN_OK) s = gn__npy_parse(data, size, path, out, &e);
    free(data);
    return report(s, &e, err, errlen);
}

gn_status gn_npy_serialize(const gn_tensor *t, void **data, size_t *size, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    if (!t || !data || !size)
        return report(gn__fail(&e, GN_ERR_ARG, "gn_npy_serialize: NULL argument"), &e, err, errlen);
    uint8_t *d;
    gn_status s = gn__npy_encode(t, &d, size, &e);
    *data = d;
    return report(s, &e, err, errlen);
}

gn_status gn_npy_write(const char *path, const gn_tensor *t, char *err, size_t errlen)
{
    gn__err e;
    gn__err_clear(&e);
    if (!path || !t) return report(gn__fail(&e, GN_ERR_ARG, "gn_npy_write: NULL argument"), &e, err, errlen);
    uint8_t *d = NULL;
    size_t n = 0;
    gn_status s = gn__npy_encode(t, &d, &n, &e);
    if (s != GN_OK) gn__err_prefix(&e, "%s", path);
    if (s == GN_OK) s = gn__write_file_atomic(path, d, n, false, &e);
    free(d);
    return report(s, &e, err, errlen);
}
