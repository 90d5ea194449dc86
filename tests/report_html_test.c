/* The HTML report (include/grapnel/report_html.h, docs/html_report.md): the
 * page's data and safety from C, then the page itself in headless Chromium
 * (Debian's `chromium`; the browser tests skip with a message when it is not
 * installed: `make browser-deps` installs it). In the browser, `#selftest` in
 * the address makes the page open every scope, count what it drew, click the
 * node a fusion made and write the result as JSON into #gn-selftest, which
 * --dump-dom gives back; the counts must equal the JSON report's. A
 * screenshot of each page is kept as BUILD/testtmp/report_html-<model>.png. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "grapnel/report_html.h"
#include "testutil.h"

#define DS_CNN GN_TEST_DATA "/../../examples/models/ds_cnn_s.pb"

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0, l = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + l, needle)) n++;
    return n;
}

/* the integer after "key": in JSON text; -1 when absent */
static long long json_int(const char *json, const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(json, k);
    if (!p) return -1;
    p += strlen(k);
    while (*p == ' ') p++;
    return strtoll(p, NULL, 10);
}

/* nodes_before of the first main-graph pass and nodes_after of the last, and
 * the number of rewrites, from gn_report_to_json's text */
static void json_report_counts(const char *json, long long *before, long long *after, long long *rewrites)
{
    *before = *after = -1;
    for (const char *p = strstr(json, "{\"item\": \"main\", \"pass\""); p; p = strstr(p + 1, "{\"item\": \"main\", \"pass\"")) {
        if (*before < 0) *before = json_int(p, "nodes_before");
        *after = json_int(p, "nodes_after");
    }
    *rewrites = (long long)count_of(json, "\"kind\": \"rewrote\"");
}

static char *write_report(gn_html_params *hp, bool optimize, gn_report **rep_out, char *path, size_t pathlen)
{
    gn_graph *g = NULL, *before = NULL;
    assert_int_equal(gn_graph_load(DS_CNN, NULL, &g), GN_OK);
    assert_int_equal(gn_graph_clone(g, &before), GN_OK);
    gn_report *r = NULL;
    if (optimize) {
        gn_options o;
        gn_options_init(&o);
        assert_int_equal(gn_optimize(g, &o, NULL, &r), GN_OK);
    }
    hp->report = r;
    snprintf(path, pathlen, "%s/ds_cnn_api.html", gn_test_tmpdir());
    char err[512];
    assert_int_equal(gn_report_write_html(before, g, hp, path, err, sizeof err), GN_OK);
    assert_string_equal(err, "");
    gn_graph_free(before);
    gn_graph_free(g);
    if (rep_out) *rep_out = r;
    else gn_report_free(r);
    char *html = (char *)gn_test_slurp(path, NULL);
    assert_non_null(html);
    return html;
}

/* One file, nothing fetched: no address, no external script, style or font;
 * the three scripts (data, dagre, viewer) and the data as written. */
static void test_page_is_self_contained(void **state)
{
    (void)state;
    gn_html_params hp;
    gn_html_params_init(&hp);
    hp.title = "ds_cnn <model>";
    gn_report *r = NULL;
    char path[1024];
    char *html = write_report(&hp, true, &r, path, sizeof path);
    assert_null(strstr(html, "http://"));
    assert_null(strstr(html, "https://"));
    assert_null(strstr(html, "src="));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "@import"));
    assert_null(strstr(html, "url(http"));
    assert_int_equal(count_of(html, "<script"), 3);
    assert_int_equal(count_of(html, "</script>"), 3);
    assert_non_null(strstr(html, "<title>grapnel optimize report: ds_cnn &lt;model&gt;</title>"));
    assert_non_null(strstr(html, "\"title\": \"ds_cnn \\u003cmodel\\u003e\""));
    assert_non_null(strstr(html, "MIT licence, (c) 2012-2014 Chris Pettitt"));
    /* the report is embedded whole: every event of gn_report_to_json */
    char *json = NULL;
    assert_int_equal(gn_report_to_json(r, &json), GN_OK);
    assert_int_equal(count_of(html, "\"kind\": \"rewrote\""), count_of(json, "\"kind\": \"rewrote\""));
    assert_true(count_of(json, "\"kind\": \"rewrote\"") > 0);
    /* a fused node is written with its new op; a node the optimizer left alone as a reference */
    assert_non_null(strstr(html, "\"_FusedConv2D\""));
    gn_free(json);
    gn_report_free(r);
    free(html);
}

/* A string attr holding "</script>" cannot end the data element early. */
static void test_attr_text_is_escaped(void **state)
{
    (void)state;
    static const char pb[] =
        "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }\n"
        "  attr { key: \"_note\" value { s: \"</script><script>alert(1)</script>\" } } }\n"
        "node { name: \"scope/y\" op: \"Relu\" input: \"x\" attr { key: \"T\" value { type: DT_FLOAT } } }\n";
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load_buffer(pb, sizeof pb - 1, "t.pbtxt", NULL, &g), GN_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/escaped.html", gn_test_tmpdir());
    assert_int_equal(gn_report_write_html(g, NULL, NULL, path, NULL, 0), GN_OK);
    char *html = (char *)gn_test_slurp(path, NULL);
    assert_non_null(html);
    assert_int_equal(count_of(html, "</script>"), 3);
    assert_null(strstr(html, "alert(1)</script>"));
    assert_non_null(strstr(html, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));
    /* the graph: two nodes, x feeding scope/y; no after graph */
    assert_non_null(strstr(html, "{\"name\": [\"x\",\"scope/y\"],"));
    assert_non_null(strstr(html, "\"in\": [[],[0]]"));
    assert_non_null(strstr(html, "\"after\": null"));
    free(html);
    gn_graph_free(g);
}

static void test_write_errors(void **state)
{
    (void)state;
    char err[512];
    assert_int_equal(gn_report_write_html(NULL, NULL, NULL, "x.html", err, sizeof err), GN_ERR_ARG);
    assert_string_equal(err, "the HTML report needs a graph and a path");
    gn_graph *g = NULL;
    assert_int_equal(gn_graph_load(DS_CNN, NULL, &g), GN_OK);
    char path[1024];
    snprintf(path, sizeof path, "%s/no/such/dir/r.html", gn_test_tmpdir());
    assert_int_equal(gn_report_write_html(g, NULL, NULL, path, err, sizeof err), GN_ERR_IO);
    char want[1200];
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    assert_string_equal(err, want);
    gn_graph_free(g);
    /* the CLI says what --report html needs */
    char *out = NULL;
    assert_int_equal(gn_test_sh(&out, "%s optimize %s -o %s/o.pb --report html", GN_CLI_PATH, DS_CNN, gn_test_tmpdir()), 2);
    assert_non_null(strstr(out, "--report html needs --report-file FILE.html"));
    free(out);
    assert_int_equal(gn_test_sh(&out, "%s optimize %s -o %s/o.pb --report svg", GN_CLI_PATH, DS_CNN, gn_test_tmpdir()), 2);
    assert_non_null(strstr(out, "'svg' is not one of text, json, html"));
    free(out);
}

/* ---- in the browser ------------------------------------------------------------------- */
static const char *chromium(void)
{
    static char found[1024];
    const char *env = getenv("GN_CHROMIUM");
    if (env && env[0]) return access(env, X_OK) == 0 ? env : NULL;
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome"};
    const char *path = getenv("PATH");
    for (size_t i = 0; path && i < sizeof names / sizeof *names; i++) {
        const char *p = path;
        while (*p) {
            const char *e = strchr(p, ':');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            snprintf(found, sizeof found, "%.*s/%s", (int)n, p, names[i]);
            if (access(found, X_OK) == 0) return found;
            p += n + (e ? 1 : 0);
        }
    }
    return NULL;
}

static const char *need_chromium(void)
{
    const char *c = chromium();
    if (!c) {
        print_message("report_html_test: no chromium on PATH (nor GN_CHROMIUM): the browser checks are skipped; "
                      "`make browser-deps` (apt-get install chromium) installs it\n");
        skip();
    }
    return c;
}

#define CHROMIUM_FLAGS "--headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --mute-audio"

/* Optimizes model with the CLI (HTML and JSON reports), loads the page in
 * Chromium with #selftest and checks what it drew against the JSON report;
 * then a screenshot with the fused node selected. */
static void browser_check(const char *model, const char *tag, long long vt_ms)
{
    const char *chr = need_chromium();
    const char *tmp = gn_test_tmpdir();
    char *out = NULL;
    int rc = gn_test_sh(&out, "%s optimize %s -o %s/%s_opt.pb --report html --report-file %s/%s.html && "
                              "%s optimize %s -o %s/%s_opt.pb --report json --report-file %s/%s.json",
                        GN_CLI_PATH, model, tmp, tag, tmp, tag, GN_CLI_PATH, model, tmp, tag, tmp, tag);
    if (rc != 0) print_message("%s\n", out);
    assert_int_equal(rc, 0);
    free(out);
    char jpath[1024];
    snprintf(jpath, sizeof jpath, "%s/%s.json", tmp, tag);
    char *json = (char *)gn_test_slurp(jpath, NULL);
    assert_non_null(json);
    long long jb, ja, jr;
    json_report_counts(json, &jb, &ja, &jr);
    assert_true(jb > 0 && ja > 0 && jr > 0);

    rc = gn_test_sh(&out, "timeout 300 %s " CHROMIUM_FLAGS " --user-data-dir=%s/chromium-%s --virtual-time-budget=%lld "
                          "--run-all-compositor-stages-before-draw --dump-dom 'file://%s/%s.html#selftest' 2>%s/%s.chromium.log",
                    chr, tmp, tag, vt_ms, tmp, tag, tmp, tag);
    if (rc != 0) print_message("chromium failed (%d): see %s/%s.chromium.log\n", rc, tmp, tag);
    assert_int_equal(rc, 0);
    const char *st = strstr(out, "<pre id=\"gn-selftest\">");
    if (!st) print_message("no self-test result in the page: see %s/%s.chromium.log\n", tmp, tag);
    assert_non_null(st);
    char *end = strstr(st, "</pre>");
    assert_non_null(end);
    *end = '\0';
    print_message("%s: %s\n", tag, st + strlen("<pre id=\"gn-selftest\">"));
    /* the page's counts equal the JSON report's */
    assert_int_equal(json_int(st, "before"), jb);
    assert_int_equal(json_int(st, "after"), ja);
    assert_int_equal(json_int(st, "rewrites"), jr);
    assert_int_equal(json_int(st, "rewrites_placed"), jr);
    /* and it drew every node of both graphs, every one it marked */
    assert_int_equal(json_int(st, "drawn_before"), jb);
    assert_int_equal(json_int(st, "drawn_after"), ja);
    assert_true(json_int(st, "removed") > 0 && json_int(st, "removed") < jb);
    assert_true(json_int(st, "drawn_marked_before") >= json_int(st, "removed"));
    assert_true(json_int(st, "drawn_marked_after") >= json_int(st, "made"));
    /* the click on the fused node shows its rewrite */
    assert_non_null(strstr(st, "\"click_hit\":true"));
    assert_non_null(strstr(st, "\"clicked_op\":\"_Fused"));
    assert_non_null(strstr(st, "\"panel_patterns\":[\"remap."));
    assert_non_null(strstr(st, "rewrote (iteration 1)fused "));
    const char *clicked = strstr(st, "\"clicked\":\"");
    assert_non_null(clicked);
    char node[512];
    clicked += strlen("\"clicked\":\"");
    size_t n = (size_t)(strchr(clicked, '"') - clicked);
    snprintf(node, sizeof node, "%.*s", (int)n, clicked);
    free(out);

    /* the screenshot: the fused node selected, its panel open */
    char png[1100];
    snprintf(png, sizeof png, "%s/report_html-%s.png", GN_TMP_DIR, tag); /* kept: a stable path, for CI's artefacts */
    unlink(png);
    rc = gn_test_sh(NULL, "timeout 300 %s " CHROMIUM_FLAGS " --user-data-dir=%s/chromium-%s --window-size=1400,860 "
                          "--virtual-time-budget=%lld --screenshot=%s 'file://%s/%s.html#select=%s' 2>>%s/%s.chromium.log",
                    chr, tmp, tag, vt_ms, png, tmp, tag, node, tmp, tag);
    assert_int_equal(rc, 0);
    size_t plen = 0;
    unsigned char *img = gn_test_slurp(png, &plen);
    assert_non_null(img);
    assert_true(plen > 10000);
    assert_memory_equal(img, "\x89PNG\r\n\x1a\n", 8);
    print_message("%s: screenshot kept at %s\n", tag, png);
    free(img);
    free(json);
}

static void test_browser_ds_cnn(void **state)
{
    (void)state;
    browser_check(DS_CNN, "ds_cnn", 5000);
}

static void test_browser_synthetic_1e4(void **state)
{
    (void)state;
    need_chromium();
    char pb[1024];
    snprintf(pb, sizeof pb, "%s/conv1e4.pb", gn_test_tmpdir());
    char *out = NULL;
    int rc = gn_test_sh(&out, "%s/gen_graph conv 10000 %s", GN_BIN_DIR, pb);
    if (rc != 0) print_message("%s\n", out);
    assert_int_equal(rc, 0);
    free(out);
    browser_check(pb, "conv1e4", 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_is_self_contained),
        cmocka_unit_test(test_attr_text_is_escaped),
        cmocka_unit_test(test_write_errors),
        cmocka_unit_test(test_browser_ds_cnn),
        cmocka_unit_test(test_browser_synthetic_1e4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
