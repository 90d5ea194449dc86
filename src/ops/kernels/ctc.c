/* CPU kernels of the CTC decoders: CTCGreedyDecoder and CTCBeamSearchDecoder,
 * with the meaning of TensorFlow's CPU kernels (core/kernels/ctc_decoder_ops.cc,
 * core/util/ctc/ctc_beam_search.h and its helpers).
 *
 * Both take inputs [max_time, batch, num_classes] (float or double) and
 * sequence_length int32 [batch]; each batch entry is decoded over its first
 * sequence_length(b) steps (a negative length decodes nothing, as in
 * TensorFlow). The decoded paths leave as sparse triples: indices [n, 2]
 * (batch, position), values [n], shape [batch, longest path].
 *
 * Greedy: the first largest class of each step (ties: the lower class),
 * blanks dropped, with merge_repeated a class equal to the previous step's
 * dropped; log_probability is minus the sum of the step maxima (the inputs are
 * taken as they are, no softmax).
 *
 * Beam search: each step's inputs are log-softmaxed (max + log sum exp, in
 * T), the blank is the last class, and the prefix tree is grown exactly as
 * TensorFlow's decoder with its default scorer does, including the order in
 * which its bounded top-n container (gtl::TopN over libstdc++'s heap and
 * sort algorithms) keeps and drops entries of equal probability, so ties come
 * out as TensorFlow's. Arithmetic is in T except LogSumExp's exp and log1p,
 * which TensorFlow evaluates in float for both dtypes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/kernels/array_impl.h"

#define DT_INT32 TENSORFLOW__DATA_TYPE__DT_INT32
#define DT_INT64 TENSORFLOW__DATA_TYPE__DT_INT64
#define DT_FLOAT TENSORFLOW__DATA_TYPE__DT_FLOAT
#define DT_DOUBLE TENSORFLOW__DATA_TYPE__DT_DOUBLE

/* ---- shared: validation and the sparse outputs ------------------------------------------------ */

typedef struct ctc_in {
    int64_t max_time, batch, classes;
    const int32_t *seq_len;
    bool f32;
} ctc_in;

/* CTCDecodeHelper::ValidateInputsGenerateOutputs' checks, in its order. */
static gn_status ctc_validate(gn__kctx *c, ctc_in *in)
{
    if (c->n_in < 2) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 2 inputs, got %u", c->n_in);
    const gn__tensor *x = &c->in[0], *sl = &c->in[1];
    if (x->dtype != DT_FLOAT && x->dtype != DT_DOUBLE)
        return gn__kctx_fail(c, GN_ERR_UNSUPPORTED, "dtype %s is not supported", gn__dtype_name(x->dtype));
    if (sl->dtype != DT_INT32)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "sequence_length must be int32, not %s", gn__dtype_name(sl->dtype));
    if (x->rank != 3) return gn__kctx_fail(c, GN_ERR_GRAPH, "inputs is not a 3-Tensor");
    if (gn__tensor_numel(x) == 0) return gn__kctx_fail(c, GN_ERR_GRAPH, "inputs must not be empty");
    in->max_time = x->dims[0];
    in->batch = x->dims[1];
    in->classes = x->dims[2];
    in->f32 = x->dtype == DT_FLOAT;
    if (sl->rank != 1) return gn__kctx_fail(c, GN_ERR_GRAPH, "sequence_length is not a vector");
    if (sl->dims[0] != in->batch)
        return gn__kctx_fail(c, GN_ERR_GRAPH,
                             "len(sequence_length) != batch_size.  len(sequence_length):  %lld batch_size: %lld",
                             (long long)sl->dims[0], (long long)in->batch);
    in->seq_len = sl->data;
    for (int64_t b = 0; b < in->batch; b++)
        if (in->seq_len[b] > in->max_time)
            return gn__kctx_fail(c, GN_ERR_GRAPH, "sequence_length(%lld) <= %lld", (long long)b,
                                 (long long)in->max_time);
    if (in->classes > INT32_MAX) return gn__kctx_fail(c, GN_ERR_GRAPH, "num_classes cannot exceed max int");
    return GN_OK;
}

/* Decoded labels of one path for every batch entry: lab[off[b] .. off[b+1]). */
typedef struct ctc_paths {
    int64_t *off;    /* batch + 1 */
    int32_t *lab;
    int64_t n, cap;
} ctc_paths;

static gn_status paths_push(gn__kctx *c, ctc_paths *p, int32_t v)
{
    if (p->n == p->cap) {
        int64_t cap = p->cap ? 2 * p->cap : 64;
        int32_t *nl = realloc(p->lab, (size_t)cap * sizeof *nl);
        if (!nl) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory for %lld decoded labels", (long long)cap);
        p->lab = nl;
        p->cap = cap;
    }
    p->lab[p->n++] = v;
    return GN_OK;
}

static void paths_free(ctc_paths *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        free(p[i].off);
        free(p[i].lab);
    }
    free(p);
}

static ctc_paths *paths_new(int64_t n, int64_t batch)
{
    ctc_paths *p = calloc((size_t)n, sizeof *p);
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) {
        p[i].off = calloc((size_t)batch + 1, sizeof *p[i].off);
        if (!p[i].off) {
            paths_free(p, n);
            return NULL;
        }
    }
    return p;
}

/* StoreAllDecodedSequences: path i's indices, values and shape go to outputs
 * i, top + i and 2*top + i. */
static gn_status store_paths(gn__kctx *c, const ctc_paths *p, int64_t top, int64_t batch)
{
    for (int64_t i = 0; i < top; i++) {
        int64_t n = p[i].off[batch], longest = 0;
        for (int64_t b = 0; b < batch; b++)
            if (p[i].off[b + 1] - p[i].off[b] > longest) longest = p[i].off[b + 1] - p[i].off[b];
        gn__tensor *ti, *tv, *ts;
        GN_TRY(gn__kctx_output(c, (uint32_t)i, DT_INT64, 2, (int64_t[]){n, 2}, &ti));
        GN_TRY(gn__kctx_output(c, (uint32_t)(top + i), DT_INT64, 1, (int64_t[]){n}, &tv));
        GN_TRY(gn__kctx_output(c, (uint32_t)(2 * top + i), DT_INT64, 1, (int64_t[]){2}, &ts));
        int64_t *ix = ti->data, *v = tv->data, *s = ts->data;
        for (int64_t b = 0; b < batch; b++)
            for (int64_t j = p[i].off[b]; j < p[i].off[b + 1]; j++) {
                ix[2 * j] = b;
                ix[2 * j + 1] = j - p[i].off[b];
                v[j] = p[i].lab[j];
            }
        s[0] = batch;
        s[1] = longest;
    }
    return GN_OK;
}

static double in_at(const gn__tensor *x, int64_t i)
{
    return x->dtype == DT_FLOAT ? (double)((const float *)x->data)[i] : ((const double *)x->data)[i];
}

/* ---- CTCGreedyDecoder ------------------------------------------------------------------------ */

gn_status gn__ctc_k_greedy_decoder(gn__kctx *c)
{
    ctc_in in;
    GN_TRY(ctc_validate(c, &in));
    if (c->n_out != 4) return gn__kctx_fail(c, GN_ERR_GRAPH, "expects 4 outputs, got %u", c->n_out);
    const gn__tensor *x = &c->in[0];
    bool merge = gn__ak_attr_bool(c, "merge_repeated", false);
    int64_t bi = gn__ak_attr_int(c, "blank_index", -1), nc = in.classes;
    int64_t blank = bi < 0 ? nc + bi : bi;
    if (blank < 0 || blank >= nc)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "blank_index expected to be between %lld and %lld but was %lld",
                             (long long)-nc, (long long)(nc - 1), (long long)bi);
    gn__tensor *lp;
    GN_TRY(gn__kctx_output(c, 3, x->dtype, 2, (int64_t[]){in.batch, 1}, &lp));
    ctc_paths *p = paths_new(1, in.batch);
    if (!p) return gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    gn_status s = GN_OK;
    for (int64_t b = 0; b < in.batch && s == GN_OK; b++) {
        double sum = 0;
        float sumf = 0;
        int64_t prev = -1;
        for (int64_t t = 0; t < in.seq_len[b] && s == GN_OK; t++) {
            int64_t row = (t * in.batch + b) * nc, arg = 0;
            double m = in_at(x, row);
            for (int64_t k = 1; k < nc; k++)
                if (in_at(x, row + k) > m) {
                    m = in_at(x, row + k);
                    arg = k;
                }
            if (in.f32) sumf += -(float)m;
            else sum += -m;
            if (arg != blank && !(merge && arg == prev)) s = paths_push(c, p, (int32_t)arg);
            prev = arg;
        }
        p->off[b + 1] = p->n;
        if (in.f32) ((float *)lp->data)[b] = sumf;
        else ((double *)lp->data)[b] = sum;
    }
    if (s == GN_OK) s = store_paths(c, p, 1, in.batch);
    paths_free(p, 1);
    return s;
}

/* ---- CTCBeamSearchDecoder -------------------------------------------------------------------- */

/* Values are held in double; in float mode every result is rounded to float
 * (for +, - that is float arithmetic exactly) and exp/log use the float
 * functions, so the numbers are float's. */
typedef struct prob {
    double total, blank, label;
} prob;

typedef struct entry {
    int32_t parent;  /* -1: the root */
    int32_t label;
    prob oldp, newp;
} entry;

typedef struct beam {
    gn__kctx *c;
    bool f32;
    int32_t classes, blank, width;
    entry *e;
    int64_t n_e, cap_e;
    /* children: open addressing on (parent, label) -> entry */
    int64_t *hkey;
    int32_t *hval;
    int64_t hcap, hn;
    /* gtl::TopN<entry, greater-by-newp.total> of limit `width` */
    int32_t *top;    /* width + 1 slots */
    int64_t top_n;   /* elements held (<= width + 1) */
    int top_state;   /* 0 unordered, 1 bottom known, 2 heap sorted */
    int64_t top_limit;
    int32_t *scratch;
} beam;

#define LOG_ZERO (-INFINITY)

static double rd(const beam *bm, double v) { return bm->f32 ? (double)(float)v : v; }

static prob prob_zero(void) { return (prob){LOG_ZERO, LOG_ZERO, LOG_ZERO}; }

/* ctc_loss_util.h LogSumExp: exp and log1p in float for both dtypes. */
static double lse(const beam *bm, double a, double b)
{
    if (a == LOG_ZERO) return b;
    if (b == LOG_ZERO) return a;
    double hi = a > b ? a : b, lo = a > b ? b : a;
    return rd(bm, hi + (double)log1pf(expf((float)(lo - hi))));
}

/* the comparator: a before b when a's newp.total is larger */
static bool gt(const beam *bm, int32_t a, int32_t b) { return bm->e[a].newp.total > bm->e[b].newp.total; }

/* ---- libstdc++'s heap and sort algorithms over entry ids, with gt as "less" ---- */
static void heap_push_hole(const beam *bm, int32_t *f, int64_t hole, int64_t top, int32_t v)
{
    int64_t parent = (hole - 1) / 2;
    while (hole > top && gt(bm, f[parent], v)) {
        f[hole] = f[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    f[hole] = v;
}

static void heap_adjust(const beam *bm, int32_t *f, int64_t hole, int64_t len, int32_t v)
{
    int64_t top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (gt(bm, f[child], f[child - 1])) child--;
        f[hole] = f[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        f[hole] = f[child - 1];
        hole = child - 1;
    }
    heap_push_hole(bm, f, hole, top, v);
}

/* __pop_heap(first, last, result) */
static void heap_pop_to(const beam *bm, int32_t *f, int64_t last, int64_t result)
{
    int32_t v = f[result];
    f[result] = f[0];
    heap_adjust(bm, f, 0, last, v);
}

static void heap_make(const beam *bm, int32_t *f, int64_t len)
{
    if (len < 2) return;
    for (int64_t parent = (len - 2) / 2;; parent--) {
        heap_adjust(bm, f, parent, len, f[parent]);
        if (parent == 0) return;
    }
}

static void heap_pop(const beam *bm, int32_t *f, int64_t len)
{
    if (len > 1) heap_pop_to(bm, f, len - 1, len - 1);
}

static void heap_sort(const beam *bm, int32_t *f, int64_t len)
{
    while (len > 1) {
        len--;
        heap_pop_to(bm, f, len, len);
    }
}

static void swap32(int32_t *a, int32_t *b)
{
    int32_t t = *a;
    *a = *b;
    *b = t;
}

static void unguarded_linear_insert(const beam *bm, int32_t *f, int64_t last)
{
    int32_t v = f[last];
    int64_t next = last - 1;
    while (gt(bm, v, f[next])) {
        f[last] = f[next];
        last = next--;
    }
    f[last] = v;
}

static void insertion_sort(const beam *bm, int32_t *f, int64_t first, int64_t last)
{
    if (first == last) return;
    for (int64_t i = first + 1; i < last; i++) {
        if (gt(bm, f[i], f[first])) {
            int32_t v = f[i];
            memmove(f + first + 1, f + first, (size_t)(i - first) * sizeof *f);
            f[first] = v;
        } else {
            unguarded_linear_insert(bm, f, i);
        }
    }
}

static void introsort_loop(const beam *bm, int32_t *f, int64_t first, int64_t last, int64_t depth)
{
    while (last - first > 16) {
        if (depth == 0) {
            /* __partial_sort(first, last, last): heap_select then sort_heap */
            heap_make(bm, f + first, last - first);
            heap_sort(bm, f + first, last - first);
            return;
        }
        depth--;
        int64_t a = first + 1, b = first + (last - first) / 2, cc = last - 1;
        int64_t m;
        if (gt(bm, f[a], f[b])) m = gt(bm, f[b], f[cc]) ? b : gt(bm, f[a], f[cc]) ? cc : a;
        else m = gt(bm, f[a], f[cc]) ? a : gt(bm, f[b], f[cc]) ? cc : b;
        swap32(&f[first], &f[m]);
        int64_t lo = first + 1, hi = last;
        for (;;) {
            while (gt(bm, f[lo], f[first])) lo++;
            hi--;
            while (gt(bm, f[first], f[hi])) hi--;
            if (!(lo < hi)) break;
            swap32(&f[lo], &f[hi]);
            lo++;
        }
        introsort_loop(bm, f, lo, last, depth);
        last = lo;
    }
}

/* std::sort */
static void std_sort(const beam *bm, int32_t *f, int64_t n)
{
    if (n < 2) return;
    int64_t lg = 0;
    for (int64_t v = n; v > 1; v >>= 1) lg++;
    introsort_loop(bm, f, 0, n, 2 * lg);
    if (n > 16) {
        insertion_sort(bm, f, 0, 16);
        for (int64_t i = 16; i < n; i++) unguarded_linear_insert(bm, f, i);
    } else {
        insertion_sort(bm, f, 0, n);
    }
}

/* ---- gtl::TopN (TensorFlow 2.21's tensorflow/core/lib/gtl/top_n.h) ----
 * Unordered until `limit` elements are held (the bottom moved to slot 0 once
 * asked for), then a heap of exactly `limit` (the least on top). */
static void top_reset(beam *bm, int64_t limit)
{
    bm->top_n = 0;
    bm->top_state = 0;
    bm->top_limit = limit;
}

static int64_t top_size(const beam *bm) { return bm->top_n; }

static void top_push(beam *bm, int32_t v)
{
    int32_t *el = bm->top;
    if (bm->top_limit == 0) return;
    if (bm->top_state != 2) {
        el[bm->top_n++] = v;
        if (bm->top_n == bm->top_limit + 1) {
            heap_make(bm, el, bm->top_n);
            heap_pop(bm, el, bm->top_n);
            bm->top_n--;
            bm->top_state = 2;
        } else if (bm->top_state == 1 && !gt(bm, el[bm->top_n - 1], el[0])) {
            swap32(&el[0], &el[bm->top_n - 1]);
        }
    } else if (gt(bm, v, el[0])) {
        heap_pop(bm, el, bm->top_n);
        el[bm->top_n - 1] = v;
        heap_push_hole(bm, el, bm->top_n - 1, 0, v);
    }
}

static int32_t top_peek_bottom(beam *bm)
{
    int32_t *el = bm->top;
    if (bm->top_state == 0) {
        int64_t m = 0;
        for (int64_t i = 1; i < bm->top_n; i++)
            if (gt(bm, el[m], el[i])) m = i;
        if (m) swap32(&el[0], &el[m]);
        bm->top_state = 1;
    }
    return el[0];
}

/* Extract(): the elements sorted (descending) into out; returns the count. */
static int64_t top_extract(beam *bm, int32_t *out)
{
    int64_t n = bm->top_n;
    memcpy(out, bm->top, (size_t)n * sizeof *out);
    if (bm->top_state != 2) std_sort(bm, out, n);
    else heap_sort(bm, out, n);
    return n;
}

/* ---- the prefix tree ---- */
static gn_status new_entry(beam *bm, int32_t parent, int32_t label, int32_t *id)
{
    if (bm->n_e == bm->cap_e) {
        int64_t cap = bm->cap_e ? 2 * bm->cap_e : 256;
        if (cap > INT32_MAX)
            return gn__kctx_fail(bm->c, GN_ERR_LIMIT, "the beam search tree grew past %d entries", INT32_MAX);
        entry *ne = realloc(bm->e, (size_t)cap * sizeof *ne);
        if (!ne) return gn__kctx_fail(bm->c, GN_ERR_NOMEM, "out of memory for %lld beam entries", (long long)cap);
        bm->e = ne;
        bm->cap_e = cap;
    }
    *id = (int32_t)bm->n_e++;
    bm->e[*id] = (entry){parent, label, prob_zero(), prob_zero()};
    return GN_OK;
}

static uint64_t hmix(int64_t k)
{
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    return x ^ (x >> 29);
}

/* The children (BeamEntry::GetChild): an open-addressing table from
 * parent * classes + label to the entry. TensorFlow makes a child for every
 * label it tries and resets the ones that do not enter the beam; such an
 * entry is the same as one never made (its probabilities are read again only
 * after they are written), so here a child is made only when it enters the
 * beam, which keeps the tree to the entries that were ever in it. */
static gn_status child_room(beam *bm)
{
    if (2 * (bm->hn + 1) <= bm->hcap) return GN_OK;
    int64_t cap = bm->hcap ? 2 * bm->hcap : 1024;
    int64_t *nk = malloc((size_t)cap * sizeof *nk);
    int32_t *nv = malloc((size_t)cap * sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return gn__kctx_fail(bm->c, GN_ERR_NOMEM, "out of memory for the beam search tree");
    }
    for (int64_t i = 0; i < cap; i++) nk[i] = -1;
    for (int64_t i = 0; i < bm->hcap; i++) {
        if (bm->hkey[i] < 0) continue;
        uint64_t h = hmix(bm->hkey[i]) & (uint64_t)(cap - 1);
        while (nk[h] >= 0) h = (h + 1) & (uint64_t)(cap - 1);
        nk[h] = bm->hkey[i];
        nv[h] = bm->hval[i];
    }
    free(bm->hkey);
    free(bm->hval);
    bm->hkey = nk;
    bm->hval = nv;
    bm->hcap = cap;
    return GN_OK;
}

/* The slot holding key, or the empty slot where it goes (child_room first). */
static int64_t child_slot(const beam *bm, int64_t key)
{
    uint64_t h = hmix(key) & (uint64_t)(bm->hcap - 1);
    while (bm->hkey[h] >= 0 && bm->hkey[h] != key) h = (h + 1) & (uint64_t)(bm->hcap - 1);
    return (int64_t)h;
}

static bool active(const beam *bm, int32_t id) { return bm->e[id].newp.total != LOG_ZERO; }

static bool is_candidate(beam *bm, const prob *p)
{
    return p->total > LOG_ZERO && (top_size(bm) < bm->width || p->total > bm->e[top_peek_bottom(bm)].newp.total);
}

static gn_status beam_reset(beam *bm)
{
    bm->n_e = 0;
    bm->hn = 0;
    for (int64_t i = 0; i < bm->hcap; i++) bm->hkey[i] = -1;
    top_reset(bm, bm->width);
    int32_t root;
    GN_TRY(new_entry(bm, -1, -1, &root));
    bm->e[root].newp.total = 0;
    bm->e[root].newp.blank = 0;
    top_push(bm, root);
    return GN_OK;
}

/* CTCBeamSearchDecoder::Step on one row of T values. */
static gn_status beam_step(beam *bm, const gn__tensor *x, int64_t row)
{
    int32_t nc = bm->classes;
    double mx = in_at(x, row);
    for (int32_t j = 1; j < nc; j++)
        if (in_at(x, row + j) > mx) mx = in_at(x, row + j);
    double sum = 0;
    for (int32_t j = 0; j < nc; j++)
        sum = bm->f32 ? (double)((float)sum + expf((float)(in_at(x, row + j) - mx))) : sum + exp(in_at(x, row + j) - mx);
    double norm = rd(bm, mx + (bm->f32 ? (double)logf((float)sum) : log(sum)));

    int32_t *br = bm->scratch;
    int64_t nb = top_extract(bm, br);
    top_reset(bm, bm->width);
    for (int64_t i = 0; i < nb; i++) bm->e[br[i]].oldp = bm->e[br[i]].newp;
    for (int64_t i = 0; i < nb; i++) {
        entry *b = &bm->e[br[i]];
        if (b->parent >= 0) {
            const entry *pa = &bm->e[b->parent];
            if (active(bm, b->parent)) {
                double prev = b->label == pa->label ? pa->oldp.blank : pa->oldp.total;
                b->newp.label = lse(bm, b->newp.label, prev);
            }
            b->newp.label = rd(bm, b->newp.label + rd(bm, in_at(x, row + b->label) - norm));
        }
        b->newp.blank = rd(bm, rd(bm, b->oldp.total + in_at(x, row + bm->blank)) - norm);
        b->newp.total = lse(bm, b->newp.blank, b->newp.label);
        top_push(bm, br[i]);
    }
    for (int64_t i = 0; i < nb; i++) {
        int32_t bid = br[i];
        if (!is_candidate(bm, &bm->e[bid].oldp)) continue;
        for (int32_t ind = 0; ind < nc - 1; ind++) {
            GN_TRY(child_room(bm));
            int64_t key = (int64_t)bid * nc + ind, slot = child_slot(bm, key);
            int32_t cid = bm->hkey[slot] == key ? bm->hval[slot] : -1;
            if (cid >= 0 && active(bm, cid)) continue;
            const entry *b = &bm->e[bid];
            prob np = {LOG_ZERO, LOG_ZERO, LOG_ZERO};
            double prev = ind == b->label ? b->oldp.blank : b->oldp.total;
            np.label = rd(bm, rd(bm, in_at(x, row + ind) - norm) + prev);
            np.total = np.label;
            if (is_candidate(bm, &np)) {
                if (cid < 0) {
                    GN_TRY(new_entry(bm, bid, ind, &cid));
                    bm->hkey[slot] = key;
                    bm->hval[slot] = cid;
                    bm->hn++;
                }
                bm->e[cid].newp = np;
                if (top_size(bm) == bm->width) bm->e[top_peek_bottom(bm)].newp = prob_zero();
                top_push(bm, cid);
            } else if (cid >= 0) {
                bm->e[cid].oldp = prob_zero();
                bm->e[cid].newp = prob_zero();
            }
        }
    }
    return GN_OK;
}

static gn_status beam_top_paths(beam *bm, int64_t n, ctc_paths *paths, double *lp, bool merge)
{
    if (n > bm->width) return gn__kctx_fail(bm->c, GN_ERR_GRAPH, "requested more paths than the beam width.");
    if (n > top_size(bm)) return gn__kctx_fail(bm->c, GN_ERR_GRAPH, "Less leaves in the beam search than requested.");
    /* a second TopN of limit n, fed the leaves in their stored order */
    int64_t m = top_size(bm);
    int32_t *leaves = bm->scratch;
    memcpy(leaves, bm->top, (size_t)m * sizeof *leaves);
    top_reset(bm, n);
    for (int64_t i = 0; i < m; i++) top_push(bm, leaves[i]);
    int32_t *best = bm->scratch + bm->width + 1;
    top_extract(bm, best);
    for (int64_t i = 0; i < n; i++) {
        ctc_paths *p = &paths[i];
        int64_t start = p->n;
        int32_t prev = -1;
        /* LabelSeq: walk to the root, then reverse */
        for (int32_t id = best[i]; bm->e[id].parent >= 0; id = bm->e[id].parent) {
            if (!merge || bm->e[id].label != prev) GN_TRY(paths_push(bm->c, p, bm->e[id].label));
            prev = bm->e[id].label;
        }
        for (int64_t a = start, z = p->n - 1; a < z; a++, z--) swap32(&p->lab[a], &p->lab[z]);
        lp[i] = bm->e[best[i]].newp.total;
    }
    return GN_OK;
}

gn_status gn__ctc_k_beam_search_decoder(gn__kctx *c)
{
    ctc_in in;
    GN_TRY(ctc_validate(c, &in));
    const gn__tensor *x = &c->in[0];
    bool merge = gn__ak_attr_bool(c, "merge_repeated", true);
    int64_t width = gn__ak_attr_int(c, "beam_width", 0), top = gn__ak_attr_int(c, "top_paths", 0);
    if (width < 1 || width > INT32_MAX / 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "beam_width must be in [1, %d], got %lld", INT32_MAX / 4,
                             (long long)width);
    if (top < 1 || top > INT32_MAX / 4)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "top_paths must be in [1, %d], got %lld", INT32_MAX / 4, (long long)top);
    if ((int64_t)c->n_out != 3 * top + 1)
        return gn__kctx_fail(c, GN_ERR_GRAPH, "top_paths is %lld but the node has %u outputs", (long long)top, c->n_out);
    gn__tensor *lpt;
    GN_TRY(gn__kctx_output(c, (uint32_t)(3 * top), x->dtype, 2, (int64_t[]){in.batch, top}, &lpt));
    beam bm = {.c = c, .f32 = in.f32, .classes = (int32_t)in.classes, .blank = (int32_t)(in.classes - 1),
               .width = (int32_t)width};
    ctc_paths *paths = paths_new(top, in.batch);
    double *lp = malloc((size_t)top * sizeof *lp);
    bm.top = malloc(((size_t)width + 1) * sizeof *bm.top);
    bm.scratch = malloc(2 * ((size_t)width + 1) * sizeof *bm.scratch);
    gn_status s = GN_OK;
    if (!paths || !lp || !bm.top || !bm.scratch) s = gn__kctx_fail(c, GN_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < in.batch && s == GN_OK; b++) {
        s = beam_reset(&bm);
        for (int64_t t = 0; t < in.seq_len[b] && s == GN_OK; t++)
            s = beam_step(&bm, x, (t * in.batch + b) * in.classes);
        if (s == GN_OK) s = beam_top_paths(&bm, top, paths, lp, merge);
        for (int64_t i = 0; i < top && s == GN_OK; i++) {
            paths[i].off[b + 1] = paths[i].n;
            if (in.f32) ((float *)lpt->data)[b * top + i] = (float)lp[i];
            else ((double *)lpt->data)[b * top + i] = lp[i];
        }
    }
    if (s == GN_OK) s = store_paths(c, paths, top, in.batch);
    if (paths) paths_free(paths, top);
    free(lp);
    free(bm.top);
    free(bm.scratch);
    free(bm.e);
    free(bm.hkey);
    free(bm.hval);
    return s;
}
