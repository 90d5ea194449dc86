/* Shape functions of the fused TF1 recurrent cells (TensorFlow's
 * tensorflow/core/ops/rnn_ops.cc): LSTMBlockCell, BlockLSTM / BlockLSTMV2 and
 * GRUBlockCell. Every output has the same shape. */
#include "ops/shape_fn.h"

static gn_status need_rank(ctx *c, uint32_t i, int32_t rank, const char *name)
{
    const gn__shape *s = IS(c, i);
    char s1[SB];
    if (s->rank >= 0 && s->rank != rank)
        return gn__shape_fail(c, "%s must be rank %d, got %s", name, rank, sstr(s, s1));
    return GN_OK;
}

static gn_status all_outputs(ctx *c, int32_t rank, const int64_t *d)
{
    GN_TRY(set_dims(c, 0, rank, d));
    for (uint32_t k = 1; k < c->n_out; k++) c->out[k].shape = c->out[0].shape;
    return GN_OK;
}

/* LSTMBlockCell, GRUBlockCell: [batch (x dim 0), cell (input 1's dim 1)] */
static gn_status rnn_cell(ctx *c, const char *in1)
{
    NEED(c, 2, 1);
    GN_TRY(need_rank(c, 0, 2, "x"));
    GN_TRY(need_rank(c, 1, 2, in1));
    const gn__shape *x = IS(c, 0), *s = IS(c, 1);
    int64_t d[2] = {x->rank == 2 ? x->dims[0] : -1, s->rank == 2 ? s->dims[1] : -1};
    return all_outputs(c, 2, d);
}

gn_status gn__sf_lstm_block_cell(ctx *c) { return rnn_cell(c, "cs_prev"); }
gn_status gn__sf_gru_block_cell(ctx *c) { return rnn_cell(c, "h_prev"); }

/* BlockLSTM, BlockLSTMV2: [timelen, batch] from x, cell = dim(b) / 4 */
gn_status gn__sf_block_lstm(ctx *c)
{
    NEED(c, 9, 1);
    GN_TRY(need_rank(c, 1, 3, "x"));
    GN_TRY(need_rank(c, c->n_in - 1, 1, "b"));
    const gn__shape *x = IS(c, 1), *b = IS(c, c->n_in - 1);
    int64_t cell = -1;
    if (b->rank == 1 && b->dims[0] >= 0) {
        if (b->dims[0] % 4 != 0)
            return gn__shape_fail(c, "dimension of b (%lld) must be evenly divisible by 4", (long long)b->dims[0]);
        cell = b->dims[0] / 4;
    }
    int64_t d[3] = {x->rank == 3 ? x->dims[0] : -1, x->rank == 3 ? x->dims[1] : -1, cell};
    return all_outputs(c, 3, d);
}
