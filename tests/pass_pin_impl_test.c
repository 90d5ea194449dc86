/* Pin to host (src/optimizer/passes/pin_to_host.c) and the implementation
 * selector (src/optimizer/passes/impl_selector.c): small graphs before, the
 * exact graph after (devices, function attrs), the report lines with their
 * reasons, and the original against the rewritten graph on the CPU backend.
 * Then the corpus Keras LSTM SavedModel (lstm_from_sequential), whose
 * standard (CPU) and cuDNN (GPU) LSTM functions implement one interface. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/options.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "optimizer/pass.h"
#include "testutil.h"
#include "passtest.h"

#define DT_FLOAT 1

static void fx_target(gn_pt_fx *f, const char *pass, bool gpu)
{
    gn_pt_fx_init(f, NULL);
    gn_pt_fx_pass(f, pass);
    if (gpu) {
        f->target.kind = GN_TARGET_GPU;
        f->target.compute_capability = 90;
        f->target.num_gpus = 1;
    }
    f->c.toggle = GN_TOGGLE_ON;
}

#define I32C(n, v)                                                                                                   \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { " \
    "tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: " v " } } } }\n"

/* Shape -> StridedSlice -> Pack -> Reshape: the shape arithmetic moves to the host. */
static const char *k_shape_graph =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "
    "attr { key: 'shape' value { shape { dim { size: 4 } dim { size: 5 } dim { size: 6 } } } } }\n"
    "node { name: 's' op: 'Shape' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'out_type' value { type: DT_INT32 } } }\n" I32C("b", "0") I32C("e", "1") I32C("st", "1")
    "node { name: 'ss' op: 'StridedSlice' input: 's' input: 'b' input: 'e' input: 'st' "
    "attr { key: 'T' value { type: DT_INT32 } } attr { key: 'Index' value { type: DT_INT32 } } "
    "attr { key: 'shrink_axis_mask' value { i: 1 } } }\n"
    "node { name: 'm1' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
    "tensor { dtype: DT_INT32 tensor_shape { } int_val: -1 } } } }\n"
    "node { name: 'p' op: 'Pack' input: 'ss' input: 'm1' attr { key: 'T' value { type: DT_INT32 } } "
    "attr { key: 'N' value { i: 2 } } }\n"
    "node { name: 'r' op: 'Reshape' input: 'x' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } "
    "attr { key: 'Tshape' value { type: DT_INT32 } } }\n";

static void test_pin_shape_chain(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(k_shape_graph), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,r");
    gn_pt_fx f;
    fx_target(&f, "pin_to_host", true);
    assert_true(gn_pt_fx_run(&f, gn__pass_pin_to_host, g));
    gn_pt_expect_dump(g, "x=Placeholder(); s=Shape(x); b=Const()@/device:CPU:0; e=Const()@/device:CPU:0; "
                         "st=Const()@/device:CPU:0; ss=StridedSlice(s, b, e, st)@/device:CPU:0; "
                         "m1=Const()@/device:CPU:0; p=Pack(ss, m1)@/device:CPU:0; r=Reshape(x, p)");
    gn_pt_fx_expect_event(&f, "pin_to_host.pin: ss: 'ss' (StridedSlice) placed on /device:CPU:0: small outputs, "
                              "host-friendly inputs");
    gn_pt_fx_expect_event(&f, "pin_to_host.pin: b: 'b' (Const) placed on /device:CPU:0");
    gn_pt_fx_expect_event(&f, "pin_to_host.pin: s: 's' (Shape) stays: input 0 from 'x' is not host friendly");
    float xs[120];
    for (int i = 0; i < 120; i++) xs[i] = (float)i * 0.5f - 3.0f;
    const int64_t d[3] = {4, 5, 6};
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 3, d);
    const char *fn[1] = {"x"}, *xn[1] = {"r"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 1);
    /* a second run changes nothing */
    assert_false(gn_pt_fx_run(&f, gn__pass_pin_to_host, g));
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* A small Const feeding a GPU kernel input in device memory goes back; the
 * job/replica/task of a GPU device name is kept. */
static void test_pin_const_back_and_device_name(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        "node { name: 'x' op: 'Placeholder' device: '/job:w/replica:0/task:1/device:GPU:0' "
        "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' value { shape { dim { size: 100 } } } } }\n"
        "node { name: 'k' op: 'Const' device: '/job:w/replica:0/task:1/device:GPU:0' "
        "attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { tensor { dtype: DT_FLOAT "
        "tensor_shape { } float_val: 2 } } } }\n"
        "node { name: 'm' op: 'Mul' input: 'x' input: 'k' device: '/job:w/replica:0/task:1/device:GPU:0' "
        "attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'sz' op: 'Size' input: 'm' device: '/job:w/replica:0/task:1/device:GPU:0' "
        "attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'out_type' value { type: DT_INT32 } } }\n"
        "node { name: 'one' op: 'Const' device: '/job:w/replica:0/task:1/device:GPU:0' "
        "attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { dtype: DT_INT32 "
        "tensor_shape { } int_val: 1 } } } }\n"
        "node { name: 'a' op: 'AddV2' input: 'sz' input: 'one' device: '/job:w/replica:0/task:1/device:GPU:0' "
        "attr { key: 'T' value { type: DT_INT32 } } }\n");
    gn_pt_preserve_list(g, "x,m,a");
    gn_pt_fx f;
    fx_target(&f, "pin_to_host", true);
    assert_true(gn_pt_fx_run(&f, gn__pass_pin_to_host, g));
    gn_pt_expect_dump(g, "x=Placeholder()@/job:w/replica:0/task:1/device:GPU:0; "
                         "k=Const()@/job:w/replica:0/task:1/device:GPU:0; "
                         "m=Mul(x, k)@/job:w/replica:0/task:1/device:GPU:0; "
                         "sz=Size(m)@/job:w/replica:0/task:1/device:GPU:0; "
                         "one=Const()@/job:w/replica:0/task:1/device:CPU:0; "
                         "a=AddV2(sz, one)@/job:w/replica:0/task:1/device:CPU:0");
    gn_pt_fx_expect_event(&f, "pin_to_host.pin: k: Const 'k' stays: 'm' (Mul) takes input 1 in device memory");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

static void test_pin_cpu_target(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(k_shape_graph);
    gn_pt_preserve_list(g, "x,r");
    gn_pt_fx f;
    fx_target(&f, "pin_to_host", false);
    assert_false(gn_pt_fx_run(&f, gn__pass_pin_to_host, g));
    gn_pt_fx_expect_event(&f, "pin_to_host.pin: no GPU in the target (cpu): everything runs on the host");
    gn_pt_expect_dump(g, "x=Placeholder(); s=Shape(x); b=Const(); e=Const(); st=Const(); ss=StridedSlice(s, b, e, st); "
                         "m1=Const(); p=Pack(ss, m1); r=Reshape(x, p)");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* ---- implementation selector ------------------------------------------------------------------ */
#define FN(name, iface, dev, body)                                                                                   \
    "function { signature { name: '" name "' input_arg { name: 'x' type: DT_FLOAT } output_arg { name: 'y' type: "   \
    "DT_FLOAT } } attr { key: 'api_implements' value { s: '" iface "' } } "                                          \
    "attr { key: 'api_preferred_device' value { s: '" dev "' } } " body " ret { key: 'y' value: 'n:y:0' } }\n"
#define NEG "node_def { name: 'n' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }"
#define NEG2                                                                                                         \
    "node_def { name: 'z' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } } "                 \
    "node_def { name: 'n' op: 'Neg' input: 'z:output:0' attr { key: 'T' value { type: DT_FLOAT } } }"
#define CALL(name, f, dev)                                                                                           \
    "node { name: '" name "' op: 'PartitionedCall' input: 'x' device: '" dev "' "                                  \
    "attr { key: 'Tin' value { list { type: DT_FLOAT } } } attr { key: 'Tout' value { list { type: DT_FLOAT } } } " \
    "attr { key: 'f' value { func { name: '" f "' } } } }\n"

static const char *k_impl_graph =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    CALL("c1", "neg_cpu", "") CALL("c2", "neg_cpu", "/device:CPU:0") CALL("c3", "only_gpu", "")
    "node { name: 'c4' op: 'neg_gpu' input: 'x' }\n"
    "library {\n" FN("neg_cpu", "neg_x", "CPU", NEG) FN("neg_gpu", "neg_x", "GPU", NEG2)
    FN("only_gpu", "other", "GPU", NEG) "}\n";

static const char *impl_f(const gn_graph *g, const char *node)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, gn__graph_find(g, node), "f");
    assert_non_null(v);
    return v->func->name;
}

static void test_impl_swap(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(k_impl_graph), *before = gn_pt_clone(g);
    gn_pt_preserve_list(g, "x,c1,c2,c3,c4");
    gn_pt_fx f;
    fx_target(&f, "implementation_selector", true);
    assert_true(gn_pt_fx_run(&f, gn__pass_impl_selector, g));
    assert_string_equal(impl_f(g, "c1"), "neg_gpu");
    assert_string_equal(impl_f(g, "c2"), "neg_cpu"); /* placed on the CPU */
    assert_string_equal(impl_f(g, "c3"), "only_gpu");
    gn_pt_expect_dump(g, "x=Placeholder(); c1=PartitionedCall(x); c2=PartitionedCall(x)@/device:CPU:0; "
                         "c3=PartitionedCall(x); c4=neg_gpu(x)");
    gn_pt_fx_expect_event(&f, "implementation_selector.swap: c1: 'c1' calls 'neg_gpu' (GPU) instead of 'neg_cpu' (CPU)");
    gn_pt_fx_expect_no_event(&f, "implementation_selector.swap: c2");
    assert_false(gn_pt_fx_run(&f, gn__pass_impl_selector, g));
    gn_pt_fx_free(&f);

    /* cpu target: back to the CPU implementations; the direct call too; no CPU one for 'other' */
    fx_target(&f, "implementation_selector", false);
    assert_true(gn_pt_fx_run(&f, gn__pass_impl_selector, g));
    assert_string_equal(impl_f(g, "c1"), "neg_cpu");
    assert_string_equal(impl_f(g, "c3"), "only_gpu");
    gn_pt_expect_dump(g, "x=Placeholder(); c1=PartitionedCall(x); c2=PartitionedCall(x)@/device:CPU:0; "
                         "c3=PartitionedCall(x); c4=neg_cpu(x)");
    gn_pt_fx_expect_event(&f, "implementation_selector.swap: c4: 'c4' calls 'neg_cpu' (CPU) instead of 'neg_gpu' (GPU)");
    gn_pt_fx_expect_event(&f, "implementation_selector.swap: c3: 'c3' keeps 'only_gpu': no implementation of 'other' "
                              "prefers CPU");
    float xs[4] = {1, -2, 3.5f, 0};
    const int64_t d[1] = {4};
    gn_tensor t = gn_pt_view(DT_FLOAT, xs, sizeof xs, 1, d);
    const char *fn[1] = {"x"}, *xn[4] = {"c1", "c2", "c3", "c4"};
    gn_pt_check_same(before, g, fn, &t, 1, xn, 4);
    gn_pt_fx_free(&f);
    gn_graph_free(before);
    gn_graph_free(g);
}

/* Different signatures are not interchangeable. */
static void test_impl_signature(void **state)
{
    (void)state;
    gn_graph *g = gn_pt_load_text(
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n" CALL("c1", "a_cpu", "")
        "library {\n" FN("a_cpu", "a", "CPU", NEG)
        "function { signature { name: 'a_gpu' input_arg { name: 'x' type: DT_DOUBLE } output_arg { name: 'y' type: "
        "DT_DOUBLE } } attr { key: 'api_implements' value { s: 'a' } } attr { key: 'api_preferred_device' value { "
        "s: 'GPU' } } node_def { name: 'n' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_DOUBLE } } } "
        "ret { key: 'y' value: 'n:y:0' } }\n}\n");
    gn_pt_preserve_list(g, "x,c1");
    gn_pt_fx f;
    fx_target(&f, "implementation_selector", true);
    assert_false(gn_pt_fx_run(&f, gn__pass_impl_selector, g));
    gn_pt_fx_expect_event(&f, "implementation_selector.swap: c1: 'c1' keeps 'a_cpu': 'a_gpu' (GPU) has another signature");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

/* The Keras LSTM SavedModel: every standard_lstm call inside the library
 * bodies goes to the cuDNN implementation on a GPU target. */
static void test_impl_keras_lstm(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential", path,
                        sizeof path))
        skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    gn_pt_prepare(g);
    gn_pt_fx f;
    fx_target(&f, "implementation_selector", true);
    int swapped = 0;
    for (uint32_t i = 0; i < g->n_fns; i++) {
        gn__function *fn = &g->fns[i];
        if (gn_pt_fx_run_on(&f, gn__pass_impl_selector, fn->body, gn__str(g, fn->name))) swapped++;
    }
    assert_int_equal(swapped, 11);
    gn__function *fn = gn__graph_find_function(g, "__inference__wrapped_model_3915");
    assert_non_null(fn);
    assert_string_equal(impl_f(fn->body, "sequential/lstm/PartitionedCall"), "__inference_gpu_lstm_with_fallback_3729");
    gn_pt_fx_expect_event(&f, "implementation_selector.swap: sequential/lstm/PartitionedCall: "
                              "'sequential/lstm/PartitionedCall' calls '__inference_gpu_lstm_with_fallback_3729' (GPU) "
                              "instead of '__inference_standard_lstm_3635' (CPU)");
    gn_pt_check_valid(g, "lstm_from_sequential");
    gn_pt_fx_free(&f);
    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_shape_chain),
        cmocka_unit_test(test_pin_const_back_and_device_name),
        cmocka_unit_test(test_pin_cpu_target),
        cmocka_unit_test(test_impl_swap),
        cmocka_unit_test(test_impl_signature),
        cmocka_unit_test(test_impl_keras_lstm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
