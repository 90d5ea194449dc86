/* The function columns of the op list (src/opdef/ops.def): every row's shape
 * function and CPU kernel are what gn__shape_fn_for and gn__kernel_for
 * return for its name (src/ops/op_fns.c), and an op the list does not name
 * has neither. The name, traits and amp_list columns are checked against the
 * registry in ops_test.c. */
#include "testutil.h"

#include <string.h>

#include "common/common.h"
#include "opdef/registry.h"
#include "ops/op_fns.h"

/* The list as this file compiles it: NULL for the missing functions. */
#define GN__NO_SHAPE NULL
#define GN__NO_KERNEL NULL
static const struct {
    const char *name;
    uint32_t traits;
    gn__amp_list amp;
    gn__shape_fn shape;
    gn__kernel_fn kernel;
} rows[] = {
#define GN_OP(name, traits, amp, shape, kernel) {name, (uint32_t)(traits), amp, shape, kernel},
#include "opdef/ops.def"
#undef GN_OP
};
#undef GN__NO_KERNEL
#undef GN__NO_SHAPE

static void test_rows_sorted(void **state)
{
    (void)state;
    assert_true(GN__ARRAY_LEN(rows) > 400);
    for (size_t i = 1; i < GN__ARRAY_LEN(rows); i++)
        if (strcmp(rows[i - 1].name, rows[i].name) >= 0)
            fail_msg("ops.def: %s after %s (sorted by name, each op once)", rows[i].name, rows[i - 1].name);
    /* every row says something */
    for (size_t i = 0; i < GN__ARRAY_LEN(rows); i++)
        if (!rows[i].traits && rows[i].amp == GN__AMP_NONE && !rows[i].shape && !rows[i].kernel)
            fail_msg("ops.def: %s has no fact", rows[i].name);
    assert_int_equal(gn__op_fns_count(), GN__ARRAY_LEN(rows));
}

static void test_lookups_follow_the_list(void **state)
{
    (void)state;
    size_t n_shape = 0, n_kernel = 0;
    for (size_t i = 0; i < GN__ARRAY_LEN(rows); i++) {
        const gn__op_fns *r = gn__op_fns_find(rows[i].name);
        assert_non_null(r);
        assert_ptr_equal(r, gn__op_fns_at((uint32_t)i));
        assert_string_equal(r->name, rows[i].name);
        if (gn__shape_fn_for(rows[i].name) != rows[i].shape) fail_msg("%s: another shape function", rows[i].name);
        if (gn__kernel_for(rows[i].name) != rows[i].kernel) fail_msg("%s: another kernel", rows[i].name);
        n_shape += rows[i].shape != NULL;
        n_kernel += rows[i].kernel != NULL;
    }
    assert_true(n_shape > 400);
    assert_true(n_kernel > 340);
    /* ops the list does not name: no shape function, no kernel */
    size_t unnamed = 0;
    for (uint32_t i = 0; i < gn__op_count(); i++) {
        const char *op = gn__op_at(i)->name;
        if (gn__op_fns_find(op)) continue;
        unnamed++;
        if (gn__shape_fn_for(op) || gn__kernel_for(op)) fail_msg("%s: not in ops.def, yet found", op);
    }
    assert_true(unnamed > 1000);
    const char *absent[] = {"", "NoSuchOp", "abs", "Abs ", "Ab", "_", "~", "Zz", "\x7f"};
    for (size_t i = 0; i < GN__ARRAY_LEN(absent); i++) {
        assert_null(gn__op_fns_find(absent[i]));
        assert_null(gn__shape_fn_for(absent[i]));
        assert_null(gn__kernel_for(absent[i]));
    }
    assert_null(gn__op_fns_at(gn__op_fns_count()));
}

/* A few rows by name, so a shifted or misread column shows here by name. */
static void test_known_rows(void **state)
{
    (void)state;
    assert_ptr_equal(gn__shape_fn_for("Abs"), gn__shape_fn_unary);
    assert_ptr_equal(gn__kernel_for("Abs"), gn__km_Abs);
    assert_ptr_equal(gn__shape_fn_for("Conv2D"), gn__sf_conv2d);
    assert_ptr_equal(gn__kernel_for("Conv2D"), gn__nn_k_conv2d);
    assert_ptr_equal(gn__kernel_for("NoOp"), gn__array_k_noop);
    assert_ptr_equal(gn__kernel_for("ControlTrigger"), gn__ctl_k_noop);
    assert_ptr_equal(gn__kernel_for("Grapnel>EngineOp"), gn__ctl_k_engine_op);
    assert_ptr_equal(gn__shape_fn_for("_HostConst"), gn__sf_const);   /* not a registry op */
    assert_null(gn__kernel_for("_HostConst"));
    assert_null(gn__shape_fn_for("_Arg"));
    assert_null(gn__kernel_for("_Arg"));
    assert_ptr_equal(gn__kernel_for("_SwitchN"), gn__ctl_k_switch_n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_sorted),
        cmocka_unit_test(test_lookups_follow_the_list),
        cmocka_unit_test(test_known_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
