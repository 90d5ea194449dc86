/* Shared helpers for the cmocka suites. */
#ifndef GN_TESTUTIL_H
#define GN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>

#include "grapnel/grapnel.h"

/* Path of a file under tests/data (static buffer per call site: copy it). */
const char *gn_test_data(const char *rel, char *out, size_t outlen);
/* Path of a file under ../shared/corpus; false when the corpus is absent. */
bool gn_test_corpus(const char *rel, char *out, size_t outlen);
/* Creates (once) and returns the scratch directory for this test binary. */
const char *gn_test_tmpdir(void);
/* Runs a shell command, returns its exit status (or -1); stdout+stderr go to
 * *output (heap, caller frees) when output is not NULL. */
int gn_test_sh(char **output, const char *fmt, ...);
/* Reads a whole file into a heap buffer; NULL when missing. */
unsigned char *gn_test_slurp(const char *path, size_t *len);
bool gn_test_file_exists(const char *path);
/* Removes a file or a directory tree (no-op when missing). */
void gn_test_rm_tree(const char *path);
/* Same files and directories with the same bytes under a and b (files: same
 * bytes); else false with the first difference in why. */
bool gn_test_same_tree(const char *a, const char *b, char *why, size_t whylen);
/* Entries of a directory besides . and .. (-1 when it cannot be read). */
int gn_test_dir_entries(const char *dir);

/* ---- loading (a failure fails the test with the loader's message) ------------------------- */
/* Graph text (pbtxt, named "t.pbtxt" in messages), validated when validate is set. */
gn_graph *gn_test_load_text(const char *text, int validate);
/* A GraphDef file or a SavedModel directory. */
gn_graph *gn_test_load(const char *path);
/* A model under tests/data. */
gn_graph *gn_test_load_data(const char *rel);
/* A model under ../shared/corpus; NULL when the corpus is absent. */
gn_graph *gn_test_load_corpus(const char *rel);

/* ---- the golden models (tests/data/golden/manifest.txt) ----------------------------------- */
/* The format: "model NAME", then "graph PATH" ("golden/X.pb" or
 * "corpus/REL.pb"), "tol X" (X > 0), "feed TENSOR FILE.npy" and "fetch TENSOR
 * FILE.npy" lines (at least one each), "freeze TEXT" (free text), "end"; "#"
 * starts a comment line. */
#define GN_TEST_MAX_MODELS 32
#define GN_TEST_MAX_IO 8
#define GN_TEST_NAME_LEN 256
typedef struct gn_test_golden_io {
    char tensor[GN_TEST_NAME_LEN];
    char file[GN_TEST_NAME_LEN];
} gn_test_golden_io;
typedef struct gn_test_golden {
    char name[GN_TEST_NAME_LEN];
    char graph[GN_TEST_NAME_LEN];
    double tol;
    int has_tol;
    gn_test_golden_io feeds[GN_TEST_MAX_IO];
    size_t n_feeds;
    gn_test_golden_io fetches[GN_TEST_MAX_IO];
    size_t n_fetches;
} gn_test_golden;
typedef struct gn_test_manifest {
    gn_test_golden models[GN_TEST_MAX_MODELS];
    size_t n;
} gn_test_manifest;
/* Parses manifest.txt into *m: 0, or -1 with the file, line and reason in
 * err (every rule above is checked). */
int gn_test_read_manifest(gn_test_manifest *m, char *err, size_t errlen);

#endif
