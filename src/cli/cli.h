/* Declarations shared by the files of the grapnel CLI (src/cli/). Public API only.
 *
 * Exit status, everywhere: 0 ok; 1 the command line is well formed but the
 * work failed (a file, the model, a name the model lacks, a mismatch);
 * 2 usage: an unknown flag, a missing or malformed value, an unknown key or a
 * bad value in any dictionary (--options, --params, --save-options). */
#ifndef GRAPNEL_CLI_H
#define GRAPNEL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "grapnel/grapnel.h"

#define EXIT_USAGE 2

/* The version of every --json document (its "schema" field). */
#define GN_CLI_JSON_SCHEMA 1

/* ---- commands (one per file) ------------------------------------------------------ */
int gn_cli_run(int argc, char **argv);          /* cmd_run.c */
int gn_cli_verify(int argc, char **argv);       /* cmd_run.c */
int gn_cli_segment(int argc, char **argv);      /* cmd_segment.c */
int gn_cli_optimize(int argc, char **argv);     /* cmd_optimize.c */
int gn_cli_verify_bisect(int argc, char **argv);
int gn_cli_freeze(int argc, char **argv);       /* cmd_savedmodel.c */
int gn_cli_save(int argc, char **argv);         /* cmd_save.c */
int gn_cli_is_savedmodel(const gn_graph *g);
/* Names given as --feed/--fetch that are no node of g: 0 when all are, else 1
 * after "grapnel CMD: no tensor 'X' in the graph; did you mean 'Y'? (its
 * inputs: ...)" (its outputs for a fetch), as run and verify say it (cmd_run.c). */
int gn_cli_check_tensor_names(const char *cmd, gn_graph *g, const char *const *feeds, size_t n_feeds,
                              const char *const *fetches, size_t n_fetches);
/* The SavedModel part of `inspect`: tags, signatures and the init op (head),
 * or variables and assets (tail); 0, or 1 after printing an error. */
int gn_cli_savedmodel_inspect_head(gn_graph *g, FILE *out);
int gn_cli_savedmodel_inspect_tail(gn_graph *g, FILE *out);
struct gn_json;
/* The SavedModel part of `inspect --json` (tags, signatures, init op and,
 * when full, variables and assets) as keys of the open object. */
int gn_cli_savedmodel_json(struct gn_json *j, gn_graph *g, int full);

/* The help text of a command (main.c); NULL for an unknown one. */
const char *gn_cli_usage(const char *cmd);

/* ---- usage errors (cli.c) --------------------------------------------------------- */
/* The candidate word stands for: one that begins with it (3 characters or
 * more, leading dashes aside), else the nearest within max(1, len/4) edits,
 * else one the word begins with; NULL when none is near. */
const char *gn_cli_suggest(const char *word, const char *const *cands, size_t n);
/* "grapnel CMD: unknown option 'ARG'; did you mean '--flag'?" with the flags
 * of CMD's help text; returns EXIT_USAGE. */
int gn_cli_unknown_option(const char *cmd, const char *arg);

/* A dictionary parser's "unknown ... 'KEY'" message with the nearest valid key
 * added after the key ("; did you mean 'KEY2'?") when it has none yet; the
 * valid keys are those of `defaults`, the dictionary text the library writes
 * for the defaults ("{'a': 1, 'b': None}"). err is rewritten in place. */
void gn_cli_key_hint(char *err, size_t errlen, const char *defaults);

/* ---- JSON on a stream (cli.c): indented, keys in the order written ------------------- */
typedef struct gn_json {
    FILE *f;
    int depth;
    bool first;      /* nothing written yet in the current container */
    bool after_key;  /* a key was written: the value follows on the same line */
    int inline_depth; /* containers this deep or deeper are written on one line */
} gn_json;

void gn_json_init(gn_json *j, FILE *f);
void gn_json_begin(gn_json *j, char bracket);   /* '{' or '[' */
void gn_json_begin_inline(gn_json *j, char bracket);   /* the container on one line */
void gn_json_end(gn_json *j, char bracket);     /* '}' or ']'; the last one ends the line */
void gn_json_key(gn_json *j, const char *key);
void gn_json_str(gn_json *j, const char *s);    /* NULL: null */
void gn_json_strn(gn_json *j, const char *s, size_t n);
void gn_json_int(gn_json *j, int64_t v);
void gn_json_uint(gn_json *j, uint64_t v);
void gn_json_num(gn_json *j, double v);         /* NaN and infinities as Python's json writes them */
void gn_json_float(gn_json *j, float v);       /* the shortest digits that read back as v */
void gn_json_bool(gn_json *j, bool v);
void gn_json_null(gn_json *j);
/* A value given as JSON text (written as it is). */
void gn_json_raw(gn_json *j, const char *json);
/* A value given as a Python literal (the dictionaries' own form, as
 * gn_options_to_string writes it): True/False/None, quoted strings, numbers,
 * dicts, lists and calls (as strings). false when it cannot be read. */
bool gn_json_pyliteral(gn_json *j, const char *text);
/* "schema", "command" and the opening of the "options" object. */
void gn_json_header(gn_json *j, const char *command);
/* A tensor shape as a list (null for an unknown rank; -1 dims as null). */
void gn_json_shape(gn_json *j, int32_t rank, const int64_t *dims);
/* A list of strings. */
void gn_json_strs(gn_json *j, const char *const *s, size_t n);

/* ---- timing and progress (cli.c) --------------------------------------------------- */
double gn_cli_now(void);   /* monotonic seconds */

typedef struct gn_timing {
    int runs, warmup;
    double min_ms, median_ms, p90_ms, max_ms, mean_ms;
    double total_s;        /* the timed runs together */
    double throughput;     /* runs per second */
} gn_timing;

/* Statistics of n latencies in seconds (sorted in place): the median of an
 * even count is the mean of the middle two; p90 is the nearest rank,
 * sorted[ceil(0.9 n) - 1]. */
void gn_timing_from(gn_timing *t, double *lat_s, int n, int warmup);
/* "latency (ms): min ... median ... p90 ... max ... mean ...; throughput ..." */
void gn_timing_print(const gn_timing *t, const char *cmd, FILE *f);
void gn_timing_json(gn_json *j, const gn_timing *t);

/* Progress on stderr: when GRAPNEL_PROGRESS is 1, always; when 0, never;
 * unset, only when stderr is a terminal and `big` (the work is long). */
bool gn_cli_progress_on(bool big);
/* Loads a model like gn_graph_load, with progress for files over 64 MiB;
 * prints the error ("grapnel CMD: ...") and returns NULL on failure. */
gn_graph *gn_cli_load(const char *cmd, const char *path, const gn_load_options *lo);
/* What the environment sets on a loaded graph: GRAPNEL_FSYNC=1, the files
 * written for it fsynced (gn_graph_set_fsync). */
void gn_cli_graph_env(gn_graph *g);

#endif
