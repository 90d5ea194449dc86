/* Differential counts against TensorFlow's Grappler (issues 5 and 8: "our
 * counts are at least as good on each model, or the test names the model and
 * the reason").
 *
 * 1. GPU passes: tests/data/grappler_gpu_counts.txt (tools/grappler_gpu_counts.py,
 *    TensorFlow with a virtual sm_90 GPU, every unplaced node on GPU:0) gives,
 *    per model and config (before, layout, remap, amp, all), the nodes,
 *    Transposes, _Fused* ops, Casts and float16 nodes of Grappler's result.
 *    grapnel optimizes the same model with the same passes (base passes of
 *    tools/grappler_counts.py + the config's GPU passes), target gpu:sm_90, the
 *    same fetches and feeds (the `# model` lines of grappler_counts.txt, else the
 *    graph's sinks), and counts the same on its top-level graph. Ours must have
 *    nodes <= TF's, transposes <= TF's, fused >= TF's, f16 nodes >= TF's, and
 *    casts <= TF's when the f16 node counts are equal (otherwise a note).
 *    Layout (and all) run under layout.policy 'tensorflow', the heuristic
 *    Grappler itself applies; the transposes of grapnel's own policy (NCHW on
 *    the GPU) are printed, not asserted. The `before` rows check that the loaded
 *    graph has TensorFlow's counts (the same graph on both sides).
 * 2. Function and loop passes: tests/data/grappler_counts_fnloop.txt
 *    (tools/grappler_counts.py --fnloop: the base passes plus
 *    function_optimization and loop_optimization) gives Grappler's node count;
 *    grapnel with the same passes (cpu target) must have at most as many.
 *
 * Where grapnel is worse, k_entries names the model, the config, the column and
 * the reason; an entry whose model is no longer worse fails the test too (stale).
 * Corpus models are read from GN_CORPUS_DIR; they are skipped when it is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "testutil.h"
#include "passtest.h"

#define MAX_MODELS 64
#define MAX_ROWS 256
#define MAX_IO 512
#define LINE_LEN 65536
#define PATH_LEN 512

/* The base passes of tools/grappler_counts.py; everything else off. */
#define BASE_OPTS                                                                                            \
    "{'disable_model_pruning': False, 'common_subgraph_elimination': True, 'constant_folding': True, "        \
    "'shape_optimization': True, 'arithmetic_optimization': True, 'dependency_optimization': True, "          \
    "'debug_stripper': False, 'layout_optimizer': False, 'remapping': False, 'loop_optimization': False, "     \
    "'function_optimization': False, 'implementation_selector': False, 'auto_mixed_precision': False, "       \
    "'pin_to_host_optimization': False, 'scoped_allocator_optimization': False, 'auto_parallel': False, "     \
    "'min_graph_nodes': -1}"

enum { C_NODES, C_TRANSPOSES, C_FUSED, C_CASTS, C_F16, N_COLS };
static const char *const k_cols[N_COLS] = {"nodes", "transposes", "fused", "casts", "f16_nodes"};

typedef struct entry {
    const char *model;   /* path as in the counts files */
    const char *config;  /* before/layout/remap/amp/all, or fnloop */
    const char *column;
    const char *reason;
} entry;

/* The reasons, found by comparing the op histograms of both results (TensorFlow's
 * from tools/grappler_gpu_counts.py's run with the CUDA-built wheel) and, for
 * the base-pass differences, bench/OPTIMIZER.md's node-count table. */
#define AMP_FUNCTIONAL_WHILE                                                                                  \
    "TensorList through a functional While: TensorFlow paints the TensorListReserve / TensorListStack of the "   \
    "list carried by the While float16 although the loop body (optimized on its own, where the list comes "    \
    "from an _Arg) still writes float32 elements into it (a graph TensorFlow's own element dtype check "        \
    "rejects at run time); we treat a "                                                                         \
    "functional While on a list handle as a boundary, so the list stays float32 and a CastToFp16 follows the "   \
    "TensorListStack that feeds the float16 MatMul"
#define FUSED_F16                                                                                             \
    "remapping fuses float16 nodes into _Fused* ops (Grappler fuses none of them), so fewer nodes are "        \
    "counted as float16 although the same work runs in float16"
#define CONTRACT_DS_CNN                                                                                       \
    "the output's contract (remap.policy 'tensorflow', docs/fusion_contract.md): we fold the 9 inference "     \
    "batch norms into the filters (56 nodes against Grappler's 86), after which TensorFlow's GPU kernels take "  \
    "none of what is left (no GPU _FusedDepthwiseConv2dNative; the 1x1 Conv2D + BiasAdd + Relu left unfused as " \
    "TensorFlow's GPU remapper leaves them); Grappler's 9 are _FusedBatchNormEx of the batch norms it keeps"
#define AMP_TFX                                                                                               \
    "2 fewer float16 nodes: in Grappler's second iteration the arithmetic optimizer's "                        \
    "ReorderCastLikeAndValuePreserving swaps an ExpandDims (head/losses/labels) and a Reshape "                \
    "(add_2_grad/Reshape) with the Cast after them, so they follow AMP's CastToFp16 and run in float16; ours " \
    "keeps them before the Cast, on the int64/float32 side (the AMP painting itself is the same)"
#define BASE_TFX                                                                                              \
    "base passes: 9 Reshape(grad, Shape(<feature>_xf/weighted_sum)) of the Ftrl gradients (and their 9 "     \
    "Shape nodes) that Grappler's arithmetic optimizer removes as reshapes to the input's own shape (a "      \
    "Grappler run without it keeps them): its symbolic shapes prove the grad's [?,1] is each feature's "       \
    "[?,1] through the AddN that sums the features (weighted_sum_no_bias, whose shape function merges its "   \
    "inputs' dims); the symbolic dims of our shape pass give each AddN input its own symbol and do not "       \
    "follow the features' Reshape_2 / Tile / SparseFillEmptyRows chains"
#define TF_NO_AMP                                                                                             \
    "Grappler's AMP converts nothing here (0 float16 nodes; every node is placed on the wildcard "             \
    "/device:GPU:*); ours converts 110 nodes to float16 and adds the Casts at the boundaries"

/* Where grapnel's count is worse than Grappler's, and why. */
static const entry k_entries[] = {
    /* cnn_bn_residual.pb */
    {"golden/cnn_bn_residual.pb", "all", "f16_nodes", FUSED_F16},
    /* lstm.pb */
    {"golden/lstm.pb", "amp", "nodes", AMP_FUNCTIONAL_WHILE},
    {"golden/lstm.pb", "all", "nodes", AMP_FUNCTIONAL_WHILE},
    /* lstm_v1.pb */
    /* mobilenet_v2.pb */
    /* Pretrained_models__CRNN__CRNN_S.pb */
    {"corpus/ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", "all", "f16_nodes", FUSED_F16},
    /* Pretrained_models__DS_CNN__DS_CNN_S.pb */
    {"corpus/ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", "remap", "fused", CONTRACT_DS_CNN},
    {"corpus/ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", "all", "f16_nodes", FUSED_F16},
    /* Pretrained_models__GRU__GRU_S.pb */
    /* Pretrained_models__LSTM__LSTM_S.pb */
    /* tests__models__fc-layers__frozen.pb */
    /* tests__models__lstm__frozen.pb */
    /* examples__regression_checkpoint__model.pb */
    /* tensorflow__compiler__jit__tests__keras_imagenet_main.pbtxt */
    /* the layout optimizer alone leaves as many Transposes as Grappler (1, before the Mean gradient's ReluGrad);
     * the node gap is the base passes' (the amp row, where nothing is converted, shows it) */
    /* tensorflow__compiler__jit__tests__keras_imagenet_main_graph_mode.pbtxt */
    /* tensorflow__compiler__jit__tests__opens2s_gnmt_mixed_precision.pbtxt.gz */
    /* tensorflow__compiler__tests__lstm_layer_inference.pbtxt */
    {"corpus/tensorflow__tensorflow/tensorflow__compiler__tests__lstm_layer_inference.pbtxt", "amp", "nodes", TF_NO_AMP},
    {"corpus/tensorflow__tensorflow/tensorflow__compiler__tests__lstm_layer_inference.pbtxt", "all", "nodes", TF_NO_AMP},
    /* tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt */
    {"corpus/tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", "layout", "nodes", BASE_TFX},
    {"corpus/tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", "remap", "nodes", BASE_TFX},
    {"corpus/tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", "amp", "nodes", BASE_TFX},
    {"corpus/tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", "all", "nodes", BASE_TFX},
    {"corpus/tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", "amp", "f16_nodes", AMP_TFX},
    {"corpus/tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", "all", "f16_nodes", AMP_TFX "; and " FUSED_F16},
    {NULL, NULL, NULL, NULL},
};

/* ---- the counts files ------------------------------------------------------------------------ */
typedef struct model_io {
    char path[PATH_LEN];
    char *buf;                       /* owns the strings below */
    const char *fetch[MAX_IO], *feed[MAX_IO];
    size_t nx, nf;
} model_io;

typedef struct tf_row {
    char path[PATH_LEN];
    char config[16];
    long v[N_COLS];
    long nodes_before; /* fnloop file: the graph's nodes before */
} tf_row;

/* Splits s (modified) at commas. */
static size_t split_list(char *s, const char **out, size_t max)
{
    size_t n = 0;
    while (*s) {
        char *e = strchr(s, ',');
        if (e) *e = '\0';
        if (*s) {
            assert_true(n < max);
            out[n++] = s;
        }
        if (!e) break;
        s = e + 1;
    }
    return n;
}

static void free_models(model_io *m, size_t n)
{
    for (size_t i = 0; i < n; i++) free(m[i].buf);
}

/* The `# model<TAB>path<TAB>edges_before=N<TAB>fetch=..<TAB>feed=..` lines of a
 * grappler_counts file. */
static size_t read_model_lines(const char *file, model_io *m, size_t max)
{
    char path[PATH_LEN];
    FILE *f = fopen(gn_test_data(file, path, sizeof path), "r");
    assert_non_null(f);
    char *line = malloc(LINE_LEN);
    assert_non_null(line);
    size_t n = 0;
    while (fgets(line, LINE_LEN, f) && n < max) {
        assert_non_null(strchr(line, '\n'));
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "# model\t", 8) != 0) continue;
        char *fld[5] = {0};
        size_t k = 0;
        for (char *s = line; k < 5;) {
            fld[k++] = s;
            char *t = strchr(s, '\t');
            if (!t) break;
            *t = '\0';
            s = t + 1;
        }
        if (k != 5) fail_msg("%s: bad line (%zu fields): %s", path, k, fld[1]);
        model_io *mi = &m[n++];
        memset(mi, 0, sizeof *mi);
        snprintf(mi->path, sizeof mi->path, "%s", fld[1]);
        assert_true(strncmp(fld[3], "fetch=", 6) == 0 && strncmp(fld[4], "feed=", 5) == 0);
        size_t lx = strlen(fld[3] + 6), lf = strlen(fld[4] + 5);
        mi->buf = malloc(lx + lf + 2);
        assert_non_null(mi->buf);
        memcpy(mi->buf, fld[3] + 6, lx + 1);
        memcpy(mi->buf + lx + 1, fld[4] + 5, lf + 1);
        mi->nx = split_list(mi->buf, mi->fetch, MAX_IO);
        mi->nf = split_list(mi->buf + lx + 1, mi->feed, MAX_IO);
    }
    free(line);
    fclose(f);
    return n;
}

static const model_io *find_io(const model_io *m, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].path, path) == 0) return &m[i];
    return NULL;
}

/* Data lines: path<TAB>config<TAB>5 numbers (gpu), or path<TAB>before<TAB>after<TAB>... (fnloop). */
static size_t read_rows(const char *file, int gpu, tf_row *r, size_t max)
{
    char path[PATH_LEN];
    FILE *f = fopen(gn_test_data(file, path, sizeof path), "r");
    assert_non_null(f);
    char *line = malloc(LINE_LEN);
    assert_non_null(line);
    size_t n = 0;
    while (fgets(line, LINE_LEN, f) && n < max) {
        if (line[0] == '#' || line[0] == '\n') continue;
        tf_row *x = &r[n];
        memset(x, 0, sizeof *x);
        char p[PATH_LEN];
        if (gpu) {
            char cfg[16];
            int k = sscanf(line, "%511[^\t]\t%15[^\t]\t%ld\t%ld\t%ld\t%ld\t%ld", p, cfg, &x->v[0], &x->v[1],
                           &x->v[2], &x->v[3], &x->v[4]);
            assert_int_equal(k, 7);
            snprintf(x->config, sizeof x->config, "%s", cfg);
        } else {
            long before = 0;
            int k = sscanf(line, "%511[^\t]\t%ld\t%ld", p, &before, &x->v[C_NODES]);
            assert_int_equal(k, 3);
            snprintf(x->config, sizeof x->config, "fnloop");
            x->nodes_before = before;
        }
        snprintf(x->path, sizeof x->path, "%s", p);
        n++;
    }
    free(line);
    fclose(f);
    return n;
}

/* ---- grapnel's side -------------------------------------------------------------------------- */
static bool model_file(const char *rel, char *out, size_t n)
{
    if (strncmp(rel, "golden/", 7) == 0) {
        gn_test_data(rel, out, n);
        return true;
    }
    if (strncmp(rel, "corpus/", 7) == 0) return gn_test_corpus(rel + 7, out, n);
    return false;
}

static bool is_half(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, key);
    return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE && a->type == TENSORFLOW__DATA_TYPE__DT_HALF;
}

static void count(const gn_graph *g, long v[N_COLS])
{
    memset(v, 0, sizeof(long) * N_COLS);
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id)) continue;
        const char *op = gn__node_op(g, id);
        v[C_NODES]++;
        if (strcmp(op, "Transpose") == 0) v[C_TRANSPOSES]++;
        if (strncmp(op, "_Fused", 6) == 0) v[C_FUSED]++;
        if (strcmp(op, "Cast") == 0) v[C_CASTS]++;
        if (is_half(g, id, "T") || is_half(g, id, "dtype") || is_half(g, id, "DstT") || is_half(g, id, "U"))
            v[C_F16]++;
    }
}

/* Nodes nothing reads (data or control), NoOps excluded: tools/grappler_counts.py's sinks. */
static size_t sinks(const gn_graph *g, char out[][256], size_t max)
{
    size_t n = 0;
    for (gn_id id = 0; id < g->n_nodes && n < max; id++) {
        if (!gn__node_live(g, id)) continue;
        const gn__node *x = gn__node_at(g, id);
        if (x->n_use || x->n_cuse || strcmp(gn__node_op(g, id), "NoOp") == 0) continue;
        snprintf(out[n++], 256, "%s", gn__node_name(g, id));
    }
    return n;
}

/* TensorFlow's side builds its GrapplerItem with tf_optimizer.OptimizeGraph, whose
 * ItemConfig keeps ignore_colocation at its default (true): every `_class` attr
 * is erased before the first pass (an OptimizeGraph with every pass off returns
 * the graph without them). Nodes that differ only in their colocation groups
 * then look the same to its common-subgraph elimination. Grappler's counts
 * come from that graph, so grapnel gets the same one. */
static void strip_colocation(gn_graph *g)
{
    for (gn_id id = 0; id < g->n_nodes; id++)
        if (gn__node_live(g, id) && gn__node_attr(g, id, "_class"))
            assert_int_equal(gn__node_remove_attr(g, id, "_class"), GN_OK);
}

/* Optimizes the model at rel with BASE_OPTS + extra on target, counts into v.
 * Returns false (and prints why) when the model file is absent. */
static bool run_grapnel(const char *rel, const model_io *io, const char *extra, const char *target, long v[N_COLS],
                        long before[N_COLS])
{
    char path[PATH_LEN];
    if (!model_file(rel, path, sizeof path) || !gn_test_file_exists(path)) return false;
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", rel, gn_graph_errmsg(g));
    if (before) count(g, before);
    strip_colocation(g);

    static char sink[MAX_IO][256];
    const char *fx[MAX_IO], *ff[MAX_IO];
    size_t nx = 0, nf = 0;
    if (io) {
        for (size_t i = 0; i < io->nx; i++) fx[nx++] = io->fetch[i];
        for (size_t i = 0; i < io->nf; i++) ff[nf++] = io->feed[i];
    } else {
        nx = sinks(g, sink, MAX_IO);
        for (size_t i = 0; i < nx; i++) fx[i] = sink[i];
    }

    gn_options o;
    char err[1024];
    gn_options_init(&o);
    if (gn_options_parse(&o, BASE_OPTS, err, sizeof err) != GN_OK) fail_msg("%s", err);
    if (extra && gn_options_parse(&o, extra, err, sizeof err) != GN_OK) fail_msg("%s: %s", extra, err);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    p.fetches = fx;
    p.n_fetches = nx;
    p.feeds = ff;
    p.n_feeds = nf;
    if (gn_target_parse(target, &p.target, err, sizeof err) != GN_OK) fail_msg("%s: %s", target, err);
    gn_report *r = NULL;
    if (gn_optimize(g, &o, &p, &r) != GN_OK) fail_msg("%s [%s]: %s", rel, extra ? extra : "", gn_graph_errmsg(g));
    gn_report_free(r);
    count(g, v);
    gn_graph_free(g);
    return true;
}

/* ---- the comparison ------------------------------------------------------------------------------ */
typedef struct verdict {
    int worse[MAX_ROWS * 2][N_COLS]; /* per compared row */
    const tf_row *row[MAX_ROWS * 2];
    size_t n;
} verdict;

static const entry *find_entry(const char *model, const char *config, const char *column)
{
    for (size_t i = 0; k_entries[i].model; i++)
        if (strcmp(k_entries[i].model, model) == 0 && strcmp(k_entries[i].config, config) == 0 &&
            strcmp(k_entries[i].column, column) == 0)
            return &k_entries[i];
    return NULL;
}

/* Every worse cell has an entry; returns the number of failures (printed). */
static int check_worse(const verdict *vd)
{
    int fails = 0;
    for (size_t i = 0; i < vd->n; i++)
        for (int c = 0; c < N_COLS; c++)
            if (vd->worse[i][c] && !find_entry(vd->row[i]->path, vd->row[i]->config, k_cols[c])) {
                printf("FAIL: %s [%s] %s: grapnel worse than Grappler and no entry names the reason\n",
                       vd->row[i]->path, vd->row[i]->config, k_cols[c]);
                fails++;
            }
    return fails;
}

/* Every entry of the given configs names a row that is (still) worse. */
static int check_stale(const verdict *vd, int fnloop)
{
    int fails = 0;
    for (size_t e = 0; k_entries[e].model; e++) {
        if ((strcmp(k_entries[e].config, "fnloop") == 0) != (fnloop != 0)) continue;
        bool found = false, ran = false;
        for (size_t i = 0; i < vd->n; i++) {
            if (strcmp(vd->row[i]->path, k_entries[e].model) != 0 || strcmp(vd->row[i]->config, k_entries[e].config))
                continue;
            ran = true;
            for (int c = 0; c < N_COLS; c++)
                if (vd->worse[i][c] && strcmp(k_cols[c], k_entries[e].column) == 0) found = true;
        }
        if (!ran) {
            char path[PATH_LEN];
            /* a corpus model without the corpus: cannot tell */
            if (strncmp(k_entries[e].model, "corpus/", 7) == 0 && !gn_test_corpus("", path, sizeof path)) continue;
        }
        if (!found) {
            printf("FAIL: stale entry %s [%s] %s (\"%s\"): grapnel is no longer worse there\n", k_entries[e].model,
                   k_entries[e].config, k_entries[e].column, k_entries[e].reason);
            fails++;
        }
    }
    return fails;
}

static const char *short_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static void test_gpu_counts(void **state)
{
    (void)state;
    static model_io io[MAX_MODELS];
    static tf_row rows[MAX_ROWS];
    static verdict vd;
    memset(&vd, 0, sizeof vd);
    size_t nio = read_model_lines("grappler_counts.txt", io, MAX_MODELS);
    size_t nr = read_rows("grappler_gpu_counts.txt", 1, rows, MAX_ROWS);
    assert_true(nio > 0 && nr > 0);

    printf("%-44s %-6s | %-22s | %-22s | %s\n", "model", "config", "TF nod/tr/fu/ca/f16", "grapnel nod/tr/fu/ca/f16",
           "worse");
    size_t better = 0, compared = 0, skipped = 0;
    for (size_t i = 0; i < nr; i++) {
        const tf_row *t = &rows[i];
        const char *extra = NULL;
        if (strcmp(t->config, "before") == 0)
            extra = NULL;
        else if (strcmp(t->config, "layout") == 0)
            extra = "{'layout_optimizer': True, 'layout.policy': 'tensorflow'}";
        else if (strcmp(t->config, "remap") == 0)
            extra = "{'remapping': True}";
        else if (strcmp(t->config, "amp") == 0)
            extra = "{'auto_mixed_precision': True}";
        else if (strcmp(t->config, "all") == 0)
            extra = "{'layout_optimizer': True, 'layout.policy': 'tensorflow', 'remapping': True, "
                    "'auto_mixed_precision': True}";
        else
            fail_msg("unknown config %s", t->config);
        long v[N_COLS], b[N_COLS];
        const model_io *mio = find_io(io, nio, t->path);
        bool is_before = strcmp(t->config, "before") == 0;
        if (is_before) {
            /* the loaded graph itself: the same nodes as TensorFlow's import */
            char path[PATH_LEN];
            if (!model_file(t->path, path, sizeof path) || !gn_test_file_exists(path)) {
                skipped++;
                continue;
            }
            gn_graph *g = NULL;
            if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s: %s", t->path, gn_graph_errmsg(g));
            count(g, v);
            gn_graph_free(g);
            for (int c = 0; c < N_COLS; c++) assert_int_equal(v[c], t->v[c]);
            continue;
        }
        if (!run_grapnel(t->path, mio, extra, "gpu:sm_90", v, b)) {
            skipped++;
            continue;
        }
        size_t k = vd.n++;
        vd.row[k] = t;
        int *w = vd.worse[k];
        w[C_NODES] = v[C_NODES] > t->v[C_NODES];
        w[C_TRANSPOSES] = v[C_TRANSPOSES] > t->v[C_TRANSPOSES];
        w[C_FUSED] = v[C_FUSED] < t->v[C_FUSED];
        w[C_F16] = v[C_F16] < t->v[C_F16];
        w[C_CASTS] = v[C_F16] == t->v[C_F16] && v[C_CASTS] > t->v[C_CASTS];
        char worse[128] = "";
        bool any = false, strictly = false;
        for (int c = 0; c < N_COLS; c++) {
            if (w[c]) {
                any = true;
                strncat(worse, k_cols[c], sizeof worse - strlen(worse) - 2);
                strcat(worse, " ");
            }
        }
        strictly = v[C_NODES] < t->v[C_NODES] || v[C_TRANSPOSES] < t->v[C_TRANSPOSES] ||
                   v[C_FUSED] > t->v[C_FUSED] || v[C_F16] > t->v[C_F16] ||
                   (v[C_F16] == t->v[C_F16] && v[C_CASTS] < t->v[C_CASTS]);
        if (!any && strictly) better++;
        compared++;
        char note[160] = "";
        if (v[C_F16] != t->v[C_F16] && v[C_CASTS] > t->v[C_CASTS])
            snprintf(note, sizeof note, " (note: more casts, %ld vs %ld, with %ld vs %ld f16 nodes)", v[C_CASTS],
                     t->v[C_CASTS], v[C_F16], t->v[C_F16]);
        char pol[64] = "";
        if (strcmp(t->config, "layout") == 0) {
            long g2[N_COLS];
            assert_true(run_grapnel(t->path, mio, "{'layout_optimizer': True}", "gpu:sm_90", g2, NULL));
            snprintf(pol, sizeof pol, " [grapnel policy: %ld transposes, %ld nodes]", g2[C_TRANSPOSES], g2[C_NODES]);
        }
        printf("%-44.44s %-6s | %4ld %3ld %3ld %3ld %4ld   | %4ld %3ld %3ld %3ld %4ld   | %s%s%s\n",
               short_name(t->path), t->config, t->v[0], t->v[1], t->v[2], t->v[3], t->v[4], v[0], v[1], v[2], v[3],
               v[4], any ? worse : (strictly ? "better" : "same"), note, pol);
    }
    printf("gpu: %zu rows compared, %zu better than Grappler, %zu skipped (corpus absent)\n", compared, better,
           skipped);
    int fails = check_worse(&vd) + check_stale(&vd, 0);
    free_models(io, nio);
    if (fails) fail_msg("%d failure(s), see above", fails);
}

static void test_fnloop_counts(void **state)
{
    (void)state;
    static model_io io[MAX_MODELS];
    static tf_row rows[MAX_ROWS];
    static verdict vd;
    memset(&vd, 0, sizeof vd);
    size_t nio = read_model_lines("grappler_counts_fnloop.txt", io, MAX_MODELS);
    size_t nr = read_rows("grappler_counts_fnloop.txt", 0, rows, MAX_ROWS);
    assert_true(nio > 0 && nr > 0);
    printf("%-60s | %6s | %6s | %6s\n", "model", "before", "TF", "grapnel");
    size_t better = 0, compared = 0, skipped = 0;
    for (size_t i = 0; i < nr; i++) {
        const tf_row *t = &rows[i];
        const model_io *mio = find_io(io, nio, t->path);
        assert_non_null(mio);
        long v[N_COLS], b[N_COLS];
        if (!run_grapnel(t->path, mio, "{'function_optimization': True, 'loop_optimization': True}", "cpu", v, b)) {
            skipped++;
            continue;
        }
        assert_int_equal(b[C_NODES], t->nodes_before); /* the same graph as TensorFlow's */
        size_t k = vd.n++;
        vd.row[k] = t;
        vd.worse[k][C_NODES] = v[C_NODES] > t->v[C_NODES];
        compared++;
        if (v[C_NODES] < t->v[C_NODES]) better++;
        printf("%-60.60s | %6ld | %6ld | %6ld %s\n", short_name(t->path), t->nodes_before, t->v[C_NODES],
               v[C_NODES], v[C_NODES] > t->v[C_NODES] ? "worse" : (v[C_NODES] < t->v[C_NODES] ? "better" : "same"));
    }
    printf("fnloop: %zu models compared, %zu better than Grappler, %zu skipped (corpus absent)\n", compared, better,
           skipped);
    int fails = check_worse(&vd) + check_stale(&vd, 1);
    free_models(io, nio);
    if (fails) fail_msg("%d failure(s), see above", fails);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_counts),
        cmocka_unit_test(test_fnloop_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
