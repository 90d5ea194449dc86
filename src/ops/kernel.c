/* Kernel plumbing: buffers, tensors, output allocation. The lookup is
 * src/ops/op_fns.c. */
#include "ops/kernel.h"

#include <stdio.h>
#include <stdlib.h>

#include "grapnel/runtime.h"
#include "graph/tensor.h"
#include "opdef/registry.h"

gn__buffer *gn__buffer_new(size_t size)
{
    gn__buffer *b = malloc(sizeof *b);
    if (!b) return NULL;
    size_t sz = (size + 63) & ~(size_t)63;
    if (sz < size) {
        free(b);
        return NULL;
    }
    b->data = aligned_alloc(64, sz ? sz : 64);
    if (!b->data) {
        free(b);
        return NULL;
    }
    b->refs = 1;
    b->flags = 0;
    b->size = size;
    b->release = NULL;
    b->owner = NULL;
    return b;
}

gn__buffer *gn__buffer_ref(gn__buffer *b)
{
    if (b) b->refs++;
    return b;
}

void gn__buffer_unref(gn__buffer *b)
{
    if (!b || --b->refs) return;
    if (b->release) {
        b->release(b);
        return;
    }
    free(b->data);
    free(b);
}

int64_t gn__tensor_numel(const gn__tensor *t)
{
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

void gn__tensor_release(gn__tensor *t)
{
    gn__buffer_unref(t->buf);
    memset(t, 0, sizeof *t);
}

void gn__tensor_copy_ref(gn__tensor *dst, const gn__tensor *src)
{
    *dst = *src;
    gn__buffer_ref(dst->buf);
}

/* ---- kernel context ---------------------------------------------------------- */
gn_status gn__kctx_fail(gn__kctx *c, gn_status code, const char *fmt, ...)
{
    char what[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gn__fail(c->err, code, "node '%s' (%s): %.900s", gn__node_name(c->g, c->node), gn__node_op(c->g, c->node),
                    what);
}

static gn_status alloc_out(gn__kctx *c, uint32_t k, size_t bytes, gn__buffer **out)
{
    if (k >= c->n_out) return gn__kctx_fail(c, GN_ERR_INTERNAL, "output %u of %u", k, c->n_out);
    gn__buffer *b = c->alloc ? c->alloc(c->alloc_user, k, bytes) : gn__buffer_new(bytes);
    if (!b) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu bytes for output %u", bytes, k);
    gn__tensor_release(&c->out[k]);
    *out = b;
    return GN_OK;
}

static gn_status shape_bytes(gn__kctx *c, int32_t dtype, int32_t rank, const int64_t *dims, size_t esz,
                             int64_t *numel, size_t *bytes)
{
    if (rank < 0 || rank > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", rank, GN__MAX_DIMS);
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "negative dimension %lld", (long long)dims[i]);
        if (dims[i] && n > INT64_MAX / dims[i]) return gn__kctx_fail(c, GN_ERR_GRAPH, "element count overflows");
        n *= dims[i];
    }
    if (esz && (uint64_t)n > SIZE_MAX / esz) return gn__kctx_fail(c, GN_ERR_NOMEM, "tensor too large");
    (void)dtype;
    *numel = n;
    *bytes = (size_t)n * esz;
    return GN_OK;
}

const char *gn__fmt_bytes(char *buf, size_t n, uint64_t bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, n, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, n, "%.1f %s", v, unit[u]);
    return buf;
}

/* A limit as gn__fmt_bytes writes it when that is exact ("4.0 GiB"), else in bytes. */
static const char *limit_str(char *buf, size_t n, uint64_t bytes)
{
    uint64_t unit = 1;
    while (unit < ((uint64_t)1 << 60) && bytes >= unit * 1024) unit *= 1024;
    if (unit == 1 || (bytes <= UINT64_MAX / 10 && (bytes * 10) % unit == 0)) return gn__fmt_bytes(buf, n, bytes);
    snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
    return buf;
}

/* GN_ERR_LIMIT when output k would be over c->max_output_bytes. */
gn_status gn__kctx_check_output(gn__kctx *c, uint32_t k, int32_t dtype, int64_t numel, size_t bytes)
{
    if (!c->max_output_bytes || bytes <= c->max_output_bytes) return GN_OK;
    char b1[32], b2[40];
    return gn__kctx_fail(c, GN_ERR_LIMIT, "output %u of %lld %s elements (%s) is over the memory limit of %s",
                         k, (long long)numel, gn_dtype_numpy_name(dtype), gn__fmt_bytes(b1, sizeof b1, bytes),
                         limit_str(b2, sizeof b2, c->max_output_bytes));
}

gn_status gn__kctx_output(gn__kctx *c, uint32_t k, int32_t dtype, int32_t rank, const int64_t *dims, gn__tensor **t)
{
    size_t esz = gn__dtype_size(dtype);
    if (dtype == TENSORFLOW__DATA_TYPE__DT_STRING) esz = sizeof(gn__tstring);
    else if (dtype == TENSORFLOW__DATA_TYPE__DT_RESOURCE || dtype == TENSORFLOW__DATA_TYPE__DT_VARIANT)
        esz = sizeof(void *);
    if (!esz) return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported here", gn__dtype_name(dtype));
    int64_t n = 0;
    size_t bytes = 0;
    GN_TRY(shape_bytes(c, dtype, rank, dims, esz, &n, &bytes));
    GN_TRY(gn__kctx_check_output(c, k, dtype, n, bytes));
    gn__buffer *b;
    GN_TRY(alloc_out(c, k, bytes, &b));
    gn__tensor *o = &c->out[k];
    o->dtype = dtype;
    o->rank = rank;
    for (int32_t i = 0; i < rank; i++) o->dims[i] = dims[i];
    o->data = b->data;
    o->nbytes = bytes;
    o->buf = b;
    o->dead = false;
    if (dtype == TENSORFLOW__DATA_TYPE__DT_STRING || dtype == TENSORFLOW__DATA_TYPE__DT_RESOURCE ||
        dtype == TENSORFLOW__DATA_TYPE__DT_VARIANT)
        memset(o->data, 0, bytes);
    *t = o;
    return GN_OK;
}

gn_status gn__kctx_output_strings(gn__kctx *c, uint32_t k, int32_t rank, const int64_t *dims, size_t bytes,
                                  gn__tensor **t, char **storage)
{
    int64_t n = 0;
    size_t head = 0;
    GN_TRY(shape_bytes(c, TENSORFLOW__DATA_TYPE__DT_STRING, rank, dims, sizeof(gn__tstring), &n, &head));
    if (bytes > SIZE_MAX - head) return gn__kctx_fail(c, GN_ERR_NOMEM, "tensor too large");
    GN_TRY(gn__kctx_check_output(c, k, TENSORFLOW__DATA_TYPE__DT_STRING, n, head + bytes));
    gn__buffer *b;
    GN_TRY(alloc_out(c, k, head + bytes, &b));
    gn__tensor *o = &c->out[k];
    o->dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
    o->rank = rank;
    for (int32_t i = 0; i < rank; i++) o->dims[i] = dims[i];
    o->data = b->data;
    o->nbytes = head;
    o->buf = b;
    o->dead = false;
    memset(o->data, 0, head);
    *storage = (char *)b->data + head;
    *t = o;
    return GN_OK;
}

gn_status gn__kctx_forward(gn__kctx *c, uint32_t k, uint32_t i)
{
    if (k >= c->n_out || i >= c->n_in) return gn__kctx_fail(c, GN_ERR_INTERNAL, "forward %u -> %u out of range", i, k);
    gn__tensor_release(&c->out[k]);
    gn__tensor_copy_ref(&c->out[k], &c->in[i]);
    c->out[k].dead = false;
    return GN_OK;
}

gn_status gn__kctx_forward_reshape(gn__kctx *c, uint32_t k, uint32_t i, int32_t rank, const int64_t *dims)
{
    GN_TRY(gn__kctx_forward(c, k, i));
    if (rank < 0 || rank > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", rank, GN__MAX_DIMS);
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    if (n != gn__tensor_numel(&c->in[i]))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "cannot reshape %lld elements to %lld", (long long)gn__tensor_numel(&c->in[i]),
                             (long long)n);
    c->out[k].rank = rank;
    for (int32_t d = 0; d < rank; d++) c->out[k].dims[d] = dims[d];
    return GN_OK;
}
