/* The scoped allocator's ops (TensorFlow's kernels/scoped_allocator_ops.cc),
 * which the scoped_allocator_optimization pass inserts:
 *   _ScopedAllocator        the backing buffer: T, shape [n] (zeroed: the
 *                           padding between fields is read by the op that
 *                           runs over the whole buffer)
 *   _ScopedAllocatorConcat  the backing buffer with every input in its field:
 *                           an input the producer already wrote there (the
 *                           executor gives such producers their field as
 *                           output buffer) is left as it is, any other is
 *                           copied in; the output is the backing buffer itself
 *   _ScopedAllocatorSplit   output i: field i of input 0, shaped as input
 *                           1 + i, a view of input 0's buffer (a copy when
 *                           that buffer is borrowed)
 * The executor counts the Concat's fields found in place and copied
 * (gn__engine_stats sa_in_place / sa_copied). */
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/scoped_alloc.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"

static void view_release(gn__buffer *b)
{
    gn__buffer_unref(b->owner);
    free(b);
}

gn__buffer *gn__buffer_view(gn__buffer *parent, size_t offset, size_t size)
{
    gn__buffer *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->refs = 1;
    b->flags = 0;
    b->size = size;
    b->data = (char *)parent->data + offset;
    b->release = view_release;
    b->owner = gn__buffer_ref(parent);
    return b;
}

size_t gn__sa_concat_offset(const gn__tensor *in, uint32_t i)
{
    size_t off = 0;
    for (uint32_t k = 1; k < i; k++) off = gn__sa_align(off + in[k].nbytes);
    return off;
}

bool gn__sa_concat_in_place(const gn__tensor *in, uint32_t i)
{
    return in[0].data && in[i].data == (const char *)in[0].data + gn__sa_concat_offset(in, i);
}

gn_status gn__scoped_k_scoped_allocator(gn__kctx *c)
{
    int dt = 0;
    const Tensorflow__AttrValue *sh = gn__node_attr(c->g, c->node, "shape");
    if (!gn__attr_get_type(c->g, c->node, "T", &dt) || !sh || sh->value_case != TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ||
        !sh->shape || sh->shape->n_dim != 1 || sh->shape->dim[0]->size < 0)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "needs attrs T and shape [n]");
    int64_t n = sh->shape->dim[0]->size;
    gn__tensor *o;
    GN_TRY(gn__kctx_output(c, 0, dt, 1, &n, &o));
    memset(o->data, 0, o->nbytes);
    return GN_OK;
}

gn_status gn__scoped_k_concat(gn__kctx *c)
{
    const gn__tensor *in = c->in;
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "needs the backing buffer and at least one input");
    for (uint32_t i = 1; i < c->n_in; i++) {
        if (in[i].dtype != in[0].dtype)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is %s, the backing buffer %s", i,
                                 gn__dtype_name(in[i].dtype), gn__dtype_name(in[0].dtype));
        size_t off = gn__sa_concat_offset(in, i);
        if (off + in[i].nbytes > in[0].nbytes)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u (%zu bytes at offset %zu) is past the %zu-byte buffer", i,
                                 in[i].nbytes, off, in[0].nbytes);
        if (!gn__sa_concat_in_place(in, i) && in[i].nbytes) memcpy((char *)in[0].data + off, in[i].data, in[i].nbytes);
    }
    return gn__kctx_forward(c, 0, 0);
}

gn_status gn__scoped_k_split(gn__kctx *c)
{
    const gn__tensor *in = c->in;
    if (c->n_in != c->n_out + 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "%u inputs for %u outputs", c->n_in, c->n_out);
    size_t off = 0;
    for (uint32_t i = 0; i < c->n_out; i++) {
        const gn__tensor *f = &in[1 + i];
        if (off + f->nbytes > in[0].nbytes)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "field %u (%zu bytes at offset %zu) is past the %zu-byte buffer", i,
                                 f->nbytes, off, in[0].nbytes);
        gn__tensor *o = &c->out[i];
        if (in[0].buf) {
            gn__buffer *b = gn__buffer_view(in[0].buf, (size_t)((const char *)in[0].data - (const char *)in[0].buf->data) + off,
                                            f->nbytes);
            if (!b) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
            o->dtype = in[0].dtype;
            o->rank = f->rank;
            memcpy(o->dims, f->dims, sizeof o->dims);
            o->data = b->data;
            o->nbytes = f->nbytes;
            o->buf = b;
            o->dead = false;
        } else {
            gn__tensor *t;
            GN_TRY(gn__kctx_output(c, i, in[0].dtype, f->rank, f->dims, &t));
            if (f->nbytes) memcpy(t->data, (const char *)in[0].data + off, f->nbytes);
        }
        off = gn__sa_align(off + f->nbytes);
    }
    return GN_OK;
}
