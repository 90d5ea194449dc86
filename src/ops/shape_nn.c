/* Shape functions: neural-network ops: convolution and pooling, matrix
 * products (MatMul, BatchMatMul, Einsum), batch norm. */
#include "ops/shape_fn.h"

/* ---- convolution and pooling -------------------------------------------------- */
/* TensorFlow's GetWindowedOutputSize, with the same arithmetic */
static gn_status window(ctx *c, int64_t in, int64_t k, int64_t s, int64_t dil, int pad, int64_t pb, int64_t pa,
                        int64_t *out)
{
    *out = -1;
    if (s <= 0) return gn__shape_fail(c, "strides must be positive, got %lld", (long long)s);
    if (dil <= 0) return gn__shape_fail(c, "dilations must be positive, got %lld", (long long)dil);
    if (in < 0) return GN_OK;
    if (pad == PAD_SAME) {
        *out = in / s + (in % s != 0);
        return GN_OK;
    }
    if (k < 0) return GN_OK;
    if (pad != PAD_EXPLICIT) pb = pa = 0;
    if (pb < 0 || pa < 0) return gn__shape_fail(c, "explicit paddings must be non-negative");
    int64_t eff, num;
    if (__builtin_mul_overflow(k - 1, dil, &eff) || __builtin_add_overflow(eff, 1, &eff) ||
        __builtin_add_overflow(in, pb, &num) || __builtin_add_overflow(num, pa, &num) ||
        __builtin_add_overflow(num - eff, s, &num))
        return gn__shape_fail(c, "window arithmetic overflows (input %lld, filter %lld, dilation %lld, stride %lld)",
                              (long long)in, (long long)k, (long long)dil, (long long)s);
    int64_t o = num / s;
    if (o < 0)
        return gn__shape_fail(c, "computed output size would be negative: %lld (input %lld, effective filter %lld, stride %lld)",
                              (long long)o, (long long)in, (long long)eff, (long long)s);
    *out = o;
    return GN_OK;
}

static int64_t list_i(const Tensorflow__AttrValue__ListValue *l, int32_t i, int64_t def)
{
    return l && i >= 0 && (size_t)i < l->n_i ? l->i[i] : def;
}

/* Conv2D / Conv3D / DepthwiseConv2dNative and the fused forms: input in the
 * data_format, filter [spatial..., in, out] */
static gn_status conv_nd(ctx *c, int nsp, bool depthwise)
{
    NEED(c, 2, 1);
    const gn__shape *x = IS(c, 0), *f = IS(c, 1);
    int32_t rank = nsp + 2;
    char s1[SB];
    if (x->rank >= 0 && x->rank != rank)
        return gn__shape_fail(c, "input must be %d-dimensional, got %s", rank, sstr(x, s1));
    if (f->rank >= 0 && f->rank != rank)
        return gn__shape_fail(c, "filter must be %d-dimensional, got %s", rank, sstr(f, s1));
    bool cf = channels_first(c);
    int pad = padding_kind(c);
    const Tensorflow__AttrValue__ListValue *st = attr_list(c, "strides");
    const Tensorflow__AttrValue__ListValue *dl = attr_list(c, "dilations");
    const Tensorflow__AttrValue__ListValue *ep = attr_list(c, "explicit_paddings");
    if (st && st->n_i && st->n_i != (size_t)rank)
        return gn__shape_fail(c, "strides has %zu entries, wants %d", st->n_i, rank);
    if (dl && dl->n_i && dl->n_i != (size_t)rank)
        return gn__shape_fail(c, "dilations has %zu entries, wants %d", dl->n_i, rank);
    if (pad == PAD_EXPLICIT && (!ep || ep->n_i != (size_t)(2 * rank)))
        return gn__shape_fail(c, "explicit_paddings must have %d entries", 2 * rank);
    int64_t d[MAXR];
    for (int32_t i = 0; i < rank; i++) d[i] = -1;
    int32_t ci = cf ? 1 : rank - 1;
    int64_t in_c = x->rank >= 0 ? x->dims[ci] : -1;
    int64_t f_in = f->rank >= 0 ? f->dims[nsp] : -1, f_out = f->rank >= 0 ? f->dims[nsp + 1] : -1;
    if (depthwise) {
        if (in_c >= 0 && f_in >= 0 && in_c != f_in)
            return gn__shape_fail(c, "input depth %lld does not match the filter's input depth %lld", (long long)in_c,
                                  (long long)f_in);
        int64_t ic = in_c >= 0 ? in_c : f_in;
        d[ci] = -1;
        if (ic >= 0 && f_out >= 0 && __builtin_mul_overflow(ic, f_out, &d[ci]))
            return gn__shape_fail(c, "output depth overflows");
    } else {
        if (in_c >= 0 && f_in > 0 && in_c % f_in != 0)
            return gn__shape_fail(c, "input depth %lld is not a multiple of the filter's input depth %lld",
                                  (long long)in_c, (long long)f_in);
        d[ci] = f_out;
    }
    d[0] = x->rank >= 0 ? x->dims[0] : -1;
    for (int i = 0; i < nsp; i++) {
        int32_t di = cf ? 2 + i : 1 + i;
        int64_t in = x->rank >= 0 ? x->dims[di] : -1;
        int64_t k = f->rank >= 0 ? f->dims[i] : -1;
        GN_TRY(window(c, in, k, list_i(st, di, 1), list_i(dl, di, 1), pad, list_i(ep, 2 * di, 0),
                      list_i(ep, 2 * di + 1, 0), &d[di]));
    }
    return set_dims(c, 0, rank, d);
}

gn_status gn__sf_conv2d(ctx *c) { return conv_nd(c, 2, false); }
gn_status gn__sf_conv3d(ctx *c) { return conv_nd(c, 3, false); }
gn_status gn__sf_depthwise(ctx *c) { return conv_nd(c, 2, true); }

/* Pooling: a window over every dim but the batch, ksize/strides in the data_format */
static gn_status pool_impl(ctx *c, int32_t rank, const int64_t *ks, const int64_t *ss, size_t nk)
{
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != rank) return gn__shape_fail(c, "input must be %d-dimensional, got %s", rank, sstr(x, s1));
    if (nk != (size_t)rank) return gn__shape_fail(c, "ksize and strides must have %d entries", rank);
    int pad = padding_kind(c);
    const Tensorflow__AttrValue__ListValue *ep = attr_list(c, "explicit_paddings");
    if (pad == PAD_EXPLICIT && (!ep || ep->n_i != (size_t)(2 * rank)))
        return gn__shape_fail(c, "explicit_paddings must have %d entries", 2 * rank);
    int64_t d[MAXR];
    d[0] = x->rank >= 0 ? x->dims[0] : -1;
    for (int32_t i = 1; i < rank; i++) {
        int64_t in = x->rank >= 0 ? x->dims[i] : -1;
        if (ks[i] < 0 || ss[i] < 0) {
            d[i] = -1;
            continue;
        }
        if (ks[i] == 0) return gn__shape_fail(c, "ksize must be positive");
        GN_TRY(window(c, in, ks[i], ss[i], 1, pad, list_i(ep, 2 * i, 0), list_i(ep, 2 * i + 1, 0), &d[i]));
    }
    GN_TRY(set_dims(c, 0, rank, d));
    for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape; /* MaxPoolWithArgmax */
    return GN_OK;
}

static gn_status pool_attrs(ctx *c, int32_t rank)
{
    NEED(c, 1, 1);
    const Tensorflow__AttrValue__ListValue *kl = attr_list(c, "ksize"), *sl = attr_list(c, "strides");
    if (!kl || !sl || kl->n_i != sl->n_i || kl->n_i > MAXR) return GN_OK;
    int64_t ks[MAXR], ss[MAXR];
    for (size_t i = 0; i < kl->n_i; i++) {
        ks[i] = kl->i[i];
        ss[i] = sl->i[i];
    }
    return pool_impl(c, rank, ks, ss, kl->n_i);
}

gn_status gn__sf_pool(ctx *c) { return pool_attrs(c, 4); }
gn_status gn__sf_pool3d(ctx *c) { return pool_attrs(c, 5); }

/* ExtractImagePatches: [b, out_rows, out_cols, ksize_rows * ksize_cols * depth],
 * the windows dilated by rates */
gn_status gn__sf_extract_image_patches(ctx *c)
{
    NEED(c, 1, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 4) return gn__shape_fail(c, "input must be 4-dimensional, got %s", sstr(x, s1));
    const Tensorflow__AttrValue__ListValue *kl = attr_list(c, "ksizes"), *sl = attr_list(c, "strides"),
                                          *rl = attr_list(c, "rates");
    if (!kl || !sl || !rl || kl->n_i != 4 || sl->n_i != 4 || rl->n_i != 4)
        return gn__shape_fail(c, "ksizes, strides and rates must have 4 entries");
    int pad = padding_kind(c);
    int64_t d[4] = {-1, -1, -1, -1};
    if (x->rank == 4) d[0] = x->dims[0];
    for (int32_t i = 1; i < 3; i++) {
        if (kl->i[i] <= 0) return gn__shape_fail(c, "ksizes must be positive");
        GN_TRY(window(c, x->rank == 4 ? x->dims[i] : -1, kl->i[i], sl->i[i], rl->i[i], pad, 0, 0, &d[i]));
    }
    int64_t kk;
    if (__builtin_mul_overflow(kl->i[1], kl->i[2], &kk) ||
        (x->rank == 4 && x->dims[3] >= 0 && __builtin_mul_overflow(kk, x->dims[3], &d[3])))
        return gn__shape_fail(c, "output depth overflows");
    return set_dims(c, 0, 4, d);
}

gn_status gn__sf_pool_v2(ctx *c)
{
    NEED(c, 3, 1);
    const gn__partial_value *kv = VAL(c, 1), *sv = VAL(c, 2);
    const gn__shape *x = IS(c, 0);
    if (x->rank >= 0 && x->rank != 4) {
        char s1[SB];
        return gn__shape_fail(c, "input must be 4-dimensional, got %s", sstr(x, s1));
    }
    if (!kv || !sv || kv->n != 4 || sv->n != 4) {
        int64_t d[4] = {-1, -1, -1, -1};
        if (x->rank == 4) d[0] = x->dims[0];
        return set_dims(c, 0, 4, d);
    }
    int64_t ks[4], ss[4];
    for (int i = 0; i < 4; i++) {
        if (!vget(kv, i, &ks[i])) ks[i] = -1;
        if (!vget(sv, i, &ss[i])) ss[i] = -1;
    }
    return pool_impl(c, 4, ks, ss, 4);
}

/* Conv2DBackpropInput and friends: the output is described by a shape input */
static gn_status from_shape_input(ctx *c, uint32_t i)
{
    NEED(c, i + 1, 1);
    gn__shape s;
    GN_TRY(shape_from_tensor(c, i, &s));
    c->out[0].shape = s;
    return GN_OK;
}

gn_status gn__sf_shape_input0(ctx *c) { return from_shape_input(c, 0); }
gn_status gn__sf_shape_input1(ctx *c) { return from_shape_input(c, 1); }
gn_status gn__sf_shape_input2(ctx *c) { return from_shape_input(c, 2); }

gn_status gn__sf_conv2d_backprop_input(ctx *c)
{
    NEED(c, 3, 1);
    gn__shape s;
    GN_TRY(shape_from_tensor(c, 0, &s));
    if (s.rank == 2) {
        /* [H, W] only: batch from out_backprop, channels from the filter */
        const gn__shape *ob = IS(c, 2), *f = IS(c, 1);
        bool cf = channels_first(c);
        int64_t d[4];
        d[0] = ob->rank == 4 ? ob->dims[0] : -1;
        int64_t ch = f->rank == 4 ? f->dims[2] : -1;
        if (cf) {
            d[1] = ch;
            d[2] = s.dims[0];
            d[3] = s.dims[1];
        } else {
            d[1] = s.dims[0];
            d[2] = s.dims[1];
            d[3] = ch;
        }
        return set_dims(c, 0, 4, d);
    }
    c->out[0].shape = s;
    return GN_OK;
}

/* ---- matrix products ------------------------------------------------------------ */
static const char *transpose_note(bool ta, bool tb)
{
    if (ta && tb) return " (transpose_a, transpose_b)";
    if (ta) return " (transpose_a)";
    if (tb) return " (transpose_b)";
    return "";
}

gn_status gn__sf_matmul(ctx *c)
{
    NEED(c, 2, 1);
    const gn__shape *a = IS(c, 0), *b = IS(c, 1);
    char s1[SB], s2[SB];
    if (a->rank >= 0 && a->rank != 2) return gn__shape_fail(c, "input 0 must be a matrix, got %s", sstr(a, s1));
    if (b->rank >= 0 && b->rank != 2) return gn__shape_fail(c, "input 1 must be a matrix, got %s", sstr(b, s1));
    bool ta = attr_b(c, "transpose_a", false), tb = attr_b(c, "transpose_b", false);
    int64_t m = a->rank == 2 ? a->dims[ta ? 1 : 0] : -1, ka = a->rank == 2 ? a->dims[ta ? 0 : 1] : -1;
    int64_t kb = b->rank == 2 ? b->dims[tb ? 1 : 0] : -1, n = b->rank == 2 ? b->dims[tb ? 0 : 1] : -1;
    if (ka >= 0 && kb >= 0 && ka != kb)
        return gn__shape_fail(c, "inner dimensions differ: %s x %s%s", sstr(a, s1), sstr(b, s2), transpose_note(ta, tb));
    int64_t d[2] = {m, n};
    return set_dims(c, 0, 2, d);
}

static gn_status batch_matmul(ctx *c, bool bcast)
{
    NEED(c, 2, 1);
    const gn__shape *a = IS(c, 0), *b = IS(c, 1);
    char s1[SB], s2[SB];
    if (a->rank >= 0 && a->rank < 2) return gn__shape_fail(c, "input 0 must have rank >= 2, got %s", sstr(a, s1));
    if (b->rank >= 0 && b->rank < 2) return gn__shape_fail(c, "input 1 must have rank >= 2, got %s", sstr(b, s1));
    bool ta = attr_b(c, "adj_x", false), tb = attr_b(c, "adj_y", false);
    int64_t m = -1, ka = -1, kb = -1, n = -1;
    if (a->rank >= 2) {
        m = a->dims[a->rank - (ta ? 1 : 2)];
        ka = a->dims[a->rank - (ta ? 2 : 1)];
    }
    if (b->rank >= 2) {
        kb = b->dims[b->rank - (tb ? 1 : 2)];
        n = b->dims[b->rank - (tb ? 2 : 1)];
    }
    if (ka >= 0 && kb >= 0 && ka != kb) {
        const char *note = ta && tb ? " (adj_x, adj_y)" : ta ? " (adj_x)" : tb ? " (adj_y)" : "";
        return gn__shape_fail(c, "inner dimensions differ: %s x %s%s", sstr(a, s1), sstr(b, s2), note);
    }
    if (a->rank < 0 || b->rank < 0) {
        if (!bcast && (a->rank >= 0 || b->rank >= 0)) {
            const gn__shape *k = a->rank >= 0 ? a : b;
            int64_t d[MAXR];
            for (int32_t i = 0; i < k->rank - 2; i++) d[i] = k->dims[i];
            d[k->rank - 2] = m;
            d[k->rank - 1] = n;
            return set_dims(c, 0, k->rank, d);
        }
        return GN_OK;
    }
    gn__shape ba = {a->rank - 2, a->dims}, bb = {b->rank - 2, b->dims};
    int64_t d[MAXR];
    int32_t r;
    if (bcast) {
        if (broadcast_dims(&ba, &bb, d, &r))
            return gn__shape_fail(c, "batch dimensions do not broadcast: %s x %s", sstr(a, s1), sstr(b, s2));
    } else {
        if (merge_dims(&ba, &bb, d, &r))
            return gn__shape_fail(c, "batch dimensions differ: %s x %s", sstr(a, s1), sstr(b, s2));
    }
    if (r + 2 > MAXR) return GN_OK;
    d[r] = m;
    d[r + 1] = n;
    return set_dims(c, 0, r + 2, d);
}

gn_status gn__sf_batch_matmul(ctx *c) { return batch_matmul(c, false); }
gn_status gn__sf_batch_matmul_v2(ctx *c) { return batch_matmul(c, true); }

/* Einsum: explicit ("ab,bc->ac") and implicit equations, "..." broadcast */
#define EIN_ELL '.'
gn_status gn__sf_einsum(ctx *c)
{
    NEED(c, 1, 1);
    const char *eq;
    size_t eqn;
    if (!attr_s(c, "equation", &eq, &eqn) || eqn > 512) return GN_OK;
    /* tokens: letters, and '.' for an ellipsis; ',' and '>' separate */
    char tok[512];
    size_t nt = 0;
    for (size_t i = 0; i < eqn; i++) {
        char ch = eq[i];
        if (ch == ' ') continue;
        if (ch == '.') {
            if (i + 2 >= eqn || eq[i + 1] != '.' || eq[i + 2] != '.')
                return gn__shape_fail(c, "equation '%.*s': a '.' outside an ellipsis", (int)eqn, eq);
            tok[nt++] = EIN_ELL;
            i += 2;
        } else if (ch == '-') {
            if (i + 1 >= eqn || eq[i + 1] != '>') return gn__shape_fail(c, "equation '%.*s': bad '-'", (int)eqn, eq);
            tok[nt++] = '>';
            i++;
        } else if (ch == ',' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) {
            tok[nt++] = ch;
        } else {
            return gn__shape_fail(c, "equation '%.*s': bad character '%c'", (int)eqn, eq, ch);
        }
    }
    /* split */
    size_t arrow = nt;
    for (size_t i = 0; i < nt; i++)
        if (tok[i] == '>') {
            arrow = i;
            break;
        }
    uint32_t nops = 1;
    for (size_t i = 0; i < arrow; i++) nops += tok[i] == ',';
    if (nops != c->n_in)
        return gn__shape_fail(c, "equation '%.*s' has %u operands, the node has %u inputs", (int)eqn, eq, nops, c->n_in);
    if (nops > 8) return GN_OK;
    int64_t ldim[128];
    int lcount[128];
    for (int i = 0; i < 128; i++) {
        ldim[i] = -1;
        lcount[i] = 0;
    }
    bool any_ell = false, ell_unknown = false;
    int64_t ell[MAXR];
    int32_t ell_rank = 0; /* broadcast of the ellipsis parts so far */
    size_t start = 0;
    for (uint32_t op = 0; op < nops; op++) {
        size_t end = start;
        while (end < arrow && tok[end] != ',') end++;
        const gn__shape *s = IS(c, op);
        int32_t nlab = 0;
        int32_t ellpos = -1;
        for (size_t i = start; i < end; i++) {
            if (tok[i] == EIN_ELL) {
                if (ellpos >= 0) return gn__shape_fail(c, "equation '%.*s': two ellipses in one operand", (int)eqn, eq);
                ellpos = nlab;
            } else {
                nlab++;
            }
        }
        if (ellpos >= 0) any_ell = true;
        int32_t er = 0;
        if (s->rank >= 0) {
            if (ellpos < 0 ? s->rank != nlab : s->rank < nlab) {
                char s1[SB];
                return gn__shape_fail(c, "equation '%.*s': operand %u has shape %s but %d labels", (int)eqn, eq, op,
                                      sstr(s, s1), nlab);
            }
            er = s->rank - nlab;
        } else if (ellpos >= 0) {
            ell_unknown = true;
        }
        int32_t li = 0;
        for (size_t i = start; i < end; i++) {
            if (tok[i] == EIN_ELL) {
                if (s->rank >= 0) {
                    gn__shape part = {er, s->dims + li};
                    gn__shape acc = {ell_rank, ell};
                    int64_t nd[MAXR];
                    int32_t nr;
                    if (broadcast_dims(&acc, &part, nd, &nr)) {
                        char s1[SB], s2[SB];
                        return gn__shape_fail(c, "equation '%.*s': ellipsis dimensions %s and %s do not broadcast",
                                              (int)eqn, eq, sstr(&acc, s1), sstr(&part, s2));
                    }
                    memcpy(ell, nd, (size_t)nr * sizeof *ell);
                    ell_rank = nr;
                }
                continue;
            }
            unsigned char lab = (unsigned char)tok[i];
            int32_t pos = ellpos >= 0 && li >= ellpos ? li + er : li;
            int64_t dim = s->rank >= 0 ? s->dims[pos] : -1;
            if (lcount[lab] && ldim[lab] >= 0 && dim >= 0 && ldim[lab] != dim)
                return gn__shape_fail(c, "equation '%.*s': label '%c' has dimensions %lld and %lld", (int)eqn, eq, lab,
                                      (long long)ldim[lab], (long long)dim);
            if (ldim[lab] < 0) ldim[lab] = dim;
            lcount[lab]++;
            li++;
        }
        start = end + 1;
    }
    /* output labels */
    char outl[128 + 1];
    size_t no = 0;
    if (arrow < nt) {
        for (size_t i = arrow + 1; i < nt && no < 128; i++) {
            char ch = tok[i];
            if (ch == ',' || ch == '>') return gn__shape_fail(c, "equation '%.*s': bad output", (int)eqn, eq);
            if (ch != EIN_ELL && !lcount[(unsigned char)ch])
                return gn__shape_fail(c, "equation '%.*s': output label '%c' is not in the inputs", (int)eqn, eq, ch);
            outl[no++] = ch;
        }
    } else {
        if (any_ell) outl[no++] = EIN_ELL;
        for (int ch = 'A'; ch <= 'z'; ch++)
            if (lcount[ch] == 1) outl[no++] = (char)ch;
    }
    int64_t d[MAXR];
    int32_t r = 0;
    for (size_t i = 0; i < no; i++) {
        if (outl[i] == EIN_ELL) {
            if (ell_unknown) return GN_OK;
            if (r + ell_rank > MAXR) return GN_OK;
            for (int32_t j = 0; j < ell_rank; j++) d[r++] = ell[j];
        } else {
            if (r >= MAXR) return GN_OK;
            d[r++] = ldim[(unsigned char)outl[i]];
        }
    }
    return set_dims(c, 0, r, d);
}

/* ---- batch norm ----------------------------------------------------------------- */
gn_status gn__sf_fused_batch_norm(ctx *c)
{
    NEED(c, 3, 1);
    const gn__shape *x = IS(c, 0);
    char s1[SB];
    if (x->rank >= 0 && x->rank != 4 && x->rank != 5)
        return gn__shape_fail(c, "x must be 4- or 5-dimensional, got %s", sstr(x, s1));
    bool cf = channels_first(c);
    bool training = attr_b(c, "is_training", true);
    float eaf = 1.0f;
    gn__attr_get_float(c->g, c->node, "exponential_avg_factor", &eaf);
    uint32_t nchk = (training && eaf == 1.0f) ? 3 : 5;
    if (nchk > c->n_in) nchk = c->n_in;
    int32_t ci = x->rank >= 0 ? (cf ? 1 : x->rank - 1) : -1;
    int64_t ch = ci >= 0 ? x->dims[ci] : -1;
    static const char *const names[] = {"x", "scale", "offset", "mean", "variance"};
    for (uint32_t i = 1; i < nchk; i++) {
        const gn__shape *v = IS(c, i);
        if (v->rank < 0) continue;
        if (v->rank != 1) return gn__shape_fail(c, "%s must be 1-dimensional, got %s", names[i], sstr(v, s1));
        if (ch >= 0 && v->dims[0] >= 0 && ch != v->dims[0])
            return gn__shape_fail(c, "%s has %lld elements, x has %lld channels (%s)", names[i], (long long)v->dims[0],
                                  (long long)ch, sstr(x, s1));
        if (ch < 0) ch = v->dims[0];
    }
    if (x->rank >= 0) {
        int64_t d[MAXR];
        memcpy(d, x->dims, (size_t)x->rank * sizeof *d);
        d[ci] = ch;
        GN_TRY(set_dims_like(c, 0, x->rank, d, x));
    }
    for (uint32_t k = 1; k < c->n_out && k < 5; k++) GN_TRY(set_vector(c, k, ch));
    return GN_OK;
}
