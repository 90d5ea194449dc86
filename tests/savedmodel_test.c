/* SavedModel reading: tags, signatures, variables and assets of every corpus
 * SavedModel; freezing a signature and running it against TensorFlow's results
 * (tests/data/savedmodel, written by tools/make_savedmodel_goldens.py); the
 * exact reason for each corpus model that cannot be frozen or run; bad input;
 * and the CLI (inspect, run --signature, freeze). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "io/bundle.h"
#include "io/savedmodel.h"
#include "testutil.h"

#define DT_FLOAT 1
#define DT_STRING 7
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------------------- */
static bool corpus(const char *rel, char *out, size_t n)
{
    if (!gn_test_corpus(rel, out, n)) {
        print_message("corpus absent: %s skipped\n", rel);
        return false;
    }
    return true;
}

static char *tmp(const char *name)
{
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 1024, "%s/%s", gn_test_tmpdir(), name);
    return b;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_msg(gn_status got, gn_status want, const char *msg, const char *expected)
{
    if (got != want || strcmp(msg, expected) != 0)
        fail_msg("status %d (want %d)\n  got:  %s\n  want: %s", got, want, msg, expected);
}

/* ---- the corpus: what loads ----------------------------------------------------------- */
typedef struct corpus_sm {
    const char *rel;
    const char *tags;
    size_t n_sig;
    const char *sigs;        /* keys, comma-separated, sorted */
    size_t n_vars;
    const char *var0;        /* first variable (key order): "name dtype [dims]" */
    size_t n_assets;
} corpus_sm;

static const corpus_sm CORPUS_SM[] = {
    {"SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential", "serve", 2,
     "__saved_model_init_op,serving_default", 21, "keras_api/metrics/0/count/.ATTRIBUTES/VARIABLE_VALUE 1 []", 0},
    {"mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model", "serve", 2,
     "__saved_model_init_op,serving_default", 141, "keras_api/metrics/0/count/.ATTRIBUTES/VARIABLE_VALUE 1 []", 0},
    {"tensorflow__rust/examples__regression_savedmodel", "serve", 4, "__saved_model_init_op,b,train,w", 6,
     "b/.ATTRIBUTES/VARIABLE_VALUE 1 [1]", 0},
    {"tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_counter__00000123", "serve",
     4, "get_counter,incr_counter,incr_counter_by,reset_counter", 1, "counter 1 []", 0},
    {"tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123",
     "serve", 5, "classify_x_to_y,regress_x2_to_y3,regress_x_to_y,regress_x_to_y2,serving_default", 5, "a 1 []", 1},
    {"tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__"
     "00000123",
     "serve", 7,
     "__saved_model_init_op,classify_x2_to_y3,classify_x_to_y,regress_x2_to_y3,regress_x_to_y,regress_x_to_y2,"
     "serving_default",
     3, "a/.ATTRIBUTES/VARIABLE_VALUE 1 []", 1},
    {"tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop", "serve", 2,
     "__saved_model_init_op,serving_default", 0, NULL, 0},
    {"tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__StaticHashTableModule", "serve", 2,
     "__saved_model_init_op,serving_default", 0, NULL, 2},
    {"tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123", "serve", 6,
     "classify_x2_to_y3,classify_x_to_y,regress_x2_to_y3,regress_x_to_y,regress_x_to_y2,serving_default", 3,
     "a 1 []", 1},
    {"tensorflow__tensorflow/tensorflow__core__graph__regularization__testdata__bert1", "serve", 2,
     "__saved_model_init_op,serving_default", 0, NULL, 0},
    {"tensorflow__text/tensorflow_text__python__ops__test_data__segmenter_hub_module", "", 1, "default", 6,
     "dense/bias 1 [2]", 0},
    {"tensorflow__tfx/tfx__benchmarks__datasets__chicago_taxi__model__tft_tf2_saved_model", "serve", 2,
     "__saved_model_init_op,serving_default", 0, NULL, 4},
    {"tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__export__chicago-taxi__1646034756",
     "serve", 4, "classification,predict,regression,serving_default", 21, "dnn/hiddenlayer_0/bias 1 [100]", 4},
    {"tensorflow__tfx/tfx__components__testdata__trainer__keras__Format-Serving", "serve", 2,
     "__saved_model_init_op,serving_default", 27, "keras_api/metrics/0/count/.ATTRIBUTES/VARIABLE_VALUE 1 []", 0},
    {"tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn", "transform", 1,
     "transform_signature", 0, NULL, 2},
};

static void format_var(const gn_variable_info *v, char *buf, size_t n)
{
    int o = snprintf(buf, n, "%s %d [", v->name, v->dtype);
    for (int32_t d = 0; d < v->rank && o > 0 && (size_t)o < n; d++)
        o += snprintf(buf + o, n - (size_t)o, "%s%lld", d ? "," : "", (long long)v->dims[d]);
    if (o > 0 && (size_t)o < n) snprintf(buf + o, n - (size_t)o, "]");
}

static void test_corpus_loads(void **state)
{
    (void)state;
    size_t seen = 0;
    for (size_t i = 0; i < ARRAY_LEN(CORPUS_SM); i++) {
        const corpus_sm *c = &CORPUS_SM[i];
        char dir[2048];
        if (!corpus(c->rel, dir, sizeof dir)) continue;
        seen++;
        gn_graph *g = gn_test_load(dir);
        assert_string_equal(gn_graph_tags(g), c->tags);
        assert_int_equal(gn_graph_signature_count(g), c->n_sig);
        char keys[1024] = "";
        for (size_t k = 0; k < c->n_sig; k++) {
            if (k) strcat(keys, ",");
            strcat(keys, gn_graph_signature_key(g, k));
        }
        if (strcmp(keys, c->sigs) != 0) fail_msg("%s: signatures %s, want %s", c->rel, keys, c->sigs);
        size_t nv = 99999;
        if (gn_graph_variable_count(g, &nv) != GN_OK) fail_msg("%s: %s", c->rel, gn_graph_errmsg(g));
        if (nv != c->n_vars) fail_msg("%s: %zu variables, want %zu", c->rel, nv, c->n_vars);
        for (size_t k = 0; k < nv; k++) {
            gn_variable_info v;
            if (gn_graph_variable(g, k, &v) != GN_OK) fail_msg("%s: %s", c->rel, gn_graph_errmsg(g));
            /* every fixed-size variable's bytes are its elements times the dtype size */
            size_t es = gn_dtype_size(v.dtype);
            if (es) {
                uint64_t numel = 1;
                for (int32_t d = 0; d < v.rank; d++) numel *= (uint64_t)v.dims[d];
                if (v.bytes != numel * es) fail_msg("%s: variable %s: %llu bytes", c->rel, v.name,
                                                    (unsigned long long)v.bytes);
            }
            if (k == 0) {
                char buf[512];
                format_var(&v, buf, sizeof buf);
                assert_string_equal(buf, c->var0);
            }
        }
        assert_int_equal(gn_graph_asset_count(g), c->n_assets);
        gn_graph_free(g);
    }
    print_message("%zu corpus SavedModels checked\n", seen);
}

static void test_signature_args_and_assets(void **state)
{
    (void)state;
    char dir[2048];
    if (!corpus("tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_"
                "tf2_cpu__00000123",
                dir, sizeof dir))
        return;
    gn_graph *g = gn_test_load(dir);
    assert_string_equal(gn_graph_default_signature(g), "serving_default");
    assert_string_equal(gn_graph_signature_method(g, "serving_default"), "tensorflow/serving/predict");
    assert_null(gn_graph_signature_method(g, "nope"));
    size_t n = 0;
    assert_int_equal(gn_graph_signature_args(g, "classify_x_to_y", 0, &n), GN_OK);
    assert_int_equal(n, 1);
    gn_signature_arg a;
    assert_int_equal(gn_graph_signature_arg(g, "classify_x_to_y", 0, 0, &a), GN_OK);
    assert_string_equal(a.key, "inputs");
    assert_string_equal(a.tensor, "classify_x_to_y_inputs:0");
    assert_int_equal(a.dtype, DT_STRING);
    assert_int_equal(a.rank, 1);
    assert_int_equal(a.dims[0], -1);
    assert_int_equal(gn_graph_signature_arg(g, "classify_x_to_y", 1, 0, &a), GN_OK);
    assert_string_equal(a.key, "scores");
    assert_string_equal(a.tensor, "StatefulPartitionedCall_1:0");
    assert_int_equal(a.rank, 2);
    expect_msg(gn_graph_signature_args(g, "nope", 1, &n), GN_ERR_NOT_FOUND, gn_graph_errmsg(g),
               "no signature 'nope' in the SavedModel (signatures: __saved_model_init_op, classify_x2_to_y3, "
               "classify_x_to_y, regress_x2_to_y3, regress_x_to_y, regress_x_to_y2, serving_default)");
    assert_int_equal(gn_graph_asset_count(g), 1);
    assert_string_equal(gn_graph_asset_filename(g, 0), "foo.txt");
    assert_string_equal(gn_graph_asset_tensor(g, 0), "asset_path_initializer:0");
    gn_graph_free(g);
    /* TF1: the assets collection */
    if (!corpus("tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123", dir,
                sizeof dir))
        return;
    g = gn_test_load(dir);
    assert_int_equal(gn_graph_asset_count(g), 1);
    assert_string_equal(gn_graph_asset_filename(g, 0), "foo.txt");
    assert_string_equal(gn_graph_asset_tensor(g, 0), "Const:0");
    gn_graph_free(g);
}

/* ---- freezing and running, against TensorFlow ---------------------------------------- */
typedef struct golden_sm {
    const char *name;   /* directory under tests/data/savedmodel */
    const char *rel;
    const char *sig;
    double tol;         /* float outputs' relative L2 error allowed; 0: 1e-5 */
} golden_sm;

#define HP2_PBTXT "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123"
#define HP2_CPU "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123"
#define HP2_TF2 \
    "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123"
#define COUNTER "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_counter__00000123"
#define STATIC_TABLE "tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__StaticHashTableModule"
#define TFT_TAXI "tensorflow__tfx/tfx__benchmarks__datasets__chicago_taxi__model__tft_tf2_saved_model"
#define CHICAGO_TAXI "tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__export__chicago-taxi__1646034756"

static const golden_sm GOLDEN[] = {
    {"half_plus_two_pbtxt", HP2_PBTXT, "serving_default"},
    {"half_plus_two_pbtxt", HP2_PBTXT, "regress_x2_to_y3"},
    {"half_plus_two_cpu", HP2_CPU, "serving_default"},
    {"half_plus_two_cpu", HP2_CPU, "regress_x2_to_y3"},
    {"half_plus_two_tf2_cpu", HP2_TF2, "serving_default"},
    {"half_plus_two_tf2_cpu", HP2_TF2, "regress_x2_to_y3"},
    {"counter", COUNTER, "get_counter"},
    {"lstm_from_sequential", "SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential",
     "serving_default"},
    {"kws_ref_model", "mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model",
     "serving_default"},
    {"regression_savedmodel", "tensorflow__rust/examples__regression_savedmodel", "w"},
    {"regression_savedmodel", "tensorflow__rust/examples__regression_savedmodel", "b"},
    {"SimpleWhileLoop", "tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop",
     "serving_default"},
    /* lookup tables from asset files (tools/make_table_goldens.py): strings and int64 exactly */
    {"static_hashtable", STATIC_TABLE, "serving_default", 1e-6},
    {"tft_chicago_taxi", TFT_TAXI, "serving_default", 1e-6},
    /* a TFX Estimator export: serialized tf.Examples (ParseExampleV2) through its transform and feature columns
     * (SparseReshape, SparseFillEmptyRows, SparseSegmentSqrtN...), every Serving signature */
    {"chicago_taxi", CHICAGO_TAXI, "serving_default", 1e-5},
    {"chicago_taxi", CHICAGO_TAXI, "classification", 1e-5},
    {"chicago_taxi", CHICAGO_TAXI, "predict", 1e-5},
    {"chicago_taxi", CHICAGO_TAXI, "regression", 1e-5},
};

/* Freezes g's signature sig, runs it on the .npy inputs of gdir (in_<key>.npy)
 * and compares every output with out_<key>.npy. */
static void run_golden(gn_graph *g, const char *sig, const char *gdir, const char *label, double tol)
{
    gn_graph *fz = NULL;
    if (gn_graph_freeze(g, sig, &fz) != GN_OK) fail_msg("%s: freeze: %s", label, gn_graph_errmsg(g));
    assert_int_equal(gn_graph_validate(fz), GN_OK);
    /* nothing of the variables, the calls or the saver is left */
    for (size_t i = 0; i < gn_graph_node_count(fz); i++) {
        const char *op = gn_graph_node_op(fz, i);
        if (strcmp(op, "VarHandleOp") == 0 || strcmp(op, "VariableV2") == 0 || strcmp(op, "ReadVariableOp") == 0 ||
            strcmp(op, "StatefulPartitionedCall") == 0 || strcmp(op, "PartitionedCall") == 0 ||
            strcmp(op, "RestoreV2") == 0 || strcmp(op, "SaveV2") == 0)
            fail_msg("%s: frozen graph keeps node '%s' (%s)", label, gn_graph_node_name(fz, i), op);
    }
    /* every colocation group names a node of the graph: TensorFlow's importer
     * refuses one that does not ("expects to be colocated with unknown node") */
    for (gn_id i = 0; i < fz->n_nodes; i++) {
        if (!gn__node_live(fz, i)) continue;
        const Tensorflow__AttrValue *c = gn__node_attr(fz, i, "_class");
        for (size_t k = 0; c && c->list && k < c->list->n_s; k++) {
            ProtobufCBinaryData v = c->list->s[k];
            if (v.len > 5 && !memcmp(v.data, "loc:@", 5) &&
                gn__graph_find_n(fz, (const char *)v.data + 5, v.len - 5) == GN_NONE)
                fail_msg("%s: '%s' is colocated with no node ('%.*s')", label, gn__node_name(fz, i), (int)v.len,
                         (const char *)v.data);
        }
    }
    size_t n_in = 0, n_out = 0;
    assert_int_equal(gn_graph_signature_args(g, sig, 0, &n_in), GN_OK);
    assert_int_equal(gn_graph_signature_args(g, sig, 1, &n_out), GN_OK);
    const char **fn = calloc(n_in + 1, sizeof *fn), **on = calloc(n_out + 1, sizeof *on);
    gn_tensor *ft = calloc(n_in + 1, sizeof *ft), *ot = calloc(n_out + 1, sizeof *ot);
    assert_true(fn && on && ft && ot);
    char path[4200], err[512];
    for (size_t k = 0; k < n_in; k++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(g, sig, 0, k, &a), GN_OK);
        fn[k] = a.tensor;
        snprintf(path, sizeof path, "%s/in_%s.npy", gdir, a.key);
        if (gn_npy_read(path, &ft[k], err, sizeof err) != GN_OK) fail_msg("%s: %s", label, err);
    }
    for (size_t k = 0; k < n_out; k++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(g, sig, 1, k, &a), GN_OK);
        on[k] = a.tensor;
    }
    gn_session *s = NULL;
    if (gn_session_new(fz, NULL, &s) != GN_OK) fail_msg("%s: session: %s", label, gn_session_errmsg(s));
    if (gn_session_run(s, fn, ft, n_in, on, ot, n_out) != GN_OK) fail_msg("%s: run: %s", label, gn_session_errmsg(s));
    for (size_t k = 0; k < n_out; k++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(g, sig, 1, k, &a), GN_OK);
        snprintf(path, sizeof path, "%s/out_%s.npy", gdir, a.key);
        gn_tensor ref;
        if (gn_npy_read(path, &ref, err, sizeof err) != GN_OK) fail_msg("%s: %s", label, err);
        gn_compare_result r;
        assert_int_equal(gn_tensor_compare(&ot[k], &ref, ref.dtype == DT_FLOAT ? (tol > 0 ? tol : 1e-5) : 0, &r), GN_OK);
        if (!r.match) fail_msg("%s: output %s: %s (rel L2 %g)", label, a.key, r.why, r.rel_l2_err);
        print_message("%-40s %-8s rel L2 %.3g\n", label, a.key, r.rel_l2_err);
        gn_tensor_free(&ref);
    }
    for (size_t k = 0; k < n_in; k++) gn_tensor_free(&ft[k]);
    for (size_t k = 0; k < n_out; k++) gn_tensor_free(&ot[k]);
    gn_session_free(s);
    free(fn);
    free(on);
    free(ft);
    free(ot);
    gn_graph_free(fz);
}

static void test_freeze_matches_tensorflow(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(GOLDEN); i++) {
        char dir[2048], gdir[2048], rel[512], label[256];
        if (!corpus(GOLDEN[i].rel, dir, sizeof dir)) continue;
        snprintf(rel, sizeof rel, "savedmodel/%s/%s", GOLDEN[i].name, GOLDEN[i].sig);
        gn_test_data(rel, gdir, sizeof gdir);
        snprintf(label, sizeof label, "%s/%s", GOLDEN[i].name, GOLDEN[i].sig);
        gn_graph *g = gn_test_load(dir);
        run_golden(g, GOLDEN[i].sig, gdir, label, GOLDEN[i].tol);
        gn_graph_free(g);
    }
}

/* A Keras 3 SavedModel (tools/make_savedmodel_goldens.py keras3): its
 * serving function calls a function marked for XLA (a grouped Conv2D) and
 * runs a GRU's While loop that takes the cell's three variables as
 * resource arguments, then an If over two more. Frozen, the call is
 * inlined regardless of its XLA mark and the loop and the If get the
 * values: their functions are copied with those arguments typed float
 * ("<name>_frozen"), their ReadVariableOps now Identities, the originals
 * dropped; the result is TensorFlow's within 1e-5. */
static void test_freeze_keras3_loop_variables(void **state)
{
    (void)state;
    char dir[2048], gdir[2048];
    gn_test_data("savedmodel_keras3", dir, sizeof dir);
    gn_test_data("savedmodel_keras3/serving_default", gdir, sizeof gdir);
    gn_graph *g = gn_test_load(dir);
    run_golden(g, "serving_default", gdir, "keras3/serving_default", 1e-5);
    gn_graph *fz = NULL;
    assert_int_equal(gn_graph_freeze(g, "serving_default", &fz), GN_OK);
    size_t loops = 0, ifs = 0, frozen_fns = 0;
    for (gn_id i = 0; i < fz->n_nodes; i++) {
        if (!gn__node_live(fz, i)) continue;
        bool loop = !strcmp(gn__node_op(fz, i), "While"), branch = !strcmp(gn__node_op(fz, i), "If");
        if (!loop && !branch) continue;
        loops += loop;
        ifs += branch;
        const Tensorflow__AttrValue *t = gn__node_attr(fz, i, loop ? "T" : "Tin");
        assert_non_null(t);
        for (size_t k = 0; k < t->list->n_type; k++) assert_int_not_equal(t->list->type[k], 20 /* DT_RESOURCE */);
    }
    for (uint32_t f = 0; f < fz->n_fns; f++) {
        const gn__function *fn = &fz->fns[f];
        const char *name = gn__str(fz, fn->name);
        frozen_fns += strstr(name, "_frozen") != NULL;
        for (size_t k = 0; k < fn->def->signature->n_input_arg; k++)
            if (fn->def->signature->input_arg[k]->type == 20) fail_msg("function '%s' still takes a resource", name);
        for (gn_id i = 0; i < fn->body->n_nodes; i++)
            if (gn__node_live(fn->body, i) && !strcmp(gn__node_op(fn->body, i), "ReadVariableOp"))
                fail_msg("function '%s' still reads a variable (node '%s')", name, gn__node_name(fn->body, i));
    }
    /* each copy's _input_shapes (which TensorFlow's Python loader gives the
     * body's placeholders): a former resource argument's shape unknown, not
     * the handle's scalar one; the others as in the original */
    size_t retyped = 0;
    for (uint32_t f = 0; f < fz->n_fns; f++) {
        const Tensorflow__FunctionDef *d = fz->fns[f].def;
        char orig[512];
        snprintf(orig, sizeof orig, "%s", d->signature->name);
        char *suffix = strstr(orig, "_frozen");
        assert_non_null(suffix);
        *suffix = 0;
        const gn__function *of = gn__graph_find_function(g, orig);
        assert_non_null(of);
        const Tensorflow__AttrValue *was = NULL, *now = NULL;
        for (size_t i = 0; i < of->def->n_attr; i++)
            if (!strcmp(of->def->attr[i]->key, "_input_shapes")) was = of->def->attr[i]->value;
        for (size_t i = 0; i < d->n_attr; i++)
            if (!strcmp(d->attr[i]->key, "_input_shapes")) now = d->attr[i]->value;
        assert_non_null(was);
        assert_non_null(now);
        assert_int_equal(now->list->n_shape, d->signature->n_input_arg);
        for (size_t k = 0; k < now->list->n_shape; k++) {
            if (of->def->signature->input_arg[k]->type == 20) {
                assert_true(now->list->shape[k]->unknown_rank);
                retyped++;
            } else {
                assert_ptr_equal(now->list->shape[k], was->list->shape[k]);
            }
        }
    }
    assert_int_equal(retyped, 3 + 3 + 2 + 2);   /* the cell's three variables into cond and body; two per branch */
    assert_int_equal(loops, 1);
    assert_int_equal(ifs, 1);
    assert_int_equal(frozen_fns, 4);   /* the loop's cond and body, the If's two branches */
    assert_int_equal(fz->n_fns, 4);
    gn_graph_free(fz);
    gn_graph_free(g);
}

/* SavedModels whose functions take captured inputs
 * (tools/make_savedmodel_goldens.py captured). vocab_lookup: a table from an
 * asset file and an embedding_lookup whose ResourceGather is colocated with
 * the FuncGraph's name of the captured variable, a group naming no node of
 * the function: inlined, it is dropped (run_golden checks that every group
 * names a node). loop_cond: a While writing a TensorArray, an If in its body
 * whose branches read a variable. text_vectorization: Keras' adapted
 * TextVectorization, whose vocabulary (a MutableHashTable) only the
 * checkpoint holds; the restore graph's RestoreV2 names the keys and values,
 * read from the bundle into the frozen table. parse_example: serialized
 * tf.train.Example protos (ParseExampleV2: a fixed-length float feature, one
 * example without it taking the default, a variable-length int64 feature into
 * embedding_lookup_sparse's SparseSegmentMean, a string feature hashed).
 * ragged_text: tf.strings.split, row lengths, a ragged slice (RaggedRange),
 * reduce_join (UnsortedSegmentJoin). Each frozen gives TensorFlow's results: the ids exactly, the floats within
 * 1e-5. */
static void test_freeze_captured_inputs(void **state)
{
    (void)state;
    const char *names[] = {"vocab_lookup", "loop_cond", "text_vectorization", "parse_example", "ragged_text"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        char rel[256], dir[2048], gdir[2048], label[256];
        snprintf(rel, sizeof rel, "savedmodel_captured/%s", names[i]);
        gn_test_data(rel, dir, sizeof dir);
        snprintf(rel, sizeof rel, "savedmodel_captured/%s/serving_default", names[i]);
        gn_test_data(rel, gdir, sizeof gdir);
        snprintf(label, sizeof label, "%s/serving_default", names[i]);
        gn_graph *g = gn_test_load(dir);
        run_golden(g, "serving_default", gdir, label, 1e-5);
        gn_graph_free(g);
    }
}

/* The tf.Transform SavedModel (TF1, tag "transform"): every input of
 * 'transform_signature' is sparse (COO: indices, values, dense_shape). The
 * frozen graph keeps the three component tensors of each as feeds; its two
 * vocabulary tables are read from the assets at freeze time. Fed the inputs
 * of tools/make_transform_goldens.py, it gives TensorFlow's outputs (v1
 * session after tables_initializer): integers exactly, floats within 1e-6. */
static void test_freeze_sparse_inputs_matches_tensorflow(void **state)
{
    (void)state;
    const char *sig = "transform_signature";
    char dir[2048], gdir[2048], path[4300], err[512];
    if (!corpus("tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn", dir,
                sizeof dir))
        skip();
    gn_test_data("savedmodel/transform_fn/transform_signature", gdir, sizeof gdir);
    gn_graph *g = gn_test_load(dir), *fz = NULL;
    if (gn_graph_freeze(g, sig, &fz) != GN_OK) fail_msg("freeze: %s", gn_graph_errmsg(g));
    assert_int_equal(gn_graph_validate(fz), GN_OK);
    const Tensorflow__SignatureDef *sd = gn__savedmodel_signature(g, sig);
    assert_non_null(sd);
    size_t n_in = 0, n_out = 0;
    assert_int_equal(gn_graph_signature_args(g, sig, 0, &n_in), GN_OK);
    assert_int_equal(gn_graph_signature_args(g, sig, 1, &n_out), GN_OK);
    assert_int_equal(n_in, 18);
    const char **fn = calloc(3 * n_in, sizeof *fn), **on = calloc(n_out, sizeof *on);
    gn_tensor *ft = calloc(3 * n_in, sizeof *ft), *ot = calloc(n_out, sizeof *ot);
    assert_true(fn && on && ft && ot);
    static const char *const part[3] = {"indices", "values", "dense_shape"};
    for (size_t k = 0; k < n_in; k++) {
        const char *key = NULL;
        const Tensorflow__TensorInfo *ti = gn__savedmodel_sig_arg(sd, 0, k, &key);
        assert_int_equal(ti->encoding_case, TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE);
        const char *names[3] = {ti->coo_sparse->indices_tensor_name, ti->coo_sparse->values_tensor_name,
                                ti->coo_sparse->dense_shape_tensor_name};
        for (int p = 0; p < 3; p++) {
            fn[3 * k + (size_t)p] = names[p];
            /* each component is a Placeholder of the frozen graph */
            char node[512];
            snprintf(node, sizeof node, "%s", names[p]);
            char *colon = strrchr(node, ':');
            if (colon) *colon = 0;
            size_t id = 0;
            while (id < gn_graph_node_count(fz) && strcmp(gn_graph_node_name(fz, id), node) != 0) id++;
            if (id == gn_graph_node_count(fz)) fail_msg("frozen graph lost feed '%s'", node);
            assert_string_equal(gn_graph_node_op(fz, id), "Placeholder");
            snprintf(path, sizeof path, "%s/in_%s_%s.npy", gdir, key, part[p]);
            if (gn_npy_read(path, &ft[3 * k + (size_t)p], err, sizeof err) != GN_OK) fail_msg("%s", err);
        }
    }
    for (size_t k = 0; k < n_out; k++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(g, sig, 1, k, &a), GN_OK);
        on[k] = a.tensor;
    }
    gn_session *s = NULL;
    if (gn_session_new(fz, NULL, &s) != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    if (gn_session_run(s, fn, ft, 3 * n_in, on, ot, n_out) != GN_OK) fail_msg("run: %s", gn_session_errmsg(s));
    for (size_t k = 0; k < n_out; k++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(g, sig, 1, k, &a), GN_OK);
        snprintf(path, sizeof path, "%s/out_%s.npy", gdir, a.key);
        gn_tensor ref;
        if (gn_npy_read(path, &ref, err, sizeof err) != GN_OK) fail_msg("%s", err);
        gn_compare_result r;
        assert_int_equal(gn_tensor_compare(&ot[k], &ref, ref.dtype == DT_FLOAT ? 1e-6 : 0, &r), GN_OK);
        if (!r.match) fail_msg("output %s: %s (rel L2 %g)", a.key, r.why, r.rel_l2_err);
        gn_tensor_free(&ref);
    }
    for (size_t k = 0; k < 3 * n_in; k++) gn_tensor_free(&ft[k]);
    for (size_t k = 0; k < n_out; k++) gn_tensor_free(&ot[k]);
    gn_session_free(s);
    free(fn);
    free(on);
    free(ft);
    free(ot);
    gn_graph_free(fz);
    gn_graph_free(g);
}

/* half_plus_two, all three variants: y = 0.5 * x + 2, exactly */
static void test_half_plus_two_exact(void **state)
{
    (void)state;
    const char *rels[] = {HP2_PBTXT, HP2_CPU, HP2_TF2};
    for (size_t i = 0; i < 3; i++) {
        char dir[2048];
        if (!corpus(rels[i], dir, sizeof dir)) continue;
        gn_graph *g = gn_test_load(dir), *fz = NULL;
        if (gn_graph_freeze(g, NULL, &fz) != GN_OK) fail_msg("%s: %s", rels[i], gn_graph_errmsg(g));
        gn_signature_arg in, out;
        assert_int_equal(gn_graph_signature_arg(g, "serving_default", 0, 0, &in), GN_OK);
        assert_int_equal(gn_graph_signature_arg(g, "serving_default", 1, 0, &out), GN_OK);
        /* the TF2 variant's x has shape [1] */
        float xs[4] = {-3.25f, 0.0f, 1.5f, 1234.5f};
        for (int k = 0; k < 4; k++) {
            gn_tensor x;
            memset(&x, 0, sizeof x);
            x.dtype = DT_FLOAT;
            x.rank = in.rank;
            for (int32_t d = 0; d < in.rank; d++) x.dims[d] = 1;
            x.data = &xs[k];
            x.nbytes = sizeof(float);
            gn_session *s = NULL;
            assert_int_equal(gn_session_new(fz, NULL, &s), GN_OK);
            const char *fn = in.tensor, *on = out.tensor;
            gn_tensor y;
            memset(&y, 0, sizeof y);
            if (gn_session_run(s, &fn, &x, 1, &on, &y, 1) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
            assert_int_equal(gn_tensor_numel(&y), 1);
            float want = 0.5f * xs[k] + 2.0f;
            if (*(float *)y.data != want) fail_msg("%s: 0.5 * %g + 2 = %g, got %g", rels[i], xs[k], want, *(float *)y.data);
            gn_tensor_free(&y);
            gn_session_free(s);
        }
        gn_graph_free(fz);
        gn_graph_free(g);
    }
}

/* The frozen TF2 half_plus_two, optimized with the default options and the
 * signature's tensors as feeds and fetches: no call is left and the graph is
 * the arithmetic it computes (Mul by 0.5, AddV2 of 2), and it still does. */
static void test_half_plus_two_tf2_optimized(void **state)
{
    (void)state;
    char dir[2048];
    if (!corpus(HP2_TF2, dir, sizeof dir)) skip();
    gn_graph *g = gn_test_load(dir), *fz = NULL;
    if (gn_graph_freeze(g, NULL, &fz) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    gn_signature_arg in, out;
    assert_int_equal(gn_graph_signature_arg(g, "serving_default", 0, 0, &in), GN_OK);
    assert_int_equal(gn_graph_signature_arg(g, "serving_default", 1, 0, &out), GN_OK);
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *feeds[1] = {in.tensor}, *fetches[1] = {out.tensor};
    p.feeds = feeds;
    p.n_feeds = 1;
    p.fetches = fetches;
    p.n_fetches = 1;
    gn_report *r = NULL;
    if (gn_optimize(fz, NULL, &p, &r) != GN_OK) fail_msg("optimize: %s", gn_graph_errmsg(fz));
    gn_report_free(r);
    size_t n = gn_graph_node_count(fz), mul = 0, add = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        const char *op = gn_graph_node_op(fz, i);
        if (!strcmp(op, "Mul")) mul++;
        else if (!strcmp(op, "AddV2")) add++;
        else if (strcmp(op, "Const") && strcmp(op, "PlaceholderWithDefault") && strcmp(op, "Placeholder") &&
                 strcmp(op, "IdentityN"))
            other++; /* IdentityN: the call's name, kept so the signature's fetch still names it */
        assert_true(strstr(op, "PartitionedCall") == NULL);
    }
    assert_int_equal(mul, 1);
    assert_int_equal(add, 1);
    assert_int_equal(other, 0);
    assert_int_equal(gn_graph_function_count(fz), 0);
    float xv = 3.0f;
    gn_tensor x;
    memset(&x, 0, sizeof x);
    x.dtype = DT_FLOAT;
    x.rank = in.rank;
    for (int32_t d = 0; d < in.rank; d++) x.dims[d] = 1;
    x.data = &xv;
    x.nbytes = sizeof xv;
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(fz, NULL, &s), GN_OK);
    gn_tensor y;
    memset(&y, 0, sizeof y);
    if (gn_session_run(s, feeds, &x, 1, fetches, &y, 1) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    assert_true(*(float *)y.data == 3.5f);
    gn_tensor_free(&y);
    gn_session_free(s);
    gn_graph_free(fz);
    gn_graph_free(g);
}

/* ---- the corpus models that cannot be frozen or run: the exact reason ------------------------- */
typedef struct cannot {
    const char *rel;
    const char *sig;
    int stage;          /* 0: freezing fails; 1: the frozen graph does not run */
    gn_status code;
    const char *msg;    /* "%s" stands for the model's directory */
} cannot;

static const cannot CANNOT[] = {
    {"tensorflow__text/tensorflow_text__python__ops__test_data__segmenter_hub_module", "default", 1, GN_ERR_UNSUPPORTED,
     "node 'UnicodeSplit/UnicodeDecode' (UnicodeDecode): the CPU backend has no kernel for UnicodeDecode"},
    {"tensorflow__tensorflow/tensorflow__core__graph__regularization__testdata__bert1", "serving_default", 0,
     GN_ERR_IO,
     "%s/variables/variables.index: no such file (freezing signature 'serving_default': variable "
     "'word_embeddings/embeddings' needs a value)"},
    {COUNTER, "incr_counter", 0, GN_ERR_UNSUPPORTED,
     "freezing signature 'incr_counter': node 'incr_counter_op/AssignAdd' (AssignAdd) writes variable 'counter': a "
     "frozen graph holds constants"},
    {"tensorflow__rust/examples__regression_savedmodel", "train", 0, GN_ERR_UNSUPPORTED,
     "freezing signature 'train': node "
     "'StatefulPartitionedCall_1/StatefulPartitionedCall/SGD/SGD/update_1/ResourceApplyGradientDescent' "
     "(ResourceApplyGradientDescent) writes variable 'w': a frozen graph holds constants"},
    /* it runs: the empty example the test feeds lacks its features, and TensorFlow's TF1 loader gives the same
     * message for it */
    {"tensorflow__tfx/tfx__components__testdata__trainer__keras__Format-Serving", "serving_default", 1,
     GN_ERR_GRAPH,
     "node 'StatefulPartitionedCall/StatefulPartitionedCall/ParseExample/ParseExampleV2' (ParseExampleV2): Name: "
     "<unknown>, Feature: body_mass_g (data type: float) is required but could not be found."},
};

/* Feeds of zeros (empty strings) shaped by the signature, unknown dims 1. */
static void test_corpus_cannot(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(CANNOT); i++) {
        const cannot *c = &CANNOT[i];
        char dir[2048], want[4096];
        if (!corpus(c->rel, dir, sizeof dir)) continue;
        snprintf(want, sizeof want, c->msg, dir);
        gn_graph *g = gn_test_load(dir), *fz = NULL;
        gn_status s = gn_graph_freeze(g, c->sig, &fz);
        if (c->stage == 0) {
            expect_msg(s, c->code, gn_graph_errmsg(g), want);
            assert_null(fz);
            gn_graph_free(g);
            continue;
        }
        if (s != GN_OK) fail_msg("%s: %s", c->rel, gn_graph_errmsg(g));
        size_t n_in = 0, n_out = 0;
        assert_int_equal(gn_graph_signature_args(g, c->sig, 0, &n_in), GN_OK);
        assert_int_equal(gn_graph_signature_args(g, c->sig, 1, &n_out), GN_OK);
        const char **fn = calloc(n_in + 1, sizeof *fn), **on = calloc(n_out + 1, sizeof *on);
        gn_tensor *ft = calloc(n_in + 1, sizeof *ft), *ot = calloc(n_out + 1, sizeof *ot);
        gn_string *strs = calloc(64, sizeof *strs);
        double *zeros = calloc(64, sizeof *zeros);
        assert_true(fn && on && ft && ot && strs && zeros);
        for (size_t k = 0; k < n_in; k++) {
            gn_signature_arg a;
            assert_int_equal(gn_graph_signature_arg(g, c->sig, 0, k, &a), GN_OK);
            fn[k] = a.tensor;
            ft[k].dtype = a.dtype;
            ft[k].rank = a.rank < 0 ? 0 : a.rank;
            for (int32_t d = 0; d < ft[k].rank; d++) ft[k].dims[d] = a.dims[d] < 0 ? 1 : a.dims[d];
            assert_true(gn_tensor_numel(&ft[k]) <= 64);
            if (a.dtype == DT_STRING) {
                for (int e = 0; e < 64; e++) strs[e] = (gn_string){"", 0};
                ft[k].data = strs;
                ft[k].nbytes = (size_t)gn_tensor_numel(&ft[k]) * sizeof(gn_string);
            } else {
                ft[k].data = zeros;
                ft[k].nbytes = (size_t)gn_tensor_numel(&ft[k]) * gn_dtype_size(a.dtype);
            }
        }
        for (size_t k = 0; k < n_out; k++) {
            gn_signature_arg a;
            assert_int_equal(gn_graph_signature_arg(g, c->sig, 1, k, &a), GN_OK);
            on[k] = a.tensor;
        }
        gn_session *ss = NULL;
        s = gn_session_new(fz, NULL, &ss);
        if (s == GN_OK) s = gn_session_run(ss, fn, ft, n_in, on, ot, n_out);
        expect_msg(s, c->code, ss ? gn_session_errmsg(ss) : "", want);
        for (size_t k = 0; k < n_out; k++) gn_tensor_free(&ot[k]);
        gn_session_free(ss);
        free(fn);
        free(on);
        free(ft);
        free(ot);
        free(strs);
        free(zeros);
        gn_graph_free(fz);
        gn_graph_free(g);
    }
}

/* ---- bad input ---------------------------------------------------------------------------------- */
static const char BAD_SIG_MODEL[] =
    "saved_model_schema_version: 1\n"
    "meta_graphs {\n"
    "  meta_info_def { tags: \"serve\" }\n"
    "  graph_def {\n"
    "    node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
    "    node { name: \"y\" op: \"Neg\" input: \"x\" attr { key: \"T\" value { type: DT_FLOAT } } }\n"
    "  }\n"
    "  signature_def { key: \"serving_default\" value {\n"
    "    inputs { key: \"x\" value { name: \"x:0\" dtype: DT_FLOAT } }\n"
    "    outputs { key: \"y\" value { name: \"nope:0\" dtype: DT_FLOAT } } } }\n"
    "  signature_def { key: \"neg\" value {\n"
    "    inputs { key: \"x\" value { name: \"x:0\" dtype: DT_FLOAT } }\n"
    "    outputs { key: \"y\" value { name: \"y:0\" dtype: DT_FLOAT } } } }\n"
    "  signature_def { key: \"badport\" value {\n"
    "    inputs { key: \"x\" value { name: \"x:3\" dtype: DT_FLOAT } }\n"
    "    outputs { key: \"y\" value { name: \"y:0\" dtype: DT_FLOAT } } } }\n"
    "}\n";

static const char *bad_sig_dir(void)
{
    const char *d = tmp("badsig");
    mkdir(d, 0777);
    char p[1100];
    snprintf(p, sizeof p, "%s/saved_model.pbtxt", d);
    write_text(p, BAD_SIG_MODEL);
    return d;
}

static void test_bad_signatures(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load(bad_sig_dir()), *fz = NULL;
    expect_msg(gn_graph_freeze(g, NULL, &fz), GN_ERR_NOT_FOUND, gn_graph_errmsg(g),
               "signature 'serving_default': output 'y' names tensor 'nope:0', which is not in the graph");
    assert_null(fz);
    expect_msg(gn_graph_freeze(g, "badport", &fz), GN_ERR_NOT_FOUND, gn_graph_errmsg(g),
               "signature 'badport': input 'x' names tensor 'x:3', but node 'x' has 1 output");
    expect_msg(gn_graph_freeze(g, "bogus", &fz), GN_ERR_NOT_FOUND, gn_graph_errmsg(g),
               "no signature 'bogus' in the SavedModel (signatures: badport, neg, serving_default)");
    /* a graph without variables freezes to itself, pruned */
    assert_int_equal(gn_graph_freeze(g, "neg", &fz), GN_OK);
    assert_int_equal(gn_graph_node_count(fz), 2);
    gn_graph_free(fz);
    gn_graph_free(g);
    /* a plain GraphDef cannot be frozen */
    const char *gd = "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n";
    assert_int_equal(gn_graph_load_buffer(gd, strlen(gd), "g.pbtxt", NULL, &g), GN_OK);
    assert_int_equal(gn_graph_signature_count(g), 0);
    assert_string_equal(gn_graph_tags(g), "");
    expect_msg(gn_graph_freeze(g, NULL, &fz), GN_ERR_ARG, gn_graph_errmsg(g),
               "freezing needs a graph loaded from a SavedModel");
    gn_graph_free(g);
}

static void copy_file(const char *from, const char *to)
{
    size_t n = 0;
    unsigned char *d = gn_test_slurp(from, &n);
    assert_non_null(d);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(d, 1, n, f), n);
    fclose(f);
    free(d);
}

static void test_missing_variables(void **state)
{
    (void)state;
    char src[2048], p[4200], q[4200];
    if (!corpus(HP2_PBTXT, src, sizeof src)) return;
    /* no variables directory at all */
    const char *d = tmp("novars");
    mkdir(d, 0777);
    snprintf(p, sizeof p, "%s/saved_model.pbtxt", src);
    snprintf(q, sizeof q, "%s/saved_model.pbtxt", d);
    copy_file(p, q);
    gn_graph *g = gn_test_load(d), *fz = NULL;
    char want[4096];
    snprintf(want, sizeof want,
             "%s/variables/variables.index: no such file (freezing signature 'serving_default': variable 'a' needs "
             "a value)",
             d);
    expect_msg(gn_graph_freeze(g, NULL, &fz), GN_ERR_IO, gn_graph_errmsg(g), want);
    gn_graph_free(g);
    /* the index without its data file */
    d = tmp("nodata");
    mkdir(d, 0777);
    snprintf(q, sizeof q, "%s/saved_model.pbtxt", d);
    copy_file(p, q);
    snprintf(q, sizeof q, "%s/variables", d);
    mkdir(q, 0777);
    snprintf(p, sizeof p, "%s/variables/variables.index", src);
    snprintf(q, sizeof q, "%s/variables/variables.index", d);
    copy_file(p, q);
    g = gn_test_load(d);
    size_t nv = 0;
    assert_int_equal(gn_graph_variable_count(g, &nv), GN_OK);   /* the index alone lists them */
    assert_int_equal(nv, 3);
    gn_status s = gn_graph_freeze(g, NULL, &fz);
    assert_int_equal(s, GN_ERR_IO);
    if (!strstr(gn_graph_errmsg(g), "variables.data-00000-of-00001"))
        fail_msg("message does not name the data file: %s", gn_graph_errmsg(g));
    print_message("missing data file: %s\n", gn_graph_errmsg(g));
    /* the index is read once per loaded SavedModel: with the file gone, the
     * variables are still listed from it */
    assert_int_equal(unlink(q), 0);
    for (size_t i = 0; i < 3; i++) {
        gn_variable_info vi;
        assert_int_equal(gn_graph_variable(g, i, &vi), GN_OK);
        assert_string_equal(vi.name, i == 0 ? "a" : i == 1 ? "b" : "c");
        assert_int_equal(vi.dtype, 1);
        assert_int_equal(vi.bytes, 4);
    }
    assert_int_equal(gn_graph_variable_count(g, &nv), GN_OK);
    assert_int_equal(nv, 3);
    gn_graph_free(g);
    /* a graph loaded after that looks anew: no index, no variables */
    g = gn_test_load(d);
    assert_int_equal(gn_graph_variable_count(g, &nv), GN_OK);
    assert_int_equal(nv, 0);
    gn_graph_free(g);
}

/* ---- resource readers and TF1 restore mapping, on a SavedModel built here ------------- */
/* emb (VarHandleOp) restored from key "embedding_table" and w (VariableV2)
 * from "weights", through RestoreV2's tensor_names; the variables reach
 * ResourceGather, ResourceGatherNd, VariableShape, and ReadVariableOp through
 * a resource-typed Identity. */
#define TSTR(name, vals, n)                                                                                     \
    "node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } }\n"            \
    "  attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { dim { size: " n " } } " vals       \
    " } } } }\n"
#define FT "attr { key: \"T\" value { type: DT_FLOAT } }"
static const char RESOURCE_MODEL[] =
    "saved_model_schema_version: 1\n"
    "meta_graphs {\n"
    "  meta_info_def { tags: \"serve\" }\n"
    "  saver_def { filename_tensor_name: \"save/Const:0\" restore_op_name: \"save/restore_all\" version: V2 }\n"
    "  graph_def {\n"
    "node { name: \"idx\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n"
    "node { name: \"emb\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
    "  attr { key: \"shape\" value { shape { dim { size: 4 } dim { size: 2 } } } }\n"
    "  attr { key: \"shared_name\" value { s: \"emb\" } } attr { key: \"container\" value { s: \"\" } } }\n"
    "node { name: \"emb_id\" op: \"Identity\" input: \"emb\" attr { key: \"T\" value { type: DT_RESOURCE } } }\n"
    "node { name: \"g\" op: \"ResourceGather\" input: \"emb_id\" input: \"idx\"\n"
    "  attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"Tindices\" value { type: DT_INT32 } }\n"
    "  attr { key: \"batch_dims\" value { i: 0 } } attr { key: \"validate_indices\" value { b: true } } }\n"
    "node { name: \"nd_idx\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }\n"
    "  attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } }\n"
    "  int_val: 3 int_val: 1 int_val: 0 int_val: 0 } } } }\n"
    "node { name: \"gnd\" op: \"ResourceGatherNd\" input: \"emb\" input: \"nd_idx\"\n"
    "  attr { key: \"dtype\" value { type: DT_FLOAT } } attr { key: \"Tindices\" value { type: DT_INT32 } } }\n"
    "node { name: \"shape\" op: \"VariableShape\" input: \"emb\" attr { key: \"out_type\" value { type: DT_INT32 } } }\n"
    "node { name: \"read\" op: \"ReadVariableOp\" input: \"emb_id\" attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
    "node { name: \"w\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
    "  attr { key: \"shape\" value { shape { dim { size: 2 } } } }\n"
    "  attr { key: \"container\" value { s: \"\" } } attr { key: \"shared_name\" value { s: \"\" } } }\n"
    "node { name: \"w/read\" op: \"Identity\" input: \"w\" " FT " }\n"
    "node { name: \"mul\" op: \"Mul\" input: \"read\" input: \"w/read\" " FT " }\n"
    "node { name: \"save/Const\" op: \"Const\" attr { key: \"dtype\" value { type: DT_STRING } }\n"
    "  attr { key: \"value\" value { tensor { dtype: DT_STRING tensor_shape { } string_val: \"model\" } } } }\n"
    TSTR("save/RestoreV2/tensor_names", "string_val: \"embedding_table\" string_val: \"weights\"", "2")
    TSTR("save/RestoreV2/shape_and_slices", "string_val: \"\" string_val: \"\"", "2")
    "node { name: \"save/RestoreV2\" op: \"RestoreV2\" input: \"save/Const\" input: \"save/RestoreV2/tensor_names\"\n"
    "  input: \"save/RestoreV2/shape_and_slices\"\n"
    "  attr { key: \"dtypes\" value { list { type: DT_FLOAT type: DT_FLOAT } } } }\n"
    "node { name: \"save/Identity\" op: \"Identity\" input: \"save/RestoreV2\" " FT " }\n"
    "node { name: \"save/AssignVariableOp\" op: \"AssignVariableOp\" input: \"emb\" input: \"save/Identity\"\n"
    "  attr { key: \"dtype\" value { type: DT_FLOAT } } }\n"
    "node { name: \"save/Assign\" op: \"Assign\" input: \"w\" input: \"save/RestoreV2:1\" " FT "\n"
    "  attr { key: \"use_locking\" value { b: true } } attr { key: \"validate_shape\" value { b: true } } }\n"
    "node { name: \"save/restore_all\" op: \"NoOp\" input: \"^save/AssignVariableOp\" input: \"^save/Assign\" }\n"
    "  }\n"
    "  signature_def { key: \"serving_default\" value {\n"
    "    inputs { key: \"idx\" value { name: \"idx:0\" dtype: DT_INT32 } }\n"
    "    outputs { key: \"g\" value { name: \"g:0\" dtype: DT_FLOAT } }\n"
    "    outputs { key: \"gnd\" value { name: \"gnd:0\" dtype: DT_FLOAT } }\n"
    "    outputs { key: \"shape\" value { name: \"shape:0\" dtype: DT_INT32 } }\n"
    "    outputs { key: \"mul\" value { name: \"mul:0\" dtype: DT_FLOAT } } } }\n"
    "}\n";

static void test_resource_readers_and_restore_keys(void **state)
{
    (void)state;
    const char *d = tmp("resmodel");
    char p[1200];
    mkdir(d, 0777);
    snprintf(p, sizeof p, "%s/saved_model.pbtxt", d);
    write_text(p, RESOURCE_MODEL);
    snprintf(p, sizeof p, "%s/variables", d);
    mkdir(p, 0777);
    snprintf(p, sizeof p, "%s/variables/variables", d);
    float emb[8] = {0, 1, 2, 3, 4, 5, 6, 7}, w[2] = {10, 100};
    gn__tensor te = {.dtype = DT_FLOAT, .rank = 2, .dims = {4, 2}, .data = emb, .nbytes = sizeof emb};
    gn__tensor tw = {.dtype = DT_FLOAT, .rank = 1, .dims = {2}, .data = w, .nbytes = sizeof w};
    gn__err err = {0};
    gn__bundle_writer *bw = NULL;
    assert_int_equal(gn__bundle_writer_new(p, &bw, &err), GN_OK);
    assert_int_equal(gn__bundle_writer_add(bw, "embedding_table", &te, &err), GN_OK);
    assert_int_equal(gn__bundle_writer_add(bw, "weights", &tw, &err), GN_OK);
    if (gn__bundle_writer_finish(bw, &err) != GN_OK) fail_msg("%s", err.msg);

    gn_graph *g = gn_test_load(d), *fz = NULL;
    if (gn_graph_freeze(g, NULL, &fz) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    /* the rewritten nodes */
    static const char *const want[][2] = {{"emb", "Const"},    {"emb_id", "Identity"}, {"g", "GatherV2"},
                                          {"g/axis", "Const"}, {"gnd", "GatherNd"},    {"shape", "Shape"},
                                          {"read", "Identity"}, {"w", "Const"},        {"w/read", "Identity"}};
    for (size_t k = 0; k < ARRAY_LEN(want); k++) {
        size_t i = 0, n = gn_graph_node_count(fz);
        while (i < n && strcmp(gn_graph_node_name(fz, i), want[k][0]) != 0) i++;
        if (i == n) fail_msg("no node %s in the frozen graph", want[k][0]);
        assert_string_equal(gn_graph_node_op(fz, i), want[k][1]);
    }
    /* nothing of the saver is left */
    assert_int_equal(gn_graph_node_count(fz), 12);
    int32_t idx[2] = {3, 0};
    gn_tensor in;
    memset(&in, 0, sizeof in);
    in.dtype = 3;
    in.rank = 1;
    in.dims[0] = 2;
    in.data = idx;
    in.nbytes = sizeof idx;
    const char *fn = "idx:0", *on[4] = {"g:0", "gnd:0", "shape:0", "mul:0"};
    gn_tensor out[4];
    memset(out, 0, sizeof out);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(fz, NULL, &s), GN_OK);
    if (gn_session_run(s, &fn, &in, 1, on, out, 4) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    const float g_want[4] = {6, 7, 0, 1}, gnd_want[2] = {7, 0},
                mul_want[8] = {0, 100, 20, 300, 40, 500, 60, 700};
    const int32_t shape_want[2] = {4, 2};
    assert_int_equal(out[0].nbytes, sizeof g_want);
    assert_memory_equal(out[0].data, g_want, sizeof g_want);
    assert_int_equal(out[1].nbytes, sizeof gnd_want);
    assert_memory_equal(out[1].data, gnd_want, sizeof gnd_want);
    assert_int_equal(out[2].nbytes, sizeof shape_want);
    assert_memory_equal(out[2].data, shape_want, sizeof shape_want);
    assert_int_equal(out[3].nbytes, sizeof mul_want);
    assert_memory_equal(out[3].data, mul_want, sizeof mul_want);
    for (int k = 0; k < 4; k++) gn_tensor_free(&out[k]);
    gn_session_free(s);
    gn_graph_free(fz);
    gn_graph_free(g);

    /* the restore op names a key the checkpoint lacks: the error names it */
    char *text = strdup(RESOURCE_MODEL);
    assert_non_null(text);
    char *at = strstr(text, "string_val: \"embedding_table\"");
    assert_non_null(at);
    memcpy(at + 13, "embedding_tablX", 15);
    snprintf(p, sizeof p, "%s/saved_model.pbtxt", d);
    write_text(p, text);
    free(text);
    g = gn_test_load(d);
    gn_status st = gn_graph_freeze(g, NULL, &fz);
    assert_int_equal(st, GN_ERR_NOT_FOUND);
    if (strncmp(gn_graph_errmsg(g), "freezing signature 'serving_default': variable 'emb': ", 54) != 0 ||
        !strstr(gn_graph_errmsg(g), "'embedding_tablX'"))
        fail_msg("message does not name the variable and the key: %s", gn_graph_errmsg(g));
    print_message("missing key: %s\n", gn_graph_errmsg(g));
    gn_graph_free(g);
}

/* ---- lookup tables ------------------------------------------------------------------------------ */
static size_t node_index(gn_graph *g, const char *name)
{
    for (size_t i = 0; i < gn_graph_node_count(g); i++)
        if (strcmp(gn_graph_node_name(g, i), name) == 0) return i;
    fail_msg("no node '%s' in the frozen graph", name);
    return 0;
}

/* StaticHashTableModule: the table keeps its node, its asset file becomes
 * Const keys / values under an InitializeTableV2 the lookup depends on, and
 * nothing of the asset path, the init function or the variables is left. */
static void test_table_frozen_graph(void **state)
{
    (void)state;
    char dir[2048];
    if (!corpus(STATIC_TABLE, dir, sizeof dir)) skip();
    gn_graph *g = gn_test_load(dir), *fz = NULL;
    if (gn_graph_freeze(g, NULL, &fz) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    size_t n_table = 0, n_init = 0, n_find = 0;
    for (size_t i = 0; i < gn_graph_node_count(fz); i++) {
        const char *op = gn_graph_node_op(fz, i);
        n_table += strcmp(op, "HashTableV2") == 0;
        n_init += strcmp(op, "InitializeTableV2") == 0;
        n_find += strcmp(op, "LookupTableFindV2") == 0;
        if (strcmp(op, "InitializeTableFromTextFileV2") == 0 || strcmp(op, "VarHandleOp") == 0 ||
            strcmp(op, "AssignVariableOp") == 0 || strstr(op, "PartitionedCall"))
            fail_msg("frozen graph keeps node '%s' (%s)", gn_graph_node_name(fz, i), op);
        if (strcmp(op, "Placeholder") == 0) assert_string_equal(gn_graph_node_name(fz, i), "serving_default_word");
    }
    assert_int_equal(n_table, 1);
    assert_int_equal(n_init, 1);
    assert_int_equal(n_find, 1);
    size_t init = node_index(fz, "hash_table/frozen_init");
    assert_string_equal(gn_graph_node_op(fz, init), "InitializeTableV2");
    const char *want_in[3] = {"hash_table", "hash_table/frozen_init/keys", "hash_table/frozen_init/values"};
    assert_int_equal(gn_graph_node_input_count(fz, init), 3);
    char buf[512];
    for (size_t k = 0; k < 3; k++) {
        assert_int_equal(gn_graph_node_input(fz, init, k, buf, sizeof buf), GN_OK);
        assert_string_equal(buf, want_in[k]);
    }
    size_t find = node_index(fz, "StatefulPartitionedCall_1/StatefulPartitionedCall/None_Lookup/LookupTableFindV2");
    bool ordered = false;
    for (size_t k = 0; k < gn_graph_node_input_count(fz, find); k++) {
        assert_int_equal(gn_graph_node_input(fz, find, k, buf, sizeof buf), GN_OK);
        ordered |= strcmp(buf, "^hash_table/frozen_init") == 0;
    }
    assert_true(ordered);
    /* the contents: the asset's CRLF lines, numbered */
    const char *on[2] = {"hash_table/frozen_init/keys", "hash_table/frozen_init/values"};
    gn_tensor out[2];
    memset(out, 0, sizeof out);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(fz, NULL, &s), GN_OK);
    if (gn_session_run(s, NULL, NULL, 0, on, out, 2) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    const char *words[4] = {"foo", "bar", "baz", "wombat"};
    assert_int_equal(out[0].dtype, DT_STRING);
    assert_int_equal(gn_tensor_numel(&out[0]), 4);
    assert_int_equal(gn_tensor_numel(&out[1]), 4);
    for (int k = 0; k < 4; k++) {
        const gn_string *w = &((const gn_string *)out[0].data)[k];
        if (w->len != strlen(words[k]) || memcmp(w->data, words[k], w->len) != 0)
            fail_msg("key %d: '%.*s', want '%s'", k, (int)w->len, w->data, words[k]);
        assert_int_equal(((const int64_t *)out[1].data)[k], k);
    }
    gn_tensor_free(&out[0]);
    gn_tensor_free(&out[1]);
    gn_session_free(s);
    gn_graph_free(fz);
    gn_graph_free(g);
}

/* The asset file missing: the error names the initializer and the file. */
static void test_table_asset_missing(void **state)
{
    (void)state;
    char src[2048], p[4200], q[4200];
    if (!corpus(STATIC_TABLE, src, sizeof src)) skip();
    const char *d = tmp("noassets");
    mkdir(d, 0777);
    snprintf(p, sizeof p, "%s/saved_model.pb", src);
    snprintf(q, sizeof q, "%s/saved_model.pb", d);
    copy_file(p, q);
    snprintf(q, sizeof q, "%s/variables", d);
    mkdir(q, 0777);
    const char *files[2] = {"variables.index", "variables.data-00000-of-00001"};
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/variables/%s", src, files[k]);
        snprintf(q, sizeof q, "%s/variables/%s", d, files[k]);
        copy_file(p, q);
    }
    gn_graph *g = gn_test_load(d), *fz = NULL;
    char want[4096];
    snprintf(want, sizeof want,
             "freezing signature 'serving_default': table initializer "
             "'StatefulPartitionedCall/text_file_init/InitializeTableFromTextFileV2' (InitializeTableFromTextFileV2): "
             "%s/assets/static_hashtable_asset.txt: No such file or directory",
             d);
    expect_msg(gn_graph_freeze(g, NULL, &fz), GN_ERR_IO, gn_graph_errmsg(g), want);
    assert_null(fz);
    gn_graph_free(g);
}

/* ---- CLI --------------------------------------------------------------------------------------- */
static int cli(char **out, const char *fmt, const char *a, const char *b, const char *c)
{
    char args[8192];
    snprintf(args, sizeof args, fmt, a, b, c);
    return gn_test_sh(out, "'%s' %s", GN_CLI_PATH, args);
}

static void expect_has(const char *out, const char *needle)
{
    if (!strstr(out, needle)) fail_msg("output lacks:\n%s\n--- output:\n%s", needle, out);
}

static void test_cli(void **state)
{
    (void)state;
    char dir[2048], gdir[2048];
    if (!corpus(HP2_TF2, dir, sizeof dir)) return;
    gn_test_data("savedmodel/half_plus_two_tf2_cpu/serving_default", gdir, sizeof gdir);
    char *out = NULL;
    assert_int_equal(cli(&out, "inspect '%s'%s%s", dir, "", ""), 0);
    expect_has(out, "SavedModel tags: serve\nsignatures: 6\n");
    expect_has(out, "  serving_default (tensorflow/serving/predict)\n"
                    "    input  x: serving_default_x:0 float [1]\n"
                    "    output y: StatefulPartitionedCall_5:0 float [1]\n");
    expect_has(out, "variables: 3 (12 bytes)\n"
                    "  a/.ATTRIBUTES/VARIABLE_VALUE float [] 4 bytes\n"
                    "  b/.ATTRIBUTES/VARIABLE_VALUE float [] 4 bytes\n"
                    "  c/.ATTRIBUTES/VARIABLE_VALUE float [] 4 bytes\n"
                    "assets: 1\n"
                    "  foo.txt <- asset_path_initializer:0\n"
                    "functions: 14\n");
    free(out);
    /* run by signature keys; outputs written by key */
    const char *od = tmp("runout");
    mkdir(od, 0777);
    char feed[2100];
    snprintf(feed, sizeof feed, "%s/in_x.npy", gdir);
    assert_int_equal(cli(&out, "run '%s' --signature serving_default --input x='%s' --output-dir '%s'", dir, feed, od),
                     0);
    free(out);
    char got[1100], ref[2100], err[256];
    snprintf(got, sizeof got, "%s/y.npy", od);
    snprintf(ref, sizeof ref, "%s/out_y.npy", gdir);
    gn_tensor a, b;
    if (gn_npy_read(got, &a, err, sizeof err) != GN_OK) fail_msg("%s", err);
    if (gn_npy_read(ref, &b, err, sizeof err) != GN_OK) fail_msg("%s", err);
    gn_compare_result r;
    gn_tensor_compare(&a, &b, 1e-5, &r);
    assert_true(r.match);
    gn_tensor_free(&a);
    gn_tensor_free(&b);
    /* printed, labelled by key */
    assert_int_equal(cli(&out, "run '%s' --input x='%s'%s", dir, feed, ""), 0);
    expect_has(out, "y: float32 (1,)\n");
    free(out);
    /* unknown signature: the keys are listed */
    assert_int_equal(cli(&out, "run '%s' --signature nope%s%s", dir, "", ""), 1);
    expect_has(out, "grapnel run: no signature 'nope' in the SavedModel (signatures: __saved_model_init_op, "
                    "classify_x2_to_y3, classify_x_to_y, regress_x2_to_y3, regress_x_to_y, regress_x_to_y2, "
                    "serving_default)\n");
    free(out);
    assert_int_equal(cli(&out, "freeze '%s' -o '%s' --signature nope%s", dir, tmp("nope.pb"), ""), 1);
    expect_has(out, "grapnel freeze: no signature 'nope' in the SavedModel");
    free(out);
    assert_false(gn_test_file_exists(tmp("nope.pb")));
    /* freeze: a GraphDef whose feeds and fetches are the signature's tensors */
    const char *pb = tmp("hp2.pb");
    assert_int_equal(cli(&out, "freeze '%s' -o '%s' --signature regress_x2_to_y3%s", dir, pb, ""), 0);
    expect_has(out, "  feed  inputs: regress_x2_to_y3_inputs:0\n  fetch outputs: StatefulPartitionedCall_2:0\n");
    free(out);
    gn_graph *g = gn_test_load(pb);
    assert_int_equal(gn_graph_signature_count(g), 0);
    gn_graph_free(g);
    char gdir2[2048];
    gn_test_data("savedmodel/half_plus_two_tf2_cpu/regress_x2_to_y3", gdir2, sizeof gdir2);
    snprintf(feed, sizeof feed, "%s/in_inputs.npy", gdir2);
    snprintf(got, sizeof got, "%s/y3.npy", od);
    assert_int_equal(cli(&out, "run '%s' --feed regress_x2_to_y3_inputs='%s' --fetch StatefulPartitionedCall_2='%s'",
                         pb, feed, got),
                     0);
    free(out);
    snprintf(ref, sizeof ref, "%s/out_outputs.npy", gdir2);
    if (gn_npy_read(got, &a, err, sizeof err) != GN_OK) fail_msg("%s", err);
    if (gn_npy_read(ref, &b, err, sizeof err) != GN_OK) fail_msg("%s", err);
    gn_tensor_compare(&a, &b, 1e-5, &r);
    assert_true(r.match);
    gn_tensor_free(&a);
    gn_tensor_free(&b);
    /* verify: a SavedModel (frozen at its signature) against the frozen GraphDef */
    assert_int_equal(cli(&out, "verify '%s' '%s' --signature regress_x2_to_y3%s", dir, pb, ""), 0);
    expect_has(out, "ok: 1 of 1 fetches match\n");
    free(out);
    /* optimize: frozen, then optimized with the signature's outputs as fetches */
    const char *opb = tmp("hp2_opt.pb");
    assert_int_equal(cli(&out, "optimize '%s' -o '%s' --target gpu:sm_90x4 --verify%s", dir, opb, ""), 0);
    expect_has(out, "StatefulPartitionedCall_5:0");
    expect_has(out, "ok: 1 of 1 fetches match\n");
    free(out);
    assert_int_equal(cli(&out, "optimize '%s' -o '%s' --target tpu%s", dir, opb, ""), 2);
    expect_has(out, "grapnel optimize: --target: target 'tpu' is not one of cpu, gpu, gpu:sm_NN, gpu:sm_NNxK, auto\n");
    free(out);
    assert_int_equal(cli(&out, "verify '%s' '%s' --target gpu%s", dir, opb, ""), 2);
    expect_has(out, "grapnel verify: --target: the target is for the optimizer: use it with --bisect");
    free(out);
    /* optimize into a SavedModel directory */
    const char *osm = tmp("hp2_opt_sm");
    assert_int_equal(cli(&out, "optimize '%s' -o '%s' --signature regress_x2_to_y3%s", dir, osm, ""), 0);
    free(out);
    g = gn_test_load(osm);
    assert_int_equal(gn_graph_signature_count(g), 1);
    assert_string_equal(gn_graph_signature_key(g, 0), "regress_x2_to_y3");
    gn_graph_free(g);
    /* its argument keys are the input's ('inputs', 'outputs') */
    assert_int_equal(cli(&out, "run '%s' --input inputs='%s'%s", osm, feed, ""), 0);
    expect_has(out, "outputs: float32 (1,)\n");
    free(out);
    /* a signature naming a missing tensor, through the CLI */
    assert_int_equal(cli(&out, "run '%s'%s%s", bad_sig_dir(), "", ""), 1);
    expect_has(out, "grapnel run: signature 'serving_default': output 'y' names tensor 'nope:0', which is not in the "
                    "graph\n");
    free(out);
}

/* grapnel freeze then grapnel run on the frozen GraphDef, and grapnel run on
 * the SavedModel by signature: TensorFlow's lookups, exactly. */
static void compare_npy(const char *got, const char *ref)
{
    char err[256];
    gn_tensor a, b;
    if (gn_npy_read(got, &a, err, sizeof err) != GN_OK) fail_msg("%s", err);
    if (gn_npy_read(ref, &b, err, sizeof err) != GN_OK) fail_msg("%s", err);
    gn_compare_result r;
    assert_int_equal(gn_tensor_compare(&a, &b, 0, &r), GN_OK);
    if (!r.match) fail_msg("%s vs %s: %s", got, ref, r.why);
    gn_tensor_free(&a);
    gn_tensor_free(&b);
}

static void test_table_cli(void **state)
{
    (void)state;
    char dir[2048], gdir[2048], feed[2200], ref[2200];
    if (!corpus(STATIC_TABLE, dir, sizeof dir)) skip();
    gn_test_data("savedmodel/static_hashtable/serving_default", gdir, sizeof gdir);
    snprintf(feed, sizeof feed, "%s/in_word.npy", gdir);
    snprintf(ref, sizeof ref, "%s/out_output_0.npy", gdir);
    char *out = NULL;
    const char *pb = tmp("static_table.pb");
    assert_int_equal(cli(&out, "freeze '%s' -o '%s'%s", dir, pb, ""), 0);
    expect_has(out, "  feed  word: serving_default_word:0\n  fetch output_0: StatefulPartitionedCall_1:0\n");
    free(out);
    const char *got = tmp("table_out.npy");
    assert_int_equal(cli(&out, "run '%s' --feed serving_default_word='%s' --fetch StatefulPartitionedCall_1='%s'", pb,
                         feed, got),
                     0);
    free(out);
    compare_npy(got, ref);
    /* the SavedModel itself, by signature */
    const char *od = tmp("table_runout");
    mkdir(od, 0777);
    assert_int_equal(cli(&out, "run '%s' --signature serving_default --input word='%s' --output-dir '%s'", dir, feed,
                         od),
                     0);
    free(out);
    char got2[1200];
    snprintf(got2, sizeof got2, "%s/output_0.npy", od);
    compare_npy(got2, ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_loads),
        cmocka_unit_test(test_signature_args_and_assets),
        cmocka_unit_test(test_freeze_matches_tensorflow),
        cmocka_unit_test(test_freeze_keras3_loop_variables),
        cmocka_unit_test(test_freeze_captured_inputs),
        cmocka_unit_test(test_freeze_sparse_inputs_matches_tensorflow),
        cmocka_unit_test(test_half_plus_two_exact),
        cmocka_unit_test(test_half_plus_two_tf2_optimized),
        cmocka_unit_test(test_corpus_cannot),
        cmocka_unit_test(test_bad_signatures),
        cmocka_unit_test(test_missing_variables),
        cmocka_unit_test(test_resource_readers_and_restore_keys),
        cmocka_unit_test(test_table_frozen_graph),
        cmocka_unit_test(test_table_asset_missing),
        cmocka_unit_test(test_table_cli),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
