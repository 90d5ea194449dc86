/* Readers of the XLA ops' proto and computation attrs (see xla_attrs.h). */
#include "ops/xla_attrs.h"

#include <stdio.h>
#include <string.h>

/* ---- protobuf wire format ------------------------------------------------------ */
typedef struct wire {
    const uint8_t *p;
    size_t n, at;
} wire;

static bool varint(wire *w, uint64_t *v)
{
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (w->at >= w->n) return false;
        uint8_t b = w->p[w->at++];
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* One int64 field wanted from a message: a singular value or a repeated list. */
typedef struct field {
    uint32_t num;
    const char *name;
    gn__xla_ints *rep;       /* repeated (packed or not) */
    int64_t *one;            /* singular */
} field;

/* Walks the message bytes; fills the fields; false with why on a malformed blob. */
static bool read_msg(const uint8_t *p, size_t n, const char *key, const char *msg, const field *f, size_t nf,
                     char *why)
{
    wire w = {p, n, 0};
    for (size_t i = 0; i < nf; i++) {
        if (f[i].rep) f[i].rep->n = 0;
        if (f[i].one) *f[i].one = 0;
    }
    while (w.at < w.n) {
        size_t start = w.at;
        uint64_t tag;
        if (!varint(&w, &tag) || (tag >> 3) == 0 || (tag >> 3) > 536870911u) {
            snprintf(why, GN__XLA_WHY, "attr '%s' does not parse as %s: bad field tag at byte %zu", key, msg, start);
            return false;
        }
        uint32_t num = (uint32_t)(tag >> 3), wt = (uint32_t)(tag & 7);
        const field *fd = NULL;
        for (size_t i = 0; i < nf; i++)
            if (f[i].num == num) fd = &f[i];
        uint64_t v;
        if (wt == 0) {
            if (!varint(&w, &v)) goto trunc;
            if (fd && fd->one) *fd->one = (int64_t)v;
            else if (fd) {
                if (fd->rep->n >= GN__XLA_MAXN) goto many;
                fd->rep->v[fd->rep->n++] = (int64_t)v;
            }
        } else if (wt == 2) {
            if (!varint(&w, &v) || v > w.n - w.at) goto trunc;
            size_t end = w.at + (size_t)v;
            if (fd && fd->rep) {   /* packed */
                wire s = {w.p, end, w.at};
                while (s.at < end) {
                    uint64_t e;
                    if (!varint(&s, &e)) goto trunc;
                    if (fd->rep->n >= GN__XLA_MAXN) goto many;
                    fd->rep->v[fd->rep->n++] = (int64_t)e;
                }
            } else if (fd) {
                goto wiretype;
            }
            w.at = end;
        } else if (wt == 1 || wt == 5) {
            if (fd) goto wiretype;
            size_t k = wt == 1 ? 8 : 4;
            if (k > w.n - w.at) goto trunc;
            w.at += k;
        } else {
            snprintf(why, GN__XLA_WHY, "attr '%s' does not parse as %s: field %u has wire type %u at byte %zu", key,
                     msg, num, wt, start);
            return false;
        }
        continue;
    trunc:
        snprintf(why, GN__XLA_WHY, "attr '%s' does not parse as %s: field %u is truncated at byte %zu", key, msg, num,
                 start);
        return false;
    wiretype:
        snprintf(why, GN__XLA_WHY, "attr '%s' does not parse as %s: field %u (%s) has wire type %u", key, msg, num,
                 fd->name, wt);
        return false;
    many:
        snprintf(why, GN__XLA_WHY, "attr '%s': %s has more than %d entries", key, fd->name, GN__XLA_MAXN);
        return false;
    }
    return true;
}

static bool string_attr(const gn_graph *g, gn_id id, const char *key, const uint8_t **p, size_t *n, char *why)
{
    const char *s;
    if (!gn__attr_get_string(g, id, key, &s, n)) {
        snprintf(why, GN__XLA_WHY, "attr '%s' is missing or not a string", key);
        return false;
    }
    *p = (const uint8_t *)s;
    return true;
}

/* Every entry in [0, rank) and no entry twice (rank < 0: only duplicates). */
static bool dims_ok(const gn__xla_ints *d, int32_t rank, const char *key, const char *what, const char *of,
                    char *why)
{
    for (int32_t i = 0; i < d->n; i++) {
        if (rank >= 0 && (d->v[i] < 0 || d->v[i] >= rank)) {
            snprintf(why, GN__XLA_WHY, "attr '%s': %s[%d] = %lld is out of range for the %s of rank %d", key, what, i,
                     (long long)d->v[i], of, rank);
            return false;
        }
        for (int32_t j = 0; j < i; j++)
            if (d->v[j] == d->v[i]) {
                snprintf(why, GN__XLA_WHY, "attr '%s': %s repeats dimension %lld", key, what, (long long)d->v[i]);
                return false;
            }
    }
    return true;
}

bool gn__xla_gather_attr(const gn_graph *g, gn_id id, int32_t operand_rank, int32_t indices_rank,
                         gn__xla_gather_dims *d, char *why)
{
    const char *key = "dimension_numbers";
    const uint8_t *p;
    size_t n;
    if (!string_attr(g, id, key, &p, &n, why)) return false;
    const field f[] = {
        {1, "offset_dims", &d->offset_dims, NULL},
        {2, "collapsed_slice_dims", &d->collapsed_slice_dims, NULL},
        {3, "start_index_map", &d->start_index_map, NULL},
        {4, "index_vector_dim", NULL, &d->index_vector_dim},
        {5, "operand_batching_dims", &d->operand_batching_dims, NULL},
        {6, "start_indices_batching_dims", &d->start_indices_batching_dims, NULL},
    };
    if (!read_msg(p, n, key, "xla.GatherDimensionNumbers", f, GN__ARRAY_LEN(f), why)) return false;
    if (d->operand_batching_dims.n || d->start_indices_batching_dims.n) {
        snprintf(why, GN__XLA_WHY, "attr '%s': batching dims are not supported", key);
        return false;
    }
    if (!dims_ok(&d->collapsed_slice_dims, operand_rank, key, "collapsed_slice_dims", "operand", why) ||
        !dims_ok(&d->start_index_map, operand_rank, key, "start_index_map", "operand", why))
        return false;
    if (indices_rank >= 0) {
        if (d->index_vector_dim < 0 || d->index_vector_dim > indices_rank) {
            snprintf(why, GN__XLA_WHY, "attr '%s': index_vector_dim %lld is out of range for start_indices of rank %d",
                     key, (long long)d->index_vector_dim, indices_rank);
            return false;
        }
        int32_t batch = indices_rank - (d->index_vector_dim < indices_rank ? 1 : 0);
        if (!dims_ok(&d->offset_dims, batch + d->offset_dims.n, key, "offset_dims", "output", why)) return false;
    }
    if (operand_rank >= 0 && d->offset_dims.n + d->collapsed_slice_dims.n != operand_rank) {
        snprintf(why, GN__XLA_WHY,
                 "attr '%s': offset_dims (%d) and collapsed_slice_dims (%d) must add up to the operand's rank %d", key,
                 d->offset_dims.n, d->collapsed_slice_dims.n, operand_rank);
        return false;
    }
    return true;
}

bool gn__xla_gather_shape(const gn__xla_gather_dims *d, int32_t r, const int64_t *xd, int32_t ir, const int64_t *id,
                          const int64_t *ss, gn__xla_gather_geom *g, char *why)
{
    int64_t ivd = d->index_vector_dim;
    int64_t nidx = ivd < ir ? id[ivd] : 1;
    if (nidx != d->start_index_map.n) {
        snprintf(why, GN__XLA_WHY, "attr 'dimension_numbers': start_index_map has %d entries, the index vector %lld",
                 d->start_index_map.n, (long long)nidx);
        return false;
    }
    bool collapsed[GN__XLA_MAXN] = {false};
    for (int32_t i = 0; i < d->collapsed_slice_dims.n; i++)
        if (d->collapsed_slice_dims.v[i] >= 0 && d->collapsed_slice_dims.v[i] < GN__XLA_MAXN)
            collapsed[d->collapsed_slice_dims.v[i]] = true;
    for (int32_t i = 0; i < r; i++) {
        if (ss[i] < 0 || ss[i] > xd[i]) {
            snprintf(why, GN__XLA_WHY, "slice_sizes[%d] = %lld is out of range for dimension size %lld", i,
                     (long long)ss[i], (long long)xd[i]);
            return false;
        }
        if (collapsed[i] && ss[i] != 1) {
            snprintf(why, GN__XLA_WHY, "slice_sizes[%d] must be 1 for a collapsed dimension, not %lld", i,
                     (long long)ss[i]);
            return false;
        }
    }
    int32_t orank = (int32_t)(ir - (ivd < ir ? 1 : 0)) + d->offset_dims.n;
    int32_t nnc = 0, noncol[GN__XLA_MAXN];
    for (int32_t i = 0; i < r && i < GN__XLA_MAXN; i++)
        if (!collapsed[i]) noncol[nnc++] = i;
    if (orank > GN__XLA_MAXN || d->offset_dims.n != nnc) {
        snprintf(why, GN__XLA_WHY,
                 "attr 'dimension_numbers': %d offset_dims for %d dimensions not collapsed, output rank %d (at most %d)",
                 d->offset_dims.n, nnc, orank, GN__XLA_MAXN);
        return false;
    }
    bool is_off[GN__XLA_MAXN] = {false};
    for (int32_t i = 0; i < d->offset_dims.n; i++) {
        if (d->offset_dims.v[i] < 0 || d->offset_dims.v[i] >= orank) {
            snprintf(why, GN__XLA_WHY, "attr 'dimension_numbers': offset_dims[%d] = %lld is out of range", i,
                     (long long)d->offset_dims.v[i]);
            return false;
        }
        is_off[d->offset_dims.v[i]] = true;
    }
    g->out_rank = orank;
    for (int32_t i = 0, bi = 0, oi = 0; i < orank; i++) {
        if (is_off[i]) {
            g->out_map[i] = noncol[oi++];
            g->out_dims[i] = ss[g->out_map[i]];
        } else {
            if (bi == ivd) bi++;
            g->out_map[i] = -1 - bi;
            g->out_dims[i] = id[bi++];
        }
    }
    return true;
}

bool gn__xla_scatter_attr(const gn_graph *g, gn_id id, int32_t operand_rank, int32_t indices_rank,
                          int32_t updates_rank, gn__xla_scatter_dims *d, char *why)
{
    const char *key = "dimension_numbers";
    const uint8_t *p;
    size_t n;
    if (!string_attr(g, id, key, &p, &n, why)) return false;
    const field f[] = {
        {1, "update_window_dims", &d->update_window_dims, NULL},
        {2, "inserted_window_dims", &d->inserted_window_dims, NULL},
        {3, "scatter_dims_to_operand_dims", &d->scatter_dims_to_operand_dims, NULL},
        {4, "index_vector_dim", NULL, &d->index_vector_dim},
        {5, "input_batching_dims", &d->input_batching_dims, NULL},
        {6, "scatter_indices_batching_dims", &d->scatter_indices_batching_dims, NULL},
    };
    if (!read_msg(p, n, key, "xla.ScatterDimensionNumbers", f, GN__ARRAY_LEN(f), why)) return false;
    if (d->input_batching_dims.n || d->scatter_indices_batching_dims.n) {
        snprintf(why, GN__XLA_WHY, "attr '%s': batching dims are not supported", key);
        return false;
    }
    if (!dims_ok(&d->inserted_window_dims, operand_rank, key, "inserted_window_dims", "operand", why) ||
        !dims_ok(&d->scatter_dims_to_operand_dims, operand_rank, key, "scatter_dims_to_operand_dims", "operand",
                 why) ||
        !dims_ok(&d->update_window_dims, updates_rank, key, "update_window_dims", "updates", why))
        return false;
    if (indices_rank >= 0 && (d->index_vector_dim < 0 || d->index_vector_dim > indices_rank)) {
        snprintf(why, GN__XLA_WHY, "attr '%s': index_vector_dim %lld is out of range for scatter_indices of rank %d",
                 key, (long long)d->index_vector_dim, indices_rank);
        return false;
    }
    if (operand_rank >= 0 && d->update_window_dims.n + d->inserted_window_dims.n != operand_rank) {
        snprintf(why, GN__XLA_WHY,
                 "attr '%s': update_window_dims (%d) and inserted_window_dims (%d) must add up to the operand's rank %d",
                 key, d->update_window_dims.n, d->inserted_window_dims.n, operand_rank);
        return false;
    }
    return true;
}

bool gn__xla_dot_attr(const gn_graph *g, gn_id id, int32_t lhs_rank, int32_t rhs_rank, gn__xla_dot_dims *d, char *why)
{
    const char *key = "dimension_numbers";
    const uint8_t *p;
    size_t n;
    if (!string_attr(g, id, key, &p, &n, why)) return false;
    const field f[] = {
        {1, "lhs_contracting_dimensions", &d->lhs_contracting, NULL},
        {2, "rhs_contracting_dimensions", &d->rhs_contracting, NULL},
        {3, "lhs_batch_dimensions", &d->lhs_batch, NULL},
        {4, "rhs_batch_dimensions", &d->rhs_batch, NULL},
    };
    if (!read_msg(p, n, key, "xla.DotDimensionNumbers", f, GN__ARRAY_LEN(f), why)) return false;
    if (d->lhs_contracting.n != d->rhs_contracting.n || d->lhs_batch.n != d->rhs_batch.n) {
        snprintf(why, GN__XLA_WHY,
                 "attr '%s': lhs and rhs must have as many contracting (%d, %d) and batch (%d, %d) dimensions", key,
                 d->lhs_contracting.n, d->rhs_contracting.n, d->lhs_batch.n, d->rhs_batch.n);
        return false;
    }
    gn__xla_ints la = d->lhs_contracting, ra = d->rhs_contracting;
    for (int32_t i = 0; i < d->lhs_batch.n; i++) {
        la.v[la.n++] = d->lhs_batch.v[i];
        ra.v[ra.n++] = d->rhs_batch.v[i];
        if (la.n >= GN__XLA_MAXN) break;
    }
    return dims_ok(&la, lhs_rank, key, "lhs dimensions", "lhs", why) &&
           dims_ok(&ra, rhs_rank, key, "rhs dimensions", "rhs", why);
}

bool gn__xla_proto_attr_ok(const gn_graph *g, gn_id id, const char *key, const char *msg_name, char *why)
{
    const char *s;
    size_t n;
    if (!gn__attr_get_string(g, id, key, &s, &n)) return true;
    return read_msg((const uint8_t *)s, n, key, msg_name, NULL, 0, why);
}

bool gn__xla_conv_attr(const gn_graph *g, gn_id id, int32_t lhs_rank, int32_t rhs_rank, gn__xla_conv_dims *d,
                       char *why)
{
    const char *key = "dimension_numbers";
    const uint8_t *p;
    size_t n;
    if (!string_attr(g, id, key, &p, &n, why)) return false;
    const field f[] = {
        {3, "kernel_input_feature_dimension", NULL, &d->k_in_feature},
        {4, "kernel_output_feature_dimension", NULL, &d->k_out_feature},
        {6, "kernel_spatial_dimensions", &d->k_spatial, NULL},
        {7, "input_batch_dimension", NULL, &d->in_batch},
        {8, "input_feature_dimension", NULL, &d->in_feature},
        {9, "output_batch_dimension", NULL, &d->out_batch},
        {10, "output_feature_dimension", NULL, &d->out_feature},
        {11, "input_spatial_dimensions", &d->in_spatial, NULL},
        {12, "output_spatial_dimensions", &d->out_spatial, NULL},
    };
    if (!read_msg(p, n, key, "xla.ConvolutionDimensionNumbers", f, GN__ARRAY_LEN(f), why)) return false;
    int32_t ns = d->in_spatial.n;
    if (d->k_spatial.n != ns || d->out_spatial.n != ns) {
        snprintf(why, GN__XLA_WHY,
                 "attr '%s': input, kernel and output must have as many spatial dimensions (%d, %d, %d)", key, ns,
                 d->k_spatial.n, d->out_spatial.n);
        return false;
    }
    if ((lhs_rank >= 0 && lhs_rank != ns + 2) || (rhs_rank >= 0 && rhs_rank != ns + 2)) {
        snprintf(why, GN__XLA_WHY, "attr '%s': %d spatial dimensions need lhs and rhs of rank %d, not %d and %d", key,
                 ns, ns + 2, lhs_rank, rhs_rank);
        return false;
    }
    gn__xla_ints in = d->in_spatial, k = d->k_spatial, o = d->out_spatial;
    if (ns + 2 > GN__XLA_MAXN) {
        snprintf(why, GN__XLA_WHY, "attr '%s': %d spatial dimensions, over %d", key, ns, GN__XLA_MAXN - 2);
        return false;
    }
    in.v[in.n++] = d->in_batch;
    in.v[in.n++] = d->in_feature;
    k.v[k.n++] = d->k_in_feature;
    k.v[k.n++] = d->k_out_feature;
    o.v[o.n++] = d->out_batch;
    o.v[o.n++] = d->out_feature;
    return dims_ok(&in, ns + 2, key, "input dimensions", "lhs", why) &&
           dims_ok(&k, ns + 2, key, "kernel dimensions", "rhs", why) &&
           dims_ok(&o, ns + 2, key, "output dimensions", "output", why);
}

/* ---- computations ----------------------------------------------------------------- */
const char *gn__xla_fn_name(gn__xla_fn_kind k)
{
    static const char *const names[] = {"add", "mul", "max", "min", "and", "or", "replace",
                                        "less", "greater", "less-equal", "greater-equal"};
    return (size_t)k < GN__ARRAY_LEN(names) ? names[k] : "?";
}

static bool op_is(const gn_graph *g, gn_id id, const char *op) { return strcmp(gn__node_op(g, id), op) == 0; }

/* The producer of edge e, looking through Identity. */
static gn__edge through_identity(const gn_graph *b, gn__edge e)
{
    for (int guard = 0; guard < 16 && gn__node_live(b, e.node); guard++) {
        const gn__node *n = gn__node_at(b, e.node);
        if (!(op_is(b, e.node, "Identity") || op_is(b, e.node, "Snapshot")) || n->n_in < 1) break;
        e = n->in[0];
    }
    return e;
}

/* The argument index of the _Arg at e, -1 when e is not an argument. */
static int32_t arg_index(const gn__function *f, const gn_graph *b, gn__edge e)
{
    if (!gn__node_live(b, e.node) || !(gn__node_at(b, e.node)->flags & GN__NODE_FN_ARG)) return -1;
    const Tensorflow__OpDef *sig = f->def ? f->def->signature : NULL;
    if (!sig) return -1;
    const char *name = gn__node_name(b, e.node);
    for (size_t i = 0; i < sig->n_input_arg; i++)
        if (strcmp(sig->input_arg[i]->name, name) == 0) return (int32_t)i;
    return -1;
}

bool gn__xla_fn_attr(const gn_graph *g, gn_id id, const char *key, bool comparator, gn__xla_fn *out, char *why)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !v->func || !v->func->name) {
        snprintf(why, GN__XLA_WHY, "attr '%s' is missing or not a function", key);
        return false;
    }
    const char *fname = v->func->name;
    const gn__function *f = gn__graph_find_function(g->lib ? g->lib : g, fname);
    if (!f || !f->body) {
        snprintf(why, GN__XLA_WHY, "attr '%s' names function '%s', which is not in the library", key, fname);
        return false;
    }
    const gn_graph *b = f->body;
    const Tensorflow__OpDef *sig = f->def ? f->def->signature : NULL;
    int32_t n_args = sig ? (int32_t)sig->n_input_arg : 0;
    gn_id ret = GN_NONE;
    uint32_t n_ret = 0;
    for (gn_id i = 0; i < b->n_nodes; i++)
        if (gn__node_live(b, i) && (gn__node_at(b, i)->flags & GN__NODE_FN_RET)) {
            ret = i;
            n_ret++;
        }
    if (n_ret != 1 || gn__node_at(b, ret)->n_in < 1) {
        snprintf(why, GN__XLA_WHY, "attr '%s' holds function '%s' with %u results; one is supported", key, fname,
                 n_ret);
        return false;
    }
    gn__edge r = through_identity(b, gn__node_at(b, ret)->in[0]);
    const char *op = gn__node_live(b, r.node) ? gn__node_op(b, r.node) : "?";
    out->n_args = n_args;
    out->operand = 0;
    int32_t ra = arg_index(f, b, r);
    if (!comparator && n_args == 2 && ra == 1) {
        out->kind = GN__XLA_FN_REPLACE;
        return true;
    }
    const gn__node *rn = gn__node_at(b, r.node);
    int32_t a0 = -1, a1 = -1;
    if (rn->n_in == 2) {
        a0 = arg_index(f, b, through_identity(b, rn->in[0]));
        a1 = arg_index(f, b, through_identity(b, rn->in[1]));
    }
    static const struct {
        const char *op;
        gn__xla_fn_kind kind;
        bool cmp;
    } forms[] = {
        {"Add", GN__XLA_FN_ADD, false},        {"AddV2", GN__XLA_FN_ADD, false},
        {"Mul", GN__XLA_FN_MUL, false},        {"Maximum", GN__XLA_FN_MAX, false},
        {"Minimum", GN__XLA_FN_MIN, false},    {"LogicalAnd", GN__XLA_FN_AND, false},
        {"LogicalOr", GN__XLA_FN_OR, false},   {"Less", GN__XLA_FN_LESS, true},
        {"Greater", GN__XLA_FN_GREATER, true}, {"LessEqual", GN__XLA_FN_LE, true},
        {"GreaterEqual", GN__XLA_FN_GE, true},
    };
    for (size_t i = 0; i < GN__ARRAY_LEN(forms); i++) {
        if (strcmp(op, forms[i].op) || forms[i].cmp != comparator || rn->n_ctrl) continue;
        if (!comparator && n_args == 2 && ((a0 == 0 && a1 == 1) || (a0 == 1 && a1 == 0))) {
            out->kind = forms[i].kind;
            return true;
        }
        if (comparator && a0 >= 0 && a1 >= 0 && (a0 % 2) == 0 && a1 == a0 + 1 && (n_args % 2) == 0) {
            out->kind = forms[i].kind;
            out->operand = a0 / 2;
            return true;
        }
        if (comparator && a0 >= 0 && a1 >= 0 && (a1 % 2) == 0 && a0 == a1 + 1 && (n_args % 2) == 0) {
            /* rhs < lhs is lhs > rhs */
            static const gn__xla_fn_kind flip[] = {[GN__XLA_FN_LESS] = GN__XLA_FN_GREATER,
                                                    [GN__XLA_FN_GREATER] = GN__XLA_FN_LESS,
                                                    [GN__XLA_FN_LE] = GN__XLA_FN_GE,
                                                    [GN__XLA_FN_GE] = GN__XLA_FN_LE};
            out->kind = flip[forms[i].kind];
            out->operand = a1 / 2;
            return true;
        }
    }
    snprintf(why, GN__XLA_WHY,
             "attr '%s' holds function '%s' computing %s of %s; supported: %s", key, fname, op,
             ra >= 0 ? "an argument" : "other values",
             comparator ? "Less, Greater, LessEqual or GreaterEqual of one operand's (lhs, rhs) arguments"
                        : "Add, Mul, Maximum, Minimum, LogicalAnd or LogicalOr of its two arguments, or its second "
                          "argument");
    return false;
}

bool gn__xla_variadic_fn_attr(const gn_graph *g, gn_id id, const char *key, int32_t n_ops, gn__xla_fn_kind *kinds,
                              char *why)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !v->func || !v->func->name) {
        snprintf(why, GN__XLA_WHY, "attr '%s' is missing or not a function", key);
        return false;
    }
    const char *fname = v->func->name;
    const gn__function *f = gn__graph_find_function(g->lib ? g->lib : g, fname);
    const Tensorflow__OpDef *sig = f && f->def ? f->def->signature : NULL;
    if (!f || !f->body || !sig) {
        snprintf(why, GN__XLA_WHY, "attr '%s' names function '%s', which is not in the library", key, fname);
        return false;
    }
    if ((int64_t)sig->n_input_arg != 2 * (int64_t)n_ops || (int64_t)sig->n_output_arg != n_ops) {
        snprintf(why, GN__XLA_WHY,
                 "attr '%s' holds function '%s' with %zu arguments and %zu results; %d operands need %d and %d", key,
                 fname, sig->n_input_arg, sig->n_output_arg, (int)n_ops, (int)(2 * n_ops), (int)n_ops);
        return false;
    }
    const gn_graph *b = f->body;
    for (int32_t k = 0; k < n_ops; k++) {
        /* the _Retval of output argument k: "_retval:" + its name */
        gn_id ret = GN_NONE;
        for (gn_id i = 0; i < b->n_nodes && ret == GN_NONE; i++)
            if (gn__node_live(b, i) && (gn__node_at(b, i)->flags & GN__NODE_FN_RET) && gn__node_at(b, i)->n_in >= 1 &&
                strncmp(gn__node_name(b, i), "_retval:", 8) == 0 &&
                strcmp(gn__node_name(b, i) + 8, sig->output_arg[k]->name) == 0)
                ret = i;
        if (ret == GN_NONE) {
            snprintf(why, GN__XLA_WHY, "attr '%s' holds function '%s' without a body for result %d", key, fname,
                     (int)k);
            return false;
        }
        gn__edge r = through_identity(b, gn__node_at(b, ret)->in[0]);
        const char *op = gn__node_live(b, r.node) ? gn__node_op(b, r.node) : "?";
        const gn__node *rn = gn__node_at(b, r.node);
        int32_t a0 = -1, a1 = -1;
        if (rn->n_in == 2 && !rn->n_ctrl) {
            a0 = arg_index(f, b, through_identity(b, rn->in[0]));
            a1 = arg_index(f, b, through_identity(b, rn->in[1]));
        }
        static const struct {
            const char *op;
            gn__xla_fn_kind kind;
        } forms[] = {
            {"Add", GN__XLA_FN_ADD},         {"AddV2", GN__XLA_FN_ADD},  {"Mul", GN__XLA_FN_MUL},
            {"Maximum", GN__XLA_FN_MAX},     {"Minimum", GN__XLA_FN_MIN}, {"LogicalAnd", GN__XLA_FN_AND},
            {"LogicalOr", GN__XLA_FN_OR},
        };
        bool found = false;
        bool pair = (a0 == k && a1 == n_ops + k) || (a1 == k && a0 == n_ops + k);
        for (size_t i = 0; i < GN__ARRAY_LEN(forms) && pair && !found; i++)
            if (strcmp(op, forms[i].op) == 0) {
                kinds[k] = forms[i].kind;
                found = true;
            }
        if (!found) {
            snprintf(why, GN__XLA_WHY,
                     "attr '%s' holds function '%s' whose result %d is %s of other values; supported: each result "
                     "k Add, Mul, Maximum, Minimum, LogicalAnd or LogicalOr of arguments k and %d+k",
                     key, fname, (int)k, op, (int)n_ops);
            return false;
        }
    }
    return true;
}
