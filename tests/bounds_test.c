/* Resource bounds on hostile models (issue 22, point 6): a Const whose shape
 * claims 2^40 elements with no data, Fill / Tile / Range whose constant inputs
 * ask for terabytes, string tensors of huge declared size, and loops that
 * never end. Each is refused with GN_ERR_LIMIT and an exact message, by the
 * session's memory, step and time limits, by constant folding's size cap and
 * by tensor decoding, without ever allocating the huge amount (under ASan a
 * terabyte allocation would abort the test). Each test runs in milliseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testutil.h"
#include "passtest.h"

#define GIB ((uint64_t)1 << 30)
#define T_F "attr { key: 'T' value { type: DT_FLOAT } } "
#define CONST_I64(n, shape, vals)                                                                                    \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_INT64 } } attr { key: 'value' value { "   \
    "tensor { dtype: DT_INT64 tensor_shape { " shape " } " vals " } } } }\n"
#define CONST_F(n, shape, vals)                                                                                      \
    "node { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "   \
    "tensor { dtype: DT_FLOAT tensor_shape { " shape " } " vals " } } } }\n"

/* 2^40 float32 elements with no data: Grappler's "all zero" short form */
static const char *const k_big_const = CONST_F("big", "dim { size: 1099511627776 }", "")
    "node { name: 'y' op: 'Neg' input: 'big' " T_F "}\n";

/* Fill of [2^20, 2^20] */
static const char *const k_fill = CONST_I64("dims", "dim { size: 2 }", "int64_val: 1048576 int64_val: 1048576")
    CONST_F("v", "", "float_val: 1") "node { name: 'fill' op: 'Fill' input: 'dims' input: 'v' " T_F
    "attr { key: 'index_type' value { type: DT_INT64 } } }\n";

/* Tile of one float by 2^40 */
static const char *const k_tile = CONST_F("one", "dim { size: 1 }", "float_val: 1")
    CONST_I64("mult", "dim { size: 1 }", "int64_val: 1099511627776")
    "node { name: 'tile' op: 'Tile' input: 'one' input: 'mult' " T_F
    "attr { key: 'Tmultiples' value { type: DT_INT64 } } }\n";

/* Range(0, 2^40, 1) in int64 */
static const char *const k_range = CONST_I64("start", "", "int64_val: 0") CONST_I64("limit", "", "int64_val: 1099511627776")
    CONST_I64("delta", "", "int64_val: 1")
    "node { name: 'range' op: 'Range' input: 'start' input: 'limit' input: 'delta' "
    "attr { key: 'Tidx' value { type: DT_INT64 } } }\n";

/* Range(0.0, 1e12, 1.0) in float32: shape inference does not size a float
 * Range, so constant folding runs the kernel, under its size cap */
static const char *const k_range_f = CONST_F("start", "", "float_val: 0") CONST_F("limit", "", "float_val: 1e12")
    CONST_F("delta", "", "float_val: 1")
    "node { name: 'range' op: 'Range' input: 'start' input: 'limit' input: 'delta' "
    "attr { key: 'Tidx' value { type: DT_FLOAT } } }\n";

/* 2^30 strings, every one the last value given */
static const char *const k_strings =
    "node { name: 's' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { tensor { "
    "dtype: DT_STRING tensor_shape { dim { size: 1073741824 } } string_val: 'abc' } } } }\n"
    "node { name: 'id' op: 'Identity' input: 's' attr { key: 'T' value { type: DT_STRING } } }\n";

/* a string Fill: dims and the value are filled in */
static const char *const k_string_fill =
    CONST_I64("dims", "dim { size: 1 }", "int64_val: %s")
    "node { name: 'v' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { tensor { "
    "dtype: DT_STRING tensor_shape { } string_val: '%s' } } } }\n"
    "node { name: 'fill' op: 'Fill' input: 'dims' input: 'v' attr { key: 'T' value { type: DT_STRING } } "
    "attr { key: 'index_type' value { type: DT_INT64 } } }\n";

/* A functional While whose condition is always true. */
static const char *const k_while =
    "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
    "dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: 'loop' op: 'While' input: 'i0' attr { key: 'T' value { list { type: DT_INT32 } } } "
    "attr { key: 'cond' value { func { name: 'c' } } } attr { key: 'body' value { func { name: 'b' } } } }\n"
    "library {\n"
    " function { signature { name: 'c' input_arg { name: 'i' type: DT_INT32 } output_arg { name: 'r' type: DT_BOOL } }\n"
    "  node_def { name: 't' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' value { "
    "tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }\n"
    "  ret { key: 'r' value: 't:output:0' } }\n"
    " function { signature { name: 'b' input_arg { name: 'i' type: DT_INT32 } output_arg { name: 'o' type: DT_INT32 } }\n"
    "  node_def { name: 'one' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { "
    "tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
    "  node_def { name: 'inc' op: 'AddV2' input: 'i' input: 'one:output:0' attr { key: 'T' value { type: DT_INT32 } } }\n"
    "  ret { key: 'o' value: 'inc:z:0' } }\n"
    "}\n";

/* A TF1 loop (Enter / Merge / Switch / NextIteration / Exit) whose
 * condition is always true. */
#define I32 "attr { key: 'T' value { type: DT_INT32 } } "
static const char *const k_v1_loop =
    "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
    "dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "node { name: 'enter' op: 'Enter' input: 'i0' " I32
    "attr { key: 'frame_name' value { s: 'forever' } } attr { key: 'is_constant' value { b: false } } "
    "attr { key: 'parallel_iterations' value { i: 1 } } }\n"
    "node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' " I32 "attr { key: 'N' value { i: 2 } } }\n"
    "node { name: 'true' op: 'Const' input: '^merge' attr { key: 'dtype' value { type: DT_BOOL } } attr { key: 'value' "
    "value { tensor { dtype: DT_BOOL tensor_shape { } bool_val: true } } } }\n"
    "node { name: 'cond' op: 'LoopCond' input: 'true' }\n"
    "node { name: 'switch' op: 'Switch' input: 'merge' input: 'cond' " I32 "}\n"
    "node { name: 'exit' op: 'Exit' input: 'switch' " I32 "}\n"
    "node { name: 'body' op: 'Identity' input: 'switch:1' " I32 "}\n"
    "node { name: 'next' op: 'NextIteration' input: 'body' " I32 "}\n";

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- helpers ------------------------------------------------------------------------------------------- */
/* Runs fetch on g with the given limits; returns the status and copies the message. */
static gn_status run_with(const gn_graph *g, const char *fetch, uint64_t mem, uint64_t steps, uint64_t ms, char *msg,
                          size_t n)
{
    gn_session_options o;
    gn_session_options_init(&o);
    o.memory_limit_bytes = mem;
    o.step_limit = steps;
    o.time_limit_ms = ms;
    gn_session *s = NULL;
    gn_status st = gn_session_new(g, &o, &s);
    if (st != GN_OK) fail_msg("session: %s", gn_session_errmsg(s));
    gn_tensor out;
    const char *xn[1] = {fetch};
    st = gn_session_run(s, NULL, NULL, 0, xn, &out, 1);
    snprintf(msg, n, "%s", gn_session_errmsg(s));
    if (st == GN_OK) gn_tensor_free(&out);
    gn_session_free(s);
    return st;
}

static void expect_limit(const char *text, const char *fetch, uint64_t mem, uint64_t steps, const char *want)
{
    gn_graph *g = gn_test_load_text(text, 1);
    char msg[1024];
    gn_status st = run_with(g, fetch, mem, steps, 0, msg, sizeof msg);
    assert_int_equal(st, GN_ERR_LIMIT);
    assert_string_equal(msg, want);
    gn_graph_free(g);
}

/* The default pipeline, constant folding included, on g: it must finish
 * without allocating the huge output; the report says what it did or why
 * it did not fold (node: why). */
static void optimize_refuses(gn_graph *g, const char *fetch, const char *node, const char *why)
{
    gn_options o;
    gn_options_init(&o);
    o.checked = 1;
    gn_optimize_params p;
    gn_optimize_params_init(&p);
    const char *xn[1] = {fetch};
    p.fetches = xn;
    p.n_fetches = 1;
    char err[256];
    if (gn_options_parse(&o, "{'min_graph_nodes': -1}", err, sizeof err) != GN_OK) fail_msg("options: %s", err);
    gn_report *r = NULL;
    gn_status st = gn_optimize(g, &o, &p, &r);
    if (st != GN_OK) fail_msg("optimize: %s", gn_graph_errmsg(g));
    char line[1024];
    snprintf(line, sizeof line, "%s: %s", node, why);
    char *text = gn_pt_report_text(r);
    if (!strstr(text, line)) {
        fprintf(stderr, "%s", text);
        fail_msg("report lacks '%s'", line);
    }
    free(text);
    gn_report_free(r);
}

/* ---- memory ---------------------------------------------------------------------------------------- */
static void test_const_claiming_2_40_elements(void **state)
{
    (void)state;
    /* loading, validating and shape inference read the shape, never the data */
    gn_graph *g = gn_test_load_text(k_big_const, 1);
    assert_int_equal(gn_graph_validate(g), GN_OK);
    assert_int_equal(gn_graph_infer_shapes(g), GN_OK);
    int64_t dims[1];
    assert_int_equal(gn_graph_node_output_shape(g, 0, 0, dims, 1), 1);
    assert_int_equal(dims[0], (int64_t)1 << 40);
    char msg[1024];
    assert_int_equal(run_with(g, "big", 4 * GIB, 0, 0, msg, sizeof msg), GN_ERR_LIMIT);
    assert_string_equal(msg, "node 'big' (Const): output 0 of 1099511627776 float32 elements (4.0 TiB) is over the "
                             "memory limit of 4.0 GiB");
    assert_int_equal(run_with(g, "y", 4 * GIB, 0, 0, msg, sizeof msg), GN_ERR_LIMIT);
    assert_string_equal(msg, "node 'big' (Const): output 0 of 1099511627776 float32 elements (4.0 TiB) is over the "
                             "memory limit of 4.0 GiB");
    /* the optimizer decodes constants to look at them: the short form is not expanded */
    optimize_refuses(g, "y", "y",
                     "cannot decode input 0: tensor of 1099511627776 float32 elements (4.0 TiB) given by 0 values: "
                     "expanding it is over the limit of 1.0 GiB");
    gn_graph_free(g);
}

static void test_fill_of_terabytes(void **state)
{
    (void)state;
    expect_limit(k_fill, "fill", 4 * GIB, 0,
                 "node 'fill' (Fill): output 0 of 1099511627776 float32 elements (4.0 TiB) is over the memory limit "
                 "of 4.0 GiB");
    /* constant folding makes it a Const in the short form, as Grappler does, and
     * allocates nothing; the Const then meets the same limit */
    gn_graph *g = gn_test_load_text(k_fill, 1);
    optimize_refuses(g, "fill", "fill", "Fill of a known shape became a compressed Const");
    char msg[1024];
    assert_int_equal(run_with(g, "fill", 4 * GIB, 0, 0, msg, sizeof msg), GN_ERR_LIMIT);
    assert_string_equal(msg, "node 'fill' (Const): output 0 of 1099511627776 float32 elements (4.0 TiB) is over the "
                             "memory limit of 4.0 GiB");
    gn_graph_free(g);
}

static void test_tile_of_terabytes(void **state)
{
    (void)state;
    expect_limit(k_tile, "tile", 4 * GIB, 0,
                 "node 'tile' (Tile): output 0 of 1099511627776 float32 elements (4.0 TiB) is over the memory limit "
                 "of 4.0 GiB");
    gn_graph *g = gn_test_load_text(k_tile, 1);
    optimize_refuses(g, "tile", "tile", "output 0 would be 4398046511104 bytes, larger than its inputs and over 10485760");
    gn_graph_free(g);
}

static void test_range_of_terabytes(void **state)
{
    (void)state;
    expect_limit(k_range, "range", 4 * GIB, 0,
                 "node 'range' (Range): output 0 of 1099511627776 int64 elements (8.0 TiB) is over the memory limit "
                 "of 4.0 GiB");
    gn_graph *g = gn_test_load_text(k_range, 1);
    optimize_refuses(g, "range", "range", "output 0 would be 8796093022208 bytes, larger than its inputs and over 10485760");
    gn_graph_free(g);
    /* the kernel under constant folding's cap: its inputs' bytes and 10 MiB */
    g = gn_test_load_text(k_range_f, 1);
    optimize_refuses(g, "range", "range",
                     "its size would be too large: node 'range' (Range): output 0 of 999999995904 float32 elements "
                     "(3.6 TiB) is over the memory limit of 10485772 bytes");
    char msg[1024];
    assert_int_equal(run_with(g, "range", 4 * GIB, 0, 0, msg, sizeof msg), GN_ERR_LIMIT);
    assert_string_equal(msg, "node 'range' (Range): output 0 of 999999995904 float32 elements (3.6 TiB) is over the "
                             "memory limit of 4.0 GiB");
    gn_graph_free(g);
}

static void test_strings_of_huge_size(void **state)
{
    (void)state;
    /* 2^30 elements of 16 bytes each (the strings share the one value's bytes) */
    expect_limit(k_strings, "id", 4 * GIB, 0,
                 "node 's' (Const): output 0 of 1073741824 string elements (16.0 GiB) is over the memory limit of "
                 "4.0 GiB");
    /* a string Fill of 2^20 copies of 1 KiB: the element array (16 MiB) is
     * under the limit, the strings' bytes are not */
    char *val = malloc(1025);
    memset(val, 'x', 1024);
    val[1024] = 0;
    size_t n = strlen(k_string_fill) + 1100;
    char *text = malloc(n);
    snprintf(text, n, k_string_fill, "1048576", val);
    expect_limit(text, "fill", 64 << 20, 0,
                 "node 'fill' (Fill): output 0 of 1048576 string elements (1.0 GiB) is over the memory limit of "
                 "64.0 MiB");
    /* 2^30 copies: the element array alone is refused, before the kernel builds it */
    snprintf(text, n, k_string_fill, "1073741824", "abc");
    expect_limit(text, "fill", 4 * GIB, 0,
                 "node 'fill' (Fill): output 0 of 1073741824 string elements (16.0 GiB) is over the memory limit of "
                 "4.0 GiB");
    free(text);
    free(val);
    /* a string whose declared length runs past the data */
    gn_graph *g = NULL;
    static const char bad[] =
        "node { name: 's' op: 'Const' attr { key: 'dtype' value { type: DT_STRING } } attr { key: 'value' value { "
        "tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } tensor_content: '\\377\\377\\377\\377\\017abc' } } } }\n";
    assert_int_equal(gn_graph_load_buffer(bad, strlen(bad), "hostile.pbtxt", NULL, &g), GN_OK);
    char msg[1024];
    assert_int_equal(run_with(g, "s", 4 * GIB, 0, 0, msg, sizeof msg), GN_ERR_GRAPH);
    assert_string_equal(msg, "node 's' (Const): attr 'value': string tensor_content is malformed: the lengths add up to "
                             "4294967295 bytes, 3 follow them");
    gn_graph_free(g);
}

/* The limit is on one tensor: below it the same graph runs. */
static void test_memory_limit_below_and_none(void **state)
{
    (void)state;
    static const char small[] = CONST_I64("dims", "dim { size: 1 }", "int64_val: 1024") CONST_F("v", "", "float_val: 2")
        "node { name: 'fill' op: 'Fill' input: 'dims' input: 'v' " T_F
        "attr { key: 'index_type' value { type: DT_INT64 } } }\n";
    gn_graph *g = gn_test_load_text(small, 1);
    char msg[1024];
    assert_int_equal(run_with(g, "fill", 4096, 0, 0, msg, sizeof msg), GN_OK);
    assert_int_equal(run_with(g, "fill", 4095, 0, 0, msg, sizeof msg), GN_ERR_LIMIT);
    assert_string_equal(msg, "node 'fill' (Fill): output 0 of 1024 float32 elements (4.0 KiB) is over the memory "
                             "limit of 4095 bytes");
    assert_int_equal(run_with(g, "fill", UINT64_MAX, 0, 0, msg, sizeof msg), GN_OK);
    gn_graph_free(g);
}

/* ---- steps and time ---------------------------------------------------------------------------------- */
static void test_while_that_never_ends(void **state)
{
    (void)state;
    /* 1000 node executions: the While node, then per iteration the cond
     * call (arg, Const, retval) and the body call (arg, Const, AddV2, retval) */
    expect_limit(k_while, "loop", 0, 1000,
                 "node 'loop' (While): function 'b': node 'one' (Const): the run reached the session's step limit "
                 "of 1000 node executions");
}

static void test_v1_loop_that_never_ends(void **state)
{
    (void)state;
    expect_limit(k_v1_loop, "exit", 0, 1000,
                 "node 'exit' (Exit): the run reached the session's step limit of 1000 node executions");
}

static void test_time_limit(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(k_while, 1);
    char msg[1024];
    uint64_t t0 = now_ms();
    assert_int_equal(run_with(g, "loop", 0, UINT64_MAX, 50, msg, sizeof msg), GN_ERR_LIMIT);
    uint64_t took = now_ms() - t0;
    /* which node the clock stops depends on the machine's speed */
    const char *tail = "the run went past the session's time limit of 50 ms";
    assert_true(strncmp(msg, "node 'loop' (While): function '", 31) == 0);
    assert_true(strlen(msg) > strlen(tail) && strcmp(msg + strlen(msg) - strlen(tail), tail) == 0);
    assert_true(took >= 50 && took < 2000);
    gn_graph_free(g);
}

/* The defaults: the options struct says 0 (the library's defaults), and an
 * older caller's shorter struct gets them too. */
static void test_defaults(void **state)
{
    (void)state;
    gn_session_options o;
    gn_session_options_init(&o);
    assert_int_equal(o.memory_limit_bytes, 0);
    assert_int_equal(o.step_limit, 0);
    assert_int_equal(o.time_limit_ms, 0);
    assert_true(GN_SESSION_DEFAULT_STEP_LIMIT == (uint64_t)1 << 28);
    /* the default step limit ends the loop: checked with an old caller's struct
     * (up to cuda_graph) on a small loop that finishes well within it */
    static const char counted[] =
        "node { name: 'i0' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' value { tensor { "
        "dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
        "node { name: 'enter' op: 'Enter' input: 'i0' " I32
        "attr { key: 'frame_name' value { s: 'f' } } attr { key: 'is_constant' value { b: false } } "
        "attr { key: 'parallel_iterations' value { i: 1 } } }\n"
        "node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' " I32 "attr { key: 'N' value { i: 2 } } }\n"
        "node { name: 'n' op: 'Const' input: '^merge' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: 'value' "
        "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 100 } } } }\n"
        "node { name: 'less' op: 'Less' input: 'merge' input: 'n' " I32 "}\n"
        "node { name: 'cond' op: 'LoopCond' input: 'less' }\n"
        "node { name: 'switch' op: 'Switch' input: 'merge' input: 'cond' " I32 "}\n"
        "node { name: 'exit' op: 'Exit' input: 'switch' " I32 "}\n"
        "node { name: 'x' op: 'Identity' input: 'switch:1' " I32 "}\n"
        "node { name: 'one' op: 'Const' input: '^x' attr { key: 'dtype' value { type: DT_INT32 } } attr { key: "
        "'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n"
        "node { name: 'body' op: 'AddV2' input: 'x' input: 'one' " I32 "}\n"
        "node { name: 'next' op: 'NextIteration' input: 'body' " I32 "}\n";
    gn_graph *g = gn_test_load_text(counted, 1);
    o.struct_size = (uint32_t)(offsetof(gn_session_options, cuda_graph) + sizeof o.cuda_graph);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(g, &o, &s), GN_OK);
    gn_tensor out;
    const char *xn[1] = {"exit"};
    assert_int_equal(gn_session_run(s, NULL, NULL, 0, xn, &out, 1), GN_OK);
    assert_int_equal(*(const int32_t *)out.data, 100);
    gn_tensor_free(&out);
    gn_session_free(s);
    /* 100 iterations of 9 nodes and the rest: a step limit of 900 is too few */
    char msg[1024];
    assert_int_equal(run_with(g, "exit", 0, 900, 0, msg, sizeof msg), GN_ERR_LIMIT);
    assert_int_equal(run_with(g, "exit", 0, 2000, 0, msg, sizeof msg), GN_OK);
    gn_graph_free(g);
}

/* ---- the command line ------------------------------------------------------------------------------------ */
static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_cli(int want_rc, const char *want, const char *fmt, const char *path)
{
    char args[1024], *out = NULL;
    snprintf(args, sizeof args, fmt, path);
    int rc = gn_test_sh(&out, "'%s' %s 2>&1", GN_CLI_PATH, args);
    if (rc != want_rc || strcmp(out, want) != 0)
        fail_msg("grapnel %s: rc %d, want %d\n--- got\n%s--- want\n%s", args, rc, want_rc, out, want);
    free(out);
}

static void test_cli_flags(void **state)
{
    (void)state;
    char fill[1024], loop[1024];
    snprintf(fill, sizeof fill, "%s/bounds_fill.pbtxt", gn_test_tmpdir());
    snprintf(loop, sizeof loop, "%s/bounds_while.pbtxt", gn_test_tmpdir());
    write_file(fill, k_fill);
    write_file(loop, k_while);
    expect_cli(1,
               "grapnel run: node 'fill' (Fill): output 0 of 1099511627776 float32 elements (4.0 TiB) is over the "
               "memory limit of 1.0 GiB\n",
               "run '%s' --fetch fill --memory-limit 1G", fill);
    expect_cli(1,
               "grapnel run: node 'loop' (While): function 'c': the run reached the session's step limit of 100 node "
               "executions\n",
               "run '%s' --fetch loop --step-limit 100", loop);
    expect_cli(2, "grapnel run: --memory-limit '4Q': expected a size such as 4G, 512M or 1048576, or none\n"
                  "(see grapnel run --help)\n",
               "run '%s' --memory-limit 4Q", fill);
    expect_cli(2, "grapnel run: --step-limit '1.5': expected a positive integer, or none\n(see grapnel run --help)\n",
               "run '%s' --step-limit 1.5", fill);
    expect_cli(2, "grapnel run: --time-limit '0': expected a duration such as 30s, 500ms or 2m, or none\n"
                  "(see grapnel run --help)\n",
               "run '%s' --time-limit 0", fill);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_const_claiming_2_40_elements),
        cmocka_unit_test(test_fill_of_terabytes),
        cmocka_unit_test(test_tile_of_terabytes),
        cmocka_unit_test(test_range_of_terabytes),
        cmocka_unit_test(test_strings_of_huge_size),
        cmocka_unit_test(test_memory_limit_below_and_none),
        cmocka_unit_test(test_while_that_never_ends),
        cmocka_unit_test(test_v1_loop_that_never_ends),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_cli_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
