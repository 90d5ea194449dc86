/* The page's parts, embedded at build time from src/report_html/ by
 * cmake/embed_assets.cmake (private). The dagre text carries its licence
 * notice (vendor/LICENSE.dagre) in a leading comment. */
#ifndef GN_REPORT_HTML_ASSETS_H
#define GN_REPORT_HTML_ASSETS_H

#include <stddef.h>

extern const char gn__html_viewer_css[];
extern const size_t gn__html_viewer_css_len;
extern const char gn__html_viewer_html[];
extern const size_t gn__html_viewer_html_len;
extern const char gn__html_viewer_js[];
extern const size_t gn__html_viewer_js_len;
extern const char gn__html_dagre_js[];
extern const size_t gn__html_dagre_js_len;

#endif
