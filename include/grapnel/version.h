/* The library's version: the one place it is written. CMakeLists.txt reads the
 * three numbers from here (project VERSION, the shared library's version,
 * grapnel.pc), and gn_version() returns GN_VERSION_STRING. */
#ifndef GRAPNEL_VERSION_H
#define GRAPNEL_VERSION_H

#define GN_VERSION_MAJOR 0
#define GN_VERSION_MINOR 1
#define GN_VERSION_PATCH 0

#define GN__VERSION_STR_(x) #x
#define GN__VERSION_STR(x) GN__VERSION_STR_(x)
/* "MAJOR.MINOR.PATCH", e.g. "0.1.0" */
#define GN_VERSION_STRING                                                                                              \
    GN__VERSION_STR(GN_VERSION_MAJOR) "." GN__VERSION_STR(GN_VERSION_MINOR) "." GN__VERSION_STR(GN_VERSION_PATCH)

#endif
