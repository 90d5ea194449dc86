/* grapnel example: load a model, optimize it with options given as the
 * dictionary text of tf.config.optimizer.set_experimental_options, run it on
 * the CPU backend and print the optimizer's report and the result.
 *
 *   optimize_run MODEL OPTIONS FETCH [FEED FEED.npy]
 *   optimize_run ds_cnn_s.pb "{'constant_folding': True, 'layout_optimizer': False}" \
 *                labels_softmax Mfcc ds_cnn_s.mfcc.npy
 */
#include <grapnel/grapnel.h>

#include <stdio.h>
#include <string.h>

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "optimize_run: %s: %s\n", what, msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: %s MODEL OPTIONS FETCH [FEED FEED.npy]\n", argv[0]);
        return 2;
    }
    const char *model = argv[1], *options = argv[2], *fetch = argv[3];
    const char *feed = argc == 6 ? argv[4] : NULL, *feed_file = argc == 6 ? argv[5] : NULL;
    char err[1024];
    int rc = 1;

    gn_options o;
    gn_options_init(&o);
    if (gn_options_parse(&o, options, err, sizeof err) != GN_OK) return fail("options", err);

    gn_graph *g = NULL;
    if (gn_graph_load(model, NULL, &g) != GN_OK) {
        rc = fail("load", g ? gn_graph_errmsg(g) : "out of memory");
        gn_graph_free(g);
        return rc;
    }
    size_t before = gn_graph_node_count(g);

    gn_optimize_params params;
    gn_optimize_params_init(&params);
    params.fetches = &fetch;
    params.n_fetches = 1;
    if (feed) {
        params.feeds = &feed;
        params.n_feeds = 1;
    }
    gn_report *report = NULL;
    gn_status s = gn_optimize(g, &o, &params, &report);
    char *text = NULL;
    if (report && gn_report_to_text(report, &text) == GN_OK) fputs(text, stdout);
    gn_free(text);
    gn_report_free(report);
    if (s != GN_OK) {
        rc = fail("optimize", gn_graph_errmsg(g));
        gn_graph_free(g);
        return rc;
    }
    char *applied = NULL;
    gn_options_to_string(&o, &applied);
    printf("options: %s\nnodes: %zu -> %zu\n", applied ? applied : "?", before, gn_graph_node_count(g));
    gn_free(applied);

    gn_tensor in = {0}, out = {0};
    gn_session *sess = NULL;
    if (feed && gn_npy_read(feed_file, &in, err, sizeof err) != GN_OK) {
        fail("feed", err);
        goto done;
    }
    if (gn_session_new(g, NULL, &sess) != GN_OK) {
        fail("session", sess ? gn_session_errmsg(sess) : "out of memory");
        goto done;
    }
    if (gn_session_run(sess, feed ? &feed : NULL, feed ? &in : NULL, feed ? 1 : 0, &fetch, &out, 1) != GN_OK) {
        fail("run", gn_session_errmsg(sess));
        goto done;
    }
    printf("%s: %s [", fetch, gn_dtype_numpy_name(out.dtype));
    for (int32_t d = 0; d < out.rank; d++) printf("%s%lld", d ? ", " : "", (long long)out.dims[d]);
    printf("]\n");
    if (out.dtype == 1) {   /* float32: the values and the index of the largest */
        const float *v = out.data;
        int64_t n = gn_tensor_numel(&out), best = 0;
        for (int64_t i = 0; i < n; i++) {
            printf("%s%.6f", i ? " " : "  ", v[i]);
            if (v[i] > v[best]) best = i;
        }
        printf("\n  argmax: %lld\n", (long long)best);
    }
    rc = 0;
done:
    gn_tensor_free(&out);
    gn_tensor_free(&in);
    gn_session_free(sess);
    gn_graph_free(g);
    return rc;
}
