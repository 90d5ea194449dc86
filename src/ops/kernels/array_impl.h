/* Private helpers shared by the array kernels (src/ops/kernels/array*.c) and
 * TensorProto decoding (src/ops/tensor_proto.c).
 *
 * Type-agnostic kernels move elements by size: a fixed-size dtype moves its
 * bytes, a DT_STRING element moves its gn__tstring entry. String outputs are
 * built in a temporary gn__tstring array whose entries point into the inputs,
 * then materialised (bytes copied into the output buffer) by
 * gn__ak_out_end, so an output never refers to an input's buffer. */
#ifndef GN_OPS_KERNELS_ARRAY_IMPL_H
#define GN_OPS_KERNELS_ARRAY_IMPL_H

#include <stddef.h>

#include "graph/tensor.h"
#include "ops/op_fns.h"
#include "opdef/registry.h"

#define GN__AK_SHAPE_STR 256

/* Bytes per element: fixed-size dtypes, sizeof(gn__tstring) for strings, 0 otherwise. */
size_t gn__ak_esize(int32_t dtype);

/* ---- outputs under construction ------------------------------------------------ */
typedef struct gn__ak_out {
    uint32_t k;
    int32_t dtype;
    int32_t rank;
    int64_t dims[GN__MAX_DIMS];
    int64_t n;            /* element count */
    void *data;           /* where elements go */
    gn__tstring *tmp;     /* strings: heap array pointing into the inputs */
} gn__ak_out;

/* Starts output k; o->data receives o->n elements of gn__ak_esize(dtype) bytes. */
gn_status gn__ak_out_begin(gn__kctx *c, uint32_t k, int32_t dtype, int32_t rank, const int64_t *dims, gn__ak_out *o);
/* Finishes it (strings: allocates the output and copies the bytes). Always
 * releases o's temporary storage. */
gn_status gn__ak_out_end(gn__kctx *c, gn__ak_out *o);
/* Drops an unfinished output (on an error path). */
void gn__ak_out_abort(gn__kctx *c, gn__ak_out *o);

/* ---- moving elements ------------------------------------------------------------ */
/* Most dims gn__ak_copy_nd takes (Tile views a rank-r tensor as 2r dims). */
#define GN__AK_COPY_MAX (2 * GN__MAX_DIMS + 2)
/* dst[i0*ds0 + i1*ds1 + ...] = src[i0*ss0 + ...] for every index below dims;
 * strides in elements (may be negative or 0). Merges dims, uses memcpy for
 * contiguous rows and a blocked loop for transposed ones. */
void gn__ak_copy_nd(void *dst, const int64_t *dstride, const void *src, const int64_t *sstride, int32_t rank,
                    const int64_t *dims, size_t esz);
/* Row-major strides (in elements) of dims. */
void gn__ak_strides(int32_t rank, const int64_t *dims, int64_t *strides);
/* Fills n elements of esz bytes with *value. */
void gn__ak_fill(void *dst, int64_t n, const void *value, size_t esz);

/* ---- reading index tensors -------------------------------------------------------- */
bool gn__ak_is_int(int32_t dtype);
/* Element i of an integer tensor as int64. */
int64_t gn__ak_int_at(const gn__tensor *t, int64_t i);
/* Reads input `in` (int32 or int64; a vector, or a scalar when allow_scalar)
 * into v[0..*n); fails naming `what` when it is not, or has more than max
 * elements. */
gn_status gn__ak_read_ints(gn__kctx *c, uint32_t in, const char *what, bool allow_scalar, int64_t *v, int32_t max,
                           int32_t *n);
/* Input `in` as one int32/int64 value (scalar or one-element tensor). */
gn_status gn__ak_read_scalar_int(gn__kctx *c, uint32_t in, const char *what, int64_t *v);
/* Attr with a default. */
int64_t gn__ak_attr_int(const gn__kctx *c, const char *key, int64_t dflt);
bool gn__ak_attr_bool(const gn__kctx *c, const char *key, bool dflt);
int32_t gn__ak_attr_type(const gn__kctx *c, const char *key, int32_t dflt);

/* ---- messages ----------------------------------------------------------------------- */
/* TensorFlow's TensorShape::DebugString: "[2,3]", "[]". Returns buf. */
const char *gn__ak_shape_str(char *buf, int32_t rank, const int64_t *dims);
static inline const char *gn__ak_tshape(char *buf, const gn__tensor *t)
{
    return gn__ak_shape_str(buf, t->rank, t->dims);
}
/* TensorFlow's SliceDebugString: the coordinates of flat index i in dims, "[1,2]"; "" for a scalar. */
const char *gn__ak_index_str(char *buf, int32_t rank, const int64_t *dims, int64_t i);

/* ---- TensorProto into a kernel output (tensor_proto.c) ---------------------------- */
/* Decodes p into output k (allocated with the context's allocator). With
 * borrow, a fixed-size payload whose bytes already have the tensor's layout
 * (tensor_content, or a full typed field of the same type) is aliased instead
 * (buf NULL): p must outlive the output. */
gn_status gn__ak_tensor_from_proto_out(gn__kctx *c, uint32_t k, const Tensorflow__TensorProto *p, bool borrow);

#endif
