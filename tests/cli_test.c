/* The CLI's common surface, through the built binary (GN_CLI_PATH): the --json
 * documents of inspect, run, verify, segment and optimize (schema version and
 * options in force), inspect on a SavedModel (signatures first, --signatures,
 * the init op), the exit-code rule (2 for usage errors, unknown dictionary
 * keys included, with the nearest key in --options, @FILE, GRAPNEL_OPTIONS,
 * --params and --save-options), nearest-flag suggestions, unknown feed and
 * fetch names (run, verify, segment), run --repeat/--warmup, progress on
 * stderr only on a terminal, bash completion and the man page as
 * `cmake --install` puts them.
 * JSON is checked by reading it back with Python's json module. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "testutil.h"

#define DT_FLOAT 1

#define DS_CNN GN_TEST_DATA "/../../examples/models/ds_cnn_s.pb"
#define DS_CNN_MFCC GN_TEST_DATA "/../../examples/models/ds_cnn_s.mfcc.npy"
#define KWS "mlcommons__tiny/benchmark__training__keyword_spotting__trained_models__kws_ref_model"
#define HP2_TF2 \
    "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123"

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

/* Runs `grapnel ARGS`; fails unless the exit status is rc and the output
 * (stdout and stderr) equals want (any output when want is NULL). */
static void expect(int rc, const char *want, const char *fmt, ...)
{
    char args[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out = NULL;
    int got = gn_test_sh(&out, "'%s' %s", GN_CLI_PATH, args);
    if (got != rc || (want && strcmp(out, want) != 0))
        fail_msg("grapnel %s\n  exit %d (want %d)\n--- got\n%s--- want\n%s", args, got, rc, out, want ? want : "(any)");
    free(out);
}

/* Runs `grapnel ARGS | python3 -c PY` (PY reads the document as d) and
 * compares what it prints. */
static void expect_json(const char *py, const char *want, const char *fmt, ...)
{
    char args[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *out = NULL;
    int got = gn_test_sh(&out, "'%s' %s | python3 -c 'import json,sys; d=json.load(sys.stdin); %s'", GN_CLI_PATH,
                         args, py);
    if (got != 0 || strcmp(out, want) != 0)
        fail_msg("grapnel %s | %s\n  exit %d\n--- got\n%s--- want\n%s", args, py, got, out, want);
    free(out);
}

static void expect_has(const char *out, const char *needle)
{
    if (!strstr(out, needle)) fail_msg("output lacks:\n%s\n--- output:\n%s", needle, out);
}

static void write_npy(const char *path, const float *v, int64_t n)
{
    gn_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = DT_FLOAT;
    t.rank = 1;
    t.dims[0] = n;
    t.data = (void *)v;
    t.nbytes = (size_t)n * sizeof *v;
    char err[256];
    if (gn_npy_write(path, &t, err, sizeof err) != GN_OK) fail_msg("%s", err);
}

/* The optimizer's message for an unknown key: the nearest and every valid key. */
static const char *unknown_option_msg(const char *where, const char *key, const char *near)
{
    static char buf[8192];
    int n = snprintf(buf, sizeof buf, "grapnel: %s: unknown option '%s'; did you mean '%s'? (valid keys: ", where, key,
                     near);
    for (size_t i = 0; i < gn_options_key_count() && n < (int)sizeof buf; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s", i ? ", " : "", gn_options_key(i));
    snprintf(buf + n, sizeof buf - (size_t)n, ")\n");
    return buf;
}

/* x (float [2]) -> y = Neg(x) */
static const char *neg_graph(void)
{
    const char *p = tmp("neg.pbtxt");
    write_text(p, "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
                  "  attr { key: 'shape' value { shape { dim { size: 2 } } } } }\n"
                  "node { name: 'y' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    return p;
}

/* ---- --json -------------------------------------------------------------------------------------- */
static void test_run_json_exact(void **state)
{
    (void)state;
    const char *g = neg_graph();
    float x[2] = {1.5f, -0.25f};
    write_npy(tmp("x.npy"), x, 2);
    char want[4096];
    snprintf(want, sizeof want,
             "{\n"
             "  \"schema\": 1,\n"
             "  \"command\": \"run\",\n"
             "  \"options\": {\n"
             "    \"models\": [\"%s\"],\n"
             "    \"tags\": null,\n"
             "    \"signature\": null,\n"
             "    \"backend\": \"cpu\",\n"
             "    \"seed\": 0,\n"
             "    \"dim\": 1,\n"
             "    \"feeds\": {\n"
             "      \"x\": \"%s\"\n"
             "    },\n"
             "    \"shapes\": {},\n"
             "    \"output_dir\": null,\n"
             "    \"repeat\": 0,\n"
             "    \"warmup\": 0\n"
             "  },\n"
             "  \"outputs\": [\n"
             "    {\n"
             "      \"name\": \"y\",\n"
             "      \"key\": null,\n"
             "      \"dtype\": \"float32\",\n"
             "      \"shape\": [2],\n"
             "      \"values\": [-1.5, 0.25]\n"
             "    }\n"
             "  ],\n"
             "  \"timing\": null\n"
             "}\n",
             g, tmp("x.npy"));
    expect(0, want, "run '%s' --feed x='%s' --json", g, tmp("x.npy"));
}

static void test_json_documents(void **state)
{
    (void)state;
    /* inspect on a GraphDef */
    expect_json("print(d[\"schema\"], d[\"command\"], d[\"options\"], d[\"savedmodel\"], d[\"nodes\"], d[\"inputs\"], "
                "d[\"outputs\"], d[\"ops\"][\"Const\"])",
                "1 inspect {'model': '" DS_CNN "', 'tags': None, 'shapes': False, 'signatures_only': False, "
                "'validate': True} False 152 [{'name': 'wav_data', 'op': 'Placeholder', 'dtype': 'string', "
                "'shape': []}] ['labels_softmax'] 58\n",
                "inspect '%s' --json", DS_CNN);
    /* run --repeat: the timing in the document */
    expect_json("t=d[\"timing\"]; l=t[\"latency_ms\"]; print(t[\"runs\"], t[\"warmup\"], "
                "l[\"min\"] <= l[\"median\"] <= l[\"p90\"] <= l[\"max\"], t[\"throughput_per_s\"] > 0, "
                "d[\"options\"][\"repeat\"], d[\"outputs\"][0][\"shape\"], len(d[\"outputs\"][0][\"values\"]))",
                "5 2 True True 5 [1, 12] 12\n", "run '%s' --feed Mfcc='%s' --repeat 5 --warmup 2 --json", DS_CNN,
                DS_CNN_MFCC);
    /* verify */
    expect_json("f=d[\"fetches\"][0]; print(d[\"schema\"], d[\"command\"], d[\"match\"], d[\"matched\"], d[\"total\"], f[\"name\"], "
                "f[\"max_abs_err\"], f[\"match\"], f[\"why\"], d[\"options\"][\"backend_b\"], d[\"options\"][\"tol\"])",
                "1 verify True 1 1 labels_softmax 0.0 True None cpu 0.001\n",
                "verify '%s' '%s' --feed Mfcc='%s' --fetch labels_softmax --tol 1e-3 --json", DS_CNN, DS_CNN,
                DS_CNN_MFCC);
    /* segment: the parameters in force, the report by line */
    expect_json("o=d[\"options\"]; print(d[\"schema\"], d[\"command\"], o[\"params\"][\"minimum_segment_size\"], "
                "o[\"params\"][\"precision_mode\"], o[\"dry_run\"], o[\"output\"], d[\"engines\"], d[\"report\"][-1], "
                "d[\"calibration\"])",
                "1 segment 3 FP16 True None 1 1 engine(s) (dry run), 0 segment(s) left native None\n",
                "segment '%s' --dry-run --json --params \"{'precision_mode': 'FP16', 'minimum_segment_size': 3}\"",
                DS_CNN);
    /* optimize --report json: schema, command and the options ahead of the report */
    expect_json("print(list(d)[:4], d[\"schema\"], d[\"command\"], d[\"options\"][\"optimizer\"], d[\"options\"][\"fetches\"], "
                "d[\"passes\"][0][\"pass\"])",
                "['schema', 'command', 'options', 'total_micros'] 1 optimize {'constant_folding': False, "
                "'disable_model_pruning': False, 'disable_meta_optimizer': False} ['labels_softmax'] pruning\n",
                "optimize '%s' -o '%s' --fetch labels_softmax --options \"{'constant_folding': False}\" "
                "--report json",
                DS_CNN, tmp("opt.pb"));
}

/* ---- inspect on a SavedModel ---------------------------------------------------------------------- */
static void test_inspect_savedmodel(void **state)
{
    (void)state;
    char dir[2048];
    if (!gn_test_corpus(HP2_TF2, dir, sizeof dir)) skip();
    static const char head[] = "SavedModel tags: serve\n"
                               "signatures: 6\n"
                               "  classify_x2_to_y3 (tensorflow/serving/predict)\n"
                               "    input  inputs: classify_x2_to_y3_inputs:0 float [1]\n"
                               "    output scores: StatefulPartitionedCall:0 float [1]\n"
                               "  classify_x_to_y (tensorflow/serving/predict)\n"
                               "    input  inputs: classify_x_to_y_inputs:0 string [?]\n"
                               "    output scores: StatefulPartitionedCall_1:0 float [?, 1]\n"
                               "  regress_x2_to_y3 (tensorflow/serving/predict)\n"
                               "    input  inputs: regress_x2_to_y3_inputs:0 float [1]\n"
                               "    output outputs: StatefulPartitionedCall_2:0 float [1]\n"
                               "  regress_x_to_y (tensorflow/serving/predict)\n"
                               "    input  inputs: regress_x_to_y_inputs:0 string [?]\n"
                               "    output outputs: StatefulPartitionedCall_3:0 float [?, 1]\n"
                               "  regress_x_to_y2 (tensorflow/serving/predict)\n"
                               "    input  inputs: regress_x_to_y2_inputs:0 string [?]\n"
                               "    output outputs: StatefulPartitionedCall_4:0 float [?, 1]\n"
                               "  serving_default (tensorflow/serving/predict)\n"
                               "    input  x: serving_default_x:0 float [1]\n"
                               "    output y: StatefulPartitionedCall_5:0 float [1]\n"
                               "init op: NoOp\n";
    expect(0, head, "inspect '%s' --signatures", dir);
    /* the full listing starts the same way, then the graph */
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "'%s' inspect '%s'", GN_CLI_PATH, dir), 0);
    if (strncmp(out, head, strlen(head)) != 0) fail_msg("inspect does not start with the signatures:\n%s", out);
    expect_has(out, "init op: NoOp\nmodel: ");
    expect_has(out, "assets: 1\n  foo.txt <- asset_path_initializer:0\nfunctions: 14\n");
    if (strstr(out, "INVALID")) fail_msg("the init op is shown as a signature:\n%s", out);
    free(out);
    expect_json("s=d[\"signatures\"]; print(d[\"tags\"], sorted(s), s[\"serving_default\"][\"inputs\"], "
                "d[\"init_op\"], \"variables\" in d, \"nodes\" in d)",
                "serve ['classify_x2_to_y3', 'classify_x_to_y', 'regress_x2_to_y3', 'regress_x_to_y', "
                "'regress_x_to_y2', 'serving_default'] [{'key': 'x', 'tensor': 'serving_default_x:0', 'dtype': "
                "'float', 'shape': [1]}] NoOp False False\n",
                "inspect '%s' --signatures --json", dir);
    expect_json("print(len(d[\"variables\"]), d[\"variables\"][0], d[\"assets\"], d[\"nodes\"])",
                "3 {'name': 'a/.ATTRIBUTES/VARIABLE_VALUE', 'dtype': 'float', 'shape': [], 'bytes': 4} "
                "[{'file': 'foo.txt', 'tensor': 'asset_path_initializer:0'}] 29\n",
                "inspect '%s' --json", dir);
    expect(1, "grapnel inspect: --signatures: " DS_CNN " is not a SavedModel\n", "inspect '%s' --signatures", DS_CNN);
}

/* ---- exit codes and suggestions -------------------------------------------------------------------- */
static void test_usage_errors(void **state)
{
    (void)state;
    /* an unknown key exits 2 in every dictionary, with the nearest key */
    expect(2, unknown_option_msg("--options", "constant_foldng", "constant_folding"),
           "optimize '%s' -o '%s' --options \"{'constant_foldng': True}\"", DS_CNN, tmp("o.pb"));
    expect(2, unknown_option_msg("--options", "constant_foldng", "constant_folding"),
           "optimize '%s' -o '%s' --options constant_foldng=on", DS_CNN, tmp("o.pb"));
    write_text(tmp("opts.txt"), "{'remap.polcy': 'grapnel'}\n");
    expect(2, unknown_option_msg(tmp("opts.txt"), "remap.polcy", "remap.policy"), "optimize '%s' -o '%s' --options @'%s'",
           DS_CNN, tmp("o.pb"), tmp("opts.txt"));
    expect(2, unknown_option_msg("--options", "constant_foldng", "constant_folding"),
           "verify '%s' '%s' --bisect --options \"{'constant_foldng': True}\"", DS_CNN, DS_CNN);
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "GRAPNEL_OPTIONS=\"{'layout_optimiser': False}\" '%s' optimize '%s' -o '%s'",
                                GN_CLI_PATH, DS_CNN, tmp("o.pb")),
                     2);
    assert_string_equal(out, unknown_option_msg("GRAPNEL_OPTIONS", "layout_optimiser", "layout_optimizer"));
    free(out);
    expect(2,
           "grapnel segment: --params: unknown conversion parameter 'precison_mode'; did you mean 'precision_mode'? "
           "(valid: max_workspace_size_bytes, precision_mode, minimum_segment_size, maximum_cached_engines, "
           "use_calibration, allow_build_at_runtime)\n",
           "segment '%s' --dry-run --params \"{'precison_mode': 'FP16'}\"", DS_CNN);
    expect(2,
           "grapnel save: --save-options: save options: at offset 1: unknown SaveOptions field 'save_debug_inf'; "
           "did you mean 'save_debug_info'?\n",
           "save '%s' '%s' --fetch labels_softmax --save-options \"{'save_debug_inf': True}\"", DS_CNN, tmp("sm"));
    expect(2,
           "grapnel save: --save-options: save options: at offset 1: unknown SaveOptions field 'extra_tag'; "
           "did you mean 'extra_tags'?\n",
           "save '%s' '%s' --fetch labels_softmax --save-options \"{'extra_tag': ['a', 'b']}\"", DS_CNN, tmp("sm"));
    expect(2, "grapnel save: --save-options: save options: at offset 1: unknown SaveOptions field 'xyzzy'\n",
           "save '%s' '%s' --fetch labels_softmax --save-options \"{'xyzzy': True}\"", DS_CNN, tmp("sm"));
    assert_false(gn_test_file_exists(tmp("sm")));
    /* a bad value too */
    out = NULL;
    assert_int_equal(gn_test_sh(&out, "GRAPNEL_OPTIONS=\"{'constant_folding': 'maybe'}\" '%s' optimize '%s' -o '%s'",
                                GN_CLI_PATH, DS_CNN, tmp("o.pb")),
                     2);
    expect_has(out, "grapnel: GRAPNEL_OPTIONS: option 'constant_folding': 'maybe' is not one of");
    free(out);
    /* nearest flags, in every command */
    expect(2, "grapnel run: unknown option '--fetc'; did you mean '--fetch'?\n(see grapnel run --help)\n",
           "run '%s' --fetc y", DS_CNN);
    expect(2, "grapnel verify: unknown option '--tolerance'; did you mean '--tol'?\n(see grapnel verify --help)\n",
           "verify a.pb b.pb --tolerance 1");
    expect(2, "grapnel optimize: unknown option '--option'; did you mean '--options'?\n(see grapnel optimize --help)\n",
           "optimize a.pb -o b.pb --option x");
    expect(2, "grapnel segment: unknown option '--parms'; did you mean '--params'?\n(see grapnel segment --help)\n",
           "segment a.pb --parms x");
    expect(2, "grapnel save: unknown option '--save-option=x'; did you mean '--save-options'?\n"
              "(see grapnel save --help)\n",
           "save a.pb dir --save-option=x");
    expect(2, "grapnel inspect: unknown option '--signature'; did you mean '--signatures'?\n"
              "(see grapnel inspect --help)\n",
           "inspect a.pb --signature");
    expect(2, "grapnel freeze: unknown option '--sig'; did you mean '--signature'?\n(see grapnel freeze --help)\n",
           "freeze dir --sig x -o a.pb");
    expect(2, "grapnel segment: --params needs a value\n(see grapnel segment --help)\n", "segment a.pb --params");
    expect(2, "grapnel run: unknown option '--zzz'\n(see grapnel run --help)\n", "run a.pb --zzz");
    out = NULL;
    assert_int_equal(gn_test_sh(&out, "'%s' inspct a.pb", GN_CLI_PATH), 2);
    expect_has(out, "grapnel: unknown command 'inspct'; did you mean 'inspect'?\nusage: grapnel COMMAND");
    free(out);
    /* --repeat and --warmup values */
    expect(2, "grapnel run: --repeat '0': expected a positive integer\n(see grapnel run --help)\n",
           "run a.pb --repeat 0");
    expect(2, "grapnel run: --warmup 'x': expected a non-negative integer\n(see grapnel run --help)\n",
           "run a.pb --repeat 2 --warmup x");
    expect(2, "grapnel run: --warmup goes with --repeat N\n(see grapnel run --help)\n", "run a.pb --warmup 2");
}

/* ---- names the model lacks ------------------------------------------------------------------------- */
static void test_unknown_names(void **state)
{
    (void)state;
    /* the first input is a string placeholder: the misspelt feed is named, before any random data */
    expect(1,
           "grapnel run: no tensor 'wav_dta' in the graph; did you mean 'wav_data'? (its inputs: wav_data)\n",
           "run '%s' --feed wav_dta='%s'", DS_CNN, DS_CNN_MFCC);
    expect(1,
           "grapnel run: no tensor 'labels_softmx' in the graph; did you mean 'labels_softmax'? "
           "(its outputs: labels_softmax)\n",
           "run '%s' --feed Mfcc='%s' --fetch labels_softmx", DS_CNN, DS_CNN_MFCC);
    expect(1, "grapnel verify: no tensor 'Mfx' in the graph (its inputs: wav_data)\n",
           "verify '%s' '%s' --feed Mfx='%s'", DS_CNN, DS_CNN, DS_CNN_MFCC);
    expect(1,
           "grapnel verify: no tensor 'labels_sofmax' in the graph; did you mean 'labels_softmax'? "
           "(its outputs: labels_softmax)\n",
           "verify '%s' '%s' --feed Mfcc='%s' --fetch labels_sofmax", DS_CNN, DS_CNN, DS_CNN_MFCC);
    expect(1,
           "grapnel segment: no tensor 'labels_sofmax' in the graph; did you mean 'labels_softmax'? "
           "(its outputs: labels_softmax)\n",
           "segment '%s' --dry-run --fetch labels_sofmax", DS_CNN);
    expect(1, "grapnel segment: no tensor 'wav_dat' in the graph; did you mean 'wav_data'? (its inputs: wav_data)\n",
           "segment '%s' -o '%s' --feed wav_dat --fetch labels_softmax", DS_CNN, tmp("seg.pb"));
    assert_false(gn_test_file_exists(tmp("seg.pb")));
    char dir[2048];
    if (!gn_test_corpus(KWS, dir, sizeof dir)) skip();
    expect(1,
           "grapnel run: 'input_2' is neither an input key of signature 'serving_default' nor a tensor of the "
           "graph; did you mean 'input_1'? (input keys: input_1)\n",
           "run '%s' --input input_2='%s'", dir, DS_CNN_MFCC);
    expect(1,
           "grapnel run: 'dens' is neither an output key of signature 'serving_default' nor a tensor of the "
           "graph; did you mean 'dense'? (output keys: dense)\n",
           "run '%s' --fetch dens", dir);
}

/* ---- timing ---------------------------------------------------------------------------------------- */
static void test_repeat(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "'%s' run '%s' --feed Mfcc='%s' --repeat 4 --warmup 0 2>&1 >/dev/null",
                                GN_CLI_PATH, DS_CNN, DS_CNN_MFCC),
                     0);
    /* three lines on stderr, nothing else */
    double mn, med, p90, mx, mean, tp;
    int n = sscanf(out,
                   "grapnel run: 4 runs after 0 warmup\n  latency (ms): min %lf  median %lf  p90 %lf  max %lf  "
                   "mean %lf\n  throughput: %lf runs/s\n",
                   &mn, &med, &p90, &mx, &mean, &tp);
    if (n != 6) fail_msg("timing lines not as expected:\n%s", out);
    assert_true(mn > 0 && mn <= med && med <= p90 && p90 <= mx && mn <= mean && mean <= mx);
    /* throughput is runs over the timed total: 1000 / mean */
    assert_true(tp > 0.99 * 1000 / mean - 1 && tp < 1.01 * 1000 / mean + 1);
    free(out);
    /* the outputs printed are the last run's, as without --repeat */
    char *plain = NULL, *rep = NULL;
    assert_int_equal(gn_test_sh(&plain, "'%s' run '%s' --feed Mfcc='%s'", GN_CLI_PATH, DS_CNN, DS_CNN_MFCC), 0);
    assert_int_equal(
        gn_test_sh(&rep, "'%s' run '%s' --feed Mfcc='%s' --repeat 3 2>/dev/null", GN_CLI_PATH, DS_CNN, DS_CNN_MFCC), 0);
    assert_string_equal(plain, rep);
    free(plain);
    free(rep);
}

/* ---- progress -------------------------------------------------------------------------------------- */
static void test_progress(void **state)
{
    (void)state;
    /* stderr a pipe: silent */
    expect(0, "", "optimize '%s' -o '%s'", DS_CNN, tmp("p.pb"));
    /* forced: the load and the optimizer say what they do */
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "GRAPNEL_PROGRESS=1 '%s' optimize '%s' -o '%s'", GN_CLI_PATH, DS_CNN, tmp("p.pb")),
                     0);
    expect_has(out, "grapnel: loading " DS_CNN " (0.1 MiB)...\ngrapnel: loaded 152 nodes in ");
    expect_has(out, "grapnel: optimizing 152 nodes...\ngrapnel: optimized in ");
    free(out);
    expect(0, "", "optimize '%s' -o '%s'", DS_CNN, tmp("p.pb"));
    /* a terminal: small work stays silent */
    if (gn_test_sh(NULL, "command -v script >/dev/null") != 0) return;
    out = NULL;
    assert_int_equal(gn_test_sh(&out, "script -qec \"'%s' optimize '%s' -o '%s'\" /dev/null", GN_CLI_PATH, DS_CNN,
                                tmp("p.pb")),
                     0);
    if (strstr(out, "grapnel:")) fail_msg("progress on a terminal for a small graph:\n%s", out);
    free(out);
    /* calibration always reports on a terminal: on stderr (stdout is sent away here), not through a pipe */
    const char *sh = tmp("int8.sh");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' segment '%s' -o '%s' --params \"{'precision_mode': 'INT8'}\" --feed Mfcc --fetch labels_softmax "
             "--calibrate '%s'\n",
             GN_CLI_PATH, DS_CNN, tmp("int8.pb"), DS_CNN_MFCC);
    write_text(sh, cmd);
    out = NULL;
    assert_int_equal(gn_test_sh(&out, "script -qec \"sh '%s' >/dev/null\" /dev/null", sh), 0);
    static const char head[] = "grapnel: calibrating on 1 batches...\r\ngrapnel: calibrated in ";
    size_t len = strlen(out);
    if (strncmp(out, head, strlen(head)) != 0 || len < strlen(head) + 4 || strcmp(out + len - 4, " s\r\n") != 0 ||
        strchr(out + strlen(head), '\n') != out + len - 1)
        fail_msg("calibration progress on a terminal:\n%s", out);
    free(out);
    out = NULL;
    assert_int_equal(gn_test_sh(&out, "GRAPNEL_PROGRESS=0 script -qec \"sh '%s' >/dev/null\" /dev/null", sh), 0);
    assert_string_equal(out, "");
    free(out);
    out = NULL;
    assert_int_equal(gn_test_sh(&out, "sh '%s' 2>&1 >/dev/null", sh), 0);
    assert_string_equal(out, "");
    free(out);
}

/* ---- completion and man page ------------------------------------------------------------------------ */
static void test_completion_and_man(void **state)
{
    (void)state;
    char *out = NULL;
    const char *comp = GN_TEST_DATA "/../../src/cli/grapnel-completion.bash";
    assert_int_equal(gn_test_sh(&out,
                                "bash -c 'source \"%s\"; c() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($#-1)); _grapnel; "
                                "echo \"${COMPREPLY[*]}\"; }; c %s ins; c %s run --rep; c %s optimize --report j; "
                                "c %s segment --backend c; c %s run --js'",
                                comp, GN_CLI_PATH, GN_CLI_PATH, GN_CLI_PATH, GN_CLI_PATH, GN_CLI_PATH),
                     0);
    assert_string_equal(out, "inspect\n--repeat\njson\ncpu cuda\n--json\n");
    free(out);
    /* cmake --install puts the completion where bash-completion looks, the man page in man1 */
    out = NULL;
    if (gn_test_sh(&out, "cmake --install '%s' --prefix '%s'", GN_BIN_DIR, tmp("prefix")) != 0)
        fail_msg("cmake --install:\n%s", out);
    free(out);
    size_t nc, ni;
    char *src = (char *)gn_test_slurp(comp, &nc);
    char *inst = (char *)gn_test_slurp(tmp("prefix/share/bash-completion/completions/grapnel"), &ni);
    assert_non_null(src);
    if (!inst) fail_msg("cmake --install put no share/bash-completion/completions/grapnel");
    assert_true(nc == ni && memcmp(src, inst, nc) == 0);
    free(inst);
    free(src);
    /* the man page: generated next to the binary when help2man is installed */
    char man[2048];
    snprintf(man, sizeof man, "%s", GN_CLI_PATH);
    char *slash = strrchr(man, '/');
    snprintf(slash + 1, sizeof man - (size_t)(slash + 1 - man), "grapnel.1");
    if (!gn_test_file_exists(man)) skip();
    size_t n;
    char *text = (char *)gn_test_slurp(man, &n);
    assert_non_null(text);
    expect_has(text, ".TH GRAPNEL \"1\"");
    expect_has(text, ".SS run\n.nf\nusage: grapnel run MODEL");
    expect_has(text, "\n  --repeat N ");
    expect_has(text, ".SS segment\n");
    inst = (char *)gn_test_slurp(tmp("prefix/share/man/man1/grapnel.1"), &ni);
    if (!inst) fail_msg("cmake --install put no share/man/man1/grapnel.1");
    assert_true(ni == n && memcmp(text, inst, n) == 0);
    free(inst);
    free(text);
}

/* optimize --verify: at float32's tolerance, unless auto_mixed_precision put
 * float16 inside (then 5e-2, as tools/zoo_check.sh compares); --tol says
 * otherwise. */
static void test_optimize_verify_tol(void **state)
{
    (void)state;
    write_text(tmp("convt.pbtxt"),
               "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'shape' "
               "value { shape { dim { size: 1 } dim { size: 8 } dim { size: 8 } dim { size: 3 } } } } }\n"
               "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { "
               "tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 3 } dim { size: 3 } dim { size: 4 } } "
               "float_val: 0.11 float_val: -0.23 float_val: 0.37 float_val: 0.05 float_val: -0.19 } } } }\n"
               "node { name: 'conv' op: 'Conv2D' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } "
               "attr { key: 'strides' value { list { i: 1 i: 1 i: 1 i: 1 } } } attr { key: 'padding' value { s: 'SAME' } } "
               "attr { key: 'data_format' value { s: 'NHWC' } } }\n"
               "node { name: 'y' op: 'Relu' input: 'conv' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    const char *amp = "--target gpu:sm_90 --options \"{'auto_mixed_precision': True}\"";
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "'%s' optimize '%s' -o '%s' %s --verify", GN_CLI_PATH, tmp("convt.pbtxt"),
                                tmp("convt.pb"), amp),
                     0);
    expect_has(out, "ok: 1 of 1 fetches match");
    free(out);
    assert_int_equal(gn_test_sh(&out, "'%s' optimize '%s' -o '%s' %s --verify --tol 1e-7", GN_CLI_PATH,
                                tmp("convt.pbtxt"), tmp("convt.pb"), amp),
                     1);
    expect_has(out, "is over the tolerance 1e-07");
    free(out);
    /* a graph cut at --feed tensors is verified fed there (random values at Mfcc, not a
     * string placeholder behind it that no random data can fill) */
    assert_int_equal(gn_test_sh(&out, "'%s' optimize '%s' -o '%s' --feed Mfcc --fetch labels_softmax --verify",
                                GN_CLI_PATH, DS_CNN, tmp("ds_cut.pb")),
                     0);
    expect_has(out, "ok: 1 of 1 fetches match");
    free(out);
    /* or from a file, as --feed NAME=FILE.npy */
    assert_int_equal(gn_test_sh(&out, "'%s' optimize '%s' -o '%s' --feed 'Mfcc=%s' --fetch labels_softmax --verify",
                                GN_CLI_PATH, DS_CNN, tmp("ds_cut.pb"), DS_CNN_MFCC),
                     0);
    expect_has(out, "ok: 1 of 1 fetches match");
    free(out);
    /* float32 throughout: verify's own default */
    assert_int_equal(gn_test_sh(&out, "'%s' optimize '%s' -o '%s' --verify", GN_CLI_PATH, tmp("convt.pbtxt"),
                                tmp("convt.pb")),
                     0);
    expect_has(out, "ok: 1 of 1 fetches match");
    free(out);
}

/* GRAPNEL_FSYNC=1 (docs/cli.md): the optimized file is flushed before it takes
 * its name, then its directory; without it (or =0) nothing is. Seen through
 * tests/fsync_shim.c, preloaded; not under AddressSanitizer, whose runtime
 * must come first in a process. */
static void test_fsync_env(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip();
#else
    const char *log = tmp("fsync.log"), *out_pb = tmp("fsync/o.pb");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", tmp("fsync"));
    mkdir(dir, 0755);
    char real_dir[4096];
    assert_non_null(realpath(dir, real_dir));
    for (int k = 0; k < 3; k++) {
        static const char *const env[] = {"", "GRAPNEL_FSYNC=0", "GRAPNEL_FSYNC=1"};
        unlink(log);
        char *out = NULL;
        int rc = gn_test_sh(&out, "env -u GRAPNEL_FSYNC %s GN_FSYNC_LOG='%s' LD_PRELOAD='%s' '%s' optimize '%s' -o '%s'",
                            env[k], log, GN_FSYNC_SHIM, GN_CLI_PATH, DS_CNN, out_pb);
        if (rc != 0) fail_msg("%s: exit %d: %s", env[k], rc, out);
        free(out);
        assert_true(gn_test_file_exists(out_pb));
        size_t n = 0;
        char *lines = (char *)gn_test_slurp(log, &n);
        if (k < 2) {
            if (lines && n) fail_msg("%s: fsync without GRAPNEL_FSYNC=1:\n%s", env[k] ? env[k] : "", lines);
            free(lines);
            continue;
        }
        if (!lines) fail_msg("GRAPNEL_FSYNC=1: no fsync at all");
        /* the file (still without a name, or under its temporary one) in that
         * directory, then the directory itself, last */
        char want_file[4200], want_dir[4200];
        snprintf(want_file, sizeof want_file, "%s/", real_dir);
        snprintf(want_dir, sizeof want_dir, "\n%s\n", real_dir);
        if (strncmp(lines, want_file, strlen(want_file)) != 0 || n < strlen(want_dir) ||
            strcmp(lines + n - strlen(want_dir), want_dir) != 0)
            fail_msg("GRAPNEL_FSYNC=1: fsync'ed, in order:\n%s(want a file in %s, then %s itself)", lines, real_dir,
                     real_dir);
        free(lines);
    }
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_json_exact),   cmocka_unit_test(test_json_documents),
        cmocka_unit_test(test_inspect_savedmodel), cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_unknown_names),    cmocka_unit_test(test_repeat),
        cmocka_unit_test(test_progress),         cmocka_unit_test(test_completion_and_man),
        cmocka_unit_test(test_fsync_env),        cmocka_unit_test(test_optimize_verify_tol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
