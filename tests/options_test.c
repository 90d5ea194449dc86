/* Tests for src/optimizer/options.c: gn_options' defaults (TensorFlow's), the
 * dictionary and key=value parsers, the messages of their errors, printing,
 * set/get by name, and reading a RewriterConfig (binary and text). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "grapnel/options.h"
#include "optimizer/options_internal.h"
#include "tensorflow/core/protobuf/rewriter_config.pb-c.h"

/* ---- what the test knows independently of options.def -------------------------------- */
enum { T_TOGGLE, T_BOOL, T_INT, T_ITERS, T_LAYOUT };

typedef struct key_info {
    const char *name;
    int kind;
    size_t offset, width;
    int64_t tf_default; /* RewriterConfig's proto default (docs/reference_grappler.md §1.3) */
} key_info;

#define KEY(name, kind) {#name, T_##kind, offsetof(gn_options, name), sizeof(((gn_options *)0)->name), 0}
static const key_info k_keys[] = {
    KEY(layout_optimizer, TOGGLE),
    KEY(constant_folding, TOGGLE),
    KEY(shape_optimization, TOGGLE),
    KEY(remapping, TOGGLE),
    KEY(arithmetic_optimization, TOGGLE),
    KEY(dependency_optimization, TOGGLE),
    KEY(loop_optimization, TOGGLE),
    KEY(function_optimization, TOGGLE),
    KEY(debug_stripper, TOGGLE),
    KEY(disable_model_pruning, BOOL),
    KEY(scoped_allocator_optimization, TOGGLE),
    KEY(pin_to_host_optimization, TOGGLE),
    KEY(implementation_selector, TOGGLE),
    KEY(auto_mixed_precision, TOGGLE),
    KEY(disable_meta_optimizer, BOOL),
    KEY(min_graph_nodes, INT),
    KEY(auto_parallel, BOOL),
    KEY(use_plugin_optimizers, TOGGLE),
    KEY(auto_mixed_precision_mkl, TOGGLE),
    KEY(auto_mixed_precision_onednn_bfloat16, TOGGLE),
    KEY(auto_mixed_precision_cpu, TOGGLE),
    KEY(common_subgraph_elimination, TOGGLE),
    KEY(meta_optimizer_iterations, ITERS),
    KEY(fail_on_optimizer_errors, BOOL),
    KEY(meta_optimizer_timeout_ms, INT),
    KEY(cpu_layout_conversion, LAYOUT),
    KEY(checked, BOOL),
};
#undef KEY
#define N_KEYS (sizeof k_keys / sizeof k_keys[0])

/* grapnel's own dotted keys, after TensorFlow's; their values are checked by
 * test_own_keys (the generic loops below cover the keys above only). */
static const char *const k_own_keys[] = {
    "layout.policy", "remap.policy", "function.lower_control_flow",
    "amp.allowlist_add", "amp.allowlist_remove", "amp.inferlist_add", "amp.inferlist_remove",
    "amp.clearlist_add", "amp.clearlist_remove", "amp.denylist_add", "amp.denylist_remove",
    "amp.keep_float32", "auto_parallel.num_replicas", "scoped_allocator_opts.enable_op",
};
#define N_OWN (sizeof k_own_keys / sizeof k_own_keys[0])

/* Rows of options.def, counted and checked against the tables above. */
#define GN_OPT(key, kind, def, help) +1
#define GN_OPTK(member, key, kind, def, help) +1
enum { DEF_ROWS = 0
#include "optimizer/options.def"
};
#undef GN_OPTK
#undef GN_OPT

static int64_t field(const gn_options *o, const key_info *k)
{
    const char *p = (const char *)o + k->offset;
    if (k->width == 8) {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void set_field(gn_options *o, const key_info *k, int64_t v)
{
    char *p = (char *)o + k->offset;
    if (k->width == 8) {
        memcpy(p, &v, 8);
    } else {
        int32_t w = (int32_t)v;
        memcpy(p, &w, 4);
    }
}

static const key_info *key_named(const char *name)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(k_keys[i].name, name) == 0) return &k_keys[i];
    fail_msg("no key %s", name);
    return NULL;
}

static bool opts_equal(const gn_options *a, const gn_options *b)
{
    if (a->struct_size != b->struct_size || a->disabled_patterns != b->disabled_patterns) return false;
    for (size_t i = 0; i < N_KEYS; i++)
        if (field(a, &k_keys[i]) != field(b, &k_keys[i])) return false;
    return true;
}

/* Parses text into fresh defaults; asserts success. */
static gn_options parsed(const char *text)
{
    gn_options o;
    gn_options_init(&o);
    char err[1024] = "x";
    gn_status s = gn_options_parse(&o, text, err, sizeof err);
    if (s != GN_OK) fail_msg("parse(%s): %s", text, err);
    assert_string_equal(err, "");
    return o;
}

/* Parse must fail with exactly msg and leave the struct as it was. */
static void expect_parse_error(const char *text, const char *msg)
{
    gn_options o, before;
    gn_options_init(&o);
    o.constant_folding = GN_TOGGLE_AGGRESSIVE;
    o.min_graph_nodes = 17;
    memcpy(&before, &o, sizeof o);
    char err[1024];
    gn_status s = gn_options_parse(&o, text, err, sizeof err);
    if (s != GN_ERR_ARG) fail_msg("parse(%s) returned %d", text, (int)s);
    if (strcmp(err, msg) != 0) fail_msg("parse(%s):\n got  %s\n want %s", text, err, msg);
    assert_memory_equal(&o, &before, sizeof o);
}

#define ALL_KEYS                                                                                                 \
    "layout_optimizer, constant_folding, shape_optimization, remapping, arithmetic_optimization, "                \
    "dependency_optimization, loop_optimization, function_optimization, debug_stripper, disable_model_pruning, "   \
    "scoped_allocator_optimization, pin_to_host_optimization, implementation_selector, auto_mixed_precision, "    \
    "disable_meta_optimizer, min_graph_nodes, auto_parallel, use_plugin_optimizers, auto_mixed_precision_mkl, "   \
    "auto_mixed_precision_onednn_bfloat16, auto_mixed_precision_cpu, common_subgraph_elimination, "               \
    "meta_optimizer_iterations, fail_on_optimizer_errors, meta_optimizer_timeout_ms, cpu_layout_conversion, "     \
    "checked, layout.policy, remap.policy, function.lower_control_flow, amp.allowlist_add, "                    \
    "amp.allowlist_remove, amp.inferlist_add, amp.inferlist_remove, amp.clearlist_add, amp.clearlist_remove, "   \
    "amp.denylist_add, amp.denylist_remove, amp.keep_float32, auto_parallel.num_replicas, "                                  \
    "scoped_allocator_opts.enable_op"

#define TOGGLE_VALUES                                                                                 \
    "True, False, None, 'ON', 'OFF', 'AGGRESSIVE', 'DEFAULT', 'EXPERIMENTAL_MLIR', 'EXPERIMENTAL_BOTH' " \
    "or an integer 0..5"

/* ---- table ------------------------------------------------------------------------------ */
static void test_keys(void **state)
{
    (void)state;
    assert_int_equal(gn_options_key_count(), DEF_ROWS);
    assert_int_equal(gn_options_key_count(), N_KEYS + N_OWN);
    for (size_t i = 0; i < N_KEYS + N_OWN; i++) {
        assert_string_equal(gn_options_key(i), i < N_KEYS ? k_keys[i].name : k_own_keys[i - N_KEYS]);
        const char *h = gn_options_key_help(i);
        assert_non_null(h);
        assert_true(strlen(h) > 0);
    }
    assert_null(gn_options_key(N_KEYS + N_OWN));
    assert_null(gn_options_key_help(N_KEYS + N_OWN));
    /* options.def's kinds agree with the test's */
#define GN_OPT(key, k_, def, help) assert_int_equal(key_named(#key)->kind, T_##k_);
#define GN_OPTK(member, key, k_, def, help)
#include "optimizer/options.def"
#undef GN_OPTK
#undef GN_OPT
}

static void test_defaults(void **state)
{
    (void)state;
    gn_options o;
    memset(&o, 0xAB, sizeof o);
    gn_options_init(&o);
    assert_int_equal(o.struct_size, sizeof(gn_options));
    assert_null(o.disabled_patterns);
    for (size_t i = 0; i < N_KEYS; i++) assert_int_equal(field(&o, &k_keys[i]), k_keys[i].tf_default);
    /* spelled out: TensorFlow's defaults are all the proto's zero values */
    assert_int_equal(o.layout_optimizer, GN_TOGGLE_DEFAULT);
    assert_int_equal(o.constant_folding, GN_TOGGLE_DEFAULT);
    assert_int_equal(o.debug_stripper, GN_TOGGLE_DEFAULT);
    assert_int_equal(o.disable_model_pruning, 0);
    assert_int_equal(o.disable_meta_optimizer, 0);
    assert_int_equal(o.min_graph_nodes, 0);
    assert_int_equal(o.auto_parallel, 0);
    assert_int_equal(o.meta_optimizer_iterations, GN_ITERS_DEFAULT);
    assert_int_equal(o.fail_on_optimizer_errors, 0);
    assert_int_equal(o.meta_optimizer_timeout_ms, 0);
    assert_int_equal(o.cpu_layout_conversion, GN_CPU_LAYOUT_NO_CONVERSION);
    assert_int_equal(o.checked, 0);
    /* and as get prints them */
    char buf[64];
    for (size_t i = 0; i < N_KEYS; i++) {
        assert_int_equal(gn_options_get(&o, k_keys[i].name, buf, sizeof buf), GN_OK);
        const char *want = "";
        switch (k_keys[i].kind) {
        case T_TOGGLE: want = "'DEFAULT'"; break;
        case T_BOOL: want = "False"; break;
        case T_INT: want = "0"; break;
        case T_ITERS: want = "'DEFAULT_NUM_ITERS'"; break;
        case T_LAYOUT: want = "'NO_CONVERSION_ON_CPU'"; break;
        }
        assert_string_equal(buf, want);
    }
}

static void test_toggle_names(void **state)
{
    (void)state;
    assert_string_equal(gn__toggle_name(GN_TOGGLE_DEFAULT), "DEFAULT");
    assert_string_equal(gn__toggle_name(GN_TOGGLE_ON), "ON");
    assert_string_equal(gn__toggle_name(GN_TOGGLE_OFF), "OFF");
    assert_string_equal(gn__toggle_name(GN_TOGGLE_AGGRESSIVE), "AGGRESSIVE");
    assert_string_equal(gn__toggle_name(GN_TOGGLE_EXPERIMENTAL_MLIR), "EXPERIMENTAL_MLIR");
    assert_string_equal(gn__toggle_name(GN_TOGGLE_EXPERIMENTAL_BOTH), "EXPERIMENTAL_BOTH");
    assert_string_equal(gn__toggle_name(6), "UNKNOWN");
    assert_string_equal(gn__toggle_name(-1), "UNKNOWN");
}

/* ---- parsing ------------------------------------------------------------------------------- */
static void test_parse_examples(void **state)
{
    (void)state;
    gn_options o = parsed("{'constant_folding': True, 'min_graph_nodes': -1}");
    assert_int_equal(o.constant_folding, GN_TOGGLE_ON);
    assert_int_equal(o.min_graph_nodes, -1);
    gn_options want;
    gn_options_init(&want);
    want.constant_folding = GN_TOGGLE_ON;
    want.min_graph_nodes = -1;
    assert_true(opts_equal(&o, &want));

    /* double quotes, newlines, trailing comma, comments, False -> OFF, bools copied */
    o = parsed("  {\n  \"constant_folding\" : False ,\n 'disable_model_pruning':True, # keep\n"
               "  'min_graph_nodes': +12,\n}\n");
    assert_int_equal(o.constant_folding, GN_TOGGLE_OFF);
    assert_int_equal(o.disable_model_pruning, 1);
    assert_int_equal(o.min_graph_nodes, 12);

    o = parsed("{}");
    gn_options_init(&want);
    assert_true(opts_equal(&o, &want));
    o = parsed("");
    assert_true(opts_equal(&o, &want));
    o = parsed("  \n ");
    assert_true(opts_equal(&o, &want));

    /* key=value */
    o = parsed("constant_folding=on,min_graph_nodes=-1,debug_stripper=true,remapping=aggressive,"
               "layout_optimizer=off,loop_optimization=false,auto_parallel=on,arithmetic_optimization=default,");
    assert_int_equal(o.constant_folding, GN_TOGGLE_ON);
    assert_int_equal(o.min_graph_nodes, -1);
    assert_int_equal(o.debug_stripper, GN_TOGGLE_ON);
    assert_int_equal(o.remapping, GN_TOGGLE_AGGRESSIVE);
    assert_int_equal(o.layout_optimizer, GN_TOGGLE_OFF);
    assert_int_equal(o.loop_optimization, GN_TOGGLE_OFF);
    assert_int_equal(o.auto_parallel, 1);
    assert_int_equal(o.arithmetic_optimization, GN_TOGGLE_DEFAULT);
    o = parsed(" constant_folding = 2 , meta_optimizer_iterations = ONE ");
    assert_int_equal(o.constant_folding, GN_TOGGLE_OFF);
    assert_int_equal(o.meta_optimizer_iterations, GN_ITERS_ONE);

    /* keys not named keep their value; None sets the default back; last wins */
    gn_options_init(&o);
    o.remapping = GN_TOGGLE_OFF;
    o.constant_folding = GN_TOGGLE_ON;
    o.min_graph_nodes = 9;
    assert_int_equal(gn_options_parse(&o, "{'constant_folding': None, 'min_graph_nodes': None, "
                                          "'loop_optimization': True, 'loop_optimization': 'OFF'}",
                                      NULL, 0),
                     GN_OK);
    assert_int_equal(o.remapping, GN_TOGGLE_OFF);
    assert_int_equal(o.constant_folding, GN_TOGGLE_DEFAULT);
    assert_int_equal(o.min_graph_nodes, 0);
    assert_int_equal(o.loop_optimization, GN_TOGGLE_OFF);

    /* 64-bit ints and the int32 limits of the others */
    o = parsed("{'meta_optimizer_timeout_ms': 9223372036854775807, 'min_graph_nodes': -9223372036854775808}");
    assert_true(o.meta_optimizer_timeout_ms == INT64_MAX);
    assert_true(o.min_graph_nodes == INT64_MIN);
}

typedef struct spelling {
    const char *text;
    int64_t value;
} spelling;

static const spelling k_toggle_sp[] = {
    {"True", GN_TOGGLE_ON}, {"False", GN_TOGGLE_OFF}, {"true", GN_TOGGLE_ON}, {"FALSE", GN_TOGGLE_OFF},
    {"'ON'", GN_TOGGLE_ON}, {"'on'", GN_TOGGLE_ON}, {"\"On\"", GN_TOGGLE_ON}, {"on", GN_TOGGLE_ON},
    {"'OFF'", GN_TOGGLE_OFF}, {"off", GN_TOGGLE_OFF}, {"'AGGRESSIVE'", GN_TOGGLE_AGGRESSIVE},
    {"aggressive", GN_TOGGLE_AGGRESSIVE}, {"'DEFAULT'", GN_TOGGLE_DEFAULT}, {"default", GN_TOGGLE_DEFAULT},
    {"'EXPERIMENTAL_MLIR'", GN_TOGGLE_EXPERIMENTAL_MLIR}, {"'experimental_mlir'", GN_TOGGLE_EXPERIMENTAL_MLIR},
    {"'EXPERIMENTAL_BOTH'", GN_TOGGLE_EXPERIMENTAL_BOTH}, {"Experimental_Both", GN_TOGGLE_EXPERIMENTAL_BOTH},
    {"0", 0}, {"1", 1}, {"2", 2}, {"3", 3}, {"4", 4}, {"5", 5}, {"None", GN_TOGGLE_DEFAULT},
};
static const spelling k_bool_sp[] = {
    {"True", 1}, {"False", 0}, {"true", 1}, {"false", 0}, {"'ON'", 1}, {"off", 0}, {"1", 1}, {"0", 0}, {"None", 0},
};
static const spelling k_int_sp[] = {
    {"0", 0}, {"-1", -1}, {"+7", 7}, {"4096", 4096}, {"'12'", 12}, {"-2147483648", INT32_MIN}, {"None", 0},
};
static const spelling k_iters_sp[] = {
    {"'DEFAULT_NUM_ITERS'", 0}, {"'ONE'", 1}, {"'TWO'", 2}, {"one", 1}, {"\"two\"", 2},
    {"0", 0}, {"1", 1}, {"2", 2}, {"None", 0},
};
static const spelling k_layout_sp[] = {
    {"'NO_CONVERSION_ON_CPU'", 0}, {"'NCHW_TO_NHWC'", 1}, {"'NHWC_TO_NCHW'", 2}, {"nchw_to_nhwc", 1},
    {"0", 0}, {"1", 1}, {"2", 2}, {"None", 0},
};

static const spelling *spellings(int kind, size_t *n)
{
#define RET(a) do { *n = sizeof a / sizeof a[0]; return a; } while (0)
    switch (kind) {
    case T_TOGGLE: RET(k_toggle_sp);
    case T_BOOL: RET(k_bool_sp);
    case T_INT: RET(k_int_sp);
    case T_ITERS: RET(k_iters_sp);
    default: RET(k_layout_sp);
    }
#undef RET
}

/* Every key with every accepted spelling, in the three ways of setting it. */
static void test_parse_every_key(void **state)
{
    (void)state;
    char text[256], err[1024], buf[64];
    for (size_t i = 0; i < N_KEYS; i++) {
        const key_info *k = &k_keys[i];
        size_t ns;
        const spelling *sp = spellings(k->kind, &ns);
        for (size_t j = 0; j < ns; j++) {
            for (int form = 0; form < 3; form++) {
                gn_options o, want;
                gn_options_init(&o);
                set_field(&o, k, k->kind == T_INT ? 99 : 1); /* so None visibly resets */
                memcpy(&want, &o, sizeof o);
                set_field(&want, k, sp[j].value);
                gn_status s;
                if (form == 0) {
                    snprintf(text, sizeof text, "{'%s': %s}", k->name, sp[j].text);
                    s = gn_options_parse(&o, text, err, sizeof err);
                } else if (form == 1) {
                    snprintf(text, sizeof text, "%s=%s", k->name, sp[j].text);
                    s = gn_options_parse(&o, text, err, sizeof err);
                } else {
                    snprintf(text, sizeof text, "%s <- %s", k->name, sp[j].text);
                    s = gn_options_set(&o, k->name, sp[j].text, err, sizeof err);
                }
                if (s != GN_OK) fail_msg("%s: %s", text, err);
                if (!opts_equal(&o, &want))
                    fail_msg("%s: got %lld want %lld", text, (long long)field(&o, k), (long long)sp[j].value);
                /* get prints it back in a spelling that parses to the same value */
                assert_int_equal(gn_options_get(&o, k->name, buf, sizeof buf), GN_OK);
                gn_options back;
                gn_options_init(&back);
                set_field(&back, k, k->kind == T_INT ? 99 : 1);
                assert_int_equal(gn_options_set(&back, k->name, buf, NULL, 0), GN_OK);
                assert_true(opts_equal(&back, &want));
            }
        }
    }
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_parse_error("{'constant_foldin': True}",
                       "unknown option 'constant_foldin'; did you mean 'constant_folding'? "
                       "(valid keys: " ALL_KEYS ")");
    expect_parse_error("costant_folding=on",
                       "unknown option 'costant_folding'; did you mean 'constant_folding'? "
                       "(valid keys: " ALL_KEYS ")");
    expect_parse_error("{'Min_Graph_Nodes': 3}",
                       "unknown option 'Min_Graph_Nodes'; did you mean 'min_graph_nodes'? "
                       "(valid keys: " ALL_KEYS ")");
    expect_parse_error("constant-folding=on",
                       "unknown option 'constant-folding'; did you mean 'constant_folding'? "
                       "(valid keys: " ALL_KEYS ")");
    expect_parse_error("{'layuot_optimizer': 1}",
                       "unknown option 'layuot_optimizer'; did you mean 'layout_optimizer'? "
                       "(valid keys: " ALL_KEYS ")");
    expect_parse_error("{'debug': 1}",
                       "unknown option 'debug'; did you mean 'debug_stripper'? (valid keys: " ALL_KEYS ")");
    expect_parse_error("{'xyzzy': 1}", "unknown option 'xyzzy' (valid keys: " ALL_KEYS ")");
    expect_parse_error("{'': 1}", "unknown option '' (valid keys: " ALL_KEYS ")");

    expect_parse_error("{'min_graph_nodes': 'abc'}", "option 'min_graph_nodes': 'abc' is not an integer");
    expect_parse_error("min_graph_nodes=1.5", "option 'min_graph_nodes': '1.5' is not an integer");
    expect_parse_error("min_graph_nodes=True", "option 'min_graph_nodes': 'True' is not an integer");
    expect_parse_error("min_graph_nodes=99999999999999999999",
                       "option 'min_graph_nodes': '99999999999999999999' is out of range "
                       "[-9223372036854775808, 9223372036854775807]");
    expect_parse_error("{'constant_folding': 'maybe'}",
                       "option 'constant_folding': 'maybe' is not one of " TOGGLE_VALUES);
    expect_parse_error("{'constant_folding': 6}", "option 'constant_folding': '6' is not one of " TOGGLE_VALUES);
    expect_parse_error("{'constant_folding': -1}", "option 'constant_folding': '-1' is not one of " TOGGLE_VALUES);
    expect_parse_error("{'disable_model_pruning': 2}",
                       "option 'disable_model_pruning': '2' is not one of True, False, None, 'ON', 'OFF', 0 or 1");
    expect_parse_error("{'disable_model_pruning': 'AGGRESSIVE'}",
                       "option 'disable_model_pruning': 'AGGRESSIVE' is not one of True, False, None, 'ON', 'OFF', "
                       "0 or 1");
    expect_parse_error("meta_optimizer_iterations=3",
                       "option 'meta_optimizer_iterations': '3' is not one of None, 'DEFAULT_NUM_ITERS', 'ONE', "
                       "'TWO' or an integer 0..2");
    expect_parse_error("meta_optimizer_iterations=True",
                       "option 'meta_optimizer_iterations': 'True' is not one of None, 'DEFAULT_NUM_ITERS', 'ONE', "
                       "'TWO' or an integer 0..2");
    expect_parse_error("cpu_layout_conversion=NHWC",
                       "option 'cpu_layout_conversion': 'NHWC' is not one of None, 'NO_CONVERSION_ON_CPU', "
                       "'NCHW_TO_NHWC', 'NHWC_TO_NCHW' or an integer 0..2");
    /* the value in a message is cut at 64 bytes */
    expect_parse_error("min_graph_nodes=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                       "option 'min_graph_nodes': "
                       "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not an integer");

    /* syntax: the offset of the offending byte (0-based) */
    expect_parse_error("{'constant_folding' True}", "at offset 20: expected ':'");
    expect_parse_error("{'constant_folding': True 'remapping': False}", "at offset 26: expected ',' or '}'");
    expect_parse_error("{'constant_folding': True", "at offset 25: expected ',' or '}'");
    expect_parse_error("{'constant_folding: True}", "at offset 1: unterminated string");
    expect_parse_error("{'constant_folding': }", "at offset 21: expected a value");
    expect_parse_error("{'constant_folding': True,, }", "at offset 26: expected a key or '}'");
    expect_parse_error("{'constant_folding': True} x", "at offset 27: unexpected text after '}'");
    expect_parse_error("{'constant_folding'", "at offset 19: expected ':'");
    expect_parse_error("constant_folding on", "at offset 17: expected '='");
    expect_parse_error("constant_folding=", "at offset 17: expected a value");
    expect_parse_error("constant_folding=on remapping=off", "at offset 20: expected ','");
    expect_parse_error("constant_folding=on,,", "at offset 20: expected a key");
    expect_parse_error("=on", "at offset 0: expected a key");

    /* the first error wins; nothing before it is applied */
    expect_parse_error("{'remapping': False, 'constant_folding': 'maybe', 'min_graph_nodes': 1}",
                       "option 'constant_folding': 'maybe' is not one of " TOGGLE_VALUES);

    /* NULL arguments; err may be NULL; a small err buffer is truncated */
    gn_options o;
    gn_options_init(&o);
    char err[16];
    assert_int_equal(gn_options_parse(&o, NULL, err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "options text is");
    assert_int_equal(gn_options_parse(NULL, "{}", NULL, 0), GN_ERR_ARG);
    assert_int_equal(gn_options_parse(&o, "{'x': 1}", NULL, 0), GN_ERR_ARG);
    gn_options z;
    memset(&z, 0, sizeof z);
    char big[256];
    assert_int_equal(gn_options_parse(&z, "{}", big, sizeof big), GN_ERR_ARG);
    assert_string_equal(big, "gn_options not initialised (struct_size 0): call gn_options_init first");
}

/* ---- set / get -------------------------------------------------------------------------------- */
static void test_set_get(void **state)
{
    (void)state;
    gn_options o;
    gn_options_init(&o);
    char err[1024], buf[64];
    assert_int_equal(gn_options_set(&o, "constant_folding", "AGGRESSIVE", err, sizeof err), GN_OK);
    assert_string_equal(err, "");
    assert_int_equal(o.constant_folding, GN_TOGGLE_AGGRESSIVE);
    assert_int_equal(gn_options_get(&o, "constant_folding", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'AGGRESSIVE'");
    assert_int_equal(gn_options_set(&o, "constant_folding", " True ", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "constant_folding", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "True");
    assert_int_equal(gn_options_set(&o, "constant_folding", "'off'", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "constant_folding", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "False");
    assert_int_equal(gn_options_set(&o, "constant_folding", "4", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "constant_folding", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'EXPERIMENTAL_MLIR'");
    assert_int_equal(gn_options_set(&o, "min_graph_nodes", "-1", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "min_graph_nodes", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "-1");
    assert_int_equal(gn_options_set(&o, "disable_meta_optimizer", "True", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "disable_meta_optimizer", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "True");
    assert_int_equal(gn_options_set(&o, "meta_optimizer_iterations", "TWO", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "meta_optimizer_iterations", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'TWO'");
    assert_int_equal(gn_options_set(&o, "cpu_layout_conversion", "NCHW_TO_NHWC", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "cpu_layout_conversion", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'NCHW_TO_NHWC'");
    assert_int_equal(gn_options_set(&o, "meta_optimizer_timeout_ms", "-9223372036854775808", NULL, 0), GN_OK);
    assert_int_equal(gn_options_get(&o, "meta_optimizer_timeout_ms", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "-9223372036854775808");
    /* a value out of range stored directly is printed as its number */
    o.remapping = 9;
    assert_int_equal(gn_options_get(&o, "remapping", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "9");

    /* errors leave o alone */
    gn_options before;
    memcpy(&before, &o, sizeof o);
    assert_int_equal(gn_options_set(&o, "constant_foldng", "True", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "unknown option 'constant_foldng'; did you mean 'constant_folding'? (valid keys: " ALL_KEYS
                             ")");
    assert_int_equal(gn_options_set(&o, "min_graph_nodes", "abc", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'min_graph_nodes': 'abc' is not an integer");
    assert_int_equal(gn_options_set(&o, "constant_folding", "'ON", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'constant_folding': at offset 0: unterminated string");
    assert_int_equal(gn_options_set(&o, "constant_folding", " 'ON' x", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'constant_folding': at offset 5: unexpected text after the string");
    assert_int_equal(gn_options_set(&o, "constant_folding", "'O\\q'", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'constant_folding': at offset 2: bad escape '\\q' in a string");
    assert_int_equal(gn_options_set(&o, "constant_folding", "", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'constant_folding': '' is not one of " TOGGLE_VALUES);
    assert_int_equal(gn_options_set(&o, NULL, "1", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "key is NULL");
    assert_int_equal(gn_options_set(&o, "checked", NULL, err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "value is NULL");
    assert_memory_equal(&o, &before, sizeof o);

    /* get: unknown key, small buffer */
    strcpy(buf, "junk");
    assert_int_equal(gn_options_get(&o, "nope", buf, sizeof buf), GN_ERR_ARG);
    assert_string_equal(buf, "");
    assert_int_equal(gn_options_get(&o, "cpu_layout_conversion", buf, 14), GN_ERR_ARG);
    assert_string_equal(buf, "");
    assert_int_equal(gn_options_get(&o, "cpu_layout_conversion", buf, 15), GN_OK);
    assert_string_equal(buf, "'NCHW_TO_NHWC'");
    assert_int_equal(gn_options_get(&o, "checked", NULL, 0), GN_ERR_ARG);
    assert_int_equal(gn_options_get(NULL, "checked", buf, sizeof buf), GN_ERR_ARG);
}

/* ---- printing ---------------------------------------------------------------------------------- */
static char *to_string(const gn_options *o)
{
    char *s = NULL;
    assert_int_equal(gn_options_to_string(o, &s), GN_OK);
    assert_non_null(s);
    return s;
}

static void test_to_string(void **state)
{
    (void)state;
    gn_options o;
    gn_options_init(&o);
    char *s = to_string(&o);
    assert_string_equal(s, "{'disable_model_pruning': False, 'disable_meta_optimizer': False}");
    gn_free(s);

    o.constant_folding = GN_TOGGLE_OFF;
    o.layout_optimizer = GN_TOGGLE_ON;
    o.remapping = GN_TOGGLE_AGGRESSIVE;
    o.disable_model_pruning = 1;
    o.min_graph_nodes = -1;
    o.auto_mixed_precision = GN_TOGGLE_EXPERIMENTAL_BOTH;
    o.meta_optimizer_iterations = GN_ITERS_ONE;
    o.meta_optimizer_timeout_ms = 250;
    o.cpu_layout_conversion = GN_CPU_LAYOUT_NCHW_TO_NHWC;
    o.auto_parallel = 1;
    o.checked = 1;
    o.common_subgraph_elimination = GN_TOGGLE_OFF;
    s = to_string(&o);
    assert_string_equal(s, "{'layout_optimizer': True, 'constant_folding': False, 'remapping': 'AGGRESSIVE', "
                           "'disable_model_pruning': True, 'auto_mixed_precision': 'EXPERIMENTAL_BOTH', "
                           "'disable_meta_optimizer': False, 'min_graph_nodes': -1, 'auto_parallel': True, "
                           "'common_subgraph_elimination': False, 'meta_optimizer_iterations': 'ONE', "
                           "'meta_optimizer_timeout_ms': 250, 'cpu_layout_conversion': 'NCHW_TO_NHWC', "
                           "'checked': True}");
    gn_options back = parsed(s);
    assert_true(opts_equal(&back, &o));
    gn_free(s);

    assert_int_equal(gn_options_to_string(&o, NULL), GN_ERR_ARG);
    char *t = (char *)"junk";
    assert_int_equal(gn_options_to_string(NULL, &t), GN_ERR_ARG);
    assert_null(t);
}

/* Every key at every value of its kind (and a mix of all at once) prints and
 * reads back to an equal struct. */
static void test_round_trip(void **state)
{
    (void)state;
    gn_options all;
    gn_options_init(&all);
    for (size_t i = 0; i < N_KEYS; i++) {
        const key_info *k = &k_keys[i];
        static const int64_t ints[] = {0, -1, 1, 4, INT32_MAX, INT32_MIN};
        size_t nv = k->kind == T_TOGGLE ? 6 : k->kind == T_BOOL ? 2 : k->kind == T_INT ? 6 : 3;
        for (size_t j = 0; j < nv; j++) {
            int64_t v = k->kind == T_INT ? ints[j] : (int64_t)j;
            gn_options o;
            gn_options_init(&o);
            set_field(&o, k, v);
            char *s = to_string(&o);
            gn_options back = parsed(s);
            if (!opts_equal(&back, &o)) fail_msg("%s=%lld: %s", k->name, (long long)v, s);
            gn_free(s);
        }
        int64_t span = k->kind == T_TOGGLE ? 6 : k->kind == T_BOOL ? 2 : 3;
        set_field(&all, k, k->kind == T_INT ? -(int64_t)i : (int64_t)i % span);
    }
    char *s = to_string(&all);
    gn_options back = parsed(s);
    assert_true(opts_equal(&back, &all));
    /* and printing again gives the same text */
    char *s2 = to_string(&back);
    assert_string_equal(s, s2);
    gn_free(s);
    gn_free(s2);
}

/* A caller built against an older, shorter gn_options: members past its
 * struct_size are neither read nor written. */
static void test_struct_size(void **state)
{
    (void)state;
    gn_options o;
    gn_options_init(&o);
    o.struct_size = (uint32_t)offsetof(gn_options, checked);
    o.checked = 77;
    o.disabled_patterns = (const char *)&o;
    char err[256];
    assert_int_equal(gn_options_parse(&o, "{'constant_folding': 'OFF'}", err, sizeof err), GN_OK);
    assert_int_equal(o.constant_folding, GN_TOGGLE_OFF);
    assert_int_equal(o.checked, 77);
    assert_ptr_equal(o.disabled_patterns, &o);
    assert_int_equal(o.struct_size, offsetof(gn_options, checked));
    assert_int_equal(gn_options_parse(&o, "checked=1", err, sizeof err), GN_ERR_ARG);
    char want[256];
    snprintf(want, sizeof want,
             "option 'checked' is not in this gn_options (struct_size %u: built against an older grapnel/options.h)",
             (unsigned)offsetof(gn_options, checked));
    assert_string_equal(err, want);
    char buf[32];
    assert_int_equal(gn_options_get(&o, "checked", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "False");
    char *s = to_string(&o);
    assert_string_equal(s, "{'constant_folding': False, 'disable_model_pruning': False, "
                           "'disable_meta_optimizer': False}");
    gn_free(s);
    assert_int_equal(o.checked, 77);
}

/* ---- RewriterConfig ----------------------------------------------------------------------------- */
static void test_rewriter_config_binary(void **state)
{
    (void)state;
    Tensorflow__RewriterConfig rc = TENSORFLOW__REWRITER_CONFIG__INIT;
    Tensorflow__AutoParallelOptions ap = TENSORFLOW__AUTO_PARALLEL_OPTIONS__INIT;
    ap.enable = 1;
    ap.num_replicas = 4;
    rc.auto_parallel = &ap;
    rc.layout_optimizer = TENSORFLOW__REWRITER_CONFIG__TOGGLE__OFF;
    rc.constant_folding = TENSORFLOW__REWRITER_CONFIG__TOGGLE__AGGRESSIVE;
    rc.debug_stripper = TENSORFLOW__REWRITER_CONFIG__TOGGLE__ON;
    rc.auto_mixed_precision_cpu = TENSORFLOW__REWRITER_CONFIG__TOGGLE__EXPERIMENTAL_BOTH;
    rc.common_subgraph_elimination = TENSORFLOW__REWRITER_CONFIG__TOGGLE__OFF;
    rc.disable_model_pruning = 1;
    rc.disable_meta_optimizer = 1;
    rc.fail_on_optimizer_errors = 1;
    rc.min_graph_nodes = -1;
    rc.meta_optimizer_iterations = TENSORFLOW__REWRITER_CONFIG__NUM_ITERATIONS_TYPE__TWO;
    rc.meta_optimizer_timeout_ms = 5000000000LL;
    rc.cpu_layout_conversion = TENSORFLOW__REWRITER_CONFIG__CPU_LAYOUT__NHWC_TO_NCHW;
    rc.memory_optimization = TENSORFLOW__REWRITER_CONFIG__MEM_OPT_TYPE__NO_MEM_OPT; /* not ours: ignored */
    size_t n = protobuf_c_message_get_packed_size(&rc.base);
    uint8_t *bytes = malloc(n);
    assert_non_null(bytes);
    assert_int_equal(protobuf_c_message_pack(&rc.base, bytes), n);

    gn_options o, want;
    gn_options_init(&o);
    o.checked = 1;               /* grapnel's own key is kept */
    o.remapping = GN_TOGGLE_OFF; /* a RewriterConfig key absent from the message: its default */
    gn_options_init(&want);
    want.checked = 1;
    want.auto_parallel = 1;
    want.layout_optimizer = GN_TOGGLE_OFF;
    want.constant_folding = GN_TOGGLE_AGGRESSIVE;
    want.debug_stripper = GN_TOGGLE_ON;
    want.auto_mixed_precision_cpu = GN_TOGGLE_EXPERIMENTAL_BOTH;
    want.common_subgraph_elimination = GN_TOGGLE_OFF;
    want.disable_model_pruning = 1;
    want.disable_meta_optimizer = 1;
    want.fail_on_optimizer_errors = 1;
    want.min_graph_nodes = -1;
    want.meta_optimizer_iterations = GN_ITERS_TWO;
    want.meta_optimizer_timeout_ms = 5000000000LL;
    want.cpu_layout_conversion = GN_CPU_LAYOUT_NHWC_TO_NCHW;
    char err[1024] = "x";
    assert_int_equal(gn_options_from_rewriter_config(&o, bytes, n, err, sizeof err), GN_OK);
    assert_string_equal(err, "");
    assert_true(opts_equal(&o, &want));

    /* every toggle key through its own RewriterConfig field */
    for (size_t i = 0; i < N_KEYS; i++) {
        if (k_keys[i].kind != T_TOGGLE) continue;
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(&tensorflow__rewriter_config__descriptor, k_keys[i].name);
        assert_non_null(f);
        Tensorflow__RewriterConfig r2 = TENSORFLOW__REWRITER_CONFIG__INIT;
        int v = GN_TOGGLE_EXPERIMENTAL_MLIR;
        memcpy((char *)&r2 + f->offset, &v, sizeof v);
        uint8_t b2[64];
        size_t n2 = protobuf_c_message_pack(&r2.base, b2);
        gn_options_init(&o);
        assert_int_equal(gn_options_from_rewriter_config(&o, b2, n2, NULL, 0), GN_OK);
        gn_options_init(&want);
        set_field(&want, &k_keys[i], GN_TOGGLE_EXPERIMENTAL_MLIR);
        assert_true(opts_equal(&o, &want));
    }

    /* empty message: every RewriterConfig key back to its default */
    gn_options_init(&o);
    o.constant_folding = GN_TOGGLE_OFF;
    o.checked = 1;
    assert_int_equal(gn_options_from_rewriter_config(&o, NULL, 0, NULL, 0), GN_OK);
    gn_options_init(&want);
    want.checked = 1;
    assert_true(opts_equal(&o, &want));

    /* auto_parallel present but not enabled */
    Tensorflow__RewriterConfig r3 = TENSORFLOW__REWRITER_CONFIG__INIT;
    Tensorflow__AutoParallelOptions ap3 = TENSORFLOW__AUTO_PARALLEL_OPTIONS__INIT;
    ap3.num_replicas = 8;
    r3.auto_parallel = &ap3;
    uint8_t b3[64];
    size_t n3 = protobuf_c_message_pack(&r3.base, b3);
    gn_options_init(&o);
    o.auto_parallel = 1;
    assert_int_equal(gn_options_from_rewriter_config(&o, b3, n3, NULL, 0), GN_OK);
    assert_int_equal(o.auto_parallel, 0);

    /* errors leave o alone */
    gn_options before;
    memcpy(&before, &o, sizeof o);
    uint8_t trunc[] = {0x18}; /* tag of field 3 (constant_folding), no value */
    assert_int_equal(gn_options_from_rewriter_config(&o, trunc, sizeof trunc, err, sizeof err), GN_ERR_PARSE);
    assert_true(strncmp(err, "RewriterConfig: byte 0: ", 24) == 0);
    uint8_t bad_enum[] = {0x18, 0x09}; /* constant_folding = 9 */
    assert_int_equal(gn_options_from_rewriter_config(&o, bad_enum, sizeof bad_enum, err, sizeof err), GN_ERR_PARSE);
    assert_string_equal(err,
                        "RewriterConfig field 'constant_folding': 9 is not a valid tensorflow.RewriterConfig.Toggle");
    uint8_t bad_iters[] = {0x60, 0x03}; /* meta_optimizer_iterations (12) = 3 */
    assert_int_equal(gn_options_from_rewriter_config(&o, bad_iters, sizeof bad_iters, err, sizeof err), GN_ERR_PARSE);
    assert_string_equal(err, "RewriterConfig field 'meta_optimizer_iterations': 3 is not a valid "
                             "tensorflow.RewriterConfig.NumIterationsType");
    assert_int_equal(gn_options_from_rewriter_config(&o, NULL, 3, err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "data is NULL");
    assert_int_equal(gn_options_from_rewriter_config(NULL, bytes, n, err, sizeof err), GN_ERR_ARG);
    assert_memory_equal(&o, &before, sizeof o);
    free(bytes);
}

static void test_rewriter_config_text(void **state)
{
    (void)state;
    const char *text = "constant_folding: OFF\nmin_graph_nodes: -1\nmeta_optimizer_iterations: ONE\n"
                       "auto_parallel { enable: true num_replicas: 2 }";
    gn_options o, want;
    gn_options_init(&o);
    gn_options_init(&want);
    want.constant_folding = GN_TOGGLE_OFF;
    want.min_graph_nodes = -1;
    want.meta_optimizer_iterations = GN_ITERS_ONE;
    want.auto_parallel = 1;
    want.auto_parallel_num_replicas = 2;
    char err[1024] = "x";
    assert_int_equal(gn_options_from_rewriter_config(&o, text, strlen(text), err, sizeof err), GN_OK);
    assert_string_equal(err, "");
    assert_true(opts_equal(&o, &want));

    /* the nested fields: auto_parallel.num_replicas, scoped_allocator_opts.enable_op (repeated) */
    const char *nested = "scoped_allocator_optimization: ON\n"
                         "scoped_allocator_opts { enable_op: 'Abs' enable_op: \"CollectiveReduce\" }\n"
                         "auto_parallel { num_replicas: 4 }";
    gn_options_init(&o);
    gn_options_init(&want);
    want.scoped_allocator_optimization = GN_TOGGLE_ON;
    strcpy(want.scoped_allocator_enable_op, "Abs,CollectiveReduce");
    want.auto_parallel_num_replicas = 4; /* enable stays false */
    assert_int_equal(gn_options_from_rewriter_config(&o, nested, strlen(nested), err, sizeof err), GN_OK);
    assert_true(opts_equal(&o, &want));
    assert_int_equal(o.auto_parallel, 0);
    /* absent nested messages give the defaults back */
    assert_int_equal(gn_options_from_rewriter_config(&o, "debug_stripper: ON", 18, err, sizeof err), GN_OK);
    assert_int_equal(o.auto_parallel_num_replicas, 0);
    assert_string_equal(o.scoped_allocator_enable_op, "");
    /* the dictionary spells them dotted */
    assert_int_equal(gn_options_parse(&o,
                                      "{'auto_parallel': True, 'auto_parallel.num_replicas': 3, "
                                      "'scoped_allocator_optimization': True, 'scoped_allocator_opts.enable_op': 'Abs,Neg'}",
                                      err, sizeof err),
                     GN_OK);
    assert_int_equal(o.auto_parallel, 1);
    assert_int_equal(o.auto_parallel_num_replicas, 3);
    assert_int_equal(o.scoped_allocator_optimization, GN_TOGGLE_ON);
    assert_string_equal(o.scoped_allocator_enable_op, "Abs,Neg");
    assert_int_equal(gn_options_parse(&o, "{'auto_parallel.num_replicas': 'two'}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'auto_parallel.num_replicas': 'two' is not an integer");

    const char *text2 = "# a comment\n  layout_optimizer: AGGRESSIVE cpu_layout_conversion: NCHW_TO_NHWC\n"
                        "disable_meta_optimizer: true meta_optimizer_timeout_ms: 1500 debug_stripper: 1\n"
                        "memory_optimization: NO_MEM_OPT optimizers: 'constfold'\n";
    gn_options_init(&o);
    gn_options_init(&want);
    want.layout_optimizer = GN_TOGGLE_AGGRESSIVE;
    want.cpu_layout_conversion = GN_CPU_LAYOUT_NCHW_TO_NHWC;
    want.disable_meta_optimizer = 1;
    want.meta_optimizer_timeout_ms = 1500;
    want.debug_stripper = GN_TOGGLE_ON;
    assert_int_equal(gn_options_from_rewriter_config(&o, text2, strlen(text2), err, sizeof err), GN_OK);
    assert_true(opts_equal(&o, &want));

    /* blank text is an empty message */
    gn_options_init(&o);
    o.constant_folding = GN_TOGGLE_OFF;
    assert_int_equal(gn_options_from_rewriter_config(&o, " \n# nothing\n", 12, NULL, 0), GN_OK);
    assert_int_equal(o.constant_folding, GN_TOGGLE_DEFAULT);

    gn_options before;
    memcpy(&before, &o, sizeof o);
    const char *bad = "constant_foldng: OFF\n";
    assert_int_equal(gn_options_from_rewriter_config(&o, bad, strlen(bad), err, sizeof err), GN_ERR_PARSE);
    assert_true(strncmp(err, "RewriterConfig: line 1:1: ", 26) == 0);
    assert_non_null(strstr(err, "constant_foldng"));
    const char *bad2 = "constant_folding: SOMETIMES\n";
    assert_int_equal(gn_options_from_rewriter_config(&o, bad2, strlen(bad2), err, sizeof err), GN_ERR_PARSE);
    assert_true(strncmp(err, "RewriterConfig: line 1:", 23) == 0);
    assert_memory_equal(&o, &before, sizeof o);
}

/* grapnel's own keys: policies by name, lists as strings, printed back, None resets. */
static void test_own_keys(void **state)
{
    (void)state;
    gn_options o;
    gn_options_init(&o);
    assert_int_equal(o.layout_policy, GN_LAYOUT_POLICY_GRAPNEL);
    assert_int_equal(o.remap_policy, GN_REMAP_POLICY_TENSORFLOW);
    assert_int_equal(o.lower_control_flow, 0);
    assert_string_equal(o.amp_allowlist_add, "");
    char err[512];
    assert_int_equal(gn_options_parse(&o,
                                      "{'layout.policy': 'NHWC', 'remap.policy': 'grapnel', "
                                      "'function.lower_control_flow': True, 'amp.allowlist_add': 'Foo,Bar', "
                                      "'amp.keep_float32': \"a/b,c\"}",
                                      err, sizeof err),
                     GN_OK);
    assert_int_equal(o.layout_policy, GN_LAYOUT_POLICY_NHWC);
    assert_int_equal(o.remap_policy, GN_REMAP_POLICY_GRAPNEL);
    assert_int_equal(o.lower_control_flow, 1);
    assert_string_equal(o.amp_allowlist_add, "Foo,Bar");
    assert_string_equal(o.amp_keep_float32, "a/b,c");
    char buf[128];
    assert_int_equal(gn_options_get(&o, "amp.allowlist_add", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'Foo,Bar'");
    assert_int_equal(gn_options_get(&o, "layout.policy", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'NHWC'");
    char *text = NULL;
    assert_int_equal(gn_options_to_string(&o, &text), GN_OK);
    assert_string_equal(text, "{'disable_model_pruning': False, 'disable_meta_optimizer': False, "
                              "'layout.policy': 'NHWC', 'remap.policy': 'grapnel', "
                              "'function.lower_control_flow': True, 'amp.allowlist_add': 'Foo,Bar', "
                              "'amp.keep_float32': 'a/b,c'}");
    gn_options back;
    gn_options_init(&back);
    assert_int_equal(gn_options_parse(&back, text, err, sizeof err), GN_OK);
    assert_memory_equal(&back, &o, sizeof o);
    gn_free(text);
    assert_int_equal(gn_options_set(&o, "amp.allowlist_add", "None", err, sizeof err), GN_OK);
    assert_string_equal(o.amp_allowlist_add, "");
    assert_int_equal(gn_options_parse(&o, "{'layout.policy': 'NCWH'}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'layout.policy': 'NCWH' is not one of None, 'grapnel', 'tensorflow', "
                             "'NCHW', 'NHWC' or an integer 0..3");
    assert_int_equal(gn_options_parse(&o, "{'amp.alowlist_add': 'X'}", err, sizeof err), GN_ERR_ARG);
    assert_non_null(strstr(err, "did you mean 'amp.allowlist_add'?"));
    char big[GN_OPTIONS_STR_MAX + 16];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    assert_int_equal(gn_options_set(&o, "amp.denylist_add", big, err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "option 'amp.denylist_add': value is 1039 bytes, the limit is 1023");
    /* the length counted is the decoded one: 1020 escapes of 4 bytes are 1020 bytes */
    char esc[4 * 1020 + 3], *e = esc;
    *e++ = '\'';
    for (int i = 0; i < 1020; i++, e += 4) memcpy(e, "\\x41", 4);
    *e++ = '\'';
    *e = '\0';
    assert_int_equal(gn_options_set(&o, "amp.denylist_add", esc, err, sizeof err), GN_OK);
    assert_int_equal(strlen(o.amp_denylist_add), 1020);
    assert_int_equal(strspn(o.amp_denylist_add, "A"), 1020);
}

/* Strings are Python's: escapes decoded, and what gn_options_to_string and
 * gn_options_get print (repr's quoting) reads back to the same value. */
static void test_string_escapes(void **state)
{
    (void)state;
    gn_options o;
    gn_options_init(&o);
    char err[1024], buf[128];
    assert_int_equal(gn_options_parse(&o, "{'amp.allowlist_add': 'Foo,\\x42ar', \"amp.keep_float32\": 'a\\\\b\\'c',"
                                          " 'layout.policy': 'NH\\u0057C'}",
                                      err, sizeof err),
                     GN_OK);
    assert_string_equal(o.amp_allowlist_add, "Foo,Bar");
    assert_string_equal(o.amp_keep_float32, "a\\b'c");
    assert_int_equal(o.layout_policy, GN_LAYOUT_POLICY_NHWC);
    assert_int_equal(gn_options_get(&o, "amp.keep_float32", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "\"a\\\\b'c\"");
    assert_int_equal(gn_options_set(&o, "amp.clearlist_add", "'x\\ty\\n'", err, sizeof err), GN_OK);
    assert_string_equal(o.amp_clearlist_add, "x\ty\n");
    assert_int_equal(gn_options_get(&o, "amp.clearlist_add", buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "'x\\ty\\n'");
    char *text = NULL;
    assert_int_equal(gn_options_to_string(&o, &text), GN_OK);
    gn_options back;
    gn_options_init(&back);
    assert_int_equal(gn_options_parse(&back, text, err, sizeof err), GN_OK);
    assert_memory_equal(&back, &o, sizeof o);
    gn_free(text);
    /* a key may be written with escapes too; a bad one is a syntax error */
    assert_int_equal(gn_options_parse(&o, "{'min_graph_\\x6eodes': 5}", err, sizeof err), GN_OK);
    assert_int_equal(o.min_graph_nodes, 5);
    assert_int_equal(gn_options_parse(&o, "{'min_graph_nodes': '\\x5'}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "at offset 21: bad escape '\\x' in a string: it needs 2 hex digits");
    assert_int_equal(gn_options_parse(&o, "{'min_graph_nodes': 1,\n 'remapping': True\n 'x': 1}", err, sizeof err),
                     GN_ERR_ARG);
    assert_string_equal(err, "at offset 43 (line 3:2): expected ',' or '}'");
}

/* struct gn_options (the public header) holds exactly the keys options.def
 * lists and nothing else but struct_size and disabled_patterns: sorted by
 * offset, each member starts where the one before it ends (aligned), and the
 * last one ends the struct. A member added to one side only fails here. */
typedef struct opt_member {
    const char *name;
    size_t off, size;
} opt_member;

static int member_cmp(const void *a, const void *b)
{
    const opt_member *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static size_t member_align(size_t size) { return size == 2 || size == 4 || size == 8 ? size : 1; }

static void test_struct_matches_def(void **state)
{
    (void)state;
    opt_member m[] = {
        {"struct_size", offsetof(gn_options, struct_size), sizeof(((gn_options *)0)->struct_size)},
        {"disabled_patterns", offsetof(gn_options, disabled_patterns), sizeof(((gn_options *)0)->disabled_patterns)},
#define GN_OPT(key, kind, def, help) {#key, offsetof(gn_options, key), sizeof(((gn_options *)0)->key)},
#define GN_OPTK(member, key, kind, def, help) {#member, offsetof(gn_options, member), sizeof(((gn_options *)0)->member)},
#include "optimizer/options.def"
#undef GN_OPT
#undef GN_OPTK
    };
    size_t n = sizeof m / sizeof m[0];
    qsort(m, n, sizeof m[0], member_cmp);
    size_t end = 0, align = 1;
    for (size_t i = 0; i < n; i++) {
        size_t a = member_align(m[i].size);
        size_t want = (end + a - 1) / a * a;
        if (m[i].off != want)
            fail_msg("gn_options: '%s' at offset %zu, expected %zu (a member options.def does not list before it?)",
                     m[i].name, m[i].off, want);
        end = m[i].off + m[i].size;
        if (a > align) align = a;
    }
    assert_int_equal((end + align - 1) / align * align, sizeof(gn_options));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_struct_matches_def),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_toggle_names),
        cmocka_unit_test(test_parse_examples),
        cmocka_unit_test(test_parse_every_key),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_set_get),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_to_string),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_struct_size),
        cmocka_unit_test(test_own_keys),
        cmocka_unit_test(test_rewriter_config_binary),
        cmocka_unit_test(test_rewriter_config_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
