/* Op registry: the generated table (op_table.inc), the internal ops, traits
 * and AMP lists (src/opdef/ops.def), defaults, arity and dtype resolution, OpDef
 * conversion and attr validation (src/opdef/registry.c). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "opdef/registry.h"

#define N_PUBLIC 1582u   /* 1563 from tf_ops.pbtxt, 19 XLA ops from src/ops/xla_ops.pbtxt */
#define N_INTERNAL 23u

static const gn__opdef *op(const char *name)
{
    int32_t i = gn__op_find(name, strlen(name));
    assert_true(i >= 0);
    const gn__opdef *d = gn__op_at((uint32_t)i);
    assert_non_null(d);
    assert_string_equal(d->name, name);
    return d;
}

static const gn__attrdef *attr(const gn__opdef *d, const char *name)
{
    const gn__attrdef *a = gn__opdef_attr(d, name);
    assert_non_null(a);
    return a;
}

/* ---- the table ------------------------------------------------------------------ */

static void test_count_and_order(void **state)
{
    (void)state;
    assert_int_equal(gn__op_count(), N_PUBLIC + N_INTERNAL);
    assert_null(gn__op_at(gn__op_count()));
    uint32_t internal = 0;
    for (uint32_t i = 0; i < gn__op_count(); i++) {
        const gn__opdef *d = gn__op_at(i);
        assert_non_null(d);
        /* strictly increasing within each table: binary search works */
        if (i != 0 && i != N_PUBLIC) assert_true(strcmp(gn__op_at(i - 1)->name, d->name) < 0);
        assert_int_equal(gn__op_find(d->name, strlen(d->name)), (int32_t)i);
        assert_int_equal(!!(d->flags & GN__OPF_INTERNAL), i >= N_PUBLIC);
        internal += !!(d->flags & GN__OPF_INTERNAL);
        /* array pointers agree with counts */
        assert_true((d->n_inputs == 0) == (d->inputs == NULL));
        assert_true((d->n_outputs == 0) == (d->outputs == NULL));
        assert_true((d->n_attrs == 0) == (d->attrs == NULL));
        for (uint16_t k = 0; k < d->n_attrs; k++) {
            const gn__attrdef *a = &d->attrs[k];
            assert_true((a->default_pb == NULL) == (a->default_len == 0));
            assert_true((a->allowed_pb == NULL) == (a->allowed_len == 0));
        }
    }
    assert_int_equal(internal, N_INTERNAL);
    assert_string_equal(gn__op_at(0)->name, "Abort");
    assert_string_equal(gn__op_at(N_PUBLIC - 1)->name, "ZipDataset");
    assert_string_equal(gn__op_at(N_PUBLIC)->name, "Grapnel>EngineOp");
}

static void test_find(void **state)
{
    (void)state;
    assert_int_equal(gn__op_find("NoSuchOp", 8), -1);
    assert_int_equal(gn__op_find("", 0), -1);
    assert_int_equal(gn__op_find(NULL, 0), -1);
    assert_int_equal(gn__op_find("Conv2", 5), -1);
    /* the name need not be NUL-terminated */
    int32_t c = gn__op_find("Conv2D", 6);
    assert_true(c >= 0 && c < (int32_t)N_PUBLIC);
    assert_int_equal(gn__op_find("Conv2DXYZ", 6), c);
    int32_t f = gn__op_find("_FusedConv2D", 12);
    assert_true(f >= (int32_t)N_PUBLIC);
    assert_int_equal(gn__op_find("Grapnel>EngineOp", 16), (int32_t)N_PUBLIC);
    assert_int_equal(gn__op_find("Abort", 5), 0);
    assert_int_equal(gn__op_find("ZerosLike", 9), (int32_t)N_PUBLIC - 3);
    assert_int_equal(gn__op_find("_UnaryOpsComposition", 20), (int32_t)gn__op_count() - 1);
}

static void test_conv2d(void **state)
{
    (void)state;
    const gn__opdef *d = op("Conv2D");
    assert_int_equal(d->n_inputs, 2);
    assert_int_equal(d->n_outputs, 1);
    assert_int_equal(d->n_attrs, 7);
    assert_string_equal(d->inputs[0].name, "input");
    assert_string_equal(d->inputs[0].type_attr, "T");
    assert_string_equal(d->inputs[1].name, "filter");
    assert_null(d->inputs[1].number_attr);
    assert_null(d->inputs[1].type_list_attr);
    assert_int_equal(d->inputs[1].type, 0);
    assert_false(d->inputs[1].is_ref);
    assert_string_equal(d->outputs[0].name, "output");
    assert_int_equal(d->flags, 0);
    assert_null(d->shape);

    static const char *const names[] = {"T", "strides", "use_cudnn_on_gpu", "padding", "explicit_paddings",
                                        "data_format", "dilations"};
    for (int i = 0; i < 7; i++) assert_string_equal(d->attrs[i].name, names[i]);

    const gn__attrdef *a = attr(d, "data_format");
    assert_int_equal(a->kind, GN__ATTR_STRING);
    assert_string_equal(a->type, "string");
    assert_int_equal(a->default_len, 6);
    assert_memory_equal(a->default_pb, "\022\004NHWC", 6);
    assert_int_equal(a->allowed_len, 14);
    assert_memory_equal(a->allowed_pb, "\012\014\022\004NHWC\022\004NCHW", 14);

    a = attr(d, "use_cudnn_on_gpu");
    assert_int_equal(a->kind, GN__ATTR_BOOL);
    assert_int_equal(a->default_len, 2);
    assert_memory_equal(a->default_pb, "\050\001", 2);   /* b: true */

    a = attr(d, "dilations");
    assert_int_equal(a->kind, GN__ATTR_LIST_INT);
    assert_string_equal(a->type, "list(int)");
    assert_int_equal(a->default_len, 8);
    assert_memory_equal(a->default_pb, "\012\006\032\004\001\001\001\001", 8);   /* list { i: [1,1,1,1] } */

    a = attr(d, "explicit_paddings");
    assert_int_equal(a->default_len, 2);
    assert_memory_equal(a->default_pb, "\012\000", 2);   /* list {} */

    a = attr(d, "strides");
    assert_null(a->default_pb);
    assert_false(a->has_minimum);
    a = attr(d, "T");
    assert_int_equal(a->kind, GN__ATTR_TYPE);
    assert_null(a->default_pb);
    /* {half, bfloat16, float, double, int32} */
    assert_int_equal(a->allowed_len, 9);
    assert_memory_equal(a->allowed_pb, "\012\007\062\005\023\016\001\002\003", 9);
    assert_null(gn__opdef_attr(d, "nope"));
}

static void test_defaults_unpack(void **state)
{
    (void)state;
    Tensorflow__AttrValue *v;
    assert_int_equal(gn__attrdef_default(attr(op("Conv2D"), "data_format"), NULL, &v), GN_OK);
    assert_non_null(v);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_S);
    assert_int_equal(v->s.len, 4);
    assert_memory_equal(v->s.data, "NHWC", 4);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    assert_int_equal(gn__attrdef_default(attr(op("Conv2D"), "dilations"), NULL, &v), GN_OK);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
    assert_int_equal(v->list->n_i, 4);
    for (int i = 0; i < 4; i++) assert_int_equal(v->list->i[i], 1);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    assert_int_equal(gn__attrdef_default(attr(op("Conv2D"), "explicit_paddings"), NULL, &v), GN_OK);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
    assert_int_equal(v->list->n_i, 0);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    assert_int_equal(gn__attrdef_default(attr(op("FusedBatchNormV3"), "epsilon"), NULL, &v), GN_OK);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_F);
    assert_true(v->f == 0.0001f);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    assert_int_equal(gn__attrdef_default(attr(op("Shape"), "out_type"), NULL, &v), GN_OK);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_TYPE);
    assert_int_equal(v->type, TENSORFLOW__DATA_TYPE__DT_INT32);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    /* the one tensor default of the op list */
    assert_int_equal(gn__attrdef_default(attr(op("ImageSummary"), "bad_color"), NULL, &v), GN_OK);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
    assert_int_equal(v->tensor->dtype, TENSORFLOW__DATA_TYPE__DT_UINT8);
    assert_int_equal(v->tensor->tensor_shape->n_dim, 1);
    assert_int_equal(v->tensor->tensor_shape->dim[0]->size, 4);
    assert_int_equal(v->tensor->n_int_val, 4);
    assert_int_equal(v->tensor->int_val[0], 255);
    assert_int_equal(v->tensor->int_val[1], 0);
    assert_int_equal(v->tensor->int_val[3], 255);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    /* a shape default: unknown rank */
    assert_int_equal(gn__attrdef_default(attr(op("PlaceholderWithDefault"), "shape"), NULL, &v), GN_OK);
    assert_null(v);   /* required attr: no default */
    assert_int_equal(gn__attrdef_default(attr(op("Placeholder"), "shape"), NULL, &v), GN_OK);
    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_SHAPE);
    assert_true(v->shape->unknown_rank);
    assert_int_equal(v->shape->n_dim, 0);
    protobuf_c_message_free_unpacked(&v->base, NULL);

    /* with an arena allocator */
    gn__arena arena;
    gn__arena_init(&arena, 1024);
    ProtobufCAllocator al;
    gn__arena_pb_allocator(&arena, &al);
    assert_int_equal(gn__attrdef_default(attr(op("Grapnel>EngineOp"), "precision_mode"), &al, &v), GN_OK);
    assert_int_equal(v->s.len, 4);
    assert_memory_equal(v->s.data, "FP32", 4);
    gn__arena_free(&arena);
}

/* Every default and allowed blob unpacks, packs back to the same bytes
 * (canonical encoding), and every default passes its own attr's check. */
static void test_all_blobs(void **state)
{
    (void)state;
    uint32_t n_defaults = 0, n_allowed = 0;
    for (uint32_t i = 0; i < gn__op_count(); i++) {
        const gn__opdef *d = gn__op_at(i);
        for (uint16_t k = 0; k < d->n_attrs; k++) {
            const gn__attrdef *a = &d->attrs[k];
            const uint8_t *blobs[2] = {a->default_pb, a->allowed_pb};
            uint32_t lens[2] = {a->default_len, a->allowed_len};
            for (int b = 0; b < 2; b++) {
                if (!blobs[b]) continue;
                ProtobufCMessage *m =
                    protobuf_c_message_unpack(&tensorflow__attr_value__descriptor, NULL, lens[b], blobs[b]);
                if (!m) fail_msg("%s.%s: blob %d does not unpack", d->name, a->name, b);
                size_t n = protobuf_c_message_get_packed_size(m);
                uint8_t *buf = malloc(n + 1);
                protobuf_c_message_pack(m, buf);
                if (n != lens[b] || memcmp(buf, blobs[b], n) != 0)
                    fail_msg("%s.%s: blob %d is not canonical", d->name, a->name, b);
                free(buf);
                if (b == 0) {
                    gn__err err = {0};
                    if (gn__attr_check(d, a, (Tensorflow__AttrValue *)m, &err) != GN_OK)
                        fail_msg("%s.%s: default rejected: %s", d->name, a->name, err.msg);
                    n_defaults++;
                } else {
                    Tensorflow__AttrValue *v = (Tensorflow__AttrValue *)m;
                    assert_int_equal(v->value_case, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
                    n_allowed++;
                }
                protobuf_c_message_free_unpacked(m, NULL);
            }
        }
    }
    assert_true(n_defaults > 1900);
    assert_true(n_allowed > 1200);
}

static void test_args(void **state)
{
    (void)state;
    const gn__opdef *d = op("ConcatV2");
    assert_string_equal(d->inputs[0].name, "values");
    assert_string_equal(d->inputs[0].number_attr, "N");
    assert_string_equal(d->inputs[0].type_attr, "T");
    assert_string_equal(d->inputs[1].type_attr, "Tidx");
    const gn__attrdef *n = attr(d, "N");
    assert_true(n->has_minimum);
    assert_int_equal(n->minimum, 2);
    assert_int_equal(gn__op_input_arg(d, "axis", 4), 1);
    assert_int_equal(gn__op_input_arg(d, "values", 6), 0);
    assert_int_equal(gn__op_input_arg(d, "nope", 4), -1);
    assert_int_equal(gn__op_output_arg(d, "output", 6), 0);

    d = op("IdentityN");
    assert_string_equal(d->inputs[0].type_list_attr, "T");
    assert_null(d->inputs[0].type_attr);
    assert_null(d->inputs[0].number_attr);
    assert_string_equal(d->outputs[0].type_list_attr, "T");
    assert_int_equal(attr(d, "T")->kind, GN__ATTR_LIST_TYPE);
    assert_int_equal(attr(d, "T")->minimum, 1);

    d = op("FusedBatchNormV3");
    assert_int_equal(d->n_outputs, 6);
    assert_int_equal(gn__op_output_arg(d, "reserve_space_3", 15), 5);

    d = op("AccumulatorApplyGradient");   /* handle: Ref(string) */
    assert_int_equal(d->inputs[0].type, TENSORFLOW__DATA_TYPE__DT_STRING);
    assert_true(d->inputs[0].is_ref);
    assert_int_equal(d->flags, 0);

    assert_int_equal(op("AddN")->flags, GN__OPF_COMMUTATIVE | GN__OPF_AGGREGATE);
    assert_int_equal(op("RandomUniform")->flags, GN__OPF_STATEFUL);
    assert_int_equal(op("RefSwitch")->flags, GN__OPF_ALLOWS_UNINIT);
    assert_int_equal(op("Recv")->flags, GN__OPF_STATEFUL | GN__OPF_DISTRIBUTED_COMM);
}

/* ---- traits --------------------------------------------------------------------- */

/* The op list's name, traits and amp_list columns (the function columns are
 * the ops layer's: tests/op_list_test.c). */
static const struct {
    const char *name;
    uint32_t traits;
    gn__amp_list amp;
} op_list[] = {
#define GN_OP(name, traits, amp, shape, kernel) {name, (uint32_t)(traits), amp},
#include "opdef/ops.def"
#undef GN_OP
};

/* ops.def is sorted by name (strcmp order) with each op once: the lookups
 * binary-search it. */
static void test_op_list_sorted(void **state)
{
    (void)state;
    assert_true(GN__ARRAY_LEN(op_list) > 400);
    for (size_t i = 1; i < GN__ARRAY_LEN(op_list); i++)
        if (strcmp(op_list[i - 1].name, op_list[i].name) >= 0)
            fail_msg("ops.def: %s after %s (sorted by name, each op once)", op_list[i].name, op_list[i - 1].name);
}

/* ops.def against the compiled table: a table generated before the last
 * edit of a row's traits or amp_list fails here (re-run tools/gen_ops.py). */
static void test_traits_table_fresh(void **state)
{
    (void)state;
    size_t listed = 0;
    for (size_t i = 0; i < GN__ARRAY_LEN(op_list); i++) {
        const char *name = op_list[i].name;
        int32_t k = gn__op_find(name, strlen(name));
        bool has = op_list[i].traits != 0 || op_list[i].amp != GN__AMP_NONE;
        if (k < 0) {
            if (has) fail_msg("ops.def gives traits to unknown op %s", name);
            continue;   /* a kernel or shape function for an op the registry does not list */
        }
        const gn__opdef *d = gn__op_at((uint32_t)k);
        if (d->traits != op_list[i].traits || d->amp != op_list[i].amp)
            fail_msg("%s: table has traits 0x%x amp %d, ops.def 0x%x amp %d: re-run tools/gen_ops.py", name,
                     (unsigned)d->traits, (int)d->amp, (unsigned)op_list[i].traits, (int)op_list[i].amp);
        listed += has;
    }
    size_t with = 0;
    for (uint32_t i = 0; i < gn__op_count(); i++) {
        const gn__opdef *d = gn__op_at(i);
        with += d->traits != 0 || d->amp != GN__AMP_NONE;
    }
    assert_int_equal(with, listed);
}

static void test_traits(void **state)
{
    (void)state;
    assert_int_equal(op("Add")->traits, GN__T_ELEMENTWISE | GN__T_BINARY | GN__T_COMMUTATIVE | GN__T_ASSOCIATIVE |
                                            GN__T_LAYOUT_AGNOSTIC | GN__T_HOST_FRIENDLY);
    assert_int_equal(op("Relu")->traits,
                     GN__T_ELEMENTWISE | GN__T_UNARY | GN__T_IDEMPOTENT | GN__T_LAYOUT_AGNOSTIC);
    assert_int_equal(op("Neg")->traits,
                     GN__T_ELEMENTWISE | GN__T_UNARY | GN__T_INVOLUTION | GN__T_LAYOUT_AGNOSTIC);
    assert_int_equal(op("Conv2D")->traits, GN__T_LAYOUT_SENSITIVE);
    assert_int_equal(op("_FusedConv2D")->traits, GN__T_LAYOUT_SENSITIVE);
    assert_int_equal(op("Identity")->traits, GN__T_ELEMENTWISE | GN__T_UNARY | GN__T_IDEMPOTENT |
                                                 GN__T_LAYOUT_AGNOSTIC | GN__T_HOST_FRIENDLY | GN__T_IDENTITY_LIKE);
    assert_int_equal(op("CheckNumerics")->traits & GN__T_DEBUG, GN__T_DEBUG);
    assert_int_equal(op("PrintV2")->traits, GN__T_DEBUG);
    assert_int_equal(op("Switch")->traits, GN__T_LAYOUT_AGNOSTIC | GN__T_CONTROL_FLOW);
    assert_int_equal(op("_Arg")->traits, GN__T_SOURCE);
    assert_int_equal(op("Const")->traits, GN__T_HOST_FRIENDLY | GN__T_SOURCE);
    assert_int_equal(op("StatefulPartitionedCall")->traits, GN__T_FUNCTION_CALL);
    assert_int_equal(op("MatMul")->traits, 0);
    assert_int_equal(op("Placeholder")->traits, GN__T_SOURCE);

    assert_int_equal(op("MatMul")->amp, GN__AMP_ALLOW);
    assert_int_equal(op("Conv2D")->amp, GN__AMP_ALLOW);
    assert_int_equal(op("BatchMatMulV2")->amp, GN__AMP_ALLOW);
    assert_int_equal(op("Add")->amp, GN__AMP_INFER);
    assert_int_equal(op("_FusedBatchNormEx")->amp, GN__AMP_INFER);
    assert_int_equal(op("Relu")->amp, GN__AMP_CLEAR);
    assert_int_equal(op("Exp")->amp, GN__AMP_DENY);
    assert_int_equal(op("Sum")->amp, GN__AMP_DENY);
    assert_int_equal(op("Placeholder")->amp, GN__AMP_NONE);
    assert_int_equal(op("Rsqrt")->amp, GN__AMP_NONE);   /* infer only for oneDNN fp16 */
}

/* ---- internal ops ---------------------------------------------------------------- */

static void test_internal_ops(void **state)
{
    (void)state;
    const gn__opdef *d = op("Grapnel>EngineOp");
    assert_int_equal(d->flags, GN__OPF_INTERNAL);
    assert_int_equal(d->n_inputs, 1);
    assert_int_equal(d->n_outputs, 1);
    assert_int_equal(d->n_attrs, 13);
    assert_string_equal(d->inputs[0].type_list_attr, "InT");
    assert_string_equal(d->outputs[0].type_list_attr, "OutT");
    assert_int_equal(attr(d, "segment_func")->kind, GN__ATTR_FUNC);
    assert_int_equal(attr(d, "input_shapes")->kind, GN__ATTR_LIST_SHAPE);
    assert_null(attr(d, "workspace_size_bytes")->default_pb);
    assert_memory_equal(attr(d, "minimum_segment_size")->default_pb, "\030\003", 2);
    assert_memory_equal(attr(d, "max_cached_engines_count")->default_pb, "\030\001", 2);
    assert_memory_equal(attr(d, "calibration_data")->default_pb, "\022\000", 2);

    d = op("_Arg");
    assert_int_equal(d->flags, GN__OPF_INTERNAL | GN__OPF_STATEFUL);
    assert_int_equal(d->n_inputs, 0);
    assert_int_equal(d->n_outputs, 1);
    assert_true(attr(d, "index")->has_minimum);

    d = op("_FusedConv2D");
    assert_int_equal(d->n_inputs, 4);
    assert_string_equal(d->inputs[2].type_list_attr, "TArgs");
    assert_int_equal(d->inputs[3].type, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    assert_string_equal(d->inputs[3].number_attr, "num_host_args");
    assert_memory_equal(attr(d, "leakyrelu_alpha")->default_pb, "\045\315\314\114\076", 5);   /* 0.2f */

    d = op("_FusedMatMul");
    assert_string_equal(d->inputs[2].number_attr, "num_args");
    assert_int_equal(op("_Recv")->flags, GN__OPF_INTERNAL | GN__OPF_STATEFUL | GN__OPF_DISTRIBUTED_COMM);
    assert_int_equal(op("_SwitchN")->traits, GN__T_CONTROL_FLOW);
}

/* ---- arity and dtypes without a graph (defaults only) --------------------------------- */

static void test_arity_defaults(void **state)
{
    (void)state;
    gn__err err = {0};
    uint32_t n = 0, s = 0, c = 0;
    assert_int_equal(gn__op_num_inputs(op("Conv2D"), NULL, 0, &n, &err), GN_OK);
    assert_int_equal(n, 2);
    assert_int_equal(gn__op_num_outputs(op("Conv2D"), NULL, 0, &n, &err), GN_OK);
    assert_int_equal(n, 1);

    /* num_side_inputs defaults to 0 */
    const gn__opdef *bn = op("_FusedBatchNormEx");
    assert_int_equal(gn__op_num_inputs(bn, NULL, 0, &n, &err), GN_OK);
    assert_int_equal(n, 5);
    assert_int_equal(gn__op_num_outputs(bn, NULL, 0, &n, &err), GN_OK);
    assert_int_equal(n, 6);
    assert_int_equal(gn__op_input_range(bn, NULL, 0, 5, &s, &c, &err), GN_OK);
    assert_int_equal(s, 5);
    assert_int_equal(c, 0);

    assert_int_equal(gn__op_num_inputs(op("ConcatV2"), NULL, 0, &n, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "ConcatV2: attr 'N' is missing");
    assert_int_equal(gn__op_num_outputs(op("IdentityN"), NULL, 0, &n, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "IdentityN: attr 'T' is missing");
    assert_int_equal(gn__op_input_range(op("Conv2D"), NULL, 0, 2, &s, &c, &err), GN_ERR_ARG);
    assert_string_equal(err.msg, "Conv2D: no input arg 2");

    /* dtypes: fixed, from defaults, ref */
    assert_int_equal(gn__op_output_dtype(op("Shape"), NULL, 0, 0), TENSORFLOW__DATA_TYPE__DT_INT32);
    assert_int_equal(gn__op_input_dtype(op("Shape"), NULL, 0, 0), 0);   /* T has no default */
    assert_int_equal(gn__op_output_dtype(op("Shape"), NULL, 0, 1), 0);  /* past the end */
    assert_int_equal(gn__op_input_dtype(op("AccumulatorApplyGradient"), NULL, 0, 0),
                     TENSORFLOW__DATA_TYPE__DT_STRING_REF);
    assert_int_equal(gn__op_input_dtype(op("AccumulatorApplyGradient"), NULL, 0, 1), TENSORFLOW__DATA_TYPE__DT_INT64);
    assert_int_equal(gn__op_output_dtype(op("MaxPool"), NULL, 0, 0), TENSORFLOW__DATA_TYPE__DT_FLOAT);
    assert_int_equal(gn__op_output_dtype(op("_SwitchN"), NULL, 0, 0), 0);
    assert_int_equal(gn__op_input_dtype(op("_SwitchN"), NULL, 0, 1), TENSORFLOW__DATA_TYPE__DT_INT32);
}

/* ---- attr checks ------------------------------------------------------------------- */

static void test_attr_check(void **state)
{
    (void)state;
    gn__err err = {0};
    const gn__opdef *conv = op("Conv2D");

    Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
    assert_int_equal(gn__attr_check(conv, attr(conv, "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' has no value; Conv2D expects type");

    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
    v.s.data = (uint8_t *)"float";
    v.s.len = 5;
    assert_int_equal(gn__attr_check(conv, attr(conv, "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' has a string value; Conv2D expects type");

    v.s.data = (uint8_t *)"FOO";
    v.s.len = 3;
    assert_int_equal(gn__attr_check(conv, attr(conv, "padding"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg,
                        "attr 'padding' is \"FOO\", not allowed for Conv2D (allowed: \"SAME\", \"VALID\", \"EXPLICIT\")");
    v.s.data = (uint8_t *)"SAME";
    v.s.len = 4;
    assert_int_equal(gn__attr_check(conv, attr(conv, "padding"), &v, &err), GN_OK);

    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    assert_int_equal(gn__attr_check(conv, attr(conv, "T"), &v, &err), GN_OK);
    v.type = TENSORFLOW__DATA_TYPE__DT_COMPLEX64;
    assert_int_equal(gn__attr_check(op("Relu"), attr(op("Relu"), "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' is complex64, not allowed for Relu (allowed: float, double, int32, "
                                 "uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, qint8)");
    v.type = TENSORFLOW__DATA_TYPE__DT_FLOAT_REF;
    assert_int_equal(gn__attr_check(conv, attr(conv, "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' is float_ref; a type attr cannot hold a reference type");
    v.type = (Tensorflow__DataType)77;
    assert_int_equal(gn__attr_check(op("Identity"), attr(op("Identity"), "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' is an invalid DataType (77)");

    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
    v.i = 0;
    const gn__opdef *addn = op("AddN");
    assert_int_equal(gn__attr_check(addn, attr(addn, "N"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'N' is 0, below its minimum 1");
    v.i = 1;
    assert_int_equal(gn__attr_check(addn, attr(addn, "N"), &v, &err), GN_OK);
    assert_int_equal(gn__attr_check(conv, attr(conv, "strides"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'strides' has an int value; Conv2D expects list(int)");

    /* lists: `list {}` matches every list kind */
    Tensorflow__AttrValue__ListValue l = TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    v.list = &l;
    assert_int_equal(gn__attr_check(conv, attr(conv, "explicit_paddings"), &v, &err), GN_OK);
    assert_int_equal(gn__attr_check(op("Grapnel>EngineOp"), attr(op("Grapnel>EngineOp"), "InT"), &v, &err), GN_OK);
    assert_int_equal(gn__attr_check(op("IdentityN"), attr(op("IdentityN"), "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' has 0 values, below its minimum 1");
    assert_int_equal(gn__attr_check(conv, attr(conv, "T"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' has an empty list value; Conv2D expects type");
    v.list = NULL;   /* a list case with no message: also empty */
    assert_int_equal(gn__attr_check(conv, attr(conv, "explicit_paddings"), &v, &err), GN_OK);
    v.list = &l;

    int64_t ks[3] = {1, 2, 2};
    l.n_i = 3;
    l.i = ks;
    const gn__opdef *mp = op("MaxPool");
    assert_int_equal(gn__attr_check(mp, attr(mp, "ksize"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'ksize' has 3 values, below its minimum 4");
    assert_int_equal(gn__attr_check(conv, attr(conv, "strides"), &v, &err), GN_OK);   /* no minimum */

    ProtobufCBinaryData strs[1] = {{2, (uint8_t *)"ab"}};
    l.n_i = 0;
    l.n_s = 1;
    l.s = strs;
    assert_int_equal(gn__attr_check(conv, attr(conv, "strides"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'strides' has a list(string) value; Conv2D expects list(int)");
    l.n_i = 3;
    assert_int_equal(gn__attr_check(conv, attr(conv, "strides"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'strides' has a mixed list value; Conv2D expects list(int)");
    l.n_i = 0;
    l.n_s = 0;

    Tensorflow__DataType types[2] = {TENSORFLOW__DATA_TYPE__DT_INT32, TENSORFLOW__DATA_TYPE__DT_STRING};
    l.n_type = 2;
    l.type = types;
    assert_int_equal(gn__attr_check(op("IdentityN"), attr(op("IdentityN"), "T"), &v, &err), GN_OK);
    const gn__opdef *fc = op("_FusedConv2D");
    assert_int_equal(gn__attr_check(fc, attr(fc, "TArgs"), &v, &err), GN_OK);
    /* list(type) with allowed values: each element is checked */
    const gn__opdef *csv = op("DecodeCSV");
    assert_int_equal(gn__attr_check(csv, attr(csv, "OUT_TYPE"), &v, &err), GN_OK);
    types[1] = TENSORFLOW__DATA_TYPE__DT_BOOL;
    assert_int_equal(gn__attr_check(csv, attr(csv, "OUT_TYPE"), &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg,
                        "attr 'OUT_TYPE' contains bool, not allowed for DecodeCSV (allowed: float, double, int32, int64, string)");

    /* placeholders are accepted for any kind */
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER;
    v.placeholder = "T";
    assert_int_equal(gn__attr_check(conv, attr(conv, "T"), &v, &err), GN_OK);
}

/* ---- OpDef messages ------------------------------------------------------------------ */

static void test_from_proto(void **state)
{
    (void)state;
    gn__arena arena;
    gn__arena_init(&arena, 1024);
    gn__err err = {0};

    Tensorflow__OpDef__ArgDef x = TENSORFLOW__OP_DEF__ARG_DEF__INIT, y = TENSORFLOW__OP_DEF__ARG_DEF__INIT,
                              z = TENSORFLOW__OP_DEF__ARG_DEF__INIT;
    x.name = "x";
    x.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    y.name = "y";
    y.type_attr = "T";
    z.name = "z";
    z.type_attr = "T";
    z.number_attr = "N";
    Tensorflow__OpDef__ArgDef *ins[] = {&x, &y}, *outs[] = {&z};

    Tensorflow__AttrValue__ListValue allowed_list = TENSORFLOW__ATTR_VALUE__LIST_VALUE__INIT;
    Tensorflow__DataType allowed_types[] = {TENSORFLOW__DATA_TYPE__DT_FLOAT, TENSORFLOW__DATA_TYPE__DT_HALF};
    allowed_list.n_type = 2;
    allowed_list.type = allowed_types;
    Tensorflow__AttrValue allowed = TENSORFLOW__ATTR_VALUE__INIT;
    allowed.value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    allowed.list = &allowed_list;
    Tensorflow__AttrValue two = TENSORFLOW__ATTR_VALUE__INIT;
    two.value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
    two.i = 2;

    Tensorflow__OpDef__AttrDef t = TENSORFLOW__OP_DEF__ATTR_DEF__INIT, n = TENSORFLOW__OP_DEF__ATTR_DEF__INIT;
    t.name = "T";
    t.type = "type";
    t.allowed_values = &allowed;
    n.name = "N";
    n.type = "int";
    n.has_minimum = true;
    n.minimum = 1;
    n.default_value = &two;
    Tensorflow__OpDef__AttrDef *attrs[] = {&t, &n};

    Tensorflow__OpDef p = TENSORFLOW__OP_DEF__INIT;
    p.name = "my_fn";
    p.n_input_arg = 2;
    p.input_arg = ins;
    p.n_output_arg = 1;
    p.output_arg = outs;
    p.n_attr = 2;
    p.attr = attrs;
    p.is_stateful = true;

    gn__opdef *d = NULL;
    assert_int_equal(gn__opdef_from_proto(&p, &arena, &d, &err), GN_OK);
    assert_string_equal(d->name, "my_fn");
    assert_int_equal(d->n_inputs, 2);
    assert_int_equal(d->n_outputs, 1);
    assert_int_equal(d->n_attrs, 2);
    assert_int_equal(d->flags, GN__OPF_STATEFUL);
    assert_int_equal(d->traits, 0);
    assert_int_equal(d->amp, GN__AMP_NONE);
    assert_null(d->shape);
    assert_int_equal(d->inputs[0].type, TENSORFLOW__DATA_TYPE__DT_FLOAT);
    assert_null(d->inputs[0].type_attr);   /* "" becomes NULL */
    assert_string_equal(d->inputs[1].type_attr, "T");
    assert_string_equal(d->outputs[0].number_attr, "N");
    assert_int_equal(d->attrs[0].kind, GN__ATTR_TYPE);
    assert_string_equal(d->attrs[0].type, "type");
    assert_int_equal(d->attrs[0].allowed_len, 6);
    assert_memory_equal(d->attrs[0].allowed_pb, "\012\004\062\002\001\023", 6);
    assert_int_equal(d->attrs[1].default_len, 2);
    assert_memory_equal(d->attrs[1].default_pb, "\030\002", 2);

    uint32_t cnt;
    assert_int_equal(gn__op_num_outputs(d, NULL, 0, &cnt, &err), GN_OK);
    assert_int_equal(cnt, 2);   /* N defaults to 2 */

    Tensorflow__AttrValue v = TENSORFLOW__ATTR_VALUE__INIT;
    v.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v.type = TENSORFLOW__DATA_TYPE__DT_INT32;
    assert_int_equal(gn__attr_check(d, &d->attrs[0], &v, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "attr 'T' is int32, not allowed for my_fn (allowed: float, half)");

    /* errors */
    t.type = "list(nonsense)";
    assert_int_equal(gn__opdef_from_proto(&p, &arena, &d, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "op 'my_fn': attr 'T' has unknown type 'list(nonsense)'");
    t.type = "type";
    y.type_attr = "";
    assert_int_equal(gn__opdef_from_proto(&p, &arena, &d, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "op 'my_fn': input 'y' must have exactly one of type, type_attr, type_list_attr");
    y.type_attr = "T";
    p.name = "";
    assert_int_equal(gn__opdef_from_proto(&p, &arena, &d, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "OpDef has no name");
    gn__arena_free(&arena);
}

static void test_dtype_names(void **state)
{
    (void)state;
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_FLOAT), "float");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_HALF), "half");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_INT32), "int32");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_STRING), "string");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_RESOURCE), "resource");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_VARIANT), "variant");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_BFLOAT16), "bfloat16");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_FLOAT_REF), "float_ref");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_FLOAT4_E2M1FN), "float4_e2m1fn");
    assert_string_equal(gn__dtype_name(TENSORFLOW__DATA_TYPE__DT_FLOAT4_E2M1FN_REF), "float4_e2m1fn_ref");
    assert_string_equal(gn__dtype_name(0), "INVALID");
    assert_string_equal(gn__dtype_name(34), "unknown");
    assert_string_equal(gn__dtype_name(100), "unknown");
    assert_string_equal(gn__dtype_name(-1), "unknown");
    assert_string_equal(gn_dtype_name(TENSORFLOW__DATA_TYPE__DT_INT64), "int64");
}

/* ---- arity on IR nodes (needs src/graph/graph.c) ------------------------------------ */

static Tensorflow__AttrValue *val(gn_graph *g)
{
    Tensorflow__AttrValue *v = gn__graph_value_alloc(g, sizeof *v);
    assert_non_null(v);
    tensorflow__attr_value__init(v);
    return v;
}

static char *gstr(gn_graph *g, const char *s)
{
    char *c = gn__graph_value_alloc(g, strlen(s) + 1);
    assert_non_null(c);
    memcpy(c, s, strlen(s) + 1);
    return c;
}

static gn_id add_node(gn_graph *g, const char *name, const char *opname)
{
    gn_id id;
    assert_int_equal(gn__node_add(g, name, opname, &id), GN_OK);
    return id;
}

static void set_int(gn_graph *g, gn_id id, const char *key, int64_t i)
{
    Tensorflow__AttrValue *v = val(g);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
    v->i = i;
    assert_int_equal(gn__node_set_attr(g, id, key, v), GN_OK);
}

static void set_type(gn_graph *g, gn_id id, const char *key, Tensorflow__DataType t)
{
    Tensorflow__AttrValue *v = val(g);
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    v->type = t;
    assert_int_equal(gn__node_set_attr(g, id, key, v), GN_OK);
}

static void set_types(gn_graph *g, gn_id id, const char *key, const Tensorflow__DataType *t, size_t n)
{
    Tensorflow__AttrValue *v = val(g);
    Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
    assert_non_null(l);
    tensorflow__attr_value__list_value__init(l);
    l->type = gn__graph_value_alloc(g, n * sizeof *t + 1);
    memcpy(l->type, t, n * sizeof *t);
    l->n_type = n;
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    v->list = l;
    assert_int_equal(gn__node_set_attr(g, id, key, v), GN_OK);
}

static void test_node_arity(void **state)
{
    (void)state;
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    gn__err err = {0};
    uint32_t n, s, c;

    gn_id cat = add_node(g, "cat", "ConcatV2");
    set_int(g, cat, "N", 3);
    set_type(g, cat, "T", TENSORFLOW__DATA_TYPE__DT_HALF);
    const gn__opdef *d = op("ConcatV2");
    assert_int_equal(gn__op_num_inputs(d, g, cat, &n, &err), GN_OK);
    assert_int_equal(n, 4);
    assert_int_equal(gn__op_input_range(d, g, cat, 0, &s, &c, &err), GN_OK);
    assert_int_equal(s, 0);
    assert_int_equal(c, 3);
    assert_int_equal(gn__op_input_range(d, g, cat, 1, &s, &c, &err), GN_OK);
    assert_int_equal(s, 3);
    assert_int_equal(c, 1);
    assert_int_equal(gn__op_num_outputs(d, g, cat, &n, &err), GN_OK);
    assert_int_equal(n, 1);
    assert_int_equal(gn__op_output_dtype(d, g, cat, 0), TENSORFLOW__DATA_TYPE__DT_HALF);
    assert_int_equal(gn__op_input_dtype(d, g, cat, 2), TENSORFLOW__DATA_TYPE__DT_HALF);
    assert_int_equal(gn__op_input_dtype(d, g, cat, 3), TENSORFLOW__DATA_TYPE__DT_INT32);   /* Tidx default */
    assert_int_equal(gn__op_input_dtype(d, g, cat, 4), 0);

    gn_id idn = add_node(g, "idn", "IdentityN");
    static const Tensorflow__DataType tl[] = {TENSORFLOW__DATA_TYPE__DT_FLOAT, TENSORFLOW__DATA_TYPE__DT_INT32,
                                              TENSORFLOW__DATA_TYPE__DT_BOOL};
    set_types(g, idn, "T", tl, 3);
    assert_int_equal(gn__op_num_outputs(op("IdentityN"), g, idn, &n, &err), GN_OK);
    assert_int_equal(n, 3);
    assert_int_equal(gn__op_output_dtype(op("IdentityN"), g, idn, 1), TENSORFLOW__DATA_TYPE__DT_INT32);
    assert_int_equal(gn__op_output_dtype(op("IdentityN"), g, idn, 2), TENSORFLOW__DATA_TYPE__DT_BOOL);

    gn_id sp = add_node(g, "sp", "Split");
    set_int(g, sp, "num_split", 4);
    assert_int_equal(gn__op_num_outputs(op("Split"), g, sp, &n, &err), GN_OK);
    assert_int_equal(n, 4);

    gn_id fbn = add_node(g, "fbn", "_FusedBatchNormEx");
    set_int(g, fbn, "num_side_inputs", 1);
    set_type(g, fbn, "T", TENSORFLOW__DATA_TYPE__DT_HALF);
    set_type(g, fbn, "U", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    assert_int_equal(gn__op_num_inputs(op("_FusedBatchNormEx"), g, fbn, &n, &err), GN_OK);
    assert_int_equal(n, 6);
    assert_int_equal(gn__op_input_dtype(op("_FusedBatchNormEx"), g, fbn, 5), TENSORFLOW__DATA_TYPE__DT_HALF);
    assert_int_equal(gn__op_output_dtype(op("_FusedBatchNormEx"), g, fbn, 1), TENSORFLOW__DATA_TYPE__DT_FLOAT);

    /* Ref outputs get the _ref dtype */
    gn_id var = add_node(g, "var", "VariableV2");
    set_type(g, var, "dtype", TENSORFLOW__DATA_TYPE__DT_FLOAT);
    assert_int_equal(gn__op_output_dtype(op("VariableV2"), g, var, 0), TENSORFLOW__DATA_TYPE__DT_FLOAT_REF);

    gn_id bad = add_node(g, "bad", "ConcatV2");
    Tensorflow__AttrValue *sv = val(g);
    sv->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
    sv->s.data = (uint8_t *)gstr(g, "3");
    sv->s.len = 1;
    assert_int_equal(gn__node_set_attr(g, bad, "N", sv), GN_OK);
    assert_int_equal(gn__op_num_inputs(d, g, bad, &n, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "node 'bad' (ConcatV2): attr 'N' has a string value; ConcatV2 expects int");
    assert_int_equal(gn__op_output_dtype(d, g, bad, 0), 0);

    gn_id neg = add_node(g, "neg", "ConcatV2");
    set_int(g, neg, "N", -1);
    assert_int_equal(gn__op_num_inputs(d, g, neg, &n, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "node 'neg' (ConcatV2): attr 'N' is -1, not a valid count for arg 'values'");

    gn_id ph = add_node(g, "ph", "ConcatV2");
    Tensorflow__AttrValue *pv = val(g);
    pv->value_case = TENSORFLOW__ATTR_VALUE__VALUE_PLACEHOLDER;
    pv->placeholder = gstr(g, "N");
    assert_int_equal(gn__node_set_attr(g, ph, "N", pv), GN_OK);
    assert_int_equal(gn__op_num_inputs(d, g, ph, &n, &err), GN_ERR_UNSUPPORTED);
    assert_string_equal(err.msg, "node 'ph' (ConcatV2): attr 'N' is the placeholder 'N'");

    gn_id eng = add_node(g, "eng", "Grapnel>EngineOp");
    assert_int_equal(gn__op_num_inputs(op("Grapnel>EngineOp"), g, eng, &n, &err), GN_ERR_GRAPH);
    assert_string_equal(err.msg, "node 'eng' (Grapnel>EngineOp): attr 'InT' is missing");
    Tensorflow__AttrValue *empty = val(g);   /* list case, no ListValue: an empty list */
    empty->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    assert_int_equal(gn__node_set_attr(g, eng, "InT", empty), GN_OK);
    assert_int_equal(gn__op_num_inputs(op("Grapnel>EngineOp"), g, eng, &n, &err), GN_OK);
    assert_int_equal(n, 0);
    static const Tensorflow__DataType outt[] = {TENSORFLOW__DATA_TYPE__DT_HALF, TENSORFLOW__DATA_TYPE__DT_FLOAT};
    set_types(g, eng, "OutT", outt, 2);
    assert_int_equal(gn__op_output_range(op("Grapnel>EngineOp"), g, eng, 0, &s, &c, &err), GN_OK);
    assert_int_equal(s, 0);
    assert_int_equal(c, 2);
    assert_int_equal(gn__op_output_dtype(op("Grapnel>EngineOp"), g, eng, 0), TENSORFLOW__DATA_TYPE__DT_HALF);

    gn_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_and_order),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_conv2d),
        cmocka_unit_test(test_defaults_unpack),
        cmocka_unit_test(test_all_blobs),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_op_list_sorted),
        cmocka_unit_test(test_traits_table_fresh),
        cmocka_unit_test(test_traits),
        cmocka_unit_test(test_internal_ops),
        cmocka_unit_test(test_arity_defaults),
        cmocka_unit_test(test_attr_check),
        cmocka_unit_test(test_from_proto),
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test(test_node_arity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
