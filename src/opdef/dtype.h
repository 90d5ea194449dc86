/* TensorFlow's DataTypes (private): what grapnel knows of each, read from
 * the one list src/opdef/dtypes.def. A _REF type (number + 100) has its
 * base type's size and a name ending in "_ref"; everything else about it
 * (kind, .npy descr) is "none", as TensorFlow never holds one in a tensor. */
#ifndef GN_OPDEF_DTYPE_H
#define GN_OPDEF_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What arithmetic a dtype has (the `kind` column of dtypes.def). */
typedef enum gn__dtype_kind {
    GN__DK_NONE,          /* DT_INVALID, a _REF type, a number TensorFlow does not define */
    GN__DK_FLOAT,         /* half, bfloat16, float, double */
    GN__DK_INT,           /* int8 .. int64 */
    GN__DK_UINT,          /* uint8 .. uint64 */
    GN__DK_BOOL,
    GN__DK_COMPLEX,       /* complex64, complex128 */
    GN__DK_QUANT,         /* qint8, quint8, qint16, quint16, qint32 */
    GN__DK_NARROW_FLOAT,  /* the float8 types: storage only */
    GN__DK_SUBBYTE,       /* int4, uint4, int2, uint2, float4_e2m1fn: packed, no size per element */
    GN__DK_STRING,
    GN__DK_OPAQUE,        /* resource, variant */
} gn__dtype_kind;

/* True for a DataType number TensorFlow defines (0, DT_INVALID, is not one). */
bool gn__dtype_valid(int32_t dt);
/* Bytes per element of a fixed-size dtype; 0 for string, resource, variant,
 * sub-byte and unknown types. _REF types count as their base type. */
size_t gn__dtype_size(int32_t dt);
/* TensorFlow's short name of a DataType ("float", "half", "int32", "string",
 * "resource", "float_ref", ...; "INVALID" for 0, "unknown" otherwise). Static
 * text; gn_dtype_name (include/grapnel/graph.h) returns the same. */
const char *gn__dtype_name(int32_t dt);
/* The enum's name ("DT_FLOAT", "DT_FLOAT_REF", "DT_INVALID"); "?" for a
 * number TensorFlow does not define. Static text. */
const char *gn__dtype_enum_name(int32_t dt);
/* NumPy's name ("float32", "float16"), TensorFlow's where NumPy has none;
 * gn_dtype_numpy_name (include/grapnel/runtime.h) returns the same. */
const char *gn__dtype_numpy_name(int32_t dt);
/* The .npy descr of a dtype ("<f4", "|b1"), NULL when it has none. */
const char *gn__dtype_npy_descr(int32_t dt);
/* The dtype whose .npy descr is `code` after the byte-order character
 * ("f4", "b1"); 0 when none is. */
int32_t gn__dtype_from_npy(const char *code);

gn__dtype_kind gn__dtype_kind_of(int32_t dt);
/* half, bfloat16, float, double (not the float8 types) */
static inline bool gn__dtype_is_float(int32_t dt) { return gn__dtype_kind_of(dt) == GN__DK_FLOAT; }
static inline bool gn__dtype_is_complex(int32_t dt) { return gn__dtype_kind_of(dt) == GN__DK_COMPLEX; }
/* int8 .. int64, uint8 .. uint64 (not bool, not the quantized types) */
static inline bool gn__dtype_is_integer(int32_t dt)
{
    gn__dtype_kind k = gn__dtype_kind_of(dt);
    return k == GN__DK_INT || k == GN__DK_UINT;
}
static inline bool gn__dtype_is_unsigned(int32_t dt) { return gn__dtype_kind_of(dt) == GN__DK_UINT; }

#endif
