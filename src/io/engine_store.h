/* The engine store and its assets (private;
 * docs/reference_formats.md §A7, §A9, §B5).
 *
 * gn_engines_build (src/convert/engine_build.c) records, per Grapnel>EngineOp
 * of a graph, the input shapes it built engines for (the cache keys) in the
 * graph's engine store, an attachment of the graph (gn__graph_engines). A session
 * on the graph starts each engine op's cache with those engines; a graph
 * loaded from a SavedModel gets them from the asset
 * assets/grapnel-engine.<engine name> ('/' in the name written as '_'), which
 * gn_savedmodel_save writes from the store (or copies from the SavedModel the
 * graph was loaded from).
 *
 * The asset is a TFRecord file (docs/reference_formats.md §B5: uint64 LE length, uint32 LE masked
 * CRC-32C of the length bytes, payload, uint32 LE masked CRC-32C of the
 * payload), one record per cached engine. A record's payload, little-endian:
 *
 *   8 bytes   "GNENGINE"
 *   u32       format version (1)
 *   str       backend name ("cpu", "cuda")         str = u32 length, bytes
 *   str       device ("host" for cpu, "gpu" for cuda)
 *   str       library version ("0.1.0")
 *   str       precision ("FP32", "FP16", "INT8")
 *   u64       digest of what the engine is built from: the precision, the
 *             native segment function (and the engine function of an FP16
 *             op), and the calibration table of an INT8 op (FarmHash
 *             Fingerprint64 of their deterministic encodings)
 *   u32       number of inputs, then per input: i32 rank, rank x i64 dims
 *
 * On the CPU backend an FP32/FP16 engine is the segment compiled for these
 * shapes and an INT8 engine is rebuilt from the op's calibration table, so
 * the record is the cache key plus what it must match. A record whose format
 * version, backend, device, library version, precision or digest differs
 * from what the op would build is refused (counted as stale; the op then
 * builds at run time, or runs its native segment without
 * allow_build_at_runtime). A file that is not well-formed (truncated, bad
 * CRC, bad payload) is an error naming the file and the record. */
#ifndef GN_IO_ENGINE_STORE_H
#define GN_IO_ENGINE_STORE_H

#include "graph/ir.h"

#define GN__ENGINE_OP "Grapnel>EngineOp"
#define GN__ENGINE_ASSET_PREFIX "grapnel-engine."
#define GN__ENGINE_RECORD_MAGIC "GNENGINE"
#define GN__ENGINE_RECORD_FORMAT 1u

/* The backends engines are built for; a record names its backend and device
 * ("cpu" / "host", "cuda" / "gpu"). */
typedef enum gn__engine_backend { GN__ENGINE_CPU = 0, GN__ENGINE_CUDA = 1 } gn__engine_backend;

/* One engine: the backend and the input shapes it is built for. */
typedef struct gn__engine_shapes {
    uint32_t n_in;
    int32_t *rank;     /* per input */
    int64_t *dims;     /* n_in * 8 */
    gn__engine_backend backend;
} gn__engine_shapes;

/* The graph's store (its `engines` attachment): per engine op name, its engines,
 * oldest first. */
typedef struct gn__engine_store_entry {
    char *engine;
    uint32_t n;
    gn__engine_shapes *e;
} gn__engine_store_entry;

typedef struct gn__engine_store {
    uint32_t n;
    gn__engine_store_entry *ent;
} gn__engine_store;

void gn__engine_store_free(gn__engine_store *s);
void gn__engine_shapes_free(gn__engine_shapes *s);
/* Room for n_in inputs (zeroed); false when memory is short. */
bool gn__engine_shapes_alloc(gn__engine_shapes *s, uint32_t n_in);

/* g's store, NULL when it has none. */
static inline gn__engine_store *gn__graph_engines(const gn_graph *g) { return (gn__engine_store *)g->engines.ptr; }
/* The entry of engine op `engine` in s (may be NULL), NULL when none. */
const gn__engine_store_entry *gn__engine_store_find(const gn__engine_store *s, const char *engine);
/* Adds (takes) sh as the most recent engine of `engine` in g's store (made
 * when g has none), dropping an equal one and the oldest beyond max; false
 * when memory is short. */
bool gn__engine_store_add(gn_graph *g, const char *engine, gn__engine_shapes *sh, uint32_t max);

/* The engines a cache for engine op `node` of g (top: the top-level graph;
 * only top-level ops have them) on backend `be` starts with: those of the
 * store, else those of the asset of the SavedModel top was loaded from.
 * *out (owned: free each with gn__engine_shapes_free, then the array) holds
 * the last `max` usable ones; *n_stale counts the ones refused (asset records
 * that do not match, and engines built for another backend). No store entry
 * and no asset: 0 engines. A malformed asset: GN_ERR_PARSE naming file and
 * record. */
gn_status gn__engine_seeds(const gn_graph *top, const gn_graph *g, gn_id node, gn__engine_backend be, uint32_t max,
                           gn__engine_shapes **out, uint32_t *n_out, uint32_t *n_stale, gn__err *err);

/* Parses an asset file's bytes d[0..n) (path names it in messages): checks
 * the framing of every record, decodes each payload, and gives in *out
 * (owned: free each with gn__engine_shapes_free, then the array) the records
 * usable for an op of precision `prec` whose engine digest is `digest` on
 * backend `be`, oldest first; *n_stale counts the others. GN_ERR_PARSE naming
 * the file and the record (and nothing in *out) for a malformed file. */
gn_status gn__engine_asset_parse(const uint8_t *d, size_t n, const char *path, const char *prec, uint64_t digest,
                                 gn__engine_backend be, gn__engine_shapes **out, uint32_t *n_out, uint32_t *n_stale,
                                 gn__err *err);

/* gn_savedmodel_save's hook: writes dir/assets/grapnel-engine.<name> for
 * every top-level engine op of `saved` (the graph being written) that has
 * engines in src's store, or an asset in the SavedModel src was loaded
 * from (copied). Errors go to err. */
gn_status gn__engine_assets_write(const gn_graph *src, const gn_graph *saved, const char *dir, gn__err *err);

#endif
