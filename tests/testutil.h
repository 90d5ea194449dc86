/* Shared helpers for the cmocka suites. */
#ifndef GN_TESTUTIL_H
#define GN_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>

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

#endif
