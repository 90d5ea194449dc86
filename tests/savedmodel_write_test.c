/* Writing SavedModels (include/grapnel/save.h): round trips of every corpus
 * SavedModel, every SaveOptions field's effect on the files written,
 * TensorFlow's view of what we wrote (tests/data/saved_by_grapnel, from
 * tools/check_saved_with_tf.py), and failures that leave nothing behind. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"
#include "grapnel/save.h"
#include "io/bundle.h"
#include "common/farmhash.h"
#include "common/highwayhash.h"
#include "io/riegeli.h"
#include "io/savedmodel_chunked.h"
#include "tensorflow/tools/proto_splitter/chunk.pb-c.h"
#include "io/pbcanon.h"
#include "tensorflow/core/framework/graph_debug_info.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/fingerprint.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"
#include "testutil.h"

#define HP2_TF2 "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123"
#define HP2_TF1 "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_cpu__00000123"

/* ---- helpers ------------------------------------------------------------------------ */
/* snprintf that fails the test instead of truncating */
#define PATHF(buf, size, ...)                                                              \
    do {                                                                                   \
        int n_ = snprintf((buf), (size), __VA_ARGS__);                                     \
        if (n_ < 0 || (size_t)n_ >= (size_t)(size)) fail_msg("path too long");             \
    } while (0)

static char *tmp(const char *name)
{
    static char buf[8][1024];
    static int k;
    char *b = buf[k++ % 8];
    PATHF(b, 1024, "%s/%s", gn_test_tmpdir(), name);
    gn_test_sh(NULL, "rm -rf '%s'", b);
    return b;
}

static char *cat(const char *a, const char *b)
{
    static char buf[8][1024];
    static int k;
    char *r = buf[k++ % 8];
    PATHF(r, 1024, "%s/%s", a, b);
    return r;
}

static void opts_parse(gn_save_options *o, const char *text)
{
    char err[512];
    gn_save_options_init(o);
    if (gn_save_options_parse(o, text, err, sizeof err) != GN_OK) fail_msg("parse %s: %s", text, err);
}

static void save_ok(gn_graph *g, const char *dir, const char *opts, const gn_save_params *p)
{
    gn_save_options o;
    opts_parse(&o, opts ? opts : "{}");
    if (gn_savedmodel_save(g, dir, &o, p) != GN_OK) fail_msg("save %s: %s", dir, gn_graph_errmsg(g));
    gn_save_options_clear(&o);
}

/* Saves and expects failure with exactly msg, and nothing at dir nor any
 * dir.tmp-* beside it. */
static void save_fails(gn_graph *g, const char *dir, const char *opts, const gn_save_params *p, gn_status code,
                       const char *msg)
{
    gn_save_options o;
    opts_parse(&o, opts ? opts : "{}");
    gn_status s = gn_savedmodel_save(g, dir, &o, p);
    gn_save_options_clear(&o);
    if (s != code || (msg && strcmp(gn_graph_errmsg(g), msg) != 0))
        fail_msg("save %s: status %d (want %d)\n  got:  %s\n  want: %s", dir, s, code, gn_graph_errmsg(g), msg ? msg : "");
    char parent[1024];
    PATHF(parent, sizeof parent, "%s", dir);
    char *slash = strrchr(parent, '/');
    assert_non_null(slash);
    *slash = 0;
    const char *base = slash + 1;
    DIR *d = opendir(parent);
    if (!d) return;   /* the parent itself is not a directory */
    struct dirent *de;
    size_t bl = strlen(base);
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, base, bl) == 0 && (de->d_name[bl] == 0 || de->d_name[bl] == '.'))
            fail_msg("left behind: %s/%s", parent, de->d_name);
    closedir(d);
}

static Tensorflow__SavedModel *read_sm(const char *dir)
{
    size_t n;
    unsigned char *b = gn_test_slurp(cat(dir, "saved_model.pb"), &n);
    assert_non_null(b);
    Tensorflow__SavedModel *sm = tensorflow__saved_model__unpack(NULL, n, b);
    free(b);
    assert_non_null(sm);
    assert_int_equal(sm->n_meta_graphs, 1);
    return sm;
}

static bool same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *x = gn_test_slurp(a, &na), *y = gn_test_slurp(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

static unsigned char *serialize(gn_graph *g, size_t *n)
{
    void *d = NULL;
    if (gn_graph_serialize(g, GN_FORMAT_BINARY, &d, n) != GN_OK) fail_msg("serialize: %s", gn_graph_errmsg(g));
    return d;
}

static void expect_same_signatures(gn_graph *a, gn_graph *b, const char *what)
{
    assert_int_equal(gn_graph_signature_count(a), gn_graph_signature_count(b));
    assert_string_equal(gn_graph_tags(a), gn_graph_tags(b));
    for (size_t i = 0; i < gn_graph_signature_count(a); i++) {
        const char *k = gn_graph_signature_key(a, i);
        if (strcmp(k, gn_graph_signature_key(b, i)) != 0) fail_msg("%s: signature %zu: %s vs %s", what, i, k, gn_graph_signature_key(b, i));
        const char *ma = gn_graph_signature_method(a, k), *mb = gn_graph_signature_method(b, k);
        assert_string_equal(ma ? ma : "", mb ? mb : "");
        for (int32_t side = 0; side < 2; side++) {
            size_t na = 0, nb = 0;
            assert_int_equal(gn_graph_signature_args(a, k, side, &na), GN_OK);
            assert_int_equal(gn_graph_signature_args(b, k, side, &nb), GN_OK);
            assert_int_equal(na, nb);
            for (size_t j = 0; j < na; j++) {
                gn_signature_arg x, y;
                assert_int_equal(gn_graph_signature_arg(a, k, side, j, &x), GN_OK);
                assert_int_equal(gn_graph_signature_arg(b, k, side, j, &y), GN_OK);
                assert_string_equal(x.key, y.key);
                assert_string_equal(x.tensor, y.tensor);
                assert_int_equal(x.dtype, y.dtype);
                assert_int_equal(x.rank, y.rank);
                for (int32_t d = 0; d < x.rank && d < 8; d++) assert_int_equal(x.dims[d], y.dims[d]);
            }
        }
    }
}

/* ---- round trip: load, save, load ------------------------------------------------------ */
static void roundtrip_one(const char *src, const char *dir)
{
    gn_graph *a = gn_test_load(src);
    save_ok(a, dir, NULL, NULL);
    gn_graph *b = gn_test_load(dir);
    assert_int_equal(gn_graph_node_count(a), gn_graph_node_count(b));
    /* the same GraphDef, up to the order of map entries (written sorted) */
    size_t na, nb;
    unsigned char *x = serialize(a, &na), *y = serialize(b, &nb);
    Tensorflow__GraphDef *ga = tensorflow__graph_def__unpack(NULL, na, x), *gb = tensorflow__graph_def__unpack(NULL, nb, y);
    assert_non_null(ga);
    assert_non_null(gb);
    assert_int_equal(ga->n_node, gb->n_node);
    uint8_t *ca = NULL, *cb = NULL;
    size_t la = 0, lb = 0;
    assert_int_equal(gn__pack_deterministic(&ga->base, &ca, &la, NULL), GN_OK);
    assert_int_equal(gn__pack_deterministic(&gb->base, &cb, &lb, NULL), GN_OK);
    if (la != lb || memcmp(ca, cb, la) != 0) fail_msg("%s: the graph changed in the round trip (%zu vs %zu bytes)", src, la, lb);
    for (size_t i = 0; i < ga->n_node; i++) {
        assert_string_equal(ga->node[i]->name, gb->node[i]->name);
        assert_string_equal(ga->node[i]->op, gb->node[i]->op);
    }
    free(ca);
    free(cb);
    tensorflow__graph_def__free_unpacked(ga, NULL);
    tensorflow__graph_def__free_unpacked(gb, NULL);
    gn_free(x);
    gn_free(y);
    expect_same_signatures(a, b, src);
    size_t va = 0, vb = 0;
    assert_int_equal(gn_graph_variable_count(a, &va), GN_OK);
    assert_int_equal(gn_graph_variable_count(b, &vb), GN_OK);
    assert_int_equal(va, vb);
    for (size_t i = 0; i < va; i++) {
        gn_variable_info p, q;
        assert_int_equal(gn_graph_variable(a, i, &p), GN_OK);
        assert_int_equal(gn_graph_variable(b, i, &q), GN_OK);
        assert_string_equal(p.name, q.name);
        assert_int_equal(p.dtype, q.dtype);
        assert_int_equal(p.bytes, q.bytes);
    }
    /* variable bytes: the bundle files, byte for byte */
    char *vsrc = cat(src, "variables");
    DIR *d = opendir(vsrc);
    size_t files = 0;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.') continue;
            char p1[1024], p2[1024];
            PATHF(p1, sizeof p1, "%s/%s", vsrc, de->d_name);
            PATHF(p2, sizeof p2, "%s/variables/%s", dir, de->d_name);
            if (!same_file(p1, p2)) fail_msg("%s: %s differs", src, p2);
            files++;
        }
        closedir(d);
    }
    if (va > 0 && files < 2) fail_msg("%s: %zu variable files for %zu variables", src, files, va);
    assert_int_equal(gn_graph_asset_count(a), gn_graph_asset_count(b));
    for (size_t i = 0; i < gn_graph_asset_count(a); i++) {
        assert_string_equal(gn_graph_asset_filename(a, i), gn_graph_asset_filename(b, i));
        char p1[1024], p2[1024];
        PATHF(p1, sizeof p1, "%s/assets/%s", src, gn_graph_asset_filename(a, i));
        PATHF(p2, sizeof p2, "%s/assets/%s", dir, gn_graph_asset_filename(b, i));
        if (!same_file(p1, p2)) fail_msg("asset %s differs from %s", p2, p1);
    }
    /* a second save of the reloaded graph gives the same bytes */
    char dir2[1024];
    PATHF(dir2, sizeof dir2, "%s.again", dir);
    gn_test_sh(NULL, "rm -rf '%s'", dir2);
    save_ok(b, dir2, NULL, NULL);
    assert_true(same_file(cat(dir, "saved_model.pb"), cat(dir2, "saved_model.pb")));
    assert_true(same_file(cat(dir, "fingerprint.pb"), cat(dir2, "fingerprint.pb")));
    gn_graph_free(a);
    gn_graph_free(b);
}

static void test_roundtrip_corpus(void **state)
{
    (void)state;
    char root[1024];
    if (!gn_test_corpus("", root, sizeof root)) skip();
    char *list = NULL;
    assert_int_equal(gn_test_sh(&list, "cd '%s' && ls -d */*/saved_model.pb */*/saved_model.pbtxt 2>/dev/null | sed 's|/saved_model.pb.*||' | sort", root), 0);
    size_t n = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char src[1024], name[64];
        PATHF(src, sizeof src, "%s/%s", root, line);
        PATHF(name, sizeof name, "roundtrip%zu", n++);
        roundtrip_one(src, tmp(name));
    }
    free(list);
    assert_int_equal(n, 15);
}

/* ---- TensorFlow loaded what we wrote: tests/data/saved_by_grapnel ---------------------- */
typedef struct tfcase {
    char name[64], kind[16], src[512], opts[1024], tags[128];
    const char *feeds[4], *fetches[4];
    char fbuf[8][128];
    size_t nfeeds, nfetches;
    uint64_t checksum, ckpt_hash;
    int v1_ok, v2_ok, outputs, run_errors;
    long long chunk_max;            /* args --chunk-max-size N: a chunked saved_model.cpb */
} tfcase;

static void run_output(tfcase *c, gn_graph *saved, const char *line, const char *base)
{
    char loader[8], sig[128], key[128], file[256];
    if (sscanf(line, "output %7s %127s %127s %255s", loader, sig, key, file) != 4) fail_msg("bad line: %s", line);
    if (strcmp(key, "*") == 0) {   /* TensorFlow could not run it */
        c->run_errors++;
        return;
    }
    gn_graph *fz = NULL;
    if (gn_graph_freeze(saved, sig, &fz) != GN_OK) fail_msg("%s: freeze %s: %s", c->name, sig, gn_graph_errmsg(saved));
    size_t nin = 0, nout = 0;
    assert_int_equal(gn_graph_signature_args(saved, sig, 0, &nin), GN_OK);
    assert_int_equal(gn_graph_signature_args(saved, sig, 1, &nout), GN_OK);
    const char *fn[4];
    gn_tensor ft[4];
    assert_true(nin <= 4);
    for (size_t i = 0; i < nin; i++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(saved, sig, 0, i, &a), GN_OK);
        char p[1024], err[256];
        PATHF(p, sizeof p, "%s/%s.%s.%s.in.npy", base, c->name, sig, a.key);
        if (gn_npy_read(p, &ft[i], err, sizeof err) != GN_OK) fail_msg("%s", err);
        fn[i] = a.tensor;
    }
    const char *xn = NULL;
    for (size_t i = 0; i < nout; i++) {
        gn_signature_arg a;
        assert_int_equal(gn_graph_signature_arg(saved, sig, 1, i, &a), GN_OK);
        if (strcmp(a.key, key) == 0) xn = a.tensor;
    }
    assert_non_null(xn);
    gn_session *s = NULL;
    if (gn_session_new(fz, NULL, &s) != GN_OK) fail_msg("%s: session: %s", c->name, s ? gn_session_errmsg(s) : "?");
    gn_tensor out;
    memset(&out, 0, sizeof out);
    if (gn_session_run(s, fn, ft, nin, &xn, &out, 1) != GN_OK) fail_msg("%s %s: run: %s", c->name, sig, gn_session_errmsg(s));
    char p[1024], err[256];
    gn_tensor ref;
    PATHF(p, sizeof p, "%s/%s", base, file);
    if (gn_npy_read(p, &ref, err, sizeof err) != GN_OK) fail_msg("%s", err);
    gn_compare_result r;
    assert_int_equal(gn_tensor_compare(&out, &ref, 1e-5, &r), GN_OK);
    if (!r.match) fail_msg("%s %s %s %s: differs from TensorFlow: %s (max abs %g)", c->name, loader, sig, key, r.why, r.max_abs_err);
    c->outputs++;
    gn_tensor_free(&ref);
    gn_tensor_free(&out);
    for (size_t i = 0; i < nin; i++) gn_tensor_free(&ft[i]);
    gn_session_free(s);
    gn_graph_free(fz);
}

static void check_case(tfcase *c, char **outputs, size_t nout, const char *base)
{
    char src[1024];
    if (strcmp(c->kind, "corpus") == 0) {
        if (!gn_test_corpus(c->src, src, sizeof src)) return;
    } else {
        gn_test_data(c->src, src, sizeof src);
    }
    gn_graph *g = gn_test_load(src);
    gn_save_params p;
    gn_save_params_init(&p);
    p.feeds = c->feeds;
    p.n_feeds = c->nfeeds;
    p.fetches = c->fetches;
    p.n_fetches = c->nfetches;
    char *dir = tmp(c->name);
    p.chunk_max_size = c->chunk_max;
    save_ok(g, dir, c->opts, &p);
    if (c->chunk_max) {
        /* TensorFlow's open-source loaders read only saved_model.pb[txt]; its
         * fingerprinter read this .cpb (its Riegeli reader and chunk metadata)
         * and computed the checksum over its chunks that we write too. The
         * bytes it read are ours still. */
        char kept[1024];
        PATHF(kept, sizeof kept, "%s/%s.saved_model.cpb", base, c->name);
        if (!same_file(cat(dir, "saved_model.cpb"), kept)) fail_msg("%s: saved_model.cpb differs from %s", c->name, kept);
        size_t fl;
        unsigned char *fb = gn_test_slurp(cat(dir, "fingerprint.pb"), &fl);
        Tensorflow__FingerprintDef *fpc = tensorflow__fingerprint_def__unpack(NULL, fl, fb);
        free(fb);
        assert_non_null(fpc);
        assert_int_equal(fpc->checkpoint_hash, c->ckpt_hash);
        if (fpc->saved_model_checksum != c->checksum)
            fail_msg("%s: saved_model_checksum %" PRIu64 ", TensorFlow computed %" PRIu64 " from the .cpb", c->name,
                     fpc->saved_model_checksum, c->checksum);
        assert_int_equal(fpc->version->producer, 2);
        tensorflow__fingerprint_def__free_unpacked(fpc, NULL);
        gn_graph *saved = gn_test_load(dir);
        assert_string_equal(gn_graph_tags(saved), c->tags);
        gn_graph_free(saved);
        gn_graph_free(g);
        return;
    }
    /* the bytes TensorFlow loaded: its own fingerprint of that directory */
    size_t n;
    unsigned char *b = gn_test_slurp(cat(dir, "fingerprint.pb"), &n);
    assert_non_null(b);
    Tensorflow__FingerprintDef *fp = tensorflow__fingerprint_def__unpack(NULL, n, b);
    free(b);
    assert_non_null(fp);
    if (fp->saved_model_checksum != c->checksum || fp->checkpoint_hash != c->ckpt_hash)
        fail_msg("%s: fingerprint %" PRIu64 " %" PRIu64 ", TensorFlow computed %" PRIu64 " %" PRIu64, c->name,
                 fp->saved_model_checksum, fp->checkpoint_hash, c->checksum, c->ckpt_hash);
    assert_int_equal(fp->graph_def_program_hash, 0);
    assert_int_equal(fp->signature_def_hash, 0);
    assert_int_equal(fp->saved_object_graph_hash, 0);
    assert_non_null(fp->version);
    assert_int_equal(fp->version->producer, 1);
    tensorflow__fingerprint_def__free_unpacked(fp, NULL);
    assert_true(c->v1_ok);
    assert_true(c->v2_ok);
    gn_graph *saved = gn_test_load(dir);
    assert_string_equal(gn_graph_tags(saved), c->tags);
    for (size_t i = 0; i < nout; i++) run_output(c, saved, outputs[i], base);
    gn_graph_free(saved);
    gn_graph_free(g);
}

static void test_tensorflow_loads_what_we_write(void **state)
{
    (void)state;
    char base[1024], path[1024];
    gn_test_data("saved_by_grapnel", base, sizeof base);
    PATHF(path, sizeof path, "%s/results.txt", base);
    size_t n;
    char *text = (char *)gn_test_slurp(path, &n);
    assert_non_null(text);
    tfcase c;
    char *outputs[32];
    size_t nout = 0, cases = 0, total_outputs = 0, total_errors = 0;
    char *save_ptr = NULL;
    for (char *line = strtok_r(text, "\n", &save_ptr); line; line = strtok_r(NULL, "\n", &save_ptr)) {
        if (strncmp(line, "case ", 5) == 0) {
            memset(&c, 0, sizeof c);
            nout = 0;
            PATHF(c.name, sizeof c.name, "%s", line + 5);
        } else if (strncmp(line, "source ", 7) == 0) {
            assert_int_equal(sscanf(line, "source %15s %511s", c.kind, c.src), 2);
        } else if (strncmp(line, "feed ", 5) == 0) {
            PATHF(c.fbuf[c.nfeeds], 128, "%s", line + 5);
            c.feeds[c.nfeeds] = c.fbuf[c.nfeeds];
            c.nfeeds++;
        } else if (strncmp(line, "fetch ", 6) == 0) {
            PATHF(c.fbuf[4 + c.nfetches], 128, "%s", line + 6);
            c.fetches[c.nfetches] = c.fbuf[4 + c.nfetches];
            c.nfetches++;
        } else if (strncmp(line, "options ", 8) == 0) {
            PATHF(c.opts, sizeof c.opts, "%s", line + 8);
        } else if (strncmp(line, "tags ", 5) == 0) {
            PATHF(c.tags, sizeof c.tags, "%s", line + 5);
        } else if (strncmp(line, "args --chunk-max-size ", 22) == 0) {
            c.chunk_max = atoll(line + 22);
        } else if (strncmp(line, "fingerprint ", 12) == 0) {
            assert_int_equal(sscanf(line, "fingerprint %" SCNu64 " %" SCNu64, &c.checksum, &c.ckpt_hash), 2);
        } else if (strcmp(line, "loader v1 loaded ok") == 0) {
            c.v1_ok = 1;
        } else if (strcmp(line, "loader v2 loaded ok") == 0) {
            c.v2_ok = 1;
        } else if (strncmp(line, "output ", 7) == 0) {
            assert_true(nout < 32);
            outputs[nout++] = line;
        } else if (strcmp(line, "end") == 0) {
            check_case(&c, outputs, nout, base);
            total_outputs += (size_t)c.outputs;
            total_errors += (size_t)c.run_errors;
            cases++;
        }
    }
    free(text);
    assert_int_equal(cases, 8);
    char dummy[1024];
    if (gn_test_corpus(HP2_TF2, dummy, sizeof dummy)) {
        /* 3 float signatures x 2 loaders in the three TF2 cases and hp2_pbtxt, 2 x 2 in
         * hp2_tf1, 1 x 2 for the GraphDef and for the sliced checkpoint (max_shard_200);
         * with experimental_skip_saver the TF1 loader cannot restore variables, so its
         * 3 runs failed in TensorFlow */
        assert_int_equal(total_outputs, 6 + 6 + 3 + 4 + 6 + 2 + 2);
        assert_int_equal(total_errors, 3);
    }
}

/* ---- each SaveOptions field ------------------------------------------------------------- */
static const char *NS_GRAPH =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'c' op: 'Custom>Scale' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'y' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n";

static gn_save_params fetch_params(const char *const *fetches, size_t n)
{
    gn_save_params p;
    gn_save_params_init(&p);
    p.fetches = fetches;
    p.n_fetches = n;
    return p;
}

/* A sparse (COO) signature argument, "KEY=values,indices,dense_shape": written as
 * TensorFlow writes a SparseTensor's TensorInfo (coo_sparse, the values' dtype,
 * the dense shape's rank with unknown dims), read back by the loader's accessors;
 * a malformed one is refused naming it. */
static void test_sparse_signature_arg(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(
        "node { name: 'i' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT64 } }\n"
        "  attr { key: 'shape' value { shape { dim { size: -1 } dim { size: 2 } } } } }\n"
        "node { name: 'v' op: 'Placeholder' attr { key: 'dtype' value { type: DT_STRING } }\n"
        "  attr { key: 'shape' value { shape { dim { size: -1 } } } } }\n"
        "node { name: 's' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT64 } }\n"
        "  attr { key: 'shape' value { shape { dim { size: 2 } } } } }\n"
        "node { name: 'y' op: 'Identity' input: 'v' attr { key: 'T' value { type: DT_STRING } } }\n", 1);
    const char *feeds[] = {"words=v:0,i:0,s"};
    const char *fetch[] = {"out=y"};
    gn_save_params p = fetch_params(fetch, 1);
    p.feeds = feeds;
    p.n_feeds = 1;
    char *d = tmp("sparse_arg");
    save_ok(g, d, NULL, &p);
    Tensorflow__SavedModel *sm = read_sm(d);
    const Tensorflow__SignatureDef *sd = sm->meta_graphs[0]->signature_def[0]->value;
    assert_int_equal(sd->n_inputs, 1);
    assert_string_equal(sd->inputs[0]->key, "words");
    const Tensorflow__TensorInfo *ti = sd->inputs[0]->value;
    assert_int_equal(ti->encoding_case, TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE);
    assert_string_equal(ti->coo_sparse->values_tensor_name, "v:0");
    assert_string_equal(ti->coo_sparse->indices_tensor_name, "i:0");
    assert_string_equal(ti->coo_sparse->dense_shape_tensor_name, "s:0");
    assert_int_equal(ti->dtype, 7);   /* DT_STRING */
    assert_false(ti->tensor_shape->unknown_rank);
    assert_int_equal(ti->tensor_shape->n_dim, 2);
    assert_int_equal(ti->tensor_shape->dim[0]->size, -1);
    assert_int_equal(ti->tensor_shape->dim[1]->size, -1);
    tensorflow__saved_model__free_unpacked(sm, NULL);
    /* the loader's view: the values tensor, and the other two */
    gn_graph *r = gn_test_load(d);
    gn_signature_arg a;
    const char *ind = NULL, *shp = NULL;
    assert_int_equal(gn_graph_signature_arg(r, "serving_default", 0, 0, &a), GN_OK);
    assert_string_equal(a.key, "words");
    assert_string_equal(a.tensor, "v:0");
    assert_int_equal(gn_graph_signature_arg_sparse(r, "serving_default", 0, 0, &ind, &shp), GN_OK);
    assert_string_equal(ind, "i:0");
    assert_string_equal(shp, "s:0");
    assert_int_equal(gn_graph_signature_arg_sparse(r, "serving_default", 1, 0, &ind, &shp), GN_OK);
    assert_null(ind);
    assert_null(shp);
    gn_graph_free(r);
    const char *bad[] = {"words=v,i"};
    p.feeds = bad;
    save_fails(g, tmp("sparse_bad"), NULL, &p, GN_ERR_ARG,
               "feed 'v,i': a sparse argument is three tensors, values,indices,dense_shape");
    gn_graph_free(g);
}

static void test_namespace_whitelist(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(NS_GRAPH, 1);
    const char *fetch[] = {"y"};
    gn_save_params p = fetch_params(fetch, 1);
    save_fails(g, tmp("ns_other"), "{'namespace_whitelist': ['Other', 'More']}", &p, GN_ERR_ARG,
               "namespace_whitelist: op 'Custom>Scale' (node 'c') is in namespace 'Custom', which is not in ['Other', 'More']");
    save_fails(g, tmp("ns_empty"), "{'namespace_whitelist': []}", &p, GN_ERR_ARG,
               "namespace_whitelist: op 'Custom>Scale' (node 'c') is in namespace 'Custom', which is not in []");
    char *d1 = tmp("ns_custom");
    save_ok(g, d1, "{'namespace_whitelist': ['Custom']}", &p);
    assert_true(gn_test_file_exists(cat(d1, "saved_model.pb")));
    char *d2 = tmp("ns_none");
    save_ok(g, d2, "{'namespace_whitelist': None}", &p);
    assert_true(same_file(cat(d1, "saved_model.pb"), cat(d2, "saved_model.pb")));
    gn_graph_free(g);
    /* inside a function body; the namespace is the text before the first '>' */
    g = gn_test_load_text("node { name: 'y' op: 'F' }\n"
                  "library { function { signature { name: 'F' output_arg { name: 'o' type: DT_FLOAT } }\n"
                  "  node_def { name: 'k' op: 'Test>>A>CustomOp' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                  "  ret { key: 'o' value: 'k:0' } } }\n", 1);
    save_fails(g, tmp("ns_fn"), "{'namespace_whitelist': ['Test>']}", &p, GN_ERR_ARG,
               "namespace_whitelist: op 'Test>>A>CustomOp' (node 'k' in function 'F') is in namespace 'Test', which is not in ['Test>']");
    save_ok(g, tmp("ns_fn_ok"), "{'namespace_whitelist': ['Test']}", &p);
    gn_graph_free(g);
}

static void test_signature_from_feeds_and_fetches(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(NS_GRAPH, 1);
    const char *fetch[] = {"c:0", "y"};
    gn_save_params p = fetch_params(fetch, 2);
    char *d = tmp("sig");
    save_ok(g, d, "{'namespace_whitelist': ['Custom']}", &p);
    Tensorflow__SavedModel *sm = read_sm(d);
    const Tensorflow__MetaGraphDef *mg = sm->meta_graphs[0];
    assert_int_equal(mg->n_signature_def, 1);
    assert_string_equal(mg->signature_def[0]->key, "serving_default");
    const Tensorflow__SignatureDef *sd = mg->signature_def[0]->value;
    assert_string_equal(sd->method_name, "tensorflow/serving/predict");
    assert_int_equal(sd->n_inputs, 1);   /* every Placeholder */
    assert_string_equal(sd->inputs[0]->key, "x");
    assert_string_equal(sd->inputs[0]->value->name, "x:0");
    assert_int_equal(sd->inputs[0]->value->dtype, 1);
    assert_int_equal(sd->n_outputs, 2);
    /* an op the registry does not know: dtype from its T attr */
    assert_string_equal(sd->outputs[0]->key, "c");
    assert_string_equal(sd->outputs[0]->value->name, "c:0");
    assert_int_equal(sd->outputs[0]->value->dtype, 1);
    assert_string_equal(sd->outputs[1]->key, "y");
    assert_int_equal(sd->outputs[1]->value->dtype, 1);
    assert_null(mg->saver_def);
    assert_string_equal(mg->meta_info_def->tags[0], "serve");
    assert_false(gn_test_file_exists(cat(d, "variables")));
    tensorflow__saved_model__free_unpacked(sm, NULL);
    gn_graph_free(g);
    /* without T: DT_INVALID; keys replace '/' and add the output index */
    g = gn_test_load_text("node { name: 'a/b' op: 'Mystery' }\n", 1);
    const char *f2[] = {"a/b:1"};
    p = fetch_params(f2, 1);
    d = tmp("sig2");
    save_ok(g, d, NULL, &p);
    sm = read_sm(d);
    sd = sm->meta_graphs[0]->signature_def[0]->value;
    assert_string_equal(sd->outputs[0]->key, "a_b_1");
    assert_string_equal(sd->outputs[0]->value->name, "a/b:1");
    assert_int_equal(sd->outputs[0]->value->dtype, 0);
    tensorflow__saved_model__free_unpacked(sm, NULL);
    const char *f3[] = {"nope:0"};
    p = fetch_params(f3, 1);
    save_fails(g, tmp("sig3"), NULL, &p, GN_ERR_ARG, "fetch 'nope:0': no node 'nope' in the graph");
    p = fetch_params(NULL, 0);
    save_fails(g, tmp("sig4"), NULL, &p, GN_ERR_ARG,
               "saving a GraphDef as a SavedModel needs its signature's fetches (--fetch NAME)");
    gn_graph_free(g);
}

static void test_save_debug_info(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text("node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
                            "node { name: 'y' op: 'F' input: 'x' }\n"
                            "library { function { signature { name: 'F' input_arg { name: 'i' type: DT_FLOAT }\n"
                            "    output_arg { name: 'o' type: DT_FLOAT } }\n"
                            "  node_def { name: 'n' op: 'Neg' input: 'i' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                            "  ret { key: 'o' value: 'n:y:0' } } }\n", 1);
    const char *fetch[] = {"y"};
    gn_save_params p = fetch_params(fetch, 1);
    char *d0 = tmp("dbg_off");
    save_ok(g, d0, NULL, &p);
    assert_false(gn_test_file_exists(cat(d0, "debug")));
    char *d = tmp("dbg_on");
    save_ok(g, d, "{'save_debug_info': True}", &p);
    assert_true(same_file(cat(d0, "saved_model.pb"), cat(d, "saved_model.pb")));
    size_t n;
    unsigned char *b = gn_test_slurp(cat(d, "debug/saved_model_debug_info.pb"), &n);
    assert_non_null(b);
    Tensorflow__GraphDebugInfo *di = tensorflow__graph_debug_info__unpack(NULL, n, b);
    free(b);
    assert_non_null(di);
    assert_int_equal(di->n_name_to_trace_id, 3);
    assert_string_equal(di->name_to_trace_id[0]->key, "n@F");
    assert_string_equal(di->name_to_trace_id[1]->key, "x");
    assert_string_equal(di->name_to_trace_id[2]->key, "y");
    assert_int_equal(di->n_traces_by_id, 1);
    tensorflow__graph_debug_info__free_unpacked(di, NULL);
    gn_graph_free(g);
}

static void test_function_aliases(void **state)
{
    (void)state;
    char src[1024];
    if (!gn_test_corpus(HP2_TF2, src, sizeof src)) skip();
    gn_graph *g = gn_test_load(src);
    char *d = tmp("alias");
    save_ok(g, d, "{'function_aliases': {'serve_fn': '__inference_signature_wrapper_predict_245', "
                  "'other': '__inference_classify_xy_195'}}", NULL);
    Tensorflow__SavedModel *sm = read_sm(d);
    const Tensorflow__MetaGraphDef__MetaInfoDef *mi = sm->meta_graphs[0]->meta_info_def;
    assert_int_equal(mi->n_function_aliases, 2);
    assert_string_equal(mi->function_aliases[0]->key, "__inference_classify_xy_195");
    assert_string_equal(mi->function_aliases[0]->value, "other");
    assert_string_equal(mi->function_aliases[1]->key, "__inference_signature_wrapper_predict_245");
    assert_string_equal(mi->function_aliases[1]->value, "serve_fn");
    tensorflow__saved_model__free_unpacked(sm, NULL);
    save_fails(g, tmp("alias_bad"), "{'function_aliases': {'a': 'nope'}}", NULL, GN_ERR_ARG,
               "function_aliases: alias 'a' names 'nope', which is not a function of the graph's library");
    gn_graph_free(g);
}

static const Tensorflow__NodeDef *find_node(const Tensorflow__GraphDef *gd, const char *fn, const char *name)
{
    if (!fn) {
        for (size_t i = 0; i < gd->n_node; i++)
            if (strcmp(gd->node[i]->name, name) == 0) return gd->node[i];
        return NULL;
    }
    for (size_t f = 0; gd->library && f < gd->library->n_function; f++) {
        const Tensorflow__FunctionDef *fd = gd->library->function[f];
        if (strcmp(fd->signature->name, fn) != 0) continue;
        for (size_t i = 0; i < fd->n_node_def; i++)
            if (strcmp(fd->node_def[i]->name, name) == 0) return fd->node_def[i];
    }
    return NULL;
}

static void test_debug_stripper(void **state)
{
    (void)state;
    static const char *text =
        "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
        "node { name: 'c' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } }\n"
        "  attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n"
        "node { name: 'a' op: 'Assert' input: 'c' input: 'x' input: '^x'\n"
        "  attr { key: 'T' value { list { type: DT_FLOAT } } } attr { key: 'summarize' value { i: 3 } } }\n"
        "node { name: 'y' op: 'Identity' input: 'x' input: '^a' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "node { name: 'z' op: 'F' input: 'x' }\n"
        "library { function { signature { name: 'F' input_arg { name: 'i' type: DT_FLOAT }\n"
        "    output_arg { name: 'o' type: DT_FLOAT } }\n"
        "  node_def { name: 'k' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } }\n"
        "    attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } }\n"
        "  node_def { name: 'as' op: 'Assert' input: 'k:output:0' input: 'i'\n"
        "    attr { key: 'T' value { list { type: DT_FLOAT } } } }\n"
        "  node_def { name: 'n' op: 'Neg' input: 'i' input: '^as' attr { key: 'T' value { type: DT_FLOAT } } }\n"
        "  ret { key: 'o' value: 'n:y:0' } } }\n";
    gn_graph *g = gn_test_load_text(text, 1);
    const char *fetch[] = {"y", "z"};
    gn_save_params p = fetch_params(fetch, 2);
    char *d0 = tmp("strip_off"), *d1 = tmp("strip_on");
    save_ok(g, d0, NULL, &p);
    save_ok(g, d1, "{'experimental_debug_stripper': True}", &p);
    Tensorflow__SavedModel *s0 = read_sm(d0), *s1 = read_sm(d1);
    const Tensorflow__NodeDef *a0 = find_node(s0->meta_graphs[0]->graph_def, NULL, "a");
    const Tensorflow__NodeDef *a1 = find_node(s1->meta_graphs[0]->graph_def, NULL, "a");
    assert_string_equal(a0->op, "Assert");
    assert_string_equal(a1->op, "NoOp");
    assert_int_equal(a1->n_attr, 0);
    assert_int_equal(a1->n_input, 2);
    assert_string_equal(a1->input[0], "^x");
    assert_string_equal(a1->input[1], "^c");
    const Tensorflow__NodeDef *f0 = find_node(s0->meta_graphs[0]->graph_def, "F", "as");
    const Tensorflow__NodeDef *f1 = find_node(s1->meta_graphs[0]->graph_def, "F", "as");
    assert_string_equal(f0->op, "Assert");
    assert_string_equal(f1->op, "NoOp");
    assert_int_equal(f1->n_attr, 0);
    assert_int_equal(f1->n_input, 2);
    assert_string_equal(f1->input[0], "^k");
    assert_string_equal(f1->input[1], "^i");
    tensorflow__saved_model__free_unpacked(s0, NULL);
    tensorflow__saved_model__free_unpacked(s1, NULL);
    /* the stripped SavedModel computes the same */
    gn_graph *b = gn_test_load(d1);
    gn_session *s = NULL;
    assert_int_equal(gn_session_new(b, NULL, &s), GN_OK);
    float xv[2] = {1.5f, -2.0f};
    gn_tensor x;
    memset(&x, 0, sizeof x);
    x.dtype = 1;
    x.rank = 1;
    x.dims[0] = 2;
    x.data = xv;
    x.nbytes = sizeof xv;
    const char *fn = "x:0", *xn[2] = {"y:0", "z:0"};
    gn_tensor out[2];
    memset(out, 0, sizeof out);
    if (gn_session_run(s, &fn, &x, 1, xn, out, 2) != GN_OK) fail_msg("%s", gn_session_errmsg(s));
    assert_true(((float *)out[0].data)[0] == 1.5f && ((float *)out[0].data)[1] == -2.0f);
    assert_true(((float *)out[1].data)[0] == -1.5f && ((float *)out[1].data)[1] == 2.0f);
    gn_tensor_free(&out[0]);
    gn_tensor_free(&out[1]);
    gn_session_free(s);
    gn_graph_free(b);
    gn_graph_free(g);
}

/* Counts nodes (graph and functions) of the io ops and those on device dev. */
static void count_io(const Tensorflow__GraphDef *gd, const char *dev, int *n, int *on)
{
    static const char *const ops[] = {"SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename"};
    *n = *on = 0;
    for (size_t f = 0; f <= (gd->library ? gd->library->n_function : 0); f++) {
        size_t cnt = f == 0 ? gd->n_node : gd->library->function[f - 1]->n_node_def;
        Tensorflow__NodeDef **nodes = f == 0 ? gd->node : gd->library->function[f - 1]->node_def;
        for (size_t i = 0; i < cnt; i++)
            for (size_t k = 0; k < 4; k++)
                if (strcmp(nodes[i]->op, ops[k]) == 0) {
                    (*n)++;
                    if (strcmp(nodes[i]->device, dev) == 0) (*on)++;
                }
    }
}

static void test_io_device(void **state)
{
    (void)state;
    char src[1024];
    if (!gn_test_corpus(HP2_TF2, src, sizeof src)) skip();
    gn_graph *g = gn_test_load(src);
    const char *dev = "/job:localhost/replica:0/task:0/device:CPU:0";
    char *d0 = tmp("io_off"), *d1 = tmp("io_on");
    save_ok(g, d0, NULL, NULL);
    save_ok(g, d1, "{'experimental_io_device': '/job:localhost/replica:0/task:0/device:CPU:0'}", NULL);
    Tensorflow__SavedModel *s0 = read_sm(d0), *s1 = read_sm(d1);
    int n0, on0, n1, on1;
    count_io(s0->meta_graphs[0]->graph_def, dev, &n0, &on0);
    count_io(s1->meta_graphs[0]->graph_def, dev, &n1, &on1);
    /* the traced save function: ShardedFilename, SaveV2, MergeV2Checkpoints; restore: RestoreV2 */
    assert_int_equal(n0, 4);
    assert_int_equal(on0, 0);
    assert_int_equal(n1, 4);
    assert_int_equal(on1, 4);
    tensorflow__saved_model__free_unpacked(s0, NULL);
    tensorflow__saved_model__free_unpacked(s1, NULL);
    gn_graph_free(g);
}

/* Copies a SavedModel into dir with one variable of its object graph given a
 * device and a distributed component. */
static void make_variable_with_device(const char *src, const char *dir)
{
    assert_int_equal(gn_test_sh(NULL, "cp -r '%s' '%s' && rm -f '%s/fingerprint.pb'", src, dir, dir), 0);
    Tensorflow__SavedModel *sm = read_sm(dir);
    Tensorflow__SavedObjectGraph *og = sm->meta_graphs[0]->object_graph_def;
    assert_non_null(og);
    static Tensorflow__SavedVariable comp = TENSORFLOW__SAVED_VARIABLE__INIT;
    static Tensorflow__SavedVariable *comps[1] = {&comp};
    comp.name = "a/replica_1";
    comp.device = "/job:localhost/replica:0/task:0/device:CPU:1";
    Tensorflow__SavedVariable *v = NULL;
    for (size_t i = 0; i < og->n_nodes && !v; i++)
        if (og->nodes[i]->kind_case == TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE) v = og->nodes[i]->variable;
    assert_non_null(v);
    Tensorflow__SavedVariable saved = *v;
    v->device = "/job:localhost/replica:0/task:0/device:CPU:0";
    v->n_experimental_distributed_variable_components = 1;
    v->experimental_distributed_variable_components = comps;
    size_t n = tensorflow__saved_model__get_packed_size(sm);
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    tensorflow__saved_model__pack(sm, buf);
    FILE *f = fopen(cat(dir, "saved_model.pb"), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    free(buf);
    *v = saved;   /* back as unpacked, so free_unpacked frees only its own memory */
    tensorflow__saved_model__free_unpacked(sm, NULL);
}

static const Tensorflow__SavedVariable *first_variable(const Tensorflow__SavedModel *sm)
{
    const Tensorflow__SavedObjectGraph *og = sm->meta_graphs[0]->object_graph_def;
    for (size_t i = 0; i < og->n_nodes; i++)
        if (og->nodes[i]->kind_case == TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE) return og->nodes[i]->variable;
    return NULL;
}

static void test_variable_policy(void **state)
{
    (void)state;
    char src[1024];
    if (!gn_test_corpus(HP2_TF2, src, sizeof src)) skip();
    char *with_dev = tmp("vp_src");
    make_variable_with_device(src, with_dev);
    gn_graph *g = gn_test_load(with_dev);
    static const char *const pol[] = {"None", "'save_variable_devices'", "VariablePolicy.EXPAND_DISTRIBUTED_VARIABLES"};
    for (int k = 0; k < 3; k++) {
        char opts[128], name[32];
        PATHF(opts, sizeof opts, "{'experimental_variable_policy': %s}", pol[k]);
        PATHF(name, sizeof name, "vp%d", k);
        char *d = tmp(name);
        save_ok(g, d, opts, NULL);
        Tensorflow__SavedModel *sm = read_sm(d);
        const Tensorflow__SavedVariable *v = first_variable(sm);
        assert_non_null(v);
        assert_string_equal(v->device, k == 0 ? "" : "/job:localhost/replica:0/task:0/device:CPU:0");
        assert_int_equal(v->n_experimental_distributed_variable_components, k == 2 ? 1 : 0);
        if (k == 2) assert_string_equal(v->experimental_distributed_variable_components[0]->device,
                                        "/job:localhost/replica:0/task:0/device:CPU:1");
        tensorflow__saved_model__free_unpacked(sm, NULL);
    }
    gn_graph_free(g);
}

static void test_custom_gradients(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text("node { name: 'y' op: 'G' }\n"
                            "library { function { signature { name: 'G' output_arg { name: 'o' type: DT_FLOAT } }\n"
                            "  node_def { name: 'k' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
                            "    attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 1 } } } }\n"
                            "  ret { key: 'o' value: 'k:output:0' } }\n"
                            "  registered_gradients { gradient_func: 'G' registered_op_type: 'MyCustomGrad' } }\n", 1);
    const char *fetch[] = {"y"};
    gn_save_params p = fetch_params(fetch, 1);
    char *d1 = tmp("cg_on"), *d0 = tmp("cg_off");
    save_ok(g, d1, NULL, &p);
    save_ok(g, d0, "{'experimental_custom_gradients': False}", &p);
    Tensorflow__SavedModel *s1 = read_sm(d1), *s0 = read_sm(d0);
    const Tensorflow__FunctionDefLibrary *l1 = s1->meta_graphs[0]->graph_def->library;
    const Tensorflow__FunctionDefLibrary *l0 = s0->meta_graphs[0]->graph_def->library;
    assert_int_equal(l1->n_registered_gradients, 1);
    assert_string_equal(l1->registered_gradients[0]->gradient_func, "G");
    assert_string_equal(l1->registered_gradients[0]->registered_op_type, "MyCustomGrad");
    assert_int_equal(l0->n_registered_gradients, 0);
    assert_int_equal(l0->n_function, 1);
    tensorflow__saved_model__free_unpacked(s1, NULL);
    tensorflow__saved_model__free_unpacked(s0, NULL);
    gn_graph_free(g);
}

static void test_image_format_small_model(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(NS_GRAPH, 1);
    const char *fetch[] = {"y"};
    gn_save_params p = fetch_params(fetch, 1);
    char *d0 = tmp("img_off"), *d1 = tmp("img_on");
    save_ok(g, d0, NULL, &p);
    save_ok(g, d1, "{'experimental_image_format': True}", &p);
    /* as TensorFlow's splitter when no chunking is needed: a plain saved_model.pb */
    assert_false(gn_test_file_exists(cat(d1, "saved_model.cpb")));
    assert_true(same_file(cat(d0, "saved_model.pb"), cat(d1, "saved_model.pb")));
    gn_graph_free(g);
}

/* HighwayHash-64 with Riegeli's key: values from the reference implementation
 * (the portable HighwayHash64 TensorFlow's runtime exports), data[i] = 7i + 3. */
static void test_highwayhash(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        uint64_t h;
    } v[] = {{0, 0x72c3b1e9c0139fe1ull},   {1, 0x4dcd0168117850c8ull},    {3, 0x3f7d9179c416aa8bull},
             {4, 0xd68f71556126a0f8ull},   {7, 0x9eb7251581efe84aull},    {16, 0xc0190b8aa768ad39ull},
             {17, 0x2168b216409cd1c3ull},  {20, 0x2ece15d60f6347f9ull},   {31, 0x18533e0d730a4584ull},
             {32, 0x6a2c29f49d855647ull},  {33, 0xa56314eb640ed7efull},   {63, 0x2139360ba9bb718aull},
             {64, 0x6a09726d1c35ab4eull},  {100, 0xd2771239857843abull},  {1000, 0x851e84e8d1e6e97dull}};
    uint8_t data[1000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 3);
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
        if (gn__highwayhash64(gn__riegeli_hash_key, data, v[k].n) != v[k].h) fail_msg("length %zu", v[k].n);
        /* the same through appends of uneven pieces */
        gn__hh s;
        gn__hh_start(&s, gn__riegeli_hash_key);
        for (size_t off = 0, step = 1; off < v[k].n; off += step, step = step * 3 % 37 + 1)
            gn__hh_append(&s, data + off, off + step <= v[k].n ? step : v[k].n - off);
        assert_true(gn__hh_finish64(&s) == v[k].h);
    }
}

/* The first 64 bytes of every Riegeli/records file (its format document). */
static const uint8_t riegeli_signature[64] = {
    0x83, 0xaf, 0x70, 0xd1, 0x0d, 0x88, 0x4a, 0x3f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x91, 0xba, 0xc2, 0x3c, 0x92, 0x87, 0xe1, 0xa9,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe1, 0x9f, 0x13, 0xc0, 0xe9, 0xb1, 0xc3, 0x72,
    0x73, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

/* Records across several 64 KiB blocks read back with their positions. */
static void test_riegeli_blocks(void **state)
{
    (void)state;
    char *path = tmp("blocks.riegeli");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    gn__riegeli_writer w;
    gn__err e;
    memset(&e, 0, sizeof e);
    assert_int_equal(gn__riegeli_writer_start(&w, f, path, &e), GN_OK);
    size_t sizes[] = {0, 10, 65536 - 64 - 40 - 3, 70000, 5, 200000, 1};
    uint64_t pos[7];
    uint8_t *big = malloc(200000);
    assert_non_null(big);
    for (size_t i = 0; i < 200000; i++) big[i] = (uint8_t)(i * 131 + 17);
    for (int i = 0; i < 7; i++) {
        const void *parts[1] = {big};
        assert_int_equal(gn__riegeli_write_record(&w, 1, parts, &sizes[i], &pos[i], &e), GN_OK);
    }
    fclose(f);
    size_t n;
    uint8_t *file = gn_test_slurp(path, &n);
    assert_non_null(file);
    assert_true(n > 4 * 65536);
    assert_memory_equal(file, riegeli_signature, 64);
    assert_int_equal(pos[0], 64);
    gn__riegeli_record *r = NULL;
    size_t nr = 0;
    if (gn__riegeli_read(file, n, "blocks.riegeli", &r, &nr, &e) != GN_OK) fail_msg("%s", e.msg);
    assert_int_equal(nr, 7);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(r[i].pos, pos[i]);
        assert_int_equal(r[i].len, sizes[i]);
        if (sizes[i]) assert_memory_equal(r[i].data, big, sizes[i]);
    }
    gn__riegeli_records_free(r, nr);
    /* every block header says where its chunk starts and ends */
    for (size_t b = 65536; b + 24 <= n; b += 65536) {
        uint64_t prev = 0, next = 0;
        for (int k = 7; k >= 0; k--) {
            prev = prev << 8 | file[b + 8 + (size_t)k];
            next = next << 8 | file[b + 16 + (size_t)k];
        }
        bool found = false;
        for (int i = 0; i < 7; i++) found |= pos[i] == b - prev;
        assert_true(found);
        assert_true(next > 0);
    }
    /* a flipped byte inside a record is caught by the chunk's data hash */
    file[pos[3] + 40 + 100] ^= 1;
    assert_int_equal(gn__riegeli_read(file, n, "blocks.riegeli", &r, &nr, &e), GN_ERR_PARSE);
    char want[128];
    snprintf(want, sizeof want, "blocks.riegeli: chunk at byte %llu: data hash mismatch", (unsigned long long)pos[3]);
    assert_string_equal(e.msg, want);
    free(file);
    free(big);
}

/* experimental_image_format on a model past the splitter's maximum (made
 * small here, as TensorFlow's debug_set_max_size does): saved_model.cpb, a
 * Riegeli file whose chunks merge back into the very SavedModel the plain
 * save writes, and which gn_graph_load reads. */
static void test_image_format_chunked(void **state)
{
    (void)state;
    char src[1024];
    gn_test_data("golden/cnn_bn_residual.pb", src, sizeof src);
    gn_graph *g = gn_test_load(src);
    const char *fetch[] = {"Identity:0"};
    gn_save_params p = fetch_params(fetch, 1);
    char *d0 = tmp("cpb_off"), *d1 = tmp("cpb_on");
    save_ok(g, d0, NULL, &p);
    p.chunk_max_size = 6000;
    save_ok(g, d1, "{'experimental_image_format': True}", &p);
    assert_false(gn_test_file_exists(cat(d1, "saved_model.pb")));
    size_t n;
    uint8_t *cpb = gn_test_slurp(cat(d1, "saved_model.cpb"), &n);
    assert_non_null(cpb);
    assert_memory_equal(cpb, riegeli_signature, 64);
    /* the metadata: constants' bytes, large nodes, node ranges and the GraphDef as chunks */
    gn__riegeli_record *r = NULL;
    size_t nr = 0;
    gn__err e;
    memset(&e, 0, sizeof e);
    if (gn__riegeli_read(cpb, n, "saved_model.cpb", &r, &nr, &e) != GN_OK) fail_msg("%s", e.msg);
    Tensorflow__ProtoSplitter__ChunkMetadata *md =
        tensorflow__proto_splitter__chunk_metadata__unpack(NULL, r[nr - 1].len, r[nr - 1].data);
    assert_non_null(md);
    assert_int_equal(md->version->splitter_version, 1);
    assert_int_equal(md->n_chunks, nr - 1);
    size_t bytes_chunks = 0;
    for (size_t i = 0; i < md->n_chunks; i++) {
        assert_int_equal(md->chunks[i]->offset, r[i].pos);
        assert_int_equal(md->chunks[i]->size, r[i].len);
        bytes_chunks += md->chunks[i]->type == TENSORFLOW__PROTO_SPLITTER__CHUNK_INFO__TYPE__BYTES;
    }
    assert_true(bytes_chunks == 0);   /* no single node reaches the maximum here */
    assert_true(md->n_chunks >= 4);
    assert_true(md->message->has_chunk_index && md->message->chunk_index == 0);
    /* the GraphDef itself became chunk 1: field tag meta_graphs[0].graph_def */
    const Tensorflow__ProtoSplitter__ChunkedField *last = md->message->chunked_fields[md->message->n_chunked_fields - 1];
    assert_int_equal(last->n_field_tag, 3);
    assert_int_equal(last->field_tag[0]->field, 2);
    assert_int_equal(last->field_tag[1]->index, 0);
    assert_int_equal(last->field_tag[2]->field, 2);
    assert_int_equal(last->message->chunk_index, 1);
    tensorflow__proto_splitter__chunk_metadata__free_unpacked(md, NULL);
    gn__riegeli_records_free(r, nr);
    /* merged back: the SavedModel of the plain save, byte for byte once re-serialized */
    uint8_t *merged = NULL, *repacked = NULL;
    size_t mlen = 0, rlen = 0, plen = 0;
    if (gn__savedmodel_read_chunked(cat(d1, "saved_model.cpb"), &merged, &mlen, &e) != GN_OK) fail_msg("%s", e.msg);
    Tensorflow__SavedModel *sm = tensorflow__saved_model__unpack(NULL, mlen, merged);
    assert_non_null(sm);
    assert_int_equal(gn__pack_deterministic(&sm->base, &repacked, &rlen, &e), GN_OK);
    uint8_t *plain = gn_test_slurp(cat(d0, "saved_model.pb"), &plen);
    assert_int_equal(rlen, plen);
    assert_memory_equal(repacked, plain, plen);
    tensorflow__saved_model__free_unpacked(sm, NULL);
    free(merged);
    free(repacked);
    free(plain);
    /* fingerprint.pb: producer 2 for a chunked image */
    size_t fl;
    uint8_t *fb = gn_test_slurp(cat(d1, "fingerprint.pb"), &fl);
    Tensorflow__FingerprintDef *fp = tensorflow__fingerprint_def__unpack(NULL, fl, fb);
    assert_non_null(fp);
    assert_int_equal(fp->version->producer, 2);
    tensorflow__fingerprint_def__free_unpacked(fp, NULL);
    free(fb);
    /* and it loads and runs like the plain one */
    gn_graph *g0 = gn_test_load(d0), *g1 = gn_test_load(d1);
    size_t s0, s1;
    unsigned char *b0 = serialize(g0, &s0), *b1 = serialize(g1, &s1);
    assert_int_equal(s0, s1);
    assert_memory_equal(b0, b1, s0);
    free(b0);
    free(b1);
    expect_same_signatures(g0, g1, "chunked");
    gn_graph_free(g0);
    gn_graph_free(g1);
    /* a corrupted chunk: the load names the file and the byte */
    cpb[200] ^= 0x40;   /* inside the first record's chunk (the SavedModel itself) */
    char *d2 = tmp("cpb_bad");
    gn_test_sh(NULL, "cp -r '%s' '%s'", d1, d2);
    FILE *f = fopen(cat(d2, "saved_model.cpb"), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(cpb, 1, n, f), n);
    fclose(f);
    gn_graph *gb = NULL;
    assert_int_equal(gn_graph_load(d2, NULL, &gb), GN_ERR_PARSE);
    assert_non_null(strstr(gn_graph_errmsg(gb), "saved_model.cpb: chunk at byte 64: data hash mismatch"));
    gn_graph_free(gb);
    free(cpb);
    /* a maximum below the largest Const: its tensor bytes become a BYTES chunk
     * (tag ...node[20].attr["value"].tensor.tensor_content) and it still merges back */
    p.chunk_max_size = 3000;
    char *d4 = tmp("cpb_bytes");
    save_ok(g, d4, "{'experimental_image_format': True}", &p);
    cpb = gn_test_slurp(cat(d4, "saved_model.cpb"), &n);
    assert_non_null(cpb);
    if (gn__riegeli_read(cpb, n, "saved_model.cpb", &r, &nr, &e) != GN_OK) fail_msg("%s", e.msg);
    md = tensorflow__proto_splitter__chunk_metadata__unpack(NULL, r[nr - 1].len, r[nr - 1].data);
    assert_non_null(md);
    bytes_chunks = 0;
    for (size_t i = 0; i < md->n_chunks; i++)
        if (md->chunks[i]->type == TENSORFLOW__PROTO_SPLITTER__CHUNK_INFO__TYPE__BYTES) {
            bytes_chunks++;
            for (size_t k = 0; k < md->message->n_chunked_fields; k++) {
                const Tensorflow__ProtoSplitter__ChunkedField *cf = md->message->chunked_fields[k];
                if (cf->message->chunk_index != i) continue;
                assert_int_equal(cf->n_field_tag, 9);
                assert_int_equal(cf->field_tag[4]->index, 20);
                assert_int_equal(cf->field_tag[5]->field, 5);
                assert_string_equal(cf->field_tag[6]->map_key->s, "value");
                assert_int_equal(cf->field_tag[8]->field, 4);
            }
        }
    assert_int_equal(bytes_chunks, 1);
    tensorflow__proto_splitter__chunk_metadata__free_unpacked(md, NULL);
    gn__riegeli_records_free(r, nr);
    free(cpb);
    if (gn__savedmodel_read_chunked(cat(d4, "saved_model.cpb"), &merged, &mlen, &e) != GN_OK) fail_msg("%s", e.msg);
    sm = tensorflow__saved_model__unpack(NULL, mlen, merged);
    assert_non_null(sm);
    assert_int_equal(gn__pack_deterministic(&sm->base, &repacked, &rlen, &e), GN_OK);
    plain = gn_test_slurp(cat(d0, "saved_model.pb"), &plen);
    assert_int_equal(rlen, plen);
    assert_memory_equal(repacked, plain, plen);
    tensorflow__saved_model__free_unpacked(sm, NULL);
    free(merged);
    free(repacked);
    free(plain);
    /* a node over the maximum that is not a Const cannot be split */
    p.chunk_max_size = 300;
    gn_save_options o;
    opts_parse(&o, "{'experimental_image_format': True}");
    char *d3 = tmp("cpb_refused");
    gn_status st = gn_savedmodel_save(g, d3, &o, &p);
    gn_save_options_clear(&o);
    if (st == GN_OK) fail_msg("saved with a 300-byte maximum");
    assert_int_equal(st, GN_ERR_UNSUPPORTED);
    assert_non_null(strstr(gn_graph_errmsg(g), "only Const nodes (with a numeric tensor) can be split further"));
    assert_false(gn_test_file_exists(d3));
    gn_graph_free(g);
}

static bool has_op(const Tensorflow__GraphDef *gd, const char *op)
{
    for (size_t i = 0; i < gd->n_node; i++)
        if (strcmp(gd->node[i]->op, op) == 0) return true;
    return false;
}

static void test_skip_saver(void **state)
{
    (void)state;
    char src[1024];
    if (!gn_test_corpus(HP2_TF1, src, sizeof src)) skip();
    gn_graph *g = gn_test_load(src);
    char *d0 = tmp("skip_off"), *d1 = tmp("skip_on");
    save_ok(g, d0, NULL, NULL);
    save_ok(g, d1, "{'experimental_skip_saver': True}", NULL);
    Tensorflow__SavedModel *s0 = read_sm(d0), *s1 = read_sm(d1);
    const Tensorflow__MetaGraphDef *m0 = s0->meta_graphs[0], *m1 = s1->meta_graphs[0];
    assert_non_null(m0->saver_def);
    assert_null(m1->saver_def);
    assert_true(has_op(m0->graph_def, "SaveV2") && has_op(m0->graph_def, "RestoreV2"));
    assert_false(has_op(m1->graph_def, "SaveV2") || has_op(m1->graph_def, "RestoreV2"));
    size_t saves0 = 0, saves1 = 0;
    for (size_t i = 0; i < m0->graph_def->n_node; i++) saves0 += strncmp(m0->graph_def->node[i]->name, "save/", 5) == 0;
    for (size_t i = 0; i < m1->graph_def->n_node; i++) saves1 += strncmp(m1->graph_def->node[i]->name, "save/", 5) == 0;
    assert_true(saves0 > 0);
    assert_int_equal(saves1, 0);
    assert_int_equal(m1->graph_def->n_node, m0->graph_def->n_node - saves0);
    /* the variables themselves and the checkpoint stay */
    assert_true(has_op(m1->graph_def, "VariableV2"));
    assert_true(same_file(cat(d0, "variables/variables.index"), cat(d1, "variables/variables.index")));
    tensorflow__saved_model__free_unpacked(s0, NULL);
    tensorflow__saved_model__free_unpacked(s1, NULL);
    gn_graph_free(g);
}

static bool has_node(const Tensorflow__GraphDef *gd, const char *tensor)
{
    size_t n = strcspn(tensor, ":");
    for (size_t i = 0; i < gd->n_node; i++)
        if (strlen(gd->node[i]->name) == n && strncmp(gd->node[i]->name, tensor, n) == 0) return true;
    return false;
}

/* experimental_skip_saver on a TF1 estimator export (resource variables): the
 * variables' snapshots ('dnn/hiddenlayer_0/kernel/Read/ReadVariableOp'), read
 * only by the save op, stay, since the variables collection names them and
 * TensorFlow's loader (tf.saved_model.load) looks them up there; the save and
 * restore ops go. */
static void test_skip_saver_keeps_collection_nodes(void **state)
{
    (void)state;
    char src[1024];
    if (!gn_test_corpus("tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__export__chicago-taxi__"
                        "1646034756",
                        src, sizeof src))
        skip();
    gn_graph *g = gn_test_load(src);
    char *d0 = tmp("skipc_off"), *d1 = tmp("skipc_on");
    save_ok(g, d0, NULL, NULL);
    save_ok(g, d1, "{'experimental_skip_saver': True}", NULL);
    Tensorflow__SavedModel *s0 = read_sm(d0), *s1 = read_sm(d1);
    const Tensorflow__MetaGraphDef *m0 = s0->meta_graphs[0], *m1 = s1->meta_graphs[0];
    assert_non_null(m0->saver_def);
    assert_null(m1->saver_def);
    assert_true(has_op(m0->graph_def, "SaveV2"));
    assert_false(has_op(m1->graph_def, "SaveV2") || has_op(m1->graph_def, "RestoreV2"));
    assert_true(has_node(m1->graph_def, "dnn/hiddenlayer_0/kernel/Read/ReadVariableOp:0"));
    /* every name of every VariableDef of the collections is a node of what was written */
    size_t checked = 0;
    for (size_t i = 0; i < m1->n_collection_def; i++) {
        const Tensorflow__CollectionDef *cd = m1->collection_def[i]->value;
        if (strcmp(m1->collection_def[i]->key, "variables") != 0) continue;
        assert_int_equal(cd->kind_case, TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST);
        for (size_t k = 0; k < cd->bytes_list->n_value; k++) {
            Tensorflow__VariableDef *vd = tensorflow__variable_def__unpack(NULL, cd->bytes_list->value[k].len,
                                                                            cd->bytes_list->value[k].data);
            assert_non_null(vd);
            const char *names[4] = {vd->variable_name, vd->initializer_name, vd->initial_value_name, vd->snapshot_name};
            for (int n = 0; n < 4; n++)
                if (*names[n] && !has_node(m1->graph_def, names[n]))
                    fail_msg("the variables collection names %s, which was dropped", names[n]);
            checked++;
            tensorflow__variable_def__free_unpacked(vd, NULL);
        }
    }
    assert_true(checked >= 8);
    tensorflow__saved_model__free_unpacked(s0, NULL);
    tensorflow__saved_model__free_unpacked(s1, NULL);
    gn_graph_free(g);
}

/* The sorted file names of dir (without . and ..), joined by ' '. */
static void list_dir(const char *dir, char *out, size_t cap)
{
    char *names[64];
    size_t n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 64)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) names[n++] = strdup(de->d_name);
    closedir(d);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(out);
        snprintf(out + l, cap - l, "%s%s", i ? " " : "", names[i]);
        free(names[i]);
    }
}

/* Every entry of two bundles the same (keys, entry protos) and their data files equal. */
static void expect_same_bundle(const char *a, const char *b)
{
    gn__bundle *x = NULL, *y = NULL;
    gn__err e;
    memset(&e, 0, sizeof e);
    if (gn__bundle_open(a, &x, &e) != GN_OK) fail_msg("%s: %s", a, e.msg);
    if (gn__bundle_open(b, &y, &e) != GN_OK) fail_msg("%s: %s", b, e.msg);
    assert_int_equal(gn__bundle_count(x), gn__bundle_count(y));
    for (size_t i = 0; i < gn__bundle_count(x); i++) {
        assert_string_equal(gn__bundle_key(x, i), gn__bundle_key(y, i));
        const Tensorflow__BundleEntryProto *ex = gn__bundle_entry(x, gn__bundle_key(x, i));
        const Tensorflow__BundleEntryProto *ey = gn__bundle_entry(y, gn__bundle_key(y, i));
        uint8_t bx[512], by[512];
        assert_true(tensorflow__bundle_entry_proto__get_packed_size(ex) <= sizeof bx);
        assert_true(tensorflow__bundle_entry_proto__get_packed_size(ey) <= sizeof by);
        size_t nx = tensorflow__bundle_entry_proto__pack(ex, bx), ny = tensorflow__bundle_entry_proto__pack(ey, by);
        if (nx != ny || memcmp(bx, by, nx) != 0) fail_msg("entry '%s' differs", gn__bundle_key(x, i));
    }
    gn__bundle_close(x);
    gn__bundle_close(y);
}

static void test_sharding_callback(void **state)
{
    (void)state;
    char src[1024];
    if (!gn_test_corpus(HP2_TF2, src, sizeof src)) skip();
    gn_graph *g = gn_test_load(src);
    char *d0 = tmp("shard_default"), *d1 = tmp("shard_task"), *d2 = tmp("shard_big");
    save_ok(g, d0, NULL, NULL);
    save_ok(g, d1, "{'experimental_sharding_callback': tf.train.experimental.ShardByTaskPolicy()}", NULL);
    save_ok(g, d2, "{'experimental_sharding_callback': MaxShardSizePolicy(max_shard_size=1024 * 1024)}", NULL);
    /* one task (this host's CPU): one data file, as without a callback */
    const char *files[] = {"variables/variables.index", "variables/variables.data-00000-of-00001", "saved_model.pb"};
    for (int i = 0; i < 3; i++) assert_true(same_file(cat(d0, files[i]), cat(d1, files[i])));
    /* a shard size that holds everything: the checkpoint rewritten (uncompressed
     * index blocks, as TensorFlow writes them) with the same entries and data */
    char names[1024];
    list_dir(cat(d2, "variables"), names, sizeof names);
    assert_string_equal(names, "variables.data-00000-of-00001 variables.index");
    assert_true(same_file(cat(d0, files[1]), cat(d2, files[1])));
    assert_true(same_file(cat(d0, files[2]), cat(d2, files[2])));
    expect_same_bundle(cat(d0, "variables/variables"), cat(d2, "variables/variables"));
    gn_graph_free(g);
}

/* MaxShardSizePolicy slices tensors across shards exactly as TensorFlow:
 * tests/data/savedmodel_sharding (tools/make_savedmodel_goldens.py sharded)
 * holds one module saved by TensorFlow plainly and with
 * MaxShardSizePolicy(200); saving the plain one with that policy gives
 * TensorFlow's variables/ byte for byte (ten data files, tensors cut along
 * several axes, a string vector, the object graph in the last shard). */
static void test_max_shard_size_like_tensorflow(void **state)
{
    (void)state;
    char plain[1024], want[1024];
    gn_test_data("savedmodel_sharding/plain", plain, sizeof plain);
    gn_test_data("savedmodel_sharding/max_shard_200/variables", want, sizeof want);
    gn_graph *g = gn_test_load(plain);
    char *d = tmp("shard_200");
    save_ok(g, d, "{'experimental_sharding_callback': tf.train.experimental.MaxShardSizePolicy(200)}", NULL);
    char got_names[2048], want_names[2048];
    list_dir(cat(d, "variables"), got_names, sizeof got_names);
    list_dir(want, want_names, sizeof want_names);
    assert_string_equal(got_names, want_names);
    assert_non_null(strstr(got_names, "variables.data-00009-of-00010"));
    char *save = NULL, vdir[1024];
    PATHF(vdir, sizeof vdir, "%s/variables", d);
    for (char *f = strtok_r(got_names, " ", &save); f; f = strtok_r(NULL, " ", &save))
        if (!same_file(cat(vdir, f), cat(want, f))) fail_msg("variables/%s differs from TensorFlow's", f);
    /* and reads back: every variable the same as the plain checkpoint's */
    gn_graph *g2 = gn_test_load(d);
    size_t n0 = 0, n1 = 0;
    assert_int_equal(gn_graph_variable_count(g, &n0), GN_OK);
    assert_int_equal(gn_graph_variable_count(g2, &n1), GN_OK);
    assert_int_equal(n0, 7);   /* the object graph is not a variable */
    assert_int_equal(n1, n0);
    gn__bundle *a = NULL, *b = NULL;
    gn__err e;
    memset(&e, 0, sizeof e);
    assert_int_equal(gn__bundle_open(cat(plain, "variables/variables"), &a, &e), GN_OK);
    assert_int_equal(gn__bundle_open(cat(d, "variables/variables"), &b, &e), GN_OK);
    assert_int_equal(gn__bundle_count(b), 8);
    for (size_t i = 0; i < gn__bundle_count(a); i++) {
        const char *key = gn__bundle_key(a, i);
        gn__tensor ta, tb;
        if (gn__bundle_read(a, key, &ta, &e) != GN_OK || gn__bundle_read(b, key, &tb, &e) != GN_OK)
            fail_msg("%s: %s", key, e.msg);
        assert_int_equal(ta.dtype, tb.dtype);
        assert_int_equal(ta.rank, tb.rank);
        assert_int_equal(gn__tensor_numel(&ta), gn__tensor_numel(&tb));
        if (ta.dtype == 7) {
            const gn__tstring *sa = ta.data, *sb = tb.data;
            for (int64_t k = 0; k < gn__tensor_numel(&ta); k++) {
                assert_int_equal(sa[k].len, sb[k].len);
                assert_memory_equal(sa[k].ptr, sb[k].ptr, sa[k].len);
            }
        } else {
            assert_int_equal(ta.nbytes, tb.nbytes);
            assert_memory_equal(ta.data, tb.data, ta.nbytes);
        }
        gn__tensor_release(&ta);
        gn__tensor_release(&tb);
    }
    gn__bundle_close(a);
    gn__bundle_close(b);
    gn_graph_free(g2);
    /* a tensor none of whose rows fits an empty shard: TensorFlow's policy never ends there */
    save_fails(g, tmp("shard_tiny"), "{'experimental_sharding_callback': MaxShardSizePolicy(3)}", NULL,
               GN_ERR_UNSUPPORTED,
               "experimental_sharding_callback: MaxShardSizePolicy(3): key 'a/.ATTRIBUTES/VARIABLE_VALUE': no slice "
               "of the tensor fits in an empty shard (one hyperplane along axis 0 is 24 bytes; TensorFlow's policy "
               "never finishes here)");
    gn_graph_free(g);
}

static void test_extra_tags(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(NS_GRAPH, 1);
    const char *fetch[] = {"y"};
    gn_save_params p = fetch_params(fetch, 1);
    p.tags = "serve,tpu";
    char *d = tmp("tags");
    save_ok(g, d, "{'extra_tags': ['gpu', 'serve']}", &p);
    gn_graph *b = NULL;
    gn_load_options lo;
    gn_load_options_init(&lo);
    lo.tags = "serve,tpu,gpu";
    if (gn_graph_load(d, &lo, &b) != GN_OK) fail_msg("%s", gn_graph_errmsg(b));
    assert_string_equal(gn_graph_tags(b), "serve,tpu,gpu");
    gn_graph_free(b);
    gn_graph_free(g);
}

/* ---- options text ----------------------------------------------------------------------- */
static void test_options_text(void **state)
{
    (void)state;
    gn_save_options o;
    gn_save_options_init(&o);
    char *s = gn_save_options_to_string(&o);
    assert_string_equal(s, "{'namespace_whitelist': None, 'save_debug_info': False, 'function_aliases': None, "
                           "'experimental_debug_stripper': False, 'experimental_io_device': None, "
                           "'experimental_variable_policy': VariablePolicy.NONE, 'experimental_custom_gradients': True, "
                           "'experimental_image_format': False, 'experimental_skip_saver': False, "
                           "'experimental_sharding_callback': None, 'extra_tags': None}");
    gn_free(s);
    char err[256];
    assert_int_equal(gn_save_options_parse(&o,
                                           "{'namespace_whitelist': ['A', \"B\"], 'save_debug_info': True,\n"
                                           " 'function_aliases': {'f': 'fn_1'}, 'experimental_debug_stripper': True,\n"
                                           " 'experimental_io_device': '/cpu:0', 'experimental_variable_policy': "
                                           "tf.saved_model.experimental.VariablePolicy.SAVE_VARIABLE_DEVICES,\n"
                                           " 'experimental_custom_gradients': False, 'experimental_image_format': True,\n"
                                           " 'experimental_skip_saver': True, 'experimental_sharding_callback': "
                                           "MaxShardSizePolicy(4096), 'extra_tags': ['gpu'],}",
                                           err, sizeof err),
                     GN_OK);
    s = gn_save_options_to_string(&o);
    assert_string_equal(s, "{'namespace_whitelist': ['A', 'B'], 'save_debug_info': True, 'function_aliases': {'f': 'fn_1'}, "
                           "'experimental_debug_stripper': True, 'experimental_io_device': '/cpu:0', "
                           "'experimental_variable_policy': VariablePolicy.SAVE_VARIABLE_DEVICES, "
                           "'experimental_custom_gradients': False, 'experimental_image_format': True, "
                           "'experimental_skip_saver': True, 'experimental_sharding_callback': MaxShardSizePolicy(4096), "
                           "'extra_tags': ['gpu']}");
    gn_free(s);
    assert_int_equal(o.max_shard_size, 4096);
    assert_int_equal(o.experimental_sharding_callback, GN_SHARDING_MAX_SHARD_SIZE);
    gn_save_options_clear(&o);
    assert_int_equal(o.experimental_custom_gradients, 1);
    assert_null(o.internal);
    assert_int_equal(gn_save_options_parse(&o, "{'namespace_whitelist': []}", err, sizeof err), GN_OK);
    assert_int_equal(o.has_namespace_whitelist, 1);
    assert_int_equal(o.n_namespace_whitelist, 0);
    assert_int_equal(gn_save_options_parse(&o, "{'save_debug_infos': True}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 1: unknown SaveOptions field 'save_debug_infos'");
    assert_int_equal(gn_save_options_parse(&o, "{'save_debug_info': 1}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 20: 'save_debug_info' takes True or False");
    assert_int_equal(gn_save_options_parse(&o, "{'experimental_variable_policy': 'x'}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 33: 'experimental_variable_policy': 'x' is not one of None, "
                             "'save_variable_devices', 'expand_distributed_variables'");
    gn_save_options_clear(&o);
    /* Python's strings and integers: escapes, quoting back as repr does, 1_024 * 1024 */
    assert_int_equal(gn_save_options_parse(&o,
                                           "{'extra_tags': ('it\\'s', 'a\\\\b', '\\x41\\n'), "
                                           "'experimental_sharding_callback': "
                                           "tf.saved_model.experimental.sharding.MaxShardSizePolicy(max_shard_size=1_024 * 1024)}",
                                           err, sizeof err),
                     GN_OK);
    assert_int_equal(o.n_extra_tags, 3);
    assert_string_equal(o.extra_tags[0], "it's");
    assert_string_equal(o.extra_tags[1], "a\\b");
    assert_string_equal(o.extra_tags[2], "A\n");
    assert_int_equal(o.max_shard_size, 1048576);
    s = gn_save_options_to_string(&o);
    assert_non_null(strstr(s, "'experimental_sharding_callback': MaxShardSizePolicy(1048576), "
                              "'extra_tags': [\"it's\", 'a\\\\b', 'A\\n']}"));
    gn_free(s);
    assert_int_equal(gn_save_options_parse(&o, "{'experimental_sharding_callback': MaxShardSizePolicy(4294967296 * "
                                               "4294967296)}", err, sizeof err),
                     GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 54: MaxShardSizePolicy: max_shard_size does not fit in 64 bits");
    assert_int_equal(gn_save_options_parse(&o, "{'extra_tags': ['a', 'b}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 21: unterminated string");
    assert_int_equal(gn_save_options_parse(&o, "{'extra_tags': ['a' 'b']}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 20: expected ',' or ']'");
    assert_int_equal(gn_save_options_parse(&o, "{save_debug_info: True}", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "save options: at offset 1: expected a key in quotes or '}'");
    gn_save_options_clear(&o);
}

/* ---- failures leave nothing ---------------------------------------------------------------- */
static void test_failures_leave_nothing(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(NS_GRAPH, 1);
    const char *fetch[] = {"y"};
    gn_save_params p = fetch_params(fetch, 1);
    /* a directory that cannot be created: its parent is a file */
    char *file = tmp("plainfile");
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    char dir[1100];
    PATHF(dir, sizeof dir, "%s/sub", file);
    char msg[2048];
    PATHF(msg, sizeof msg, "%s: Not a directory", dir);
    save_fails(g, dir, NULL, &p, GN_ERR_IO, msg);
    /* an existing non-empty directory */
    char *full = tmp("full");
    assert_int_equal(gn_test_sh(NULL, "mkdir -p '%s' && touch '%s/x'", full, full), 0);
    PATHF(msg, sizeof msg, "%s: exists and is not empty (grapnel saves into a new or empty directory)", full);
    gn_save_options o;
    gn_save_options_init(&o);
    assert_int_equal(gn_savedmodel_save(g, full, &o, &p), GN_ERR_IO);
    assert_string_equal(gn_graph_errmsg(g), msg);
    /* an existing empty directory is fine */
    char *empty = tmp("emptydir");
    assert_int_equal(gn_test_sh(NULL, "mkdir -p '%s'", empty), 0);
    save_ok(g, empty, NULL, &p);
    assert_true(gn_test_file_exists(cat(empty, "saved_model.pb")));
    gn_graph_free(g);
    /* failing midway, after the variables were written: a missing asset */
    char src[1024];
    if (!gn_test_corpus(HP2_TF2, src, sizeof src)) return;
    char *copy = tmp("noasset_src");
    assert_int_equal(gn_test_sh(NULL, "cp -r '%s' '%s' && rm '%s/assets/foo.txt'", src, copy, copy), 0);
    g = gn_test_load(copy);
    char *out = tmp("noasset");
    PATHF(msg, sizeof msg, "%s/assets/foo.txt: No such file or directory", copy);
    save_fails(g, out, NULL, NULL, GN_ERR_IO, msg);
    gn_graph_free(g);
}

/* ---- the CLI ---------------------------------------------------------------------------------- */
static void test_cli(void **state)
{
    (void)state;
    char src[1024];
    gn_test_data("golden/cnn_bn_residual.pb", src, sizeof src);
    char *d = tmp("cli");
    char *out = NULL;
    int rc = gn_test_sh(&out, "'%s' save '%s' '%s' --feed x:0 --fetch Identity:0 --signature pred --tag serve,x "
                              "--save-options \"{'save_debug_info': True}\"", GN_CLI_PATH, src, d);
    if (rc != 0) fail_msg("exit %d: %s", rc, out);
    free(out);
    assert_true(gn_test_file_exists(cat(d, "debug/saved_model_debug_info.pb")));
    Tensorflow__SavedModel *sm = read_sm(d);
    assert_string_equal(sm->meta_graphs[0]->signature_def[0]->key, "pred");
    assert_int_equal(sm->meta_graphs[0]->meta_info_def->n_tags, 2);
    tensorflow__saved_model__free_unpacked(sm, NULL);
    char *d2 = tmp("cli_bad");
    rc = gn_test_sh(&out, "'%s' save '%s' '%s' --fetch Identity:0 --save-options \"{'nope': 1}\"", GN_CLI_PATH, src, d2);
    assert_int_equal(rc, 2);
    assert_string_equal(out, "grapnel save: --save-options: save options: at offset 1: unknown SaveOptions field 'nope'\n");
    free(out);
    assert_false(gn_test_file_exists(d2));
    rc = gn_test_sh(&out, "'%s' save '%s' '%s' --fetch Identity:0 --save-options \"{'namespace_whitelist': []}\"",
                    GN_CLI_PATH, src, d2);
    assert_int_equal(rc, 0);   /* no namespaced op in it */
    free(out);
}

/* ---- FarmHash --------------------------------------------------------------------------------- */
static void test_fingerprint64(void **state)
{
    (void)state;
    /* docs/reference_formats.md §B9: TensorFlow's stored values for the TF 2.14 half_plus_two export */
    char src[1024];
    if (!gn_test_corpus(HP2_TF2, src, sizeof src)) skip();
    size_t n;
    unsigned char *b = gn_test_slurp(cat(src, "saved_model.pb"), &n);
    assert_non_null(b);
    assert_true(gn__fingerprint64(b, n) == UINT64_C(3202314178945370836));
    free(b);
    b = gn_test_slurp(cat(src, "variables/variables.index"), &n);
    assert_non_null(b);
    assert_true(gn__fingerprint64(b, n) == UINT64_C(17568057568585441542));
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint64),
        cmocka_unit_test(test_options_text),
        cmocka_unit_test(test_roundtrip_corpus),
        cmocka_unit_test(test_tensorflow_loads_what_we_write),
        cmocka_unit_test(test_signature_from_feeds_and_fetches),
        cmocka_unit_test(test_namespace_whitelist),
        cmocka_unit_test(test_save_debug_info),
        cmocka_unit_test(test_function_aliases),
        cmocka_unit_test(test_debug_stripper),
        cmocka_unit_test(test_io_device),
        cmocka_unit_test(test_variable_policy),
        cmocka_unit_test(test_custom_gradients),
        cmocka_unit_test(test_image_format_small_model),
        cmocka_unit_test(test_highwayhash),
        cmocka_unit_test(test_riegeli_blocks),
        cmocka_unit_test(test_image_format_chunked),
        cmocka_unit_test(test_skip_saver),
        cmocka_unit_test(test_skip_saver_keeps_collection_nodes),
        cmocka_unit_test(test_sparse_signature_arg),
        cmocka_unit_test(test_sharding_callback),
        cmocka_unit_test(test_max_shard_size_like_tensorflow),
        cmocka_unit_test(test_extra_tags),
        cmocka_unit_test(test_failures_leave_nothing),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
