/* TensorFlow's DataTypes: every fact comes from the list src/opdef/dtypes.def. */
#include "opdef/dtype.h"

#include <string.h>

#include "grapnel/graph.h"
#include "grapnel/runtime.h"
#include "tensorflow/core/framework/types.pb-c.h"

typedef struct dtype_row {
    const char *name, *ref_name, *enum_name, *enum_ref_name, *numpy_name, *npy_descr;
    uint8_t size;
    uint8_t kind;
} dtype_row;

#define GN_DTYPE(id, name, numpy_name, size, npy_descr, kind)                                                \
    [TENSORFLOW__DATA_TYPE__DT_##id] = {name, name "_ref", "DT_" #id, "DT_" #id "_REF", numpy_name, npy_descr, \
                                        size, GN__DK_##kind},
static const dtype_row rows[] = {
#include "opdef/dtypes.def"
};
#undef GN_DTYPE

/* one row per number, none skipped: the last row's number + 1 rows */
#define GN_DTYPE(id, ...) +1
_Static_assert(sizeof rows / sizeof rows[0] == 0
#include "opdef/dtypes.def"
               , "dtypes.def: one row per DataType number, in order");
#undef GN_DTYPE

#define N_ROWS ((int32_t)(sizeof rows / sizeof rows[0]))

/* The row of a base type (1 .. last); NULL for anything else. */
static const dtype_row *base_row(int32_t dt) { return dt > 0 && dt < N_ROWS ? &rows[dt] : NULL; }

/* The row of a _REF type's base (101 .. last + 100); NULL for anything else. */
static const dtype_row *ref_row(int32_t dt) { return dt > 100 ? base_row(dt - 100) : NULL; }

bool gn__dtype_valid(int32_t dt) { return base_row(dt) || ref_row(dt); }

size_t gn__dtype_size(int32_t dt)
{
    const dtype_row *r = dt > 100 ? ref_row(dt) : base_row(dt);
    return r ? r->size : 0;
}

const char *gn__dtype_name(int32_t dt)
{
    if (dt == 0) return rows[0].name;
    if (base_row(dt)) return rows[dt].name;
    if (ref_row(dt)) return ref_row(dt)->ref_name;
    return "unknown";
}

const char *gn__dtype_enum_name(int32_t dt)
{
    if (dt == 0) return rows[0].enum_name;
    if (base_row(dt)) return rows[dt].enum_name;
    if (ref_row(dt)) return ref_row(dt)->enum_ref_name;
    return "?";
}

const char *gn__dtype_numpy_name(int32_t dt) { return base_row(dt) ? rows[dt].numpy_name : gn__dtype_name(dt); }

const char *gn__dtype_npy_descr(int32_t dt) { return base_row(dt) ? rows[dt].npy_descr : NULL; }

int32_t gn__dtype_from_npy(const char *code)
{
    for (int32_t dt = 1; dt < N_ROWS; dt++)
        if (rows[dt].npy_descr && strcmp(rows[dt].npy_descr + 1, code) == 0) return dt;
    return 0;
}

gn__dtype_kind gn__dtype_kind_of(int32_t dt) { return base_row(dt) ? (gn__dtype_kind)rows[dt].kind : GN__DK_NONE; }

GN_API const char *gn_dtype_name(int32_t dtype) { return gn__dtype_name(dtype); }
GN_API const char *gn_dtype_numpy_name(int32_t dtype) { return gn__dtype_numpy_name(dtype); }
GN_API size_t gn_dtype_size(int32_t dtype) { return gn__dtype_size(dtype); }
