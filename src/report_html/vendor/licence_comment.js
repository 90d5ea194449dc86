/*! dagre 0.8.5 with graphlib and lodash parts: MIT licence, (c) 2012-2014 Chris Pettitt, (c) OpenJS Foundation and contributors (src/report_html/vendor/LICENSE.dagre) */
