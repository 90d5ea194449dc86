/* Array kernels that move elements by strides: Transpose, Slice,
 * StridedSlice, Pad, MirrorPad, Tile, ReverseV2, ReverseSequence, BroadcastTo,
 * SpaceToDepth, DepthToSpace.
 *
 * After tensorflow/core/kernels/{transpose_op, slice_op, strided_slice_op,
 * pad_op, mirror_pad_op, tile_ops, reverse_op, broadcast_to_op,
 * spacetodepth_op, depthtospace_op}.cc and
 * tensorflow/core/util/strided_slice_op.cc (ValidateStridedSliceOp, ported
 * step by step). Every kernel reduces to gn__ak_copy_nd over a strided view. */
#include <stdio.h>
#include <stdlib.h>

#include "ops/kernels/array_impl.h"

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_STRING TENSORFLOW__DATA_TYPE__DT_STRING

static gn_status need_inputs(gn__kctx *c, uint32_t n)
{
    if (c->n_in < n) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects %u inputs, got %u", n, c->n_in);
    return GN_OK;
}

/* Output k of dims (rank r) = view of x at element offset `off` with strides
 * sstride (elements). */
static gn_status strided_out(gn__kctx *c, uint32_t k, const gn__tensor *x, int32_t r, const int64_t *dims,
                             int64_t off, const int64_t *sstride)
{
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, k, x->dtype, r, dims, &o));
    if (o.n) {
        int64_t dstride[GN__AK_COPY_MAX];
        gn__ak_strides(r, dims, dstride);
        size_t esz = gn__ak_esize(x->dtype);
        gn__ak_copy_nd(o.data, dstride, (const char *)x->data + off * (int64_t)esz, sstride, r, dims, esz);
    }
    return gn__ak_out_end(c, &o);
}

/* ---- Transpose --------------------------------------------------------------------- */
static void conjugate(void *data, int64_t n, int32_t dt)
{
    if (dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX64) {
        float *f = data;
        for (int64_t i = 0; i < n; i++) f[2 * i + 1] = -f[2 * i + 1];
    } else if (dt == TENSORFLOW__DATA_TYPE__DT_COMPLEX128) {
        double *f = data;
        for (int64_t i = 0; i < n; i++) f[2 * i + 1] = -f[2 * i + 1];
    }
}

static gn_status transpose_impl(gn__kctx *c, bool conj)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *pt = &c->in[1];
    char sb[GN__AK_SHAPE_STR];
    if (pt->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "perm must be rank 1, got shape %s", gn__ak_tshape(sb, pt));
    int32_t r = x->rank;
    if (pt->dims[0] != r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "transpose expects a vector of size %d. But input(1) is a vector of size %lld",
                             r, (long long)pt->dims[0]);
    int64_t perm[GN__MAX_DIMS];
    int32_t n;
    GN_TRY(gn__ak_read_ints(c, 1, "perm", false, perm, GN__MAX_DIMS, &n));
    bool seen[GN__MAX_DIMS] = {false}, identity = true;
    for (int32_t i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%lld is out of range [0 .. %d)", (long long)perm[i], r);
        seen[perm[i]] = true;
        if (perm[i] != i) identity = false;
    }
    for (int32_t i = 0; i < r; i++)
        if (!seen[i]) {
            char list[GN__AK_SHAPE_STR];
            gn__ak_shape_str(list, r, perm);
            list[strlen(list) - 1] = 0;
            return gn__kctx_fail(c, GN_ERR_GRAPH, "%d is missing from {%s}.", i, list + 1);
        }
    bool cplx = gn__dtype_is_complex(x->dtype);
    if (identity && !(conj && cplx)) return gn__kctx_forward(c, 0, 0);
    int64_t dims[GN__MAX_DIMS], istr[GN__MAX_DIMS], sstr[GN__MAX_DIMS];
    gn__ak_strides(r, x->dims, istr);
    for (int32_t i = 0; i < r; i++) {
        dims[i] = x->dims[perm[i]];
        sstr[i] = istr[perm[i]];
    }
    GN_TRY(strided_out(c, 0, x, r, dims, 0, sstr));
    if (conj && cplx) conjugate(c->out[0].data, gn__tensor_numel(&c->out[0]), x->dtype);
    return GN_OK;
}

gn_status gn__ak_transpose(gn__kctx *c) { return transpose_impl(c, false); }
gn_status gn__ak_conjugate_transpose(gn__kctx *c) { return transpose_impl(c, true); }

/* ---- Slice -------------------------------------------------------------------------- */
gn_status gn__ak_slice(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 3));
    const gn__tensor *x = &c->in[0], *bt = &c->in[1], *st = &c->in[2];
    int32_t r = x->rank;
    char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
    if (bt->rank != 1 || st->rank != 1 || bt->dims[0] != r || st->dims[0] != r)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Expected begin and size arguments to be 1-D tensors of size %d, but got shapes %s and %s "
                             "instead.",
                             r, gn__ak_tshape(sa, bt), gn__ak_tshape(sb, st));
    int64_t b[GN__MAX_DIMS], s[GN__MAX_DIMS];
    int32_t nb, ns;
    GN_TRY(gn__ak_read_ints(c, 1, "begin", false, b, GN__MAX_DIMS, &nb));
    GN_TRY(gn__ak_read_ints(c, 2, "size", false, s, GN__MAX_DIMS, &ns));
    bool identity = true;
    for (int32_t i = 0; i < r; i++) {
        int64_t dim = x->dims[i];
        if (s[i] == -1) s[i] = dim - b[i];
        if (dim == 0) {
            if (b[i] != 0 || s[i] != 0)
                return gn__kctx_fail(c, GN_ERR_GRAPH,
                                     "Expected begin[%d] == 0 (got %lld) and size[%d] == 0 (got %lld) when "
                                     "input.dim_size(%d) == 0",
                                     i, (long long)b[i], i, (long long)s[i], i);
        } else {
            if (b[i] < 0 || b[i] > dim)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected begin[%d] in [0, %lld], but got %lld", i,
                                     (long long)dim, (long long)b[i]);
            if (s[i] < 0 || b[i] + s[i] > dim)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected size[%d] in [0, %lld], but got %lld", i,
                                     (long long)(dim - b[i]), (long long)s[i]);
        }
        if (b[i] != 0 || s[i] != dim) identity = false;
    }
    if (identity) return gn__kctx_forward(c, 0, 0);
    int64_t istr[GN__MAX_DIMS], off = 0;
    gn__ak_strides(r, x->dims, istr);
    bool empty = false;
    for (int32_t i = 0; i < r; i++) {
        if (s[i] == 0) empty = true;
        off += b[i] * istr[i];
    }
    return strided_out(c, 0, x, r, s, empty ? 0 : off, istr);
}

/* ---- StridedSlice -------------------------------------------------------------------- */
enum { SHRINK = -1, NEWAXIS = -2 };

gn_status gn__ak_strided_slice(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 4));
    const gn__tensor *x = &c->in[0], *bt = &c->in[1], *et = &c->in[2], *st = &c->in[3];
    int64_t ns = gn__tensor_numel(st);
    bool begin_wrong = !(bt->rank == 1 && gn__tensor_numel(bt) == ns && ns < 32);
    bool end_wrong = !(et->rank == 1 && gn__tensor_numel(et) == ns);
    if (begin_wrong || end_wrong || st->rank != 1) {
        char s1[GN__AK_SHAPE_STR], s2[GN__AK_SHAPE_STR], s3[GN__AK_SHAPE_STR];
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "Expected begin, end, and strides to be 1D equal size tensors, but got shapes %s, %s, and "
                             "%s instead.",
                             gn__ak_tshape(s1, bt), gn__ak_tshape(s2, et), gn__ak_tshape(s3, st));
    }
    for (int k = 1; k <= 3; k++)
        if (c->in[k].dtype != DT_INT32 && c->in[k].dtype != DT_INT64)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "begin, end and strides must be int32 or int64, not %s",
                                 gn__dtype_name(c->in[k].dtype));
    uint32_t bm = (uint32_t)gn__ak_attr_int(c, "begin_mask", 0), em = (uint32_t)gn__ak_attr_int(c, "end_mask", 0);
    uint32_t elm = (uint32_t)gn__ak_attr_int(c, "ellipsis_mask", 0);
    uint32_t nam = (uint32_t)gn__ak_attr_int(c, "new_axis_mask", 0);
    uint32_t sam = (uint32_t)gn__ak_attr_int(c, "shrink_axis_mask", 0);
    if (elm && (elm & (elm - 1))) return gn__kctx_fail(c, GN_ERR_GRAPH, "Multiple ellipses in slice spec not allowed");

    /* Step 1: account for the ellipsis and new axes */
    int32_t sdims = (int32_t)ns, add_after = 0;
    bool seen = false;
    for (int32_t i = 0; i < sdims; i++) {
        if (seen && (nam & (1u << i))) add_after++;
        if (elm & (1u << i)) seen = true;
    }
    if (!seen) {
        elm |= 1u << sdims;
        sdims++;
    }

    /* Step 2: sparse spec -> dense spec (one entry per input dim) */
    int32_t R = x->rank;
    int64_t begin[GN__MAX_DIMS], end[GN__MAX_DIMS], stride[GN__MAX_DIMS];
    uint32_t dbm = 0, dem = 0, dsm = 0;
    int32_t gather[40];
    int32_t ng = 0, full = 0;
    for (int32_t i = 0; i < sdims; i++) {
        if (elm & (1u << i)) {
            int32_t next = R - (sdims - i) + 1 + add_after;
            if (next > R) next = R;
            for (; full < next; full++) {
                begin[full] = end[full] = 0;
                stride[full] = 1;
                dbm |= 1u << full;
                dem |= 1u << full;
                gather[ng++] = full;
            }
        } else if (nam & (1u << i)) {
            gather[ng++] = NEWAXIS;
        } else {
            if (full == R)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "Index out of range using input dim %d; input has only %d dims",
                                     full, R);
            begin[full] = gn__ak_int_at(bt, i);
            end[full] = gn__ak_int_at(et, i);
            stride[full] = gn__ak_int_at(st, i);
            if (bm & (1u << i)) dbm |= 1u << full;
            if (em & (1u << i)) dem |= 1u << full;
            if (sam & (1u << i)) {
                gather[ng++] = SHRINK;
                dsm |= 1u << full;
            } else {
                gather[ng++] = full;
            }
            full++;
        }
    }
    for (; full < R; full++) { /* not reached for a well-formed spec; keep the dims whole */
        begin[full] = end[full] = 0;
        stride[full] = 1;
        dbm |= 1u << full;
        dem |= 1u << full;
    }

    /* Step 3: explicit ranges, bounds checks, the processing shape */
    int64_t proc[GN__MAX_DIMS];
    bool identity = true;
    for (int32_t i = 0; i < R; i++) {
        int64_t s = stride[i], dim = x->dims[i];
        if (s == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "strides[%d] must be non-zero", i);
        bool shrink = (dsm >> i) & 1;
        if (shrink && s <= 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "only stride 1 allowed on non-range indexing.");
        int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? dim : dim - 1;
        if (shrink) {
            int64_t xf = begin[i] < 0 ? dim + begin[i] : begin[i];
            begin[i] = xf;
            end[i] = xf + 1;
            if (xf < 0 || xf >= dim)
                return gn__kctx_fail(c, GN_ERR_GRAPH, "slice index %lld of dimension %d out of bounds.", (long long)xf,
                                     i);
        } else {
            if ((dbm >> i) & 1) begin[i] = s > 0 ? lo : hi;
            else {
                int64_t xf = begin[i] < 0 ? dim + begin[i] : begin[i];
                begin[i] = xf < lo ? lo : xf > hi ? hi : xf;
            }
            if ((dem >> i) & 1) end[i] = s > 0 ? hi : lo;
            else {
                int64_t xf = end[i] < 0 ? dim + end[i] : end[i];
                end[i] = xf < lo ? lo : xf > hi ? hi : xf;
            }
        }
        identity = identity && s == 1 && begin[i] == 0 && end[i] == dim;
        int64_t len = end[i] - begin[i];
        if (len == 0 || ((len < 0) != (s < 0))) proc[i] = 0;
        else proc[i] = len / s + (len % s != 0 ? 1 : 0);
    }

    /* Step 4: the final shape */
    int64_t fdims[40];
    int32_t fr = 0;
    for (int32_t k = 0; k < ng; k++) {
        if (gather[k] >= 0) fdims[fr++] = proc[gather[k]];
        else if (gather[k] == NEWAXIS) fdims[fr++] = 1;
    }
    if (fr > GN__MAX_DIMS)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "rank %d is over the supported %d", fr, GN__MAX_DIMS);
    if (identity) return gn__kctx_forward_reshape(c, 0, 0, fr, fdims);

    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, fr, fdims, &o));
    if (o.n) {
        int64_t istr[GN__MAX_DIMS], sstr[GN__MAX_DIMS], dstr[GN__MAX_DIMS], off = 0;
        gn__ak_strides(R, x->dims, istr);
        gn__ak_strides(R, proc, dstr);
        for (int32_t i = 0; i < R; i++) {
            off += begin[i] * istr[i];
            sstr[i] = istr[i] * stride[i];
        }
        size_t esz = gn__ak_esize(x->dtype);
        gn__ak_copy_nd(o.data, dstr, (const char *)x->data + off * (int64_t)esz, sstr, R, proc, esz);
    }
    return gn__ak_out_end(c, &o);
}

/* ---- Pad, PadV2, MirrorPad ------------------------------------------------------------ */
static gn_status read_paddings(gn__kctx *c, const gn__tensor *x, int64_t (*pad)[2], bool *zero)
{
    const gn__tensor *pt = &c->in[1];
    char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
    if (!(pt->rank == 2 && pt->dims[1] == 2))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "paddings must be a matrix with 2 columns: %s", gn__ak_tshape(sa, pt));
    if (pt->dims[0] != x->rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "The first dimension of paddings must be the rank of inputs%s %s",
                             gn__ak_tshape(sa, pt), gn__ak_tshape(sb, x));
    if (pt->dtype != DT_INT32 && pt->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "paddings must be int32 or int64, not %s", gn__dtype_name(pt->dtype));
    *zero = true;
    for (int32_t i = 0; i < x->rank; i++) {
        pad[i][0] = gn__ak_int_at(pt, 2 * i);
        pad[i][1] = gn__ak_int_at(pt, 2 * i + 1);
        if (pad[i][0] || pad[i][1]) *zero = false;
    }
    return GN_OK;
}

gn_status gn__ak_pad(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0];
    int32_t r = x->rank;
    int64_t pad[GN__MAX_DIMS][2];
    bool zero;
    GN_TRY(read_paddings(c, x, pad, &zero));
    size_t esz = gn__ak_esize(x->dtype);
    unsigned char cv[16] = {0};
    if (c->n_in >= 3) {
        const gn__tensor *v = &c->in[2];
        char sa[GN__AK_SHAPE_STR];
        if (v->rank != 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "constant_values must be a scalar. Found: %s", gn__ak_tshape(sa, v));
        if (v->dtype != x->dtype)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "constant_values is %s, input is %s", gn__dtype_name(v->dtype),
                                 gn__dtype_name(x->dtype));
        if (esz && esz <= sizeof cv) memcpy(cv, v->data, esz);
    }
    for (int32_t i = 0; i < r; i++)
        if (pad[i][0] < 0 || pad[i][1] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Paddings must be non-negative: %lld %lld", (long long)pad[i][0],
                                 (long long)pad[i][1]);
    if (zero) return gn__kctx_forward(c, 0, 0);
    int64_t dims[GN__MAX_DIMS];
    for (int32_t i = 0; i < r; i++) dims[i] = pad[i][0] + x->dims[i] + pad[i][1];
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, r, dims, &o));
    gn__ak_fill(o.data, o.n, cv, esz);
    if (o.n && gn__tensor_numel(x)) {
        int64_t ostr[GN__MAX_DIMS], istr[GN__MAX_DIMS], off = 0;
        gn__ak_strides(r, dims, ostr);
        gn__ak_strides(r, x->dims, istr);
        for (int32_t i = 0; i < r; i++) off += pad[i][0] * ostr[i];
        gn__ak_copy_nd((char *)o.data + off * (int64_t)esz, ostr, x->data, istr, r, x->dims, esz);
    }
    return gn__ak_out_end(c, &o);
}

gn_status gn__ak_mirror_pad(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0];
    int32_t r = x->rank;
    const char *mode;
    size_t mlen;
    int offset;
    if (!gn__attr_get_string(c->g, c->node, "mode", &mode, &mlen))
        return gn__kctx_fail(c, GN_ERR_GRAPH, "attr 'mode' is missing");
    if (mlen == 9 && !memcmp(mode, "SYMMETRIC", 9)) offset = 0;
    else if (mlen == 7 && !memcmp(mode, "REFLECT", 7)) offset = 1;
    else return gn__kctx_fail(c, GN_ERR_GRAPH, "mode must be either REFLECT or SYMMETRIC.");
    int64_t pad[GN__MAX_DIMS][2];
    bool zero;
    GN_TRY(read_paddings(c, x, pad, &zero));
    for (int32_t i = 0; i < r; i++) {
        int64_t b = pad[i][0], a = pad[i][1], d = x->dims[i];
        if (b < 0 || a < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "paddings must be non-negative: %lld %lld", (long long)b, (long long)a);
        if (offset == 0 && (b > d || a > d))
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "paddings must be no greater than the dimension size: %lld, %lld greater than %lld",
                                 (long long)b, (long long)a, (long long)d);
        if (offset == 1 && (b >= d || a >= d))
            return gn__kctx_fail(c, GN_ERR_GRAPH,
                                 "paddings must be less than the dimension size: %lld, %lld not less than %lld",
                                 (long long)b, (long long)a, (long long)d);
    }
    if (r == 0 || zero) return gn__kctx_forward(c, 0, 0);
    int64_t dims[GN__MAX_DIMS];
    for (int32_t i = 0; i < r; i++) dims[i] = pad[i][0] + x->dims[i] + pad[i][1];
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, r, dims, &o));
    if (!o.n) return gn__ak_out_end(c, &o);
    size_t esz = gn__ak_esize(x->dtype);
    int64_t e = (int64_t)esz;
    char *out = o.data;
    int64_t ostr[GN__MAX_DIMS], istr[GN__MAX_DIMS], off = 0;
    gn__ak_strides(r, dims, ostr);
    gn__ak_strides(r, x->dims, istr);
    for (int32_t i = 0; i < r; i++) off += pad[i][0] * ostr[i];
    gn__ak_copy_nd(out + off * e, ostr, x->data, istr, r, x->dims, esz);
    /* Axis by axis: the pads of axis d mirror the rows already filled (full
     * extent on the axes before d, the interior on the axes after it). */
    for (int32_t d = 0; d < r; d++) {
        int64_t rd[GN__MAX_DIMS], base = 0;
        for (int32_t j = 0; j < r; j++) {
            if (j < d) rd[j] = dims[j];
            else {
                rd[j] = x->dims[j];
                if (j > d) base += pad[j][0] * ostr[j];
            }
        }
        int64_t sstr[GN__MAX_DIMS];
        memcpy(sstr, ostr, sizeof sstr);
        sstr[d] = -ostr[d];
        int64_t b = pad[d][0], a = pad[d][1], n = x->dims[d];
        if (b) {
            rd[d] = b;
            int64_t src = 2 * b - 1 + offset;
            gn__ak_copy_nd(out + base * e, ostr, out + (base + src * ostr[d]) * e, sstr, r, rd, esz);
        }
        if (a) {
            rd[d] = a;
            int64_t dst = b + n, src = b + n - 1 - offset;
            gn__ak_copy_nd(out + (base + dst * ostr[d]) * e, ostr, out + (base + src * ostr[d]) * e, sstr, r, rd, esz);
        }
    }
    return gn__ak_out_end(c, &o);
}

/* ---- Tile ----------------------------------------------------------------------------- */
gn_status gn__ak_tile(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *mt = &c->in[1];
    int32_t r = x->rank;
    if (mt->rank != 1 || mt->dims[0] != r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected multiples argument to be a vector of length %d but got length %lld",
                             r, (long long)(mt->rank >= 1 ? mt->dims[0] : 0));
    int64_t m[GN__MAX_DIMS];
    int32_t n;
    GN_TRY(gn__ak_read_ints(c, 1, "multiples", false, m, GN__MAX_DIMS, &n));
    bool ones = true;
    for (int32_t i = 0; i < r; i++) {
        if (m[i] < 0)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Expected multiples[%d] >= 0, but got %lld", i, (long long)m[i]);
        if (m[i] != 1) ones = false;
    }
    if (ones) return gn__kctx_forward(c, 0, 0);
    int64_t dims[GN__MAX_DIMS];
    for (int32_t i = 0; i < r; i++) {
        if (m[i] && x->dims[i] > INT64_MAX / m[i]) return gn__kctx_fail(c, GN_ERR_GRAPH, "element count overflows");
        dims[i] = x->dims[i] * m[i];
    }
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, r, dims, &o));
    if (o.n) {
        int64_t ostr[GN__MAX_DIMS], istr[GN__MAX_DIMS];
        gn__ak_strides(r, dims, ostr);
        gn__ak_strides(r, x->dims, istr);
        int64_t vd[2 * GN__MAX_DIMS], vds[2 * GN__MAX_DIMS], vss[2 * GN__MAX_DIMS];
        for (int32_t i = 0; i < r; i++) {
            vd[2 * i] = m[i];
            vds[2 * i] = x->dims[i] * ostr[i];
            vss[2 * i] = 0;
            vd[2 * i + 1] = x->dims[i];
            vds[2 * i + 1] = ostr[i];
            vss[2 * i + 1] = istr[i];
        }
        gn__ak_copy_nd(o.data, vds, x->data, vss, 2 * r, vd, gn__ak_esize(x->dtype));
    }
    return gn__ak_out_end(c, &o);
}

/* ---- Reverse ---------------------------------------------------------------------------- */
static gn_status reverse_axes(gn__kctx *c, const gn__tensor *x, const bool *rev)
{
    int32_t r = x->rank;
    bool any = false;
    for (int32_t i = 0; i < r; i++)
        if (rev[i] && x->dims[i] > 1) any = true;
    if (!any) return gn__kctx_forward(c, 0, 0);
    int64_t istr[GN__MAX_DIMS], sstr[GN__MAX_DIMS], off = 0;
    gn__ak_strides(r, x->dims, istr);
    for (int32_t i = 0; i < r; i++) {
        sstr[i] = rev[i] ? -istr[i] : istr[i];
        if (rev[i] && x->dims[i] > 0) off += (x->dims[i] - 1) * istr[i];
    }
    return strided_out(c, 0, x, r, x->dims, gn__tensor_numel(x) ? off : 0, sstr);
}

gn_status gn__ak_reverse_v2(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *at = &c->in[1];
    if (at->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "'dims' must be 1-dimension, not %d", at->rank);
    int64_t ax[GN__MAX_DIMS];
    int32_t n;
    GN_TRY(gn__ak_read_ints(c, 1, "axis", false, ax, GN__MAX_DIMS, &n));
    int32_t r = x->rank;
    bool rev[GN__MAX_DIMS] = {false};
    for (int32_t i = 0; i < n; i++) {
        int64_t a = ax[i];
        if (a < -r || a >= r)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "'axis'[%d] = %lld is out of valid range [0, %d]", i, (long long)a,
                                 r - 1);
        if (a < 0) a += r;
        if (rev[a]) return gn__kctx_fail(c, GN_ERR_GRAPH, "axis %lld specified more than once.", (long long)a);
        rev[a] = true;
    }
    return reverse_axes(c, x, rev);
}

/* ---- BroadcastTo ------------------------------------------------------------------------ */
gn_status gn__ak_broadcast_to(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0];
    int64_t dims[GN__MAX_DIMS];
    int32_t r;
    GN_TRY(gn__ak_read_ints(c, 1, "shape", false, dims, GN__MAX_DIMS, &r));
    char sa[GN__AK_SHAPE_STR], sb[GN__AK_SHAPE_STR];
    for (int32_t i = 0; i < r; i++)
        if (dims[i] < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Dimension %lld must be >= 0", (long long)dims[i]);
    if (x->rank > r)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Rank of input (%d) must be no greater than rank of output shape (%d).",
                             x->rank, r);
    int64_t istr[GN__MAX_DIMS], sstr[GN__MAX_DIMS];
    gn__ak_strides(x->rank, x->dims, istr);
    bool same = x->rank == r;
    for (int32_t i = 0; i < r; i++) {
        int32_t j = i - (r - x->rank);
        int64_t xd = j >= 0 ? x->dims[j] : 1;
        if (xd == dims[i]) sstr[i] = j >= 0 ? istr[j] : 0;
        else if (xd == 1) {
            sstr[i] = 0;
            same = false;
        } else {
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Unable to broadcast tensor of shape %s to tensor of shape %s",
                                 gn__ak_tshape(sa, x), gn__ak_shape_str(sb, r, dims));
        }
    }
    if (same) return gn__kctx_forward(c, 0, 0);
    return strided_out(c, 0, x, r, dims, 0, sstr);
}

/* ---- SpaceToDepth / DepthToSpace ----------------------------------------------------------- */
/* Both are transposes of a 6-d view; `to_depth` picks the direction. */
static gn_status space_depth(gn__kctx *c, bool to_depth)
{
    GN_TRY(need_inputs(c, 1));
    const gn__tensor *x = &c->in[0];
    int64_t bs = gn__ak_attr_int(c, "block_size", 0);
    if (bs < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "Block size should be > 1, but was: %lld", (long long)bs);
    const char *fmt = "NHWC";
    size_t flen = 4;
    (void)gn__attr_get_string(c->g, c->node, "data_format", &fmt, &flen);
    bool nchw;
    if (flen == 4 && !memcmp(fmt, "NHWC", 4)) nchw = false;
    else if (flen == 4 && !memcmp(fmt, "NCHW", 4)) nchw = true;
    else return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "data_format %.*s is not supported", (int)flen, fmt);
    if (x->rank != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "Input rank should be: 4 instead of: %d", x->rank);
    int64_t B = x->dims[0], H = x->dims[nchw ? 2 : 1], W = x->dims[nchw ? 3 : 2], C = x->dims[nchw ? 1 : 3];
    int64_t vin[6], perm[6], odims[4];
    if (to_depth) {
        if (H % bs || W % bs)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Image width %lld and height %lld should be divisible by block_size: %lld",
                                 (long long)W, (long long)H, (long long)bs);
        int64_t oh = H / bs, ow = W / bs, oc = C * bs * bs;
        if (!nchw) {
            /* [B, oh, bh, ow, bw, C] -> [B, oh, ow, bh, bw, C] */
            int64_t v[6] = {B, oh, bs, ow, bs, C}, p[6] = {0, 1, 3, 2, 4, 5}, od[4] = {B, oh, ow, oc};
            memcpy(vin, v, sizeof v), memcpy(perm, p, sizeof p), memcpy(odims, od, sizeof od);
        } else {
            /* [B, C, oh, bh, ow, bw] -> [B, bh, bw, C, oh, ow] */
            int64_t v[6] = {B, C, oh, bs, ow, bs}, p[6] = {0, 3, 5, 1, 2, 4}, od[4] = {B, oc, oh, ow};
            memcpy(vin, v, sizeof v), memcpy(perm, p, sizeof p), memcpy(odims, od, sizeof od);
        }
    } else {
        if (C % (bs * bs))
            return gn__kctx_fail(c, GN_ERR_GRAPH, "Input depth dimension %lld should be divisible by: %lld", (long long)C,
                                 (long long)(bs * bs));
        int64_t oc = C / (bs * bs), oh = H * bs, ow = W * bs;
        if (!nchw) {
            /* [B, H, W, bh, bw, oc] -> [B, H, bh, W, bw, oc] */
            int64_t v[6] = {B, H, W, bs, bs, oc}, p[6] = {0, 1, 3, 2, 4, 5}, od[4] = {B, oh, ow, oc};
            memcpy(vin, v, sizeof v), memcpy(perm, p, sizeof p), memcpy(odims, od, sizeof od);
        } else {
            /* [B, bh, bw, oc, H, W] -> [B, oc, H, bh, W, bw] */
            int64_t v[6] = {B, bs, bs, oc, H, W}, p[6] = {0, 3, 4, 1, 5, 2}, od[4] = {B, oc, oh, ow};
            memcpy(vin, v, sizeof v), memcpy(perm, p, sizeof p), memcpy(odims, od, sizeof od);
        }
    }
    int64_t istr[6], vdims[6], sstr[6], dstr[6];
    gn__ak_strides(6, vin, istr);
    for (int i = 0; i < 6; i++) {
        vdims[i] = vin[perm[i]];
        sstr[i] = istr[perm[i]];
    }
    gn__ak_strides(6, vdims, dstr);
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, 4, odims, &o));
    if (o.n) gn__ak_copy_nd(o.data, dstr, x->data, sstr, 6, vdims, gn__ak_esize(x->dtype));
    return gn__ak_out_end(c, &o);
}

gn_status gn__ak_space_to_depth(gn__kctx *c) { return space_depth(c, true); }
gn_status gn__ak_depth_to_space(gn__kctx *c) { return space_depth(c, false); }

/* ---- Reverse (v1: a bool per dim) ---------------------------------------------------------- */
gn_status gn__ak_reverse(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *dt = &c->in[1];
    char sb[GN__AK_SHAPE_STR];
    if (dt->rank != 1 || dt->dtype != TENSORFLOW__DATA_TYPE__DT_BOOL)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "'dims' must be a 1-D bool tensor, not %s %s", gn__dtype_name(dt->dtype),
                             gn__ak_tshape(sb, dt));
    if (dt->dims[0] != x->rank)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "'dims' must have the same number of values as 'input' has dimensions. "
                             "'input' has %d'dims' has %lld values",
                             x->rank, (long long)dt->dims[0]);
    bool rev[GN__MAX_DIMS] = {false};
    for (int32_t i = 0; i < x->rank; i++) rev[i] = ((const uint8_t *)dt->data)[i] != 0;
    return reverse_axes(c, x, rev);
}

/* ---- ReverseSequence ---------------------------------------------------------------------------- */
/* reverse_sequence_op.cc: slice b along batch_dim has its first seq_lengths[b]
 * elements along seq_dim reversed, the rest copied. */
gn_status gn__ak_reverse_sequence(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 2));
    const gn__tensor *x = &c->in[0], *sl = &c->in[1];
    int64_t sd = gn__ak_attr_int(c, "seq_dim", -1), bd = gn__ak_attr_int(c, "batch_dim", 0);
    int32_t r = x->rank;
    if (sd < 0 || bd < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "Invalid %s %lld", sd < 0 ? "seq_dim" : "batch_dim",
                                               (long long)(sd < 0 ? sd : bd));
    if (bd == sd) return gn__kctx_fail(c, GN_ERR_GRAPH, "batch_dim == seq_dim == %lld", (long long)sd);
    if (sd >= r) return gn__kctx_fail(c, GN_ERR_GRAPH, "seq_dim must be < input rank ( %lld vs. %d)", (long long)sd, r);
    if (bd >= r) return gn__kctx_fail(c, GN_ERR_GRAPH, "batch_dim must be < input rank ( %lld vs. %d)", (long long)bd, r);
    if (sl->dtype != DT_INT32 && sl->dtype != DT_INT64)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "seq_lengths must be int32 or int64, not %s", gn__dtype_name(sl->dtype));
    if (sl->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "seq_lengths must be 1-dim, not %d", sl->rank);
    if (sl->dims[0] != x->dims[bd])
        return gn__kctx_fail(c, GN_ERR_GRAPH, "Length of seq_lengths != input.dims(%lld), (%lld vs. %lld)", (long long)bd,
                             (long long)sl->dims[0], (long long)x->dims[bd]);
    for (int64_t b = 0; b < sl->dims[0]; b++) {
        int64_t len = gn__ak_int_at(sl, b);
        if (len < 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "seq_lens(%lld) < 0", (long long)b);
        if (len > x->dims[sd])
            return gn__kctx_fail(c, GN_ERR_GRAPH, "seq_lens(%lld) > input.dims(%lld)", (long long)b, (long long)sd);
    }
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, r, x->dims, &o));
    if (o.n) {
        /* Dims up to the later of the two are walked one index at a time;
         * the dims after it move as one block of `inner` elements. */
        int32_t last = (int32_t)(bd > sd ? bd : sd);
        int64_t str[GN__MAX_DIMS], idx[GN__MAX_DIMS] = {0};
        gn__ak_strides(r, x->dims, str);
        size_t esz = gn__ak_esize(x->dtype), block = (size_t)str[last] * esz;
        int64_t blocks = o.n / str[last];
        for (int64_t q = 0; q < blocks; q++) {
            int64_t len = gn__ak_int_at(sl, idx[bd]), s = idx[sd];
            int64_t from = q * str[last] + (s < len ? (len - 1 - 2 * s) * str[sd] : 0);
            memcpy((char *)o.data + (size_t)q * block, (const char *)x->data + (size_t)from * esz, block);
            for (int32_t d = last; d >= 0 && ++idx[d] == x->dims[d]; d--) idx[d] = 0;
        }
    }
    return gn__ak_out_end(c, &o);
}

/* ---- MatrixBandPart ----------------------------------------------------------------------------- */
gn_status gn__ak_matrix_band_part(gn__kctx *c)
{
    GN_TRY(need_inputs(c, 3));
    const gn__tensor *x = &c->in[0];
    char sb[GN__AK_SHAPE_STR];
    if (x->rank < 2)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "input must be at least 2-dim, received shape: %s", gn__ak_tshape(sb, x));
    int64_t lower, upper;
    GN_TRY(gn__ak_read_scalar_int(c, 1, "num_lower", &lower));
    GN_TRY(gn__ak_read_scalar_int(c, 2, "num_upper", &upper));
    int64_t M = x->dims[x->rank - 2], N = x->dims[x->rank - 1];
    if (lower > M)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "num_lower must be negative or less or equal to number of rows (%lld) got: %lld",
                             (long long)M, (long long)lower);
    if (upper > N)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "num_upper must be negative or less or equal to number of columns (%lld) got: %lld",
                             (long long)N, (long long)upper);
    if ((lower < 0 || lower >= M - 1) && (upper < 0 || upper >= N - 1)) return gn__kctx_forward(c, 0, 0);
    gn__ak_out o;
    GN_TRY(gn__ak_out_begin(c, 0, x->dtype, x->rank, x->dims, &o));
    if (o.n) {
        size_t esz = gn__ak_esize(x->dtype);
        const char *src = x->data;
        char *dst = o.data;
        int64_t mats = o.n / (M * N);
        for (int64_t b = 0; b < mats; b++)
            for (int64_t m = 0; m < M; m++) {
                size_t row = (size_t)((b * M + m) * N) * esz;
                /* kept: max(0, m - lower) <= n < min(N, m + upper + 1) */
                int64_t lo = lower < 0 ? 0 : (m - lower > 0 ? m - lower : 0);
                int64_t hi = upper < 0 ? N : (m + upper + 1 < N ? m + upper + 1 : N);
                if (hi < lo) hi = lo;
                memset(dst + row, 0, (size_t)N * esz);
                if (hi > lo) memcpy(dst + row + (size_t)lo * esz, src + row + (size_t)lo * esz, (size_t)(hi - lo) * esz);
            }
    }
    return gn__ak_out_end(c, &o);
}
