/* The HTML report: one self-contained page showing a graph before and after
 * the optimizer (or the segmenter, or the pass `verify --bisect` found), with
 * every rewrite drawn on both graphs. See docs/html_report.md.
 *
 * The page needs no network: the layout library (dagre, MIT licence, from
 * Debian's node-dagre-layout) and the viewer are embedded in it. This module
 * is never called by the optimizer itself: the CLI and the Python package call
 * it after gn_optimize / gn_segment return. */
#ifndef GRAPNEL_REPORT_HTML_H
#define GRAPNEL_REPORT_HTML_H

#include "grapnel/graph.h"
#include "grapnel/optimizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gn_html_kind {
    GN_HTML_OPTIMIZE = 0,  /* before and after gn_optimize; report: its gn_report */
    GN_HTML_SEGMENT = 1,   /* before and after gn_segment; segment_report: its text report */
    GN_HTML_BISECT = 2,    /* before and after the first pass whose output disagrees */
} gn_html_kind;

typedef struct gn_html_params {
    uint32_t struct_size;          /* set by gn_html_params_init */
    int32_t kind;                  /* gn_html_kind */
    const char *title;             /* shown at the top (the model's path); may be NULL */
    const gn_report *report;       /* the optimizer's report; may be NULL */
    const char *segment_report;    /* GN_HTML_SEGMENT: gn_segment's text report */
    const char *bisect_pass;       /* GN_HTML_BISECT: the dump name of the first disagreeing
                                      pass ("0007_it1_remapper"); NULL: every pass agrees */
} gn_html_params;

GN_API void gn_html_params_init(gn_html_params *p);

/* Writes the page to path (atomically: a temporary file renamed at the end).
 * before is required; after may be NULL (nothing changed, or a dry run).
 * Shapes are inferred on both graphs (which is why they are not const); a
 * graph whose shapes cannot be inferred is drawn without them. Returns GN_OK;
 * GN_ERR_ARG (NULL before or path), GN_ERR_IO naming the file, GN_ERR_NOMEM;
 * err (errlen bytes, may be NULL) gets the message. */
GN_API gn_status gn_report_write_html(gn_graph *before, gn_graph *after, const gn_html_params *p, const char *path,
                                      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
