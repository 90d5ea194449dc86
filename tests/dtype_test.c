/* The DataType list (src/opdef/dtypes.def) and the functions that read it
 * (src/opdef/dtype.c): every row against a copy written out here, against the
 * protobuf enum, and through a .npy round trip, so that a wrong row fails. */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdef/dtype.h"
#include "tensorflow/core/framework/types.pb-c.h"

#define N_BASE 34   /* DT_INVALID .. DT_FLOAT4_E2M1FN */

/* What each number must answer, written out independently of dtypes.def. */
typedef struct want {
    int32_t dt;
    const char *name, *numpy, *descr;
    size_t size;
    gn__dtype_kind kind;
} want;

#define W(id, name, numpy, size, descr, kind) \
    {TENSORFLOW__DATA_TYPE__DT_##id, name, numpy, descr, size, GN__DK_##kind}
static const want k_want[N_BASE] = {
    W(INVALID, "INVALID", "INVALID", 0, NULL, NONE),
    W(FLOAT, "float", "float32", 4, "<f4", FLOAT),
    W(DOUBLE, "double", "float64", 8, "<f8", FLOAT),
    W(INT32, "int32", "int32", 4, "<i4", INT),
    W(UINT8, "uint8", "uint8", 1, "|u1", UINT),
    W(INT16, "int16", "int16", 2, "<i2", INT),
    W(INT8, "int8", "int8", 1, "|i1", INT),
    W(STRING, "string", "string", 0, NULL, STRING),
    W(COMPLEX64, "complex64", "complex64", 8, NULL, COMPLEX),
    W(INT64, "int64", "int64", 8, "<i8", INT),
    W(BOOL, "bool", "bool", 1, "|b1", BOOL),
    W(QINT8, "qint8", "qint8", 1, NULL, QUANT),
    W(QUINT8, "quint8", "quint8", 1, NULL, QUANT),
    W(QINT32, "qint32", "qint32", 4, NULL, QUANT),
    W(BFLOAT16, "bfloat16", "bfloat16", 2, NULL, FLOAT),
    W(QINT16, "qint16", "qint16", 2, NULL, QUANT),
    W(QUINT16, "quint16", "quint16", 2, NULL, QUANT),
    W(UINT16, "uint16", "uint16", 2, "<u2", UINT),
    W(COMPLEX128, "complex128", "complex128", 16, NULL, COMPLEX),
    W(HALF, "half", "float16", 2, "<f2", FLOAT),
    W(RESOURCE, "resource", "resource", 0, NULL, OPAQUE),
    W(VARIANT, "variant", "variant", 0, NULL, OPAQUE),
    W(UINT32, "uint32", "uint32", 4, "<u4", UINT),
    W(UINT64, "uint64", "uint64", 8, "<u8", UINT),
    W(FLOAT8_E5M2, "float8_e5m2", "float8_e5m2", 1, NULL, NARROW_FLOAT),
    W(FLOAT8_E4M3FN, "float8_e4m3fn", "float8_e4m3fn", 1, NULL, NARROW_FLOAT),
    W(FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", "float8_e4m3fnuz", 1, NULL, NARROW_FLOAT),
    W(FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz", "float8_e4m3b11fnuz", 1, NULL, NARROW_FLOAT),
    W(FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", "float8_e5m2fnuz", 1, NULL, NARROW_FLOAT),
    W(INT4, "int4", "int4", 0, NULL, SUBBYTE),
    W(UINT4, "uint4", "uint4", 0, NULL, SUBBYTE),
    W(INT2, "int2", "int2", 0, NULL, SUBBYTE),
    W(UINT2, "uint2", "uint2", 0, NULL, SUBBYTE),
    W(FLOAT4_E2M1FN, "float4_e2m1fn", "float4_e2m1fn", 0, NULL, SUBBYTE),
};

static void test_every_row(void **state)
{
    (void)state;
    for (int32_t i = 0; i < N_BASE; i++) {
        const want *w = &k_want[i];
        assert_int_equal(w->dt, i);
        assert_string_equal(gn__dtype_name(i), w->name);
        assert_string_equal(gn_dtype_name(i), w->name);
        assert_string_equal(gn__dtype_numpy_name(i), w->numpy);
        assert_string_equal(gn_dtype_numpy_name(i), w->numpy);
        assert_int_equal(gn__dtype_size(i), w->size);
        assert_int_equal(gn_dtype_size(i), w->size);
        assert_int_equal(gn__dtype_kind_of(i), w->kind);
        assert_int_equal(gn__dtype_valid(i), i != 0);
        if (w->descr) {
            assert_non_null(gn__dtype_npy_descr(i));
            assert_string_equal(gn__dtype_npy_descr(i), w->descr);
            assert_int_equal(gn__dtype_from_npy(w->descr + 1), i);
        } else {
            assert_null(gn__dtype_npy_descr(i));
        }
        /* the _REF type: the base's size, its name + "_ref", nothing else */
        char ref[64];
        snprintf(ref, sizeof ref, "%s_ref", w->name);
        if (i == 0) {
            assert_false(gn__dtype_valid(100));
            assert_string_equal(gn__dtype_name(100), "unknown");
            continue;
        }
        assert_true(gn__dtype_valid(i + 100));
        assert_string_equal(gn__dtype_name(i + 100), ref);
        assert_string_equal(gn_dtype_numpy_name(i + 100), ref);
        assert_int_equal(gn__dtype_size(i + 100), w->size);
        assert_int_equal(gn__dtype_kind_of(i + 100), GN__DK_NONE);
        assert_null(gn__dtype_npy_descr(i + 100));
    }
}

/* Every number the protobuf enum defines and no other: valid, with the
 * enum's name, and TensorFlow's short name its lower case (DataTypeString). */
static void test_against_the_protobuf_enum(void **state)
{
    (void)state;
    const ProtobufCEnumDescriptor *d = &tensorflow__data_type__descriptor;
    assert_int_equal(d->n_values, 2 * N_BASE - 1);
    for (unsigned i = 0; i < d->n_values; i++) {
        const ProtobufCEnumValue *v = &d->values[i];
        assert_string_equal(gn__dtype_enum_name(v->value), v->name);
        assert_int_equal(gn__dtype_valid(v->value), v->value != 0);
        if (v->value == 0) continue;
        char lower[64];
        size_t n = 0;
        for (const char *p = v->name + 3; *p && n + 1 < sizeof lower; p++)
            lower[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        lower[n] = 0;
        assert_string_equal(gn__dtype_name(v->value), lower);
    }
    int valid = 0;
    for (int32_t dt = -300; dt <= 300; dt++) {
        bool in_enum = protobuf_c_enum_descriptor_get_value(d, dt) != NULL;
        assert_int_equal(gn__dtype_valid(dt), in_enum && dt != 0);
        if (!in_enum) {
            assert_string_equal(gn__dtype_name(dt), "unknown");
            assert_string_equal(gn__dtype_enum_name(dt), "?");
            assert_int_equal(gn__dtype_size(dt), 0);
        }
        valid += gn__dtype_valid(dt);
    }
    assert_int_equal(valid, 2 * (N_BASE - 1));
    /* the ends of int32: no overflow on the way to the _REF row */
    const int32_t ends[] = {INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 100};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        assert_false(gn__dtype_valid(ends[i]));
        assert_int_equal(gn__dtype_size(ends[i]), 0);
        assert_string_equal(gn__dtype_name(ends[i]), "unknown");
        assert_int_equal(gn__dtype_kind_of(ends[i]), GN__DK_NONE);
    }
}

static void test_kinds(void **state)
{
    (void)state;
    int floats = 0, complexes = 0, ints = 0, uints = 0;
    for (int32_t dt = -5; dt < 240; dt++) {
        floats += gn__dtype_is_float(dt);
        complexes += gn__dtype_is_complex(dt);
        ints += gn__dtype_is_integer(dt);
        uints += gn__dtype_is_unsigned(dt);
    }
    assert_int_equal(floats, 4);
    assert_int_equal(complexes, 2);
    assert_int_equal(ints, 8);
    assert_int_equal(uints, 4);
    assert_true(gn__dtype_is_float(TENSORFLOW__DATA_TYPE__DT_BFLOAT16));
    assert_true(gn__dtype_is_float(TENSORFLOW__DATA_TYPE__DT_HALF));
    assert_false(gn__dtype_is_float(TENSORFLOW__DATA_TYPE__DT_FLOAT8_E4M3FN));
    assert_false(gn__dtype_is_float(TENSORFLOW__DATA_TYPE__DT_FLOAT_REF));
    assert_true(gn__dtype_is_complex(TENSORFLOW__DATA_TYPE__DT_COMPLEX128));
    assert_true(gn__dtype_is_integer(TENSORFLOW__DATA_TYPE__DT_UINT64));
    assert_false(gn__dtype_is_integer(TENSORFLOW__DATA_TYPE__DT_BOOL));
    assert_false(gn__dtype_is_integer(TENSORFLOW__DATA_TYPE__DT_QINT8));
    assert_false(gn__dtype_is_unsigned(TENSORFLOW__DATA_TYPE__DT_INT8));
}

/* Every dtype with a descr: written as .npy with that descr, read back as the
 * same dtype and bytes; every other fixed-size one refused by name. */
static void test_npy_round_trip(void **state)
{
    (void)state;
    int written = 0;
    for (int32_t dt = 1; dt < N_BASE; dt++) {
        const want *w = &k_want[dt];
        if (dt == TENSORFLOW__DATA_TYPE__DT_STRING) continue;   /* |S<n>: its own test in io_test.c */
        uint8_t bytes[3 * 16];
        for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (uint8_t)(dt == TENSORFLOW__DATA_TYPE__DT_BOOL ? i & 1 : 7 * i + 1);
        gn_tensor t = {.dtype = dt, .rank = 1, .dims = {3}, .data = bytes, .nbytes = 3 * w->size};
        void *data = NULL;
        size_t size = 0;
        char err[256] = "";
        gn_status st = gn_npy_serialize(&t, &data, &size, err, sizeof err);
        if (!w->descr) {
            char msg[128];
            snprintf(msg, sizeof msg, "dtype %s cannot be written as .npy", w->numpy);
            assert_int_equal(st, GN_ERR_UNSUPPORTED);
            assert_string_equal(err, msg);
            continue;
        }
        assert_int_equal(st, GN_OK);
        char head[64];
        snprintf(head, sizeof head, "{'descr': '%s', ", w->descr);
        assert_true(size > 10 + strlen(head));
        assert_memory_equal((const char *)data + 10, head, strlen(head));
        gn_tensor back = {0};
        assert_int_equal(gn_npy_parse(data, size, "t.npy", &back, err, sizeof err), GN_OK);
        assert_int_equal(back.dtype, dt);
        assert_int_equal(back.rank, 1);
        assert_int_equal(back.dims[0], 3);
        assert_int_equal(back.nbytes, 3 * w->size);
        assert_memory_equal(back.data, bytes, 3 * w->size);
        gn_tensor_free(&back);
        gn_free(data);
        written++;
    }
    assert_int_equal(written, 12);
    assert_int_equal(gn__dtype_from_npy("f16"), 0);
    assert_int_equal(gn__dtype_from_npy("c8"), 0);
    assert_int_equal(gn__dtype_from_npy(""), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row),
        cmocka_unit_test(test_against_the_protobuf_enum),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_npy_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
