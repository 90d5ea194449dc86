/* Every corpus model loads, round-trips byte-exactly through binary and text,
 * and reports its node and function counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "testutil.h"

typedef struct corpus_entry {
    const char *path;
    int nodes, fns, fn_nodes;
} corpus_entry;

/* Per model: nodes of the top-level GraphDef (the first MetaGraph's for a SavedModel),
 * FunctionDefs in its library, and node_defs inside those functions, as the corpus's
 * own provenance list records them for each file. */
static const corpus_entry corpus[] = {
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__DS_CNN__DS_CNN_S.pb", 152, 0, 0},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__CRNN__CRNN_S.pb", 151, 0, 0},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb", 117, 0, 0},
    {"ARM-software__ML-KWS-for-MCU/Pretrained_models__GRU__GRU_S.pb", 94, 0, 0},
    {"onnx__tensorflow-onnx/tests__models__lstm__frozen.pb", 529, 0, 0},
    {"onnx__tensorflow-onnx/tests__models__gru__frozen.pb", 548, 0, 0},
    {"onnx__tensorflow-onnx/tests__models__fc-layers__frozen.pb", 24, 0, 0},
    {"tensorflow__rust/examples__addition__model.pb", 3, 0, 0},
    {"tensorflow__rust/examples__regression_checkpoint__model.pb", 109, 0, 0},
    {"tensorflow__rust/examples__regression_savedmodel", 22, 18, 192},
    {"tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123", 74, 0, 0},
    {"tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123", 29, 14, 122},
    {"tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_counter__00000123", 30, 0, 0},
    {"tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__export__chicago-taxi__1646034756", 1337, 76, 853},
    {"tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt", 2502, 59, 497},
    {"tensorflow__tfx/tfx__components__testdata__trainer__keras__Format-Serving", 64, 37, 275},
    {"tensorflow__tfx/tfx__benchmarks__datasets__chicago_taxi__model__tft_tf2_saved_model", 106, 20, 456},
    {"tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn", 621, 0, 0},
    {"mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model", 289, 197, 1883},
    {"tensorflow__text/tensorflow_text__python__ops__test_data__segmenter_hub_module", 375, 0, 0},
    {"SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential", 49, 95, 4162},
    {"tensorflow__ngraph-bridge/test__python__fusedmatmul_0.pbtxt", 4, 0, 0},
    {"tensorflow__tensorflow/tensorflow__core__graph__regularization__testdata__bert1", 139, 92, 5363},
    {"tensorflow__tensorflow/tensorflow__c__experimental__saved_model__internal__testdata__SimpleWhileLoop", 7, 6, 40},
    {"tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__StaticHashTableModule", 21, 8, 35},
    {"tensorflow__tensorflow/tensorflow__cc__saved_model__testdata__half_plus_two_pbtxt__00000123", 65, 0, 0},
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main.pbtxt", 2853, 106, 106},
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__keras_imagenet_main_graph_mode.pbtxt", 2359, 0, 0},
    {"tensorflow__tensorflow/tensorflow__compiler__jit__tests__opens2s_gnmt_mixed_precision.pbtxt.gz", 5877, 7, 24},
    {"tensorflow__tensorflow/tensorflow__compiler__tests__lstm_layer_inference.pbtxt", 312, 0, 0},
    {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__while_loop.pbtxt", 21, 0, 0},
    {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__nested_loop.pbtxt", 41, 0, 0},
    {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__loops_and_queues.pbtxt", 45, 0, 0},
    {"tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__function_functional_while.pbtxt", 1, 3, 8},
    {"tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__functional-if-ops.pbtxt", 7, 2, 2},
    {"tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__functional-while-ops.pbtxt", 8, 2, 5},
    {"tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__case_op.pbtxt", 4, 2, 4},
    {"tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__switch_n.pbtxt", 14, 0, 0},
    {"tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__graph-gradient-def.pbtxt", 6, 2, 5},
    {"tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__shape-attrs.pbtxt", 12, 0, 0},
    {"tensorflow__tensorflow/tensorflow__core__data__service__testdata__interleave_textline_dataset.pbtxt", 6, 2, 11},
    {"tensorflow__tensorflow/tensorflow__core__ir__importexport__tests__roundtrip__test10.pbtxt", 128, 2, 14},
};

static void test_counts_and_roundtrip(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        gn_test_corpus(corpus[i].path, path, sizeof path);
        gn_graph *g = gn_test_load(path);
        assert_int_equal(gn_graph_node_count(g), corpus[i].nodes);
        assert_int_equal(gn_graph_function_count(g), corpus[i].fns);
        size_t fn_nodes = 0;
        for (size_t f = 0; f < gn_graph_function_count(g); f++) fn_nodes += gn_graph_function_node_count(g, f);
        if (fn_nodes != (size_t)corpus[i].fn_nodes) fail_msg("%s: %zu function nodes, want %d", path, fn_nodes, corpus[i].fn_nodes);

        /* binary: write, load, write again gives the same bytes */
        void *b1 = NULL, *b2 = NULL, *t1 = NULL, *b3 = NULL;
        size_t n1, n2, nt, n3;
        assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &b1, &n1), GN_OK);
        gn_graph *g2 = NULL;
        if (gn_graph_load_buffer(b1, n1, "roundtrip.pb", NULL, &g2) != GN_OK)
            fail_msg("%s: reload: %s", path, gn_graph_errmsg(g2));
        assert_int_equal(gn_graph_node_count(g2), corpus[i].nodes);
        assert_int_equal(gn_graph_serialize(g2, GN_FORMAT_BINARY, &b2, &n2), GN_OK);
        if (n1 != n2 || memcmp(b1, b2, n1) != 0) fail_msg("%s: binary round trip differs", path);

        /* text: write, load, write binary gives the same bytes */
        assert_int_equal(gn_graph_serialize(g, GN_FORMAT_TEXT, &t1, &nt), GN_OK);
        gn_graph *g3 = NULL;
        if (gn_graph_load_buffer(t1, nt, "roundtrip.pbtxt", NULL, &g3) != GN_OK)
            fail_msg("%s: reload text: %s", path, gn_graph_errmsg(g3));
        assert_int_equal(gn_graph_serialize(g3, GN_FORMAT_BINARY, &b3, &n3), GN_OK);
        if (n1 != n3 || memcmp(b1, b3, n1) != 0) fail_msg("%s: text round trip differs", path);

        gn_free(b1);
        gn_free(b2);
        gn_free(b3);
        gn_free(t1);
        gn_graph_free(g3);
        gn_graph_free(g2);
        gn_graph_free(g);
    }
}

/* `grapnel convert a.pb a.pbtxt; grapnel convert a.pbtxt b.pb` gives exactly
 * the bytes of `grapnel convert a.pb c.pb`, and `inspect` reports the count. */
static void test_cli_convert_and_inspect(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    const char *tmp = gn_test_tmpdir();
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) {
        gn_test_corpus(corpus[i].path, path, sizeof path);
        char *out = NULL;
        int rc = gn_test_sh(&out, "'%s' convert '%s' '%s/a.pbtxt' && '%s' convert '%s/a.pbtxt' '%s/b.pb' && "
                                  "'%s' convert '%s' '%s/c.pb' && cmp '%s/b.pb' '%s/c.pb'",
                            GN_CLI_PATH, path, tmp, GN_CLI_PATH, tmp, tmp, GN_CLI_PATH, path, tmp, tmp, tmp);
        if (rc != 0) fail_msg("%s: convert chain failed: %s", path, out);
        free(out);
        rc = gn_test_sh(&out, "'%s' inspect '%s'", GN_CLI_PATH, path);
        if (rc != 0) fail_msg("%s: inspect failed: %s", path, out);
        char want[64];
        snprintf(want, sizeof want, "nodes: %d\n", corpus[i].nodes);
        if (!strstr(out, want)) fail_msg("%s: inspect does not say '%s':\n%s", path, want, out);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_and_roundtrip),
        cmocka_unit_test(test_cli_convert_and_inspect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
