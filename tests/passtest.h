/* Helpers shared by the optimizer pass tests (tests/pass_*_test.c): graphs
 * from pbtxt text, a pass run with a gn__pass_ctx, the exact graph after, the
 * original and the rewritten graph run on the CPU backend and compared, the
 * corpus listing and the golden manifest. Include after testutil.h. */
#ifndef GRAPNEL_TESTS_PASSTEST_H
#define GRAPNEL_TESTS_PASSTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grapnel/grapnel.h"
#include "grapnel/optimizer.h"
#include "grapnel/runtime.h"
#include "graph/ir.h"
#include "ops/kernel.h"
#include "optimizer/pass.h"

/* ---- one kernel on one node (the kernels_*_test suites) -------------------------------- */
/* Graph text loaded, with the loader's validation or not; failures fail the test. */
gn_graph *gn_pt_kload(const char *text, int validate);
/* Placeholders in0..in{n-1} (dtype names dts[i]; DT_FLOAT for all when dts is
 * NULL) feeding node "n" of op, with the attrs text. */
gn_graph *gn_pt_kgraph(const char *op, int n_in, const char *const *dts, const char *attrs, int validate);
/* Bytes per element of dt as kernels hold it (a DT_STRING element is a gn__tstring). */
size_t gn_pt_kesize(int32_t dt);
/* A tensor borrowing data (not owned). */
gn__tensor gn_pt_ktensor(int32_t dt, int rank, const int64_t *dims, const void *data);
/* Runs node "n"'s kernel with the flags (GN__K_*) on in; out (n_out entries) zeroed first. */
gn_status gn_pt_krun(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out,
                     uint32_t flags, gn__err *err);
void gn_pt_krun_ok(gn_graph *g, const gn__tensor *in, uint32_t n_in, gn__tensor *out, uint32_t n_out, uint32_t flags);
void gn_pt_krelease(gn__tensor *t, uint32_t n);
/* The kernel fails with code and exactly msg (reference flags; outputs released). */
void gn_pt_kexpect_error(gn_graph *g, const gn__tensor *in, uint32_t n_in, uint32_t n_out, gn_status code,
                         const char *msg);

/* ---- graph text pieces (pbtxt) the suites build graphs from --------------------------------- */
#define TF "attr { key: 'T' value { type: DT_FLOAT } } "
#define TI "attr { key: 'T' value { type: DT_INT32 } } "
/* attrs: a type ("DT_INT32"), a bool ("true"), an int ("2"), a string, a list ("i: 1 i: 2") */
#define AT(k, t) "attr { key: '" k "' value { type: " t " } } "
#define AB(k, v) "attr { key: '" k "' value { b: " v " } } "
#define AINT(k, v) "attr { key: '" k "' value { i: " v " } } "
#define AS(k, v) "attr { key: '" k "' value { s: '" v "' } } "
#define AL(k, items) "attr { key: '" k "' value { list { " items " } } } "
/* a float32 Placeholder, without and with a shape ("dim { size: 2 } dim { size: 3 }") */
#define PH(n) "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
#define PH_SHAPE(n, shape)                                                                                         \
    "node { name: '" n "' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } "                       \
    "attr { key: 'shape' value { shape { " shape " } } } }\n"
/* a float32 op of one input */
#define UN(n, op, in) "node { name: '" n "' op: '" op "' input: '" in "' " TF "}\n"

/* ---- graphs and reports --------------------------------------------------------------------- */
gn_graph *gn_pt_load_text(const char *text);
/* Graph text built piece by piece (the buffer grows; start from {0}). */
typedef struct gn_pt_text {
    char *s;
    size_t n, cap;
} gn_pt_text;
void gn_pt_text_add(gn_pt_text *t, const char *fmt, ...) GN__PRINTF(2, 3);
/* A float32 Const node of the given dims, values uniform in [-1, 1) drawn
 * from the xorshift state *rng. */
void gn_pt_text_const(gn_pt_text *t, const char *name, int rank, const int64_t *dims, uint64_t *rng);
void gn_pt_text_free(gn_pt_text *t);
/* Loads the text (validated, as gn_pt_load_text) and frees it. */
gn_graph *gn_pt_text_load(gn_pt_text *t);
/* The next value of the xorshift64 state *s (13, 7, 17). */
uint64_t gn_pt_xorshift(uint64_t *s);
/* A dtype as graph text: short names f d h i l b u8 c (float, double, half,
 * int32, int64, bool, uint8, complex64) spelled out; "DT_..." as it is. */
const char *gn_pt_dt(const char *t);
/* Dims text "2,3" into dims (at most 8): the rank; "" a scalar (0), "?" an unknown rank (-1). */
int gn_pt_dims(const char *text, int64_t *dims);
/* "shape { dim { size: d } ... }" (rank < 0: "shape { unknown_rank: true }"). */
void gn_pt_text_shape(gn_pt_text *t, int rank, const int64_t *dims);
/* A Placeholder of dtype dt (gn_pt_dt) with a shape attr of the given dims. */
void gn_pt_text_ph_dims(gn_pt_text *t, const char *name, const char *dt, int rank, const int64_t *dims);
/* The same with dims as text (gn_pt_dims); NULL: no shape attr. */
void gn_pt_text_ph(gn_pt_text *t, const char *name, const char *dt, const char *dims);
/* A node: inputs "a,b:1,^c" (NULL or "": none), attrs raw text (NULL: none). */
void gn_pt_text_node(gn_pt_text *t, const char *name, const char *op, const char *inputs, const char *attrs);
/* The same with a type attr T of dtype dt (gn_pt_dt) before attrs. */
void gn_pt_text_op(gn_pt_text *t, const char *name, const char *op, const char *inputs, const char *dt,
                   const char *attrs);
/* A Const of dtype dt (gn_pt_dt), dims as text (NULL: a vector of the
 * values), values "1,2.5,3" as text (float_val, double_val, int64_val, else int_val). */
void gn_pt_text_cst(gn_pt_text *t, const char *name, const char *dt, const char *dims, const char *vals);
/* A Const of dtype dt whose every element is gen(ctx), written with the printf format fmt ("%.4g"). */
typedef double (*gn_pt_gen)(void *ctx);
void gn_pt_text_const_gen(gn_pt_text *t, const char *name, const char *dt, int rank, const int64_t *dims,
                          const char *fmt, gn_pt_gen gen, void *ctx);
gn_graph *gn_pt_clone(const gn_graph *g);
/* An empty report to collect a pass's events (gn_optimize with the meta
 * optimizer disabled hands one back). */
gn_report *gn_pt_new_report(void);
char *gn_pt_report_text(const gn_report *r);
void gn_pt_expect_report(const gn_report *r, const char *line);
void gn_pt_expect_no_report(const gn_report *r, const char *what);
void gn_pt_preserve(gn_graph *g, const char *name);
/* tensor "node:k" -> preserves node */
void gn_pt_preserve_tensor(gn_graph *g, const char *tensor);

/* Runs pass fn (id pass_id) over g (a body when fn_name is set) with fresh
 * options (disabled_patterns, toggle), then compacts, as the meta-optimizer
 * does. Returns c.changed. */
bool gn_pt_run_pass_on(gn__pass_fn fn, const char *pass_id, gn_graph *g, const gn_graph *lib, const char *fn_name,
                       gn_report *r, const char *disabled, int toggle);

/* ---- the exact graph after -------------------------------------------------------------------- */
void gn_pt_describe(const gn_graph *g, char *buf, size_t n);
bool gn_pt_attr_same(const Tensorflow__AttrValue *a, const Tensorflow__AttrValue *b);
/* "name = Op(in, in:1, ^ctl) {key=value, ...} @device" a live node, one a
 * line, sorted by name (a Placeholder's shape attr left out; a tensor attr
 * as dtype[dims]{first 8 values}); free() it. */
char *gn_pt_dump_sorted(const gn_graph *g);
void gn_pt_expect_dump_sorted(const gn_graph *g, const char *want);
/* Attribute values of node: a string, an int, a float (within 1e-7), a list of ints, a list of strings ("a,b"). */
void gn_pt_expect_attr_s(const gn_graph *g, const char *node, const char *key, const char *want);
void gn_pt_expect_attr_i(const gn_graph *g, const char *node, const char *key, int64_t want);
void gn_pt_expect_attr_f(const gn_graph *g, const char *node, const char *key, float want);
void gn_pt_expect_attr_ints(const gn_graph *g, const char *node, const char *key, const int64_t *want, size_t n);
void gn_pt_expect_attr_strs(const gn_graph *g, const char *node, const char *key, const char *want);
/* g has exactly the nodes of the graph `want` describes: names, ops, devices,
 * data inputs in order, control inputs as a set, attrs (by packed bytes). */
void gn_pt_expect_graph(gn_graph *g, const char *want);
/* The same check against a graph: g has exactly w's nodes, up to their order. */
void gn_pt_expect_same_graph(gn_graph *g, const gn_graph *w);
/* gn_pt_expect_graph with control inputs in order and every attr by its packed bytes. */
void gn_pt_expect_graph_strict(gn_graph *g, const char *want);

/* ---- running on the CPU backend ----------------------------------------------------------------- */
gn_tensor gn_pt_view(int32_t dtype, void *data, size_t nbytes, int32_t rank, const int64_t *dims);
void gn_pt_run_graph(const gn_graph *g, const char *const *fn, const gn_tensor *ft, size_t nf, const char *const *xn,
                     gn_tensor *out, size_t nx);
/* The rewritten graph gives what the original gave: every fetch (at most 16)
 * has the original's dtype and agrees within tol (gn_tensor_compare: rel L2;
 * 0 means f32 1e-5, ints exact); rel (when set) gets each fetch's rel L2. */
void gn_pt_expect_close(const gn_graph *before, const gn_graph *after, const char *const *fn, const gn_tensor *ft,
                        size_t nf, const char *const *xn, size_t nx, double tol, double *rel);
/* Random feeds for every live Placeholder of a graph (at most 16; dtype and
 * shape from its attrs; float, int32, uint8 or bool), uniform in [lo, hi]
 * from the xorshift seed (0: a fixed one). */
typedef struct gn_pt_feeds {
    const char *names[16];
    gn_tensor t[16];
    size_t n;
} gn_pt_feeds;
void gn_pt_feeds_random(const gn_graph *g, gn_pt_feeds *f, double lo, double hi, uint64_t seed);
void gn_pt_feeds_free(gn_pt_feeds *f);
/* gn_pt_expect_close (tol 0) on random feeds of before's Placeholders in [lo, hi]. */
void gn_pt_expect_same_random(const gn_graph *before, const gn_graph *after, const char *const *xn, size_t nx,
                              double lo, double hi);
/* The rewritten graph gives what the original gave (f32 rel L2 <= 1e-5, ints
 * exact); at most max_nx (<= 16) fetches. */
void gn_pt_expect_same_results(const gn_graph *before, const gn_graph *after, const char *const *fn,
                               const gn_tensor *ft, size_t nf, const char *const *xn, size_t nx, size_t max_nx);

/* ---- corpus and golden models ------------------------------------------------------------------ */
/* What the meta-optimizer preserves without fetches. */
void gn_pt_mark_default_preserved(gn_graph *g);
/* gn_pt_mark_default_preserved on every function body, plus its control returns */
void gn_pt_prepare_bodies(gn_graph *g);
/* the top level and the bodies */
void gn_pt_prepare(gn_graph *g);
uint32_t gn_pt_live_total(const gn_graph *g);
void gn_pt_check_valid(gn_graph *g, const char *what);
/* The corpus models under dir, one "./relative/path" a line, sorted; free() it. */
char *gn_pt_corpus_list(const char *dir);
/* Every corpus model (paths under GN_CORPUS_DIR) the suites run over (pass
 * suites, optimize_diff); the one list (passtest.c). */
#define GN_PT_CORPUS_MODELS 42
extern const char *const gn_pt_corpus_models[GN_PT_CORPUS_MODELS];
extern const size_t gn_pt_corpus_model_count;

/* Golden models (tests/data/golden/manifest.txt, read by gn_test_read_manifest;
 * a manifest that does not parse fails the test), with at most 4 feeds and
 * fetches each. */
typedef struct gn_pt_golden {
    char name[512], graph[512];
    char feed[4][512], feed_file[4][512];
    char fetch[4][512];
    size_t nf, nx;
} gn_pt_golden;
size_t gn_pt_read_manifest(gn_pt_golden *m, size_t max);
/* Loads golden model m (fails the test on a load error), reads its feeds into
 * feeds[] (release with gn_tensor_free) and sets fn[] / xn[] to its feed and
 * fetch names (at most 4 each); with preserve, marks them preserved in *g.
 * False (nothing loaded) when the model lives in a corpus that is absent. */
bool gn_pt_golden_open(const gn_pt_golden *m, gn_graph **g, gn_tensor *feeds, const char **fn, const char **xn,
                       bool preserve);

/* ---- gn_optimize with one pass ---------------------------------------------------------------- */
/* Options with every pass toggle OFF and pruning off: set the one to run. */
void gn_pt_options_alone(gn_options *o);
/* A target of one GPU of compute capability cc (90: sm_90). */
void gn_pt_target_gpu(gn_target *t, int cc);
/* gn_optimize(g, o) with the fetches and feeds; fails the test on an error, or
 * when the result does not validate or its fanouts do not check. Returns the
 * report as JSON (free() it). */
char *gn_pt_optimize_json(gn_graph *g, const gn_options *o, const char *const *fetches, size_t nx,
                          const char *const *feeds, size_t nf);
/* The JSON report has an event of kind ("rewrote"/"refused") for pattern
 * ("arithmetic.add_ops_rewrite") on node whose detail contains detail. */
void gn_pt_expect_json_event(const char *json, const char *kind, const char *pattern, const char *node,
                             const char *detail);
void gn_pt_expect_no_json_event(const char *json, const char *pattern);
/* Events of kind in the JSON report. */
size_t gn_pt_count_json_events(const char *json, const char *kind);

/* ---- a pass context with its own report (pass_dependency_test.c, pass_pruning_test.c) ----------- */
typedef struct gn_pt_fx {
    gn_options o;
    gn_target target;   /* cpu after gn_pt_fx_init; set kind/cc for GPU passes */
    gn_report *r;
    gn__err err;
    gn__pass_ctx c;
    int64_t us; /* time of the last pass call alone */
} gn_pt_fx;

void gn_pt_fx_init(gn_pt_fx *f, const char *disabled);
void gn_pt_fx_free(gn_pt_fx *f);
static inline void gn_pt_fx_pass(gn_pt_fx *f, const char *id) { f->c.pass_id = id; }
static inline void gn_pt_fx_gpu(gn_pt_fx *f, int cc) { gn_pt_target_gpu(&f->target, cc); }
/* Runs pass fn on g (a function body when fn_name is set), then checks the
 * graph and compacts it as the meta-optimizer does. Returns c.changed. */
bool gn_pt_fx_run_on(gn_pt_fx *f, gn__pass_fn fn, gn_graph *g, const char *fn_name);
static inline bool gn_pt_fx_run(gn_pt_fx *f, gn__pass_fn fn, gn_graph *g) { return gn_pt_fx_run_on(f, fn, g, NULL); }
char *gn_pt_fx_report_text(gn_pt_fx *f);
void gn_pt_fx_expect_event(gn_pt_fx *f, const char *text);
void gn_pt_fx_expect_no_event(gn_pt_fx *f, const char *text);
/* "name=Op(in, in:1, ^ctrl)@device; ..." over the live nodes in order; free() it */
char *gn_pt_dump(const gn_graph *g);
void gn_pt_expect_dump(const gn_graph *g, const char *want);
/* names: comma separated */
void gn_pt_preserve_list(gn_graph *g, const char *names);
/* Runs a (before) and b (after) on the same feeds and compares every fetch (at most 8). */
void gn_pt_check_same(const gn_graph *a, const gn_graph *b, const char *const *fn, const gn_tensor *ft, size_t nf,
                      const char *const *xn, size_t nx);

#endif
