/* The fused TF1 recurrent cells: LSTMBlockCell, BlockLSTM, BlockLSTMV2 and
 * GRUBlockCell (tf.contrib.rnn's LSTMBlockCell, LSTMBlockFusedCell and
 * GRUBlockCell), with TensorFlow's meaning (tensorflow/core/kernels/rnn/
 * lstm_ops.cc, gru_ops.cc).
 *
 * One LSTM step, gates in the order i, c, f, o (BlockLSTMV2: i, f, c, o):
 *   xh = [x, h_prev];  g = xh * w + b
 *   i  = sigmoid(g_i + cs_prev * wci)            (peephole term only with use_peephole)
 *   ci = tanh(g_c)
 *   f  = sigmoid(g_f + forget_bias + cs_prev * wcf)
 *   cs = clip(i * ci + f * cs_prev, cell_clip)   (clip to [-cell_clip, cell_clip] when cell_clip > 0)
 *   co = tanh(cs)
 *   o  = sigmoid(g_o + cs * wco)
 *   h  = o * co
 * BlockLSTM(V2) runs the step for t < seq_len_max, each from the previous
 * step's cs and h; the steps at or past seq_len_max are zeros in every output
 * (TensorFlow zeroes cs and h and leaves the other five unwritten).
 *
 * One GRU step: ru = sigmoid([x, h_prev] * w_ru + b_ru) split into r, u;
 * c = tanh([x, h_prev * r] * w_c + b_c); h = u * (h_prev - c) + c.
 *
 * The products go through the gemm wrapper MatMul uses (BLAS, or the
 * fixed-order loop under GN__K_REFERENCE); the rest is float arithmetic with
 * libm's expf and tanhf. float16 LSTMs (TensorFlow's CPU kernels register half
 * and float for the LSTM ops, float only for GRUBlockCell) compute in float
 * and round every output to half at each step, so the next step reads the
 * rounded cs and h as TensorFlow's does. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/nn_internal.h"

enum { OUT_I, OUT_CS, OUT_F, OUT_O, OUT_CI, OUT_CO, OUT_H, N_OUT };

static float sigm(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* ---- one LSTM step -------------------------------------------------------------- */
typedef struct lstm_dims {
    int64_t batch, input, cell;
    int64_t c_off, f_off;     /* gate column offsets of c and f (i at 0, o at 3 * cell) */
    float forget_bias, cell_clip;
    bool peephole;
} lstm_dims;

/* x [batch, input], cs_prev / h_prev [batch, cell], w [input + cell, 4 * cell],
 * wci / wcf / wco [cell], b [4 * cell]; scratch xh [batch, input + cell] and
 * gates [batch, 4 * cell]; out[k] [batch, cell] in OUT_* order. */
static void lstm_step(const gn__blas *blas, const lstm_dims *d, const float *x, const float *cs_prev, const float *h_prev,
                      const float *w, const float *wci, const float *wcf, const float *wco, const float *b, float *xh,
                      float *gates, float *const *out)
{
    const int64_t B = d->batch, I = d->input, C = d->cell, XH = I + C, G = 4 * C;
    for (int64_t r = 0; r < B; r++) {
        memcpy(xh + r * XH, x + r * I, (size_t)I * sizeof(float));
        memcpy(xh + r * XH + I, h_prev + r * C, (size_t)C * sizeof(float));
    }
    gn__nn_sgemm(blas, false, false, B, G, XH, xh, XH, w, G, gates, G);
    for (int64_t r = 0; r < B; r++) {
        float *g = gates + r * G;
        for (int64_t j = 0; j < G; j++) g[j] += b[j];
        const float *gi = g, *gc = g + d->c_off, *gf = g + d->f_off, *go = g + 3 * C, *cp = cs_prev + r * C;
        float *oi = out[OUT_I] + r * C, *ocs = out[OUT_CS] + r * C, *of = out[OUT_F] + r * C, *oo = out[OUT_O] + r * C;
        float *oci = out[OUT_CI] + r * C, *oco = out[OUT_CO] + r * C, *oh = out[OUT_H] + r * C;
        for (int64_t j = 0; j < C; j++) {
            float vi = d->peephole ? gi[j] + cp[j] * wci[j] : gi[j];
            float vf = gf[j] + d->forget_bias;
            if (d->peephole) vf += cp[j] * wcf[j];
            float si = sigm(vi), sci = tanhf(gc[j]), sf = sigm(vf);
            float cs = si * sci + sf * cp[j];
            if (d->cell_clip > 0.0f) {
                /* Eigen's scalar_clip_op: min(max(cs, -clip), clip) */
                if (cs < -d->cell_clip) cs = -d->cell_clip;
                if (cs > d->cell_clip) cs = d->cell_clip;
            }
            float co = tanhf(cs);
            float so = sigm(d->peephole ? go[j] + cs * wco[j] : go[j]);
            oi[j] = si;
            ocs[j] = cs;
            of[j] = sf;
            oo[j] = so;
            oci[j] = sci;
            oco[j] = co;
            oh[j] = so * co;
        }
    }
}

/* ---- inputs ----------------------------------------------------------------------- */
static bool lstm_dtype(int32_t dt)
{
    return dt == GN__DT_F32 || dt == GN__DT_F16;
}

/* Every float input of the op has x's dtype (T). */
static gn_status same_dtype(gn__kctx *c, uint32_t first, int32_t dt)
{
    for (uint32_t k = first; k < c->n_in; k++)
        if (c->in[k].dtype != dt)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "input %u is %s, expected %s", k, gn__dtype_name(c->in[k].dtype),
                                 gn__dtype_name(dt));
    return GN_OK;
}

/* Float views of inputs [first, first + n): the tensors' own data for float32,
 * converted copies in one block (*owned) for float16. */
static gn_status float_views(gn__kctx *c, uint32_t first, uint32_t n, const float **v, float **owned)
{
    *owned = NULL;
    int64_t total = 0;
    for (uint32_t k = 0; k < n; k++) {
        const gn__tensor *t = &c->in[first + k];
        if (t->dtype == GN__DT_F32) v[k] = t->data;
        else total += gn__tensor_numel(t);
    }
    if (!total) return GN_OK;
    float *p = malloc((size_t)total * sizeof(float));
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %" PRId64 " floats", total);
    *owned = p;
    for (uint32_t k = 0; k < n; k++) {
        const gn__tensor *t = &c->in[first + k];
        if (t->dtype == GN__DT_F32) continue;
        int64_t m = gn__tensor_numel(t);
        gn__nn_to_f32(t->dtype, t->data, p, m);
        v[k] = p;
        p += m;
    }
    return GN_OK;
}

static void round_f16(float *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) p[i] = (float)(gn__f16)p[i];
}

/* The seven outputs (rank 2 or 3, dims) and where the steps write them: the
 * outputs' own data for float32, else one float block (*owned) that
 * lstm_finish converts. */
static gn_status lstm_outputs(gn__kctx *c, int32_t dt, int32_t rank, const int64_t *dims, gn__tensor **ot, float **of,
                              float **owned)
{
    *owned = NULL;
    int64_t n = 1;
    for (int32_t k = 0; k < rank; k++) n *= dims[k];
    for (uint32_t k = 0; k < N_OUT; k++) GN_TRY(gn__kctx_output(c, k, dt, rank, dims, &ot[k]));
    if (dt == GN__DT_F32) {
        for (uint32_t k = 0; k < N_OUT; k++) of[k] = ot[k]->data;
        return GN_OK;
    }
    float *p = malloc((size_t)(n ? n : 1) * N_OUT * sizeof(float));
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %" PRId64 " floats", n * N_OUT);
    *owned = p;
    for (uint32_t k = 0; k < N_OUT; k++) of[k] = p + (size_t)k * (size_t)n;
    return GN_OK;
}

static void lstm_finish(gn__tensor **ot, float **of, float *owned)
{
    if (!owned) return;
    for (uint32_t k = 0; k < N_OUT; k++) gn__nn_from_f32(of[k], ot[k]->dtype, ot[k]->data, gn__tensor_numel(ot[k]));
}

/* scratch xh [batch, input + cell] and gates [batch, 4 * cell] in one block */
static gn_status lstm_scratch(gn__kctx *c, const lstm_dims *d, float **xh, float **gates)
{
    size_t n = (size_t)(d->batch * (d->input + d->cell) + d->batch * 4 * d->cell);
    *xh = malloc((n ? n : 1) * sizeof(float));
    if (!*xh) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu floats", n);
    *gates = *xh + d->batch * (d->input + d->cell);
    return GN_OK;
}

/* input + 4 * cell fit (the gemm's sizes); TensorFlow has no such limit
 * because its shapes could not hold them */
static gn_status check_sizes(gn__kctx *c, int64_t input, int64_t cell, int64_t mult)
{
    if (cell > (INT64_MAX - input) / mult) return gn__kctx_fail(c, GN_ERR_GRAPH, "cell_size %" PRId64 " is too large", cell);
    return GN_OK;
}

#define FAIL(...) gn__kctx_fail(c, GN_ERR_GRAPH, __VA_ARGS__)

/* ---- LSTMBlockCell ------------------------------------------------------------------ */
gn_status gn__rnn_k_lstm_block_cell(gn__kctx *c)
{
    if (c->n_in != 8) return FAIL("expects 8 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0], *csp = &c->in[1], *hp = &c->in[2], *w = &c->in[3], *b = &c->in[7];
    if (!lstm_dtype(x->dtype)) return gn__nn_bad_dtype(c, x->dtype);
    GN_TRY(same_dtype(c, 1, x->dtype));
    static const char *const names[8] = {"x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b"};
    static const int32_t ranks[8] = {2, 2, 2, 2, 1, 1, 1, 1};
    for (int k = 0; k < 8; k++)
        if (c->in[k].rank != ranks[k])
            return FAIL("%s_tensor must be rank %d but is rank %d.", names[k], ranks[k], c->in[k].rank);
    lstm_dims d = {.batch = x->dims[0], .input = x->dims[1], .cell = csp->dims[1]};
    d.c_off = d.cell;
    d.f_off = 2 * d.cell;
    d.forget_bias = gn__nn_attr_float(c, "forget_bias", 1.0f);
    d.cell_clip = gn__nn_attr_float(c, "cell_clip", 3.0f);
    d.peephole = gn__nn_attr_bool(c, "use_peephole", false);
    GN_TRY(check_sizes(c, d.input, d.cell, 4));
    if (csp->dims[0] != d.batch)
        return FAIL("cs_prev.dims(0) != batch_size: %" PRId64 " vs. %" PRId64, csp->dims[0], d.batch);
    if (hp->dims[0] != d.batch) return FAIL("h_prev.dims(0) != batch_size: %" PRId64 " vs. %" PRId64, hp->dims[0], d.batch);
    if (hp->dims[1] != d.cell) return FAIL("h_prev.dims(1) != cell_size: %" PRId64 " vs. %" PRId64, hp->dims[1], d.cell);
    if (w->dims[0] != d.input + d.cell)
        return FAIL("w.dim_size(0) != input_size + cell_size: %" PRId64 " vs. %" PRId64, w->dims[0], d.input + d.cell);
    if (w->dims[1] != d.cell * 4)
        return FAIL("w.dim_size(1) != cell_size * 4: %" PRId64 " vs. %" PRId64, w->dims[1], d.cell * 4);
    if (b->dims[0] != d.cell * 4)
        return FAIL("b.dim_size(0) != cell_size * 4: %" PRId64 " vs. %" PRId64, b->dims[0], d.cell * 4);
    if (d.batch <= 0 || d.cell <= 0)
        return FAIL("cs_prev_tensor is empty, has shape: (%" PRId64 ",%" PRId64 ").", csp->dims[0], csp->dims[1]);
    /* TensorFlow reads wci/wcf/wco with use_peephole without checking their size */
    for (int k = 4; k < 7 && d.peephole; k++)
        if (c->in[k].dims[0] != d.cell)
            return FAIL("%s.dim_size(0) != cell_size: %" PRId64 " vs. %" PRId64, names[k], c->in[k].dims[0], d.cell);

    const float *v[8];
    float *in_owned = NULL, *out_owned = NULL, *xh = NULL, *gates = NULL;
    gn__tensor *ot[N_OUT];
    float *of[N_OUT];
    const int64_t odims[2] = {d.batch, d.cell};
    gn_status s = float_views(c, 0, 8, v, &in_owned);
    if (s == GN_OK) s = lstm_outputs(c, x->dtype, 2, odims, ot, of, &out_owned);
    if (s == GN_OK) s = lstm_scratch(c, &d, &xh, &gates);
    if (s == GN_OK) {
        lstm_step(gn__kctx_blas(c), &d, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], xh, gates, of);
        lstm_finish(ot, of, out_owned);
    }
    free(xh);
    free(out_owned);
    free(in_owned);
    return s;
}

/* ---- BlockLSTM, BlockLSTMV2 ----------------------------------------------------------- */
static gn_status block_lstm(gn__kctx *c, bool v2)
{
    if (c->n_in != 9) return FAIL("expects 9 inputs, got %u", c->n_in);
    const gn__tensor *sl = &c->in[0], *x = &c->in[1], *csp = &c->in[2], *hp = &c->in[3], *w = &c->in[4], *b = &c->in[8];
    if (sl->dtype != TENSORFLOW__DATA_TYPE__DT_INT64)
        return FAIL("seq_len_max must be int64, not %s", gn__dtype_name(sl->dtype));
    if (sl->rank != 0) return FAIL("`seq_len_max_tensor` must be rank 0 but is rank %d", sl->rank);
    if (!lstm_dtype(x->dtype)) return gn__nn_bad_dtype(c, x->dtype);
    GN_TRY(same_dtype(c, 2, x->dtype));
    if (x->rank != 3) return FAIL("x must be 3D");
    const int64_t T = x->dims[0];
    lstm_dims d = {.batch = x->dims[1], .input = x->dims[2]};
    if (csp->rank != 2) return FAIL("cs_prev must be 2D");
    if (csp->dims[0] != d.batch)
        return FAIL("cs_prev.dims(0) != batch_size: %" PRId64 " vs. %" PRId64, csp->dims[0], d.batch);
    d.cell = csp->dims[1];
    GN_TRY(check_sizes(c, d.input, d.cell, 4));
    if (hp->rank != 2) return FAIL("h_prev must be 2D");
    if (hp->dims[0] != d.batch) return FAIL("h_prev.dims(0) != batch_size: %" PRId64 " vs. %" PRId64, hp->dims[0], d.batch);
    if (hp->dims[1] != d.cell) return FAIL("h_prev.dims(1) != cell_size: %" PRId64 " vs. %" PRId64, hp->dims[1], d.cell);
    if (w->rank != 2) return FAIL("w must be 2D");
    if (w->dims[0] != d.input + d.cell)
        return FAIL("w.dim_size(0) != input_size + cell_size: %" PRId64 " vs. %" PRId64, w->dims[0], d.input + d.cell);
    if (w->dims[1] != d.cell * 4)
        return FAIL("w.dim_size(1) != cell_size * 4: %" PRId64 " vs. %" PRId64, w->dims[1], d.cell * 4);
    static const char *const pn[3] = {"wci", "wcf", "wco"};
    for (int k = 0; k < 3; k++) {
        const gn__tensor *p = &c->in[5 + k];
        if (p->rank != 1) return FAIL("%s must be 1D", pn[k]);
        if (p->dims[0] != d.cell) return FAIL("%s.dim_size(0) != cell_size: %" PRId64 " vs. %" PRId64, pn[k], p->dims[0], d.cell);
    }
    if (b->rank != 1) return FAIL("b must be 1D");
    if (b->dims[0] != d.cell * 4)
        return FAIL("b.dim_size(0) != cell_size * 4: %" PRId64 " vs. %" PRId64, b->dims[0], d.cell * 4);
    const int64_t slm = *(const int64_t *)sl->data;
    if (slm < 0 || slm > T) return FAIL("seq_len_max must be between 0 and %" PRId64 " but is %" PRId64, T, slm);
    /* BlockLSTMV2 has no forget_bias (0) and its gates are i, f, c, o */
    d.forget_bias = v2 ? 0.0f : gn__nn_attr_float(c, "forget_bias", 1.0f);
    d.cell_clip = gn__nn_attr_float(c, "cell_clip", v2 ? 0.0f : 3.0f);
    d.peephole = gn__nn_attr_bool(c, "use_peephole", false);
    d.c_off = v2 ? 2 * d.cell : d.cell;
    d.f_off = v2 ? d.cell : 2 * d.cell;

    const float *v[8];
    float *in_owned = NULL, *out_owned = NULL, *xh = NULL, *gates = NULL;
    gn__tensor *ot[N_OUT];
    float *of[N_OUT];
    const int64_t odims[3] = {T, d.batch, d.cell};
    const int64_t step = d.batch * d.cell;
    const bool f16 = x->dtype == GN__DT_F16;
    gn_status s = float_views(c, 1, 8, v, &in_owned);
    if (s == GN_OK) s = lstm_outputs(c, x->dtype, 3, odims, ot, of, &out_owned);
    if (s == GN_OK) s = lstm_scratch(c, &d, &xh, &gates);
    if (s == GN_OK) {
        const gn__blas *blas = gn__kctx_blas(c);
        for (int64_t t = 0; t < slm; t++) {
            float *o[N_OUT];
            for (int k = 0; k < N_OUT; k++) o[k] = of[k] + t * step;
            const float *cs_prev = t ? of[OUT_CS] + (t - 1) * step : v[1];
            const float *h_prev = t ? of[OUT_H] + (t - 1) * step : v[2];
            lstm_step(blas, &d, v[0] + t * d.batch * d.input, cs_prev, h_prev, v[3], v[4], v[5], v[6], v[7], xh, gates, o);
            if (f16)
                for (int k = 0; k < N_OUT; k++) round_f16(o[k], step);
        }
        for (int k = 0; k < N_OUT; k++)
            if (slm < T) memset(of[k] + slm * step, 0, (size_t)((T - slm) * step) * sizeof(float));
        lstm_finish(ot, of, out_owned);
    }
    free(xh);
    free(out_owned);
    free(in_owned);
    return s;
}

gn_status gn__rnn_k_block_lstm(gn__kctx *c) { return block_lstm(c, false); }
gn_status gn__rnn_k_block_lstm_v2(gn__kctx *c) { return block_lstm(c, true); }

/* ---- GRUBlockCell ------------------------------------------------------------------------ */
gn_status gn__rnn_k_gru_block_cell(gn__kctx *c)
{
    if (c->n_in != 6) return FAIL("expects 6 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0], *hp = &c->in[1], *wru = &c->in[2], *wc = &c->in[3], *bru = &c->in[4], *bc = &c->in[5];
    if (x->dtype != GN__DT_F32) return gn__nn_bad_dtype(c, x->dtype);
    GN_TRY(same_dtype(c, 1, x->dtype));
    if (x->rank != 2) return FAIL("Rank of x must be 2, got %d", x->rank);
    const int64_t B = x->dims[0], I = x->dims[1];
    if (hp->rank != 2) return FAIL("Rank of h_prev must be 2, got %d", hp->rank);
    if (hp->dims[0] != B) return FAIL("h_prev.dims(0) != batch_size: %" PRId64 " vs. %" PRId64, hp->dims[0], B);
    const int64_t C = hp->dims[1];
    GN_TRY(check_sizes(c, I, C, 2));
    if (wru->rank != 2) return FAIL("Rank of w_ru_ must be 2, got %d", wru->rank);
    if (wru->dims[0] != I + C)
        return FAIL("w_ru.dim_size(0) != input_size + cell_size: %" PRId64 " vs. %" PRId64, wru->dims[0], I + C);
    if (wru->dims[1] != C * 2) return FAIL("w_ru.dim_size(1) != cell_size * 2: %" PRId64 " vs. %" PRId64, wru->dims[1], C * 2);
    if (wc->rank != 2) return FAIL("Rank of w_c must be 2, got %d", wc->rank);
    if (wc->dims[0] != I + C)
        return FAIL("w_c.dim_size(0) != input_size + cell_size: %" PRId64 " vs. %" PRId64, wc->dims[0], I + C);
    if (wc->dims[1] != C) return FAIL("w_c.dim_size(1) != cell_size: %" PRId64 " vs. %" PRId64, wc->dims[1], C);
    if (bru->rank != 1) return FAIL("Rank of b_ru must be 1, got %d", bru->rank);
    if (bru->dims[0] != C * 2) return FAIL("b_ru.dim_size(0) != cell_size * 2: %" PRId64 " vs. %" PRId64, bru->dims[0], C * 2);
    if (bc->rank != 1) return FAIL("Rank of b_c must be 1, got %d", bc->rank);
    if (bc->dims[0] != C) return FAIL("b_c.dim_size(0) != cell_size: %" PRId64 " vs. %" PRId64, bc->dims[0], C);

    const int64_t dims[2] = {B, C};
    gn__tensor *o[4];
    for (uint32_t k = 0; k < 4; k++) GN_TRY(gn__kctx_output(c, k, GN__DT_F32, 2, dims, &o[k]));
    const int64_t XH = I + C;
    size_t n = (size_t)(B * XH + B * 2 * C);
    float *xh = malloc((n ? n : 1) * sizeof(float));
    if (!xh) return gn__kctx_fail(c, GN_ERR_NOMEM, "cannot allocate %zu floats", n);
    float *ru = xh + B * XH;
    const float *xv = x->data, *hv = hp->data, *bruv = bru->data, *bcv = bc->data;
    float *r = o[0]->data, *u = o[1]->data, *cc = o[2]->data, *h = o[3]->data;
    const gn__blas *blas = gn__kctx_blas(c);
    for (int64_t i = 0; i < B; i++) {
        memcpy(xh + i * XH, xv + i * I, (size_t)I * sizeof(float));
        memcpy(xh + i * XH + I, hv + i * C, (size_t)C * sizeof(float));
    }
    gn__nn_sgemm(blas, false, false, B, 2 * C, XH, xh, XH, wru->data, 2 * C, ru, 2 * C);
    for (int64_t i = 0; i < B; i++)
        for (int64_t j = 0; j < C; j++) {
            r[i * C + j] = sigm(ru[i * 2 * C + j] + bruv[j]);
            u[i * C + j] = sigm(ru[i * 2 * C + C + j] + bruv[C + j]);
            xh[i * XH + I + j] = hv[i * C + j] * r[i * C + j];
        }
    gn__nn_sgemm(blas, false, false, B, C, XH, xh, XH, wc->data, C, cc, C);
    for (int64_t i = 0; i < B; i++)
        for (int64_t j = 0; j < C; j++) {
            float cv = tanhf(cc[i * C + j] + bcv[j]);
            cc[i * C + j] = cv;
            h[i * C + j] = u[i * C + j] * (hv[i * C + j] - cv) + cv;
        }
    free(xh);
    return GN_OK;
}
