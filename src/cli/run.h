/* Declarations shared by the files of `grapnel run` / `grapnel verify`
 * (cmd_run.c, run_print.c, run_random.c). Public API only. */
#ifndef GRAPNEL_CLI_RUN_H
#define GRAPNEL_CLI_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "grapnel/grapnel.h"
#include "grapnel/runtime.h"

#define DT_FLOAT 1
#define DT_DOUBLE 2
#define DT_INT32 3
#define DT_UINT8 4
#define DT_INT16 5
#define DT_INT8 6
#define DT_STRING 7
#define DT_INT64 9
#define DT_BOOL 10
#define DT_UINT16 17
#define DT_HALF 19
#define DT_UINT32 22
#define DT_UINT64 23

/* ---- numpy-style printing (run_print.c) ---- */
/* t printed as numpy prints it (heap string, caller frees; NULL on OOM). */
char *gn_cli_format_array(const gn_tensor *t);
/* t's shape as a Python tuple: "()", "(3,)", "(2, 3)". */
void gn_cli_shape_tuple(const gn_tensor *t, char *buf, size_t n);
/* t's elements, flat in row-major order (null for dtypes without a JSON form). */
void gn_cli_json_values(gn_json *j, const gn_tensor *t);

/* ---- random feeds (run_random.c) ---- */
/* Fills t with data drawn from seed and the feed's name: floats uniform in
 * [-1, 1), integers in [0, 10), bools and uint8 from the high bits; -1 for a
 * dtype it cannot fill. */
int gn_cli_random_fill(gn_tensor *t, uint64_t seed, const char *name);

#endif
