/* Lookup tables: HashTableV2 and the ops that fill and read it, after
 * tensorflow/core/kernels/{lookup_table_op, lookup_table_init_op,
 * initializable_lookup_table, lookup_util}.cc and
 * core/framework/lookup_interface.cc.
 *
 * A table is a resource the run owns (gn__run_own): HashTableV2 makes one
 * each time it runs, so a table lives as long as the run that made it (TF's
 * lives as long as its session; a frozen graph initializes it before each
 * lookup, so the results are the same). Tables are not shared by
 * shared_name. Keys are string, int32 or int64; values bool, int32, int64,
 * float, double or string.
 *
 * TF's semantics kept: a table is initialized once; initializing it again
 * (InitializeTableV2, LookupTableImportV2) succeeds when the new data has as
 * many entries as the table holds, and fails with "Table was already
 * initialized with different data." otherwise; initializing from a text file
 * a table already initialized does nothing. A key given twice with two
 * values fails ("HashTable has different value for same key"). Keys or
 * values of other dtypes than the table's fail as TF's signature check does
 * ("Signature mismatch, have: ... expected: ..."). Finding in a
 * table never initialized fails ("Table not initialized."); its size is 0.
 * The default value of LookupTableFindV2 is a scalar or one per key.
 *
 * StringToNumber (string_to_number_op.cc) lives here too: it parses as the
 * text-file initializer does (TensorFlow's SafeStringToNumeric for both). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "graph/tensor.h"
#include "ops/lookup.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"
#include "ops/executor.h"

#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE
#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING
#define DT_BOOL TENSORFLOW__DATA_TYPE__DT_BOOL
#define DT_RESOURCE TENSORFLOW__DATA_TYPE__DT_RESOURCE

#define TABLE_MAGIC 0x4C4E4754u   /* tells a table handle from another resource's */

typedef struct table {
    uint32_t magic;
    int32_t key_dtype, value_dtype;
    bool initialized;
    size_t n, cap;          /* entries */
    uint8_t *keys, *vals;   /* n elements each; strings as gn__tstring owning a malloc'd copy */
    uint32_t *index;        /* open addressing: entry + 1, 0 empty */
    size_t n_index;         /* a power of two, >= 2 n */
} table;

static size_t esize(int32_t dt)
{
    return dt == DT_STRING ? sizeof(gn__tstring) : gn__dtype_size(dt);
}

static bool key_dtype_ok(int32_t dt)
{
    return dt == DT_STRING || dt == DT_INT32 || dt == DT_INT64;
}

static bool value_dtype_ok(int32_t dt)
{
    return dt == DT_STRING || dt == DT_INT32 || dt == DT_INT64 || dt == DT_FLOAT || dt == DT_DOUBLE || dt == DT_BOOL;
}

static void table_free(void *obj)
{
    table *t = obj;
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) {
        if (t->key_dtype == DT_STRING) free((void *)((gn__tstring *)t->keys)[i].ptr);
        if (t->value_dtype == DT_STRING) free((void *)((gn__tstring *)t->vals)[i].ptr);
    }
    free(t->keys);
    free(t->vals);
    free(t->index);
    free(t);
}

static uint64_t hash_elem(int32_t dt, const void *e)
{
    if (dt == DT_STRING) {
        const gn__tstring *s = e;
        return gn__hash_bytes(s->ptr, s->len);
    }
    return gn__hash_bytes(e, gn__dtype_size(dt));
}

static bool elem_eq(int32_t dt, const void *a, const void *b)
{
    switch (dt) {
    case DT_STRING: {
        const gn__tstring *x = a, *y = b;
        return x->len == y->len && (x->len == 0 || memcmp(x->ptr, y->ptr, x->len) == 0);
    }
    case DT_FLOAT: return *(const float *)a == *(const float *)b;
    case DT_DOUBLE: return *(const double *)a == *(const double *)b;
    case DT_BOOL: return (*(const uint8_t *)a != 0) == (*(const uint8_t *)b != 0);
    default: return memcmp(a, b, gn__dtype_size(dt)) == 0;
    }
}

/* Entry of key k, or SIZE_MAX. */
static size_t table_find(const table *t, const void *k)
{
    if (!t->n_index) return SIZE_MAX;
    size_t es = esize(t->key_dtype), mask = t->n_index - 1;
    for (size_t h = (size_t)hash_elem(t->key_dtype, k) & mask;; h = (h + 1) & mask) {
        uint32_t e = t->index[h];
        if (!e) return SIZE_MAX;
        if (elem_eq(t->key_dtype, t->keys + (size_t)(e - 1) * es, k)) return e - 1;
    }
}

static bool table_rehash(table *t, size_t want)
{
    size_t n = 16;
    while (n < 2 * want) n *= 2;
    uint32_t *ix = calloc(n, sizeof *ix);
    if (!ix) return false;
    size_t es = esize(t->key_dtype);
    for (size_t i = 0; i < t->n; i++) {
        size_t h = (size_t)hash_elem(t->key_dtype, t->keys + i * es) & (n - 1);
        while (ix[h]) h = (h + 1) & (n - 1);
        ix[h] = (uint32_t)(i + 1);
    }
    free(t->index);
    t->index = ix;
    t->n_index = n;
    return true;
}

static const char *elem_str(int32_t dt, const void *e, char *buf, size_t n)
{
    switch (dt) {
    case DT_STRING: {
        const gn__tstring *s = e;
        snprintf(buf, n, "%.*s", (int)(s->len > 200 ? 200 : s->len), s->ptr ? s->ptr : "");
        break;
    }
    case DT_INT32: snprintf(buf, n, "%d", *(const int32_t *)e); break;
    case DT_INT64: snprintf(buf, n, "%lld", (long long)*(const int64_t *)e); break;
    case DT_FLOAT: snprintf(buf, n, "%.9g", (double)*(const float *)e); break;
    case DT_DOUBLE: snprintf(buf, n, "%.17g", *(const double *)e); break;
    case DT_BOOL: snprintf(buf, n, "%d", *(const uint8_t *)e != 0); break;
    default: snprintf(buf, n, "?");
    }
    return buf;
}

static bool copy_elem(int32_t dt, void *dst, const void *src)
{
    if (dt != DT_STRING) {
        memcpy(dst, src, gn__dtype_size(dt));
        return true;
    }
    const gn__tstring *s = src;
    char *p = malloc(s->len + 1);
    if (!p) return false;
    if (s->len) memcpy(p, s->ptr, s->len);
    p[s->len] = 0;
    *(gn__tstring *)dst = (gn__tstring){p, s->len};
    return true;
}

/* Inserts n key/value pairs (TF's HashTable::DoInsert): a key already in the
 * table keeps its value; a different value for it is an error. */
static gn_status table_insert(gn__kctx *c, table *t, const void *keys, const void *vals, size_t n)
{
    size_t kes = esize(t->key_dtype), ves = esize(t->value_dtype);
    if (t->n + n > UINT32_MAX - 1) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "more than 2^32 - 2 table entries");
    if (t->n + n > t->cap) {
        size_t cap = t->cap ? t->cap : 16;
        while (cap < t->n + n) cap *= 2;
        uint8_t *k = realloc(t->keys, cap * kes);
        if (!k) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        t->keys = k;
        uint8_t *v = realloc(t->vals, cap * ves);
        if (!v) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        t->vals = v;
        t->cap = cap;
    }
    if (2 * (t->n + n) > t->n_index && !table_rehash(t, t->n + n))
        return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const uint8_t *k = (const uint8_t *)keys + i * kes, *v = (const uint8_t *)vals + i * ves;
        size_t at = table_find(t, k);
        if (at != SIZE_MAX) {
            if (!elem_eq(t->value_dtype, t->vals + at * ves, v)) {
                char kb[224], vb[224], wb[224];
                return gn__kctx_fail(c, GN_ERR_GRAPH,
                                     "HashTable has different value for same key. Key %s has %s and trying to add "
                                     "value %s",
                                     elem_str(t->key_dtype, k, kb, sizeof kb),
                                     elem_str(t->value_dtype, t->vals + at * ves, vb, sizeof vb),
                                     elem_str(t->value_dtype, v, wb, sizeof wb));
            }
            continue;
        }
        if (!copy_elem(t->key_dtype, t->keys + t->n * kes, k)) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        if (!copy_elem(t->value_dtype, t->vals + t->n * ves, v)) {
            if (t->key_dtype == DT_STRING) free((void *)((gn__tstring *)(t->keys + t->n * kes))->ptr);
            return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
        }
        size_t mask = t->n_index - 1, h = (size_t)hash_elem(t->key_dtype, k) & mask;
        while (t->index[h]) h = (h + 1) & mask;
        t->index[h] = (uint32_t)(t->n + 1);
        t->n++;
    }
    return GN_OK;
}

/* "[2,3]" into a caller buffer that lives for the statement */
typedef struct shape_buf {
    char s[160];
} shape_buf;

static const char *shape_str(const gn__tensor *t, shape_buf *b)
{
    size_t o = 0;
    b->s[o++] = '[';
    for (int32_t i = 0; i < t->rank && o < sizeof b->s - 24; i++)
        o += (size_t)snprintf(b->s + o, sizeof b->s - o, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    snprintf(b->s + o, sizeof b->s - o, "]");
    return b->s;
}
#define SHAPE(t) shape_str((t), &(shape_buf){{0}})

/* ---- handles ------------------------------------------------------------------------- */
static gn_status need(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

static gn_status get_table(gn__kctx *c, table **out)
{
    GN_TRY(need(c, 1));
    const gn__tensor *h = &c->in[0];
    table *t = h->dtype == DT_RESOURCE && gn__tensor_numel(h) == 1 && h->data ? *(table *const *)h->data : NULL;
    if (!t || t->magic != TABLE_MAGIC) return gn__kctx_fail(c, GN_ERR_GRAPH, "input 0 is not a lookup table handle");
    *out = t;
    return GN_OK;
}

/* TF's MatchSignature of the lookup ops: (resource, keys, values) -> outputs,
 * the table's dtypes expected. find: one output of the value dtype. */
static gn_status check_types(gn__kctx *c, const table *t, int32_t kdt, int32_t vdt, bool find)
{
    if (kdt == t->key_dtype && vdt == t->value_dtype) return GN_OK;
    return gn__kctx_fail(c, GN_ERR_GRAPH,
                         "Signature mismatch, have: resource, %s, %s->%s expected: resource, %s, %s->%s",
                         gn__dtype_name(kdt), gn__dtype_name(vdt), find ? gn__dtype_name(vdt) : "",
                         gn__dtype_name(t->key_dtype), gn__dtype_name(t->value_dtype),
                         find ? gn__dtype_name(t->value_dtype) : "");
}

/* ---- HashTableV2 ------------------------------------------------------------------------ */
gn_status gn__lookup_k_hash_table(gn__kctx *c)
{
    int kdt = 0, vdt = 0;
    if (!gn__attr_get_type(c->g, c->node, "key_dtype", &kdt) || !gn__attr_get_type(c->g, c->node, "value_dtype", &vdt))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attrs 'key_dtype' and 'value_dtype' are required");
    if (!key_dtype_ok(kdt) || !value_dtype_ok(vdt))
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "no table of %s keys and %s values (keys: string, int32, int64; "
                             "values: string, int32, int64, float, double, bool)",
                             gn__dtype_name(kdt), gn__dtype_name(vdt));
    table *t = calloc(1, sizeof *t);
    if (!t) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    t->magic = TABLE_MAGIC;
    t->key_dtype = kdt;
    t->value_dtype = vdt;
    GN_TRY(gn__run_own(c, t, table_free));
    gn__tensor *h;
    GN_TRY(gn__kctx_output(c, 0, DT_RESOURCE, 0, NULL, &h));
    *(void **)h->data = t;
    return GN_OK;
}

/* ---- initialization ----------------------------------------------------------------------- */
/* TF's InitializableLookupTable::Initialize over a keys / values iterator of n entries. */
static gn_status table_init(gn__kctx *c, table *t, const void *keys, const void *vals, size_t n)
{
    if (t->initialized) {
        /* AreEntriesSame: as many entries as the table holds */
        if (n != t->n) return gn__kctx_fail(c, GN_ERR_GRAPH, "Table was already initialized with different data.");
        return GN_OK;
    }
    GN_TRY(table_insert(c, t, keys, vals, n));
    t->initialized = true;
    return GN_OK;
}

/* InitializeTableV2 and LookupTableImportV2 (a HashTable imports by initializing) */
gn_status gn__lookup_k_init_table(gn__kctx *c)
{
    table *t = NULL;
    GN_TRY(get_table(c, &t));
    GN_TRY(need(c, 3));
    const gn__tensor *k = &c->in[1], *v = &c->in[2];
    GN_TRY(check_types(c, t, k->dtype, v->dtype, false));
    if (k->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Keys must be a vector, but received shape %s",
                             SHAPE(k));
    if (gn__tensor_numel(k) != gn__tensor_numel(v) || v->rank != 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected shape %s for value, got %s", SHAPE(k),
                             SHAPE(v));
    return table_init(c, t, k->data, v->data, (size_t)gn__tensor_numel(k));
}

gn_status gn__lookup_k_init_from_text_file(gn__kctx *c)
{
    table *t = NULL;
    GN_TRY(get_table(c, &t));
    GN_TRY(need(c, 2));
    const gn__tensor *f = &c->in[1];
    if (f->dtype != DT_STRING || f->rank != 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "filename should be a single string, but got %s %s",
                             gn__dtype_name(f->dtype), SHAPE(f));
    int64_t ki = 0, vi = 0, vocab = -1, offset = 0;
    if (!gn__attr_get_int(c->g, c->node, "key_index", &ki) || !gn__attr_get_int(c->g, c->node, "value_index", &vi))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attrs 'key_index' and 'value_index' are required");
    (void)gn__attr_get_int(c->g, c->node, "vocab_size", &vocab);
    (void)gn__attr_get_int(c->g, c->node, "offset", &offset);
    const char *d = "\t";
    size_t dl = 1;
    if (!gn__attr_get_string(c->g, c->node, "delimiter", &d, &dl) || dl == 0) {
        d = "\t";
        dl = 1;
    }
    if (t->initialized) return GN_OK;   /* TF: a file initializer ignores an initialized table */
    const gn__tstring *s = f->data;
    char *path = malloc(s->len + 1);
    if (!path) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    memcpy(path, s->ptr, s->len);
    path[s->len] = 0;
    gn__tensor keys = {0}, vals = {0};
    gn_status st = gn__table_read_text_file(path, t->key_dtype, t->value_dtype, ki, vi, vocab, d[0], offset, &keys,
                                            &vals, c->err);
    free(path);
    if (st != GN_OK) {
        gn__err_prefix(c->err, "node '%s' (%s)", gn__node_name(c->g, c->node), gn__node_op(c->g, c->node));
        return st;
    }
    st = table_init(c, t, keys.data, vals.data, (size_t)gn__tensor_numel(&keys));
    gn__tensor_release(&keys);
    gn__tensor_release(&vals);
    return st;
}

/* ---- reading ---------------------------------------------------------------------------- */
gn_status gn__lookup_k_find(gn__kctx *c)
{
    table *t = NULL;
    GN_TRY(get_table(c, &t));
    GN_TRY(need(c, 3));
    const gn__tensor *k = &c->in[1], *dv = &c->in[2];
    GN_TRY(check_types(c, t, k->dtype, dv->dtype, true));
    int64_t n = gn__tensor_numel(k), nd = gn__tensor_numel(dv);
    bool full = dv->rank > 0;
    if (full) {
        bool same = dv->rank == k->rank;
        for (int32_t i = 0; same && i < k->rank; i++) same = dv->dims[i] == k->dims[i];
        if (!same)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected shape [] or %s for default value, got %s",
                                 SHAPE(k), SHAPE(dv));
    }
    if (!t->initialized) return gn__kctx_fail(c, GN_ERR_GRAPH, "Table not initialized.");
    size_t ves = esize(t->value_dtype), kes = esize(t->key_dtype);
    const uint8_t *kp = k->data, *dp = dv->data;
    gn__tensor *o;
    if (t->value_dtype == DT_STRING) {
        size_t bytes = 0;
        for (int64_t i = 0; i < n; i++) {
            size_t at = table_find(t, kp + (size_t)i * kes);
            const gn__tstring *s = at != SIZE_MAX ? (const gn__tstring *)(t->vals + at * ves)
                                                  : (const gn__tstring *)dp + (full && nd == n ? i : 0);
            bytes += s->len;
        }
        char *store;
        GN_TRY(gn__kctx_output_strings(c, 0, k->rank, k->dims, bytes, &o, &store));
        gn__tstring *os = o->data;
        for (int64_t i = 0; i < n; i++) {
            size_t at = table_find(t, kp + (size_t)i * kes);
            const gn__tstring *s = at != SIZE_MAX ? (const gn__tstring *)(t->vals + at * ves)
                                                  : (const gn__tstring *)dp + (full && nd == n ? i : 0);
            if (s->len) memcpy(store, s->ptr, s->len);
            os[i] = (gn__tstring){store, s->len};
            store += s->len;
        }
        return GN_OK;
    }
    GN_TRY(gn__kctx_output(c, 0, t->value_dtype, k->rank, k->dims, &o));
    uint8_t *op = o->data;
    for (int64_t i = 0; i < n; i++) {
        size_t at = table_find(t, kp + (size_t)i * kes);
        const uint8_t *src = at != SIZE_MAX ? t->vals + at * ves : dp + (size_t)(full && nd == n ? i : 0) * ves;
        memcpy(op + (size_t)i * ves, src, ves);
    }
    return GN_OK;
}

gn_status gn__lookup_k_size(gn__kctx *c)
{
    table *t = NULL;
    GN_TRY(get_table(c, &t));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, DT_INT64, 0, NULL, &o));
    *(int64_t *)o->data = t->initialized ? (int64_t)t->n : 0;
    return GN_OK;
}

/* ---- the text file ------------------------------------------------------------------------- */
/* TF's safe_strto32 / safe_strto64: optional surrounding whitespace, a sign, decimal digits. */
/* TensorFlow's SafeStringToNumeric, shared by the text-file initializer and
 * StringToNumber: ASCII spaces around the number are ignored; integers are
 * decimal digits after an optional sign, in range; reals are what strtof /
 * strtod read whole (hex, inf, infinity, nan, nan(...) included; out of
 * range goes to +-inf or 0, as TensorFlow's parser does). A NUL byte inside
 * fails. Longer strings than the buffers (63 bytes for integers, 127 for
 * reals, after trimming) fail, where TensorFlow would read them. */
static bool parse_int(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
    char buf[64];
    while (n && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) s++, n--;
    while (n && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r'))) n--;
    if (n == 0 || n >= sizeof buf || memchr(s, 0, n)) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    size_t i = buf[0] == '-' || buf[0] == '+';
    if (!buf[i]) return false;
    for (size_t j = i; buf[j]; j++)
        if (buf[j] < '0' || buf[j] > '9') return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static bool parse_real(const char *s, size_t n, bool single, double *out)
{
    char buf[128];
    while (n && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) s++, n--;
    while (n && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r'))) n--;
    if (n == 0 || n >= sizeof buf || memchr(s, 0, n)) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end = NULL;
    if (single) {
        float f = strtof(buf, &end);
        *out = f;
    } else {
        *out = strtod(buf, &end);
    }
    return end && *end == 0;
}

typedef struct tf_col {
    int32_t dtype;
    int64_t index;
    uint8_t *data;          /* entries (strings: gn__tstring with offsets into text until fixed up) */
} tf_col;

static gn_status set_value(const char *path, int64_t line_no, const char *line, size_t len, const char *tok,
                           size_t tl, tf_col *col, size_t at, int64_t offset, size_t *str_bytes, gn__err *err)
{
    if (col->index == -1) {
        ((int64_t *)col->data)[at] = line_no + offset;
        return GN_OK;
    }
    if (col->index == -2) {
        tok = line;
        tl = len;
    }
    int64_t iv;
    double dv;
    switch (col->dtype) {
    case DT_STRING:
        ((gn__tstring *)col->data)[at] = (gn__tstring){tok, tl};
        *str_bytes += tl;
        return GN_OK;
    case DT_INT32:
        if (!parse_int(tok, tl, INT32_MIN, INT32_MAX, &iv)) break;
        ((int32_t *)col->data)[at] = (int32_t)(iv + offset);
        return GN_OK;
    case DT_INT64:
        if (!parse_int(tok, tl, INT64_MIN, INT64_MAX, &iv)) break;
        ((int64_t *)col->data)[at] = iv;
        return GN_OK;
    case DT_FLOAT:
        if (!parse_real(tok, tl, true, &dv)) break;
        ((float *)col->data)[at] = (float)dv;
        return GN_OK;
    case DT_DOUBLE:
        if (!parse_real(tok, tl, false, &dv)) break;
        ((double *)col->data)[at] = dv;
        return GN_OK;
    default:
        return gn__fail(err, GN_ERR_UNSUPPORTED, "%s: Data type %s not supported.", path, gn__dtype_name(col->dtype));
    }
    return gn__fail(err, GN_ERR_GRAPH, "%s: Field %.*s in line %lld is not a valid %s.", path,
                    (int)(tl > 200 ? 200 : tl), tok, (long long)line_no, gn__dtype_name(col->dtype));
}

/* Makes a 1-D tensor of n entries from col (strings copied out of the file text). */
static gn_status col_tensor(tf_col *col, size_t n, size_t str_bytes, gn__tensor *out, gn__err *err)
{
    size_t es = esize(col->dtype);
    size_t head = n * es, total = head + (col->dtype == DT_STRING ? str_bytes : 0);
    gn__buffer *b = gn__buffer_new(total ? total : 1);
    if (!b) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
    if (col->dtype == DT_STRING) {
        gn__tstring *d = b->data;
        const gn__tstring *s = (const gn__tstring *)col->data;
        char *store = (char *)b->data + head;
        for (size_t i = 0; i < n; i++) {
            if (s[i].len) memcpy(store, s[i].ptr, s[i].len);
            d[i] = (gn__tstring){store, s[i].len};
            store += s[i].len;
        }
    } else if (head) {
        memcpy(b->data, col->data, head);
    }
    memset(out, 0, sizeof *out);
    out->dtype = col->dtype;
    out->rank = 1;
    out->dims[0] = (int64_t)n;
    out->data = b->data;
    out->nbytes = head;
    out->buf = b;
    return GN_OK;
}

gn_status gn__table_read_text_file(const char *path, int32_t key_dtype, int32_t value_dtype, int64_t key_index,
                                   int64_t value_index, int64_t vocab_size, char delim, int64_t offset,
                                   gn__tensor *keys, gn__tensor *values, gn__err *err)
{
    memset(keys, 0, sizeof *keys);
    memset(values, 0, sizeof *values);
    /* TF's checks (InitializeTableFromTextFile) */
    if (key_index < -2 || value_index < -2)
        return gn__fail(err, GN_ERR_GRAPH, "%s: key_index %lld / value_index %lld: an index is -2 (whole line), -1 "
                        "(line number) or a column >= 0", path, (long long)key_index, (long long)value_index);
    if (key_index == -1 && key_dtype != DT_INT64)
        return gn__fail(err, GN_ERR_GRAPH, "Key index for line number requires table key dtype of int64, got %s",
                        gn__dtype_name(key_dtype));
    if (key_index == -2 && key_dtype != DT_STRING && key_dtype != DT_INT32 && key_dtype != DT_INT64)
        return gn__fail(err, GN_ERR_GRAPH, "Key index for whole line requires string or integer table key, got %s",
                        gn__dtype_name(key_dtype));
    if (value_index == -1 && value_dtype != DT_INT64)
        return gn__fail(err, GN_ERR_GRAPH, "Value index for line number requires table value dtype of int64, got %s",
                        gn__dtype_name(value_dtype));
    if (value_index == -2 && value_dtype != DT_STRING && value_dtype != DT_INT32 && value_dtype != DT_INT64)
        return gn__fail(err, GN_ERR_GRAPH,
                        "Value index for whole line requires table value dtype of integer or string, got %s",
                        gn__dtype_name(value_dtype));
    uint8_t *text = NULL;
    size_t size = 0;
    GN_TRY(gn__read_file(path, &text, &size, err));
    /* lines */
    size_t n_lines = 0;
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\n') n_lines++;
    if (size && text[size - 1] != '\n') n_lines++;
    size_t n_max = vocab_size >= 0 && (uint64_t)vocab_size < n_lines ? (size_t)vocab_size : n_lines;
    tf_col kc = {key_dtype, key_index, NULL}, vc = {value_dtype, value_index, NULL};
    kc.data = malloc((n_max ? n_max : 1) * esize(key_dtype));
    vc.data = malloc((n_max ? n_max : 1) * esize(value_dtype));
    gn_status st = kc.data && vc.data ? GN_OK : gn__fail(err, GN_ERR_NOMEM, "out of memory");
    size_t n = 0, kbytes = 0, vbytes = 0, pos = 0;
    int64_t need_cols = (key_index > value_index ? key_index : value_index) + 1;
    while (st == GN_OK && n < n_max && pos < size) {
        const char *line = (const char *)text + pos;
        const char *nl = memchr(line, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - line) : size - pos;
        pos += len + (nl ? 1 : 0);
        if (len && line[len - 1] == '\r') len--;
        if (len == 0) {
            st = gn__fail(err, GN_ERR_GRAPH, "Invalid content in %s: empty line found at position %zu.", path, pos);
            break;
        }
        const char *ktok = NULL, *vtok = NULL;
        size_t kl = 0, vl = 0;
        if (need_cols > 0) {
            int64_t col = 0;
            const char *p = line, *end = line + len;
            while (true) {
                const char *q = memchr(p, delim, (size_t)(end - p));
                const char *te = q ? q : end;
                if (col == key_index) ktok = p, kl = (size_t)(te - p);
                if (col == value_index) vtok = p, vl = (size_t)(te - p);
                col++;
                if (!q) break;
                p = q + 1;
            }
            if (col < need_cols) {
                st = gn__fail(err, GN_ERR_GRAPH,
                              "Invalid number of columns in %s line %zu (%.*s) : expected at least %lld got %lld", path,
                              n, (int)(len > 200 ? 200 : len), line, (long long)need_cols, (long long)col);
                break;
            }
        }
        st = set_value(path, (int64_t)n, line, len, ktok, kl, &kc, n, offset, &kbytes, err);
        if (st == GN_OK) st = set_value(path, (int64_t)n, line, len, vtok, vl, &vc, n, offset, &vbytes, err);
        if (st == GN_OK) n++;
    }
    if (st == GN_OK && vocab_size >= 0 && n != (size_t)vocab_size)
        st = gn__fail(err, GN_ERR_GRAPH, "Invalid vocab_size in %s: expected %lld but got %zu", path,
                      (long long)vocab_size, n);
    if (st == GN_OK) st = col_tensor(&kc, n, kbytes, keys, err);
    if (st == GN_OK) st = col_tensor(&vc, n, vbytes, values, err);
    if (st != GN_OK) {
        gn__tensor_release(keys);
        gn__tensor_release(values);
    }
    free(kc.data);
    free(vc.data);
    free(text);
    return st;
}

/* ---- StringToNumber ------------------------------------------------------------------ */
gn_status gn__lookup_k_string_to_number(gn__kctx *c)
{
    const gn__tensor *x = &c->in[0];
    if (x->dtype != DT_STRING)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "string_tensor must be string, not %s", gn__dtype_name(x->dtype));
    int dt = DT_FLOAT;
    (void)gn__attr_get_type(c->g, c->node, "out_type", &dt);
    if (dt != DT_FLOAT && dt != DT_DOUBLE && dt != DT_INT32 && dt != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "out_type %s is not supported", gn__dtype_name(dt));
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, x->rank, x->dims, &o));
    const gn__tstring *in = x->data;
    int64_t n = gn__tensor_numel(x);
    for (int64_t i = 0; i < n; i++) {
        int64_t iv = 0;
        double dv = 0;
        bool ok;
        switch (dt) {
        case DT_INT32:
            ok = parse_int(in[i].ptr, in[i].len, INT32_MIN, INT32_MAX, &iv);
            ((int32_t *)o->data)[i] = (int32_t)iv;
            break;
        case DT_INT64:
            ok = parse_int(in[i].ptr, in[i].len, INT64_MIN, INT64_MAX, &iv);
            ((int64_t *)o->data)[i] = iv;
            break;
        case DT_FLOAT:
            ok = parse_real(in[i].ptr, in[i].len, true, &dv);
            ((float *)o->data)[i] = (float)dv;
            break;
        default:
            ok = parse_real(in[i].ptr, in[i].len, false, &dv);
            ((double *)o->data)[i] = dv;
            break;
        }
        if (!ok)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "StringToNumberOp could not correctly convert string: %.*s",
                                 (int)(in[i].len > 1024 ? 1024 : in[i].len), in[i].ptr);
    }
    return GN_OK;
}
