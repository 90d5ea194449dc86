/* Writing SavedModels (include/grapnel/save.h; docs/reference_formats.md
 * part B: §B1 layout and write order, §B2 messages, §B6 SaveOptions, §B7
 * sharding, §B9 fingerprint).
 *
 * The graph is cloned, the options that change it are applied to the clone
 * (namespace check, debug stripper, skip_saver, io_device), the MetaGraphDef
 * is assembled (the loaded SavedModel's signatures, saver_def, object graph,
 * assets and meta_info_def kept; a GraphDef gets a serving signature from the
 * feeds and fetches) and everything is written into DIR.tmp-HOST-PID-XXXXXX, renamed
 * to DIR at the end. Variables are the loaded SavedModel's checkpoint files,
 * copied byte for byte, except under MaxShardSizePolicy, which rewrites them
 * split across shards as TensorFlow does (src/io/bundle_shard.c). With
 * experimental_image_format a SavedModel past the proto splitter's maximum is
 * written as the chunked saved_model.cpb (src/io/savedmodel_chunked.c). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grapnel/save.h"
#include "graph/ir.h"
#include "io/engine_store.h"
#include "io/bundle.h"
#include "common/farmhash.h"
#include "io/graphdef.h"
#include "io/pbcanon.h"
#include "io/savedmodel_chunked.h"
#include "io/savedmodel.h"
#include "opdef/registry.h"
#include "ops/shape.h"
#include "tensorflow/core/framework/graph_debug_info.pb-c.h"
#include "tensorflow/core/framework/variable.pb-c.h"
#include "tensorflow/core/protobuf/fingerprint.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

#define DT_INVALID 0

typedef struct wctx {
    gn_graph *g;                        /* the caller's graph: errors go here */
    gn_graph *w;                        /* working clone */
    gn_save_options o;
    const gn_save_params *p;
    const Tensorflow__MetaGraphDef *src;   /* NULL for a GraphDef */
    const char *src_dir;
    gn__arena a;
    ProtobufCAllocator pa;
    int64_t chunk_max;                  /* the proto splitter's maximum chunk size */
} wctx;

static gn_status fail(wctx *c, gn_status code, const char *fmt, ...) GN__PRINTF(3, 4);
static gn_status fail(wctx *c, gn_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gn__vfail(&c->g->err, code, fmt, ap);
    va_end(ap);
    return code;
}

static void *az(wctx *c, size_t n) { return gn__arena_zalloc(&c->a, n ? n : 1, 16); }
static char *adup(wctx *c, const char *s) { return gn__arena_strdup(&c->a, s); }

/* ---- walking the graph and its function bodies --------------------------------------- */
/* Calls fn for every live node of the graph (fname NULL) and of every
 * function body (fname the function's name). Stops at the first failure. */
typedef gn_status (*node_fn)(wctx *c, gn_graph *gr, gn_id id, const char *fname);

static gn_status each_node(wctx *c, gn_graph *top, node_fn fn)
{
    for (gn_id i = 0; i < top->n_nodes; i++)
        if (gn__node_live(top, i)) GN_TRY(fn(c, top, i, NULL));
    for (uint32_t f = 0; f < top->n_fns; f++) {
        gn_graph *b = top->fns[f].body;
        const char *fname = gn__str(top, top->fns[f].name);
        for (gn_id i = 0; i < b->n_nodes; i++)
            if (gn__node_live(b, i) && !(b->nodes[i].flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET)))
                GN_TRY(fn(c, b, i, fname));
    }
    return GN_OK;
}

/* ---- namespace_whitelist --------------------------------------------------------------- */
static gn_status check_namespace(wctx *c, gn_graph *gr, gn_id id, const char *fname)
{
    const char *op = gn__node_op(gr, id);
    const char *gt = strchr(op, '>');
    if (!gt) return GN_OK;
    size_t nl = (size_t)(gt - op);
    for (size_t k = 0; k < c->o.n_namespace_whitelist; k++) {
        const char *ns = c->o.namespace_whitelist[k];
        if (ns && strlen(ns) == nl && strncmp(ns, op, nl) == 0) return GN_OK;
    }
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_putc(&b, '[');
    for (size_t k = 0; k < c->o.n_namespace_whitelist; k++)
        gn__buf_printf(&b, "%s'%s'", k ? ", " : "", c->o.namespace_whitelist[k]);
    gn__buf_putc(&b, ']');
    char *list = gn__buf_take(&b);
    gn_status s = fail(c, GN_ERR_ARG,
                       "namespace_whitelist: op '%s' (node '%s'%s%s%s) is in namespace '%.*s', which is not in %s",
                       op, gn__node_name(gr, id), fname ? " in function '" : "", fname ? fname : "",
                       fname ? "'" : "", (int)nl, op, list ? list : "the whitelist");
    free(list);
    return s;
}

/* ---- experimental_debug_stripper: Assert -> NoOp ---------------------------------------- */
static gn_status strip_assert(wctx *c, gn_graph *gr, gn_id id, const char *fname)
{
    (void)fname;
    if (strcmp(gn__node_op(gr, id), "Assert") != 0) return GN_OK;
    gn__node *n = gn__node_at(gr, id);
    while (n->n_in > 0) {
        gn_id src = n->in[0].node;
        GN_TRY(gn__node_remove_input(gr, id, 0));
        n = gn__node_at(gr, id);
        bool have = false;
        for (uint32_t k = 0; k < n->n_ctrl; k++) have |= n->ctrl[k] == src;
        if (!have) GN_TRY(gn__node_add_control(gr, id, src));
        n = gn__node_at(gr, id);
    }
    while (n->n_attr > 0) {
        GN_TRY(gn__node_remove_attr(gr, id, gn__str(gr, n->attr[0].key)));
        n = gn__node_at(gr, id);
    }
    (void)c;
    return gn__node_set_op(gr, id, "NoOp");
}

/* ---- experimental_io_device ------------------------------------------------------------ */
static bool is_io_op(const char *op)
{
    static const char *const ops[] = {"MergeV2Checkpoints", "Restore", "RestoreSlice", "RestoreV2",
                                      "Save", "SaveSlices", "SaveV2", "ShardedFilename"};
    for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
        if (strcmp(op, ops[i]) == 0) return true;
    return false;
}

static gn_status set_io_device(wctx *c, gn_graph *gr, gn_id id, const char *fname)
{
    (void)fname;
    if (is_io_op(gn__node_op(gr, id))) gn__node_set_device(gr, id, c->o.experimental_io_device);
    return GN_OK;
}

/* ---- experimental_skip_saver: drop the SaverDef's save and restore ops ------------------ */
static bool is_variable_op(const char *op)
{
    return strcmp(op, "VarHandleOp") == 0 || strcmp(op, "VariableV2") == 0 || strcmp(op, "Variable") == 0 ||
           strcmp(op, "_VarHandlesOp") == 0;
}

static gn_id node_of_tensor(const gn_graph *gr, const char *t)
{
    if (!t || !*t) return GN_NONE;
    if (*t == '^') t++;
    const char *colon = strrchr(t, ':');
    return gn__graph_find_n(gr, t, colon ? (size_t)(colon - t) : strlen(t));
}

static void protect_sig_tensors(const Tensorflow__MetaGraphDef *mg, gn_graph *w, uint8_t *keep)
{
    for (size_t i = 0; i < mg->n_signature_def; i++) {
        const Tensorflow__SignatureDef *sd = mg->signature_def[i]->value;
        if (!sd) continue;
        for (size_t k = 0; k < sd->n_inputs; k++) {
            const Tensorflow__TensorInfo *ti = sd->inputs[k]->value;
            if (ti && ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME) {
                gn_id id = node_of_tensor(w, ti->name);
                if (id != GN_NONE) keep[id] = 1;
            }
        }
        for (size_t k = 0; k < sd->n_outputs; k++) {
            const Tensorflow__TensorInfo *ti = sd->outputs[k]->value;
            if (ti && ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME) {
                gn_id id = node_of_tensor(w, ti->name);
                if (id != GN_NONE) keep[id] = 1;
            }
        }
    }
    for (size_t i = 0; i < mg->n_asset_file_def; i++) {
        const Tensorflow__TensorInfo *ti = mg->asset_file_def[i]->tensor_info;
        if (ti && ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME) {
            gn_id id = node_of_tensor(w, ti->name);
            if (id != GN_NONE) keep[id] = 1;
        }
    }
}

/* The nodes the MetaGraphDef's collections name: a node_list's names, and the
 * VariableDefs of bytes_list collections (variables, trainable_variables, ...):
 * the variable, its initializer, initial value and snapshot. A TF1 SavedModel's
 * variable snapshot ('kernel/Read/ReadVariableOp') may be read only by the save
 * op, yet TensorFlow's loaders look it up by that name. */
static gn_status protect_collection_nodes(wctx *c, uint8_t *keep)
{
    const Tensorflow__MetaGraphDef *mg = c->src;
    for (size_t i = 0; i < mg->n_collection_def; i++) {
        const Tensorflow__CollectionDef *cd = mg->collection_def[i]->value;
        if (!cd) continue;
        if (cd->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST) {
            for (size_t k = 0; k < cd->node_list->n_value; k++) {
                gn_id id = node_of_tensor(c->w, cd->node_list->value[k]);
                if (id != GN_NONE) keep[id] = 1;
            }
        } else if (cd->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_BYTES_LIST) {
            for (size_t k = 0; k < cd->bytes_list->n_value; k++) {
                const ProtobufCBinaryData *b = &cd->bytes_list->value[k];
                Tensorflow__VariableDef *vd = tensorflow__variable_def__unpack(&c->pa, b->len, b->data);
                if (!vd && c->a.oom) return fail(c, GN_ERR_NOMEM, "out of memory");
                if (!vd) continue;   /* not a VariableDef */
                const char *names[4] = {vd->variable_name, vd->initializer_name, vd->initial_value_name,
                                        vd->snapshot_name};
                for (int n = 0; n < 4; n++) {
                    gn_id id = node_of_tensor(c->w, names[n]);
                    if (id != GN_NONE) keep[id] = 1;
                }
            }
        }
    }
    return GN_OK;
}

/* The save and restore ops are the SaverDef's save tensor, restore op and
 * filename tensor, and every node all of whose consumers are such ops
 * (variables, signature tensors, asset tensors and the nodes collections name
 * excepted). */
static gn_status remove_saver(wctx *c)
{
    const Tensorflow__SaverDef *sd = c->src ? c->src->saver_def : NULL;
    if (!sd) return GN_OK;
    gn_graph *w = c->w;
    uint32_t n = w->n_nodes;
    uint8_t *del = calloc(n ? n : 1, 1), *keep = calloc(n ? n : 1, 1);
    gn_id *stack = malloc((n ? n : 1) * sizeof *stack);
    gn_id *order = NULL;
    uint32_t norder = 0;
    gn_status s = GN_OK;
    if (!del || !keep || !stack) {
        s = fail(c, GN_ERR_NOMEM, "out of memory");
        goto out;
    }
    protect_sig_tensors(c->src, w, keep);
    if ((s = protect_collection_nodes(c, keep)) != GN_OK) goto out;
    for (gn_id i = 0; i < n; i++)
        if (gn__node_live(w, i) && is_variable_op(gn__node_op(w, i))) keep[i] = 1;
    uint32_t sp = 0;
    const char *seeds[3] = {sd->save_tensor_name, sd->restore_op_name, sd->filename_tensor_name};
    for (int k = 0; k < 3; k++) {
        gn_id id = node_of_tensor(w, seeds[k]);
        if (id != GN_NONE && !del[id] && !keep[id]) {
            del[id] = 1;
            stack[sp++] = id;
        }
    }
    while (sp) {
        gn__node *d = gn__node_at(w, stack[--sp]);
        for (uint32_t k = 0; k < d->n_in + d->n_ctrl; k++) {
            gn_id p = k < d->n_in ? d->in[k].node : d->ctrl[k - d->n_in];
            if (del[p] || keep[p]) continue;
            const gn__node *pn = gn__node_at(w, p);
            bool all = pn->n_use + pn->n_cuse > 0;
            for (uint32_t u = 0; all && u < pn->n_use; u++) all = del[pn->use[u].node];
            for (uint32_t u = 0; all && u < pn->n_cuse; u++) all = del[pn->cuse[u]];
            if (all) {
                del[p] = 1;
                stack[sp++] = p;
            }
        }
    }
    /* a producer whose last live consumer was marked after it was examined */
    for (bool changed = true; changed;) {
        changed = false;
        for (gn_id p = 0; p < n; p++) {
            if (!gn__node_live(w, p) || del[p] || keep[p]) continue;
            const gn__node *pn = gn__node_at(w, p);
            bool all = pn->n_use + pn->n_cuse > 0;
            for (uint32_t u = 0; all && u < pn->n_use; u++) all = del[pn->use[u].node];
            for (uint32_t u = 0; all && u < pn->n_cuse; u++) all = del[pn->cuse[u]];
            if (all) del[p] = changed = true;
        }
    }
    s = gn__graph_topo(w, &order, &norder);
    if (s != GN_OK) {
        fail(c, s, "%s", w->err.msg);
        goto out;
    }
    for (uint32_t k = norder; k-- > 0;) {
        if (!del[order[k]]) continue;
        s = gn__node_remove(w, order[k]);
        if (s != GN_OK) {
            fail(c, s, "experimental_skip_saver: %s", w->err.msg);
            goto out;
        }
    }
    s = gn__graph_compact(w);
    if (s != GN_OK) fail(c, s, "%s", w->err.msg);
out:
    free(del);
    free(keep);
    free(stack);
    free(order);
    return s;
}

/* ---- signatures from feeds and fetches ---------------------------------------------------- */
static gn_status tensor_info(wctx *c, const char *name, const char *what, char **key, Tensorflow__TensorInfo **out);

/* "values,indices,dense_shape": a sparse (COO) argument, keyed by its values
 * tensor unless key_len; its shape the dense shape's rank (dims unknown). */
static gn_status coo_tensor_info(wctx *c, const char *name, const char *key, size_t key_len, const char *what,
                                 char **key_out, Tensorflow__TensorInfo **out)
{
    const char *c1 = strchr(name, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    if (!c1 || !c2 || strchr(c2 + 1, ','))
        return fail(c, GN_ERR_ARG, "%s '%s': a sparse argument is three tensors, values,indices,dense_shape", what,
                    name);
    char *parts[3] = {az(c, (size_t)(c1 - name) + 1), az(c, (size_t)(c2 - c1)), adup(c, c2 + 1)};
    if (!parts[0] || !parts[1] || !parts[2]) return fail(c, GN_ERR_NOMEM, "out of memory");
    memcpy(parts[0], name, (size_t)(c1 - name));
    memcpy(parts[1], c1 + 1, (size_t)(c2 - c1 - 1));
    Tensorflow__TensorInfo *ti[3];
    char *keys[3];
    for (int i = 0; i < 3; i++) GN_TRY(tensor_info(c, parts[i], what, &keys[i], &ti[i]));
    Tensorflow__TensorInfo__CooSparse *coo = az(c, sizeof *coo);
    Tensorflow__TensorShapeProto *sh = az(c, sizeof *sh);
    if (!coo || !sh) return fail(c, GN_ERR_NOMEM, "out of memory");
    tensorflow__tensor_info__coo_sparse__init(coo);
    tensorflow__tensor_shape_proto__init(sh);
    coo->values_tensor_name = ti[0]->name;
    coo->indices_tensor_name = ti[1]->name;
    coo->dense_shape_tensor_name = ti[2]->name;
    const Tensorflow__TensorShapeProto *ds = ti[2]->tensor_shape;
    if (ds && !ds->unknown_rank && ds->n_dim == 1 && ds->dim[0]->size >= 0) {
        sh->n_dim = (size_t)ds->dim[0]->size;
        sh->dim = az(c, (sh->n_dim ? sh->n_dim : 1) * sizeof *sh->dim);
        if (!sh->dim) return fail(c, GN_ERR_NOMEM, "out of memory");
        for (size_t d = 0; d < sh->n_dim; d++) {
            if (!(sh->dim[d] = az(c, sizeof *sh->dim[d]))) return fail(c, GN_ERR_NOMEM, "out of memory");
            tensorflow__tensor_shape_proto__dim__init(sh->dim[d]);
            sh->dim[d]->size = -1;
        }
    } else {
        sh->unknown_rank = 1;
    }
    ti[0]->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE;
    ti[0]->coo_sparse = coo;
    ti[0]->tensor_shape = sh;
    *key_out = keys[0];
    if (key_len) {
        if (!(*key_out = az(c, key_len + 1))) return fail(c, GN_ERR_NOMEM, "out of memory");
        memcpy(*key_out, key, key_len);
    }
    *out = ti[0];
    return GN_OK;
}

static gn_status tensor_info(wctx *c, const char *name, const char *what, char **key, Tensorflow__TensorInfo **out)
{
    gn_graph *w = c->w;
    /* "KEY=tensor": the signature's key given ('=' is in no node name) */
    const char *given_key = NULL;
    size_t given_len = 0;
    const char *eq = strchr(name, '=');
    if (eq) {
        given_key = name;
        given_len = (size_t)(eq - name);
        name = eq + 1;
        if (!given_len) return fail(c, GN_ERR_ARG, "%s '%s': empty signature key before '='", what, given_key);
    }
    /* "values,indices,dense_shape" (',' is in no node name either) */
    if (strchr(name, ',')) return coo_tensor_info(c, name, given_key, given_len, what, key, out);
    const char *colon = strrchr(name, ':');
    size_t nl = colon ? (size_t)(colon - name) : strlen(name);
    long k = 0;
    if (colon) {
        char *e;
        k = strtol(colon + 1, &e, 10);
        if (e == colon + 1 || *e || k < 0) return fail(c, GN_ERR_ARG, "%s '%s': bad output index", what, name);
    }
    if (*name == '^' || nl == 0) return fail(c, GN_ERR_ARG, "%s '%s': not a tensor name", what, name);
    gn_id id = gn__graph_find_n(w, name, nl);
    if (id == GN_NONE) return fail(c, GN_ERR_ARG, "%s '%s': no node '%.*s' in the graph", what, name, (int)nl, name);
    int32_t nout = gn__node_num_outputs(w, id);
    if (nout >= 0 && k >= nout)
        return fail(c, GN_ERR_ARG, "%s '%s': node '%.*s' (%s) has %d output%s", what, name, (int)nl, name,
                    gn__node_op(w, id), nout, nout == 1 ? "" : "s");
    Tensorflow__TensorInfo *ti = az(c, sizeof *ti);
    Tensorflow__TensorShapeProto *sh = az(c, sizeof *sh);
    char *tname = az(c, nl + 24);
    char *kname = az(c, (given_key ? given_len : nl) + 24);
    if (!ti || !sh || !tname || !kname) return fail(c, GN_ERR_NOMEM, "out of memory");
    tensorflow__tensor_info__init(ti);
    tensorflow__tensor_shape_proto__init(sh);
    snprintf(tname, nl + 24, "%.*s:%ld", (int)nl, name, k);
    if (given_key) memcpy(kname, given_key, given_len);
    else if (k) snprintf(kname, nl + 24, "%.*s_%ld", (int)nl, name, k);
    else snprintf(kname, nl + 24, "%.*s", (int)nl, name);
    for (char *q = kname; *q && !given_key; q++)
        if (*q == '/') *q = '_';
    ti->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_NAME;
    ti->name = tname;
    int dtype = DT_INVALID;
    const gn__tinfo *t = gn__shape_of(w, id, (uint32_t)k);
    if (t && t->dtype) dtype = t->dtype;
    if (!dtype && w->nodes[id].opdef < 0) {
        int T;
        if (gn__attr_get_type(w, id, "T", &T)) dtype = T;
    }
    ti->dtype = (Tensorflow__DataType)dtype;
    if (t && t->shape.rank >= 0) {
        sh->n_dim = (size_t)t->shape.rank;
        sh->dim = az(c, sh->n_dim * sizeof *sh->dim);
        if (sh->n_dim && !sh->dim) return fail(c, GN_ERR_NOMEM, "out of memory");
        for (size_t d = 0; d < sh->n_dim; d++) {
            Tensorflow__TensorShapeProto__Dim *dm = az(c, sizeof *dm);
            if (!dm) return fail(c, GN_ERR_NOMEM, "out of memory");
            tensorflow__tensor_shape_proto__dim__init(dm);
            dm->size = t->shape.dims[d];
            sh->dim[d] = dm;
        }
    } else {
        sh->unknown_rank = 1;
    }
    ti->tensor_shape = sh;
    *key = kname;
    *out = ti;
    return GN_OK;
}

static int cmp_in_entry(const void *a, const void *b)
{
    return strcmp((*(Tensorflow__SignatureDef__InputsEntry *const *)a)->key,
                  (*(Tensorflow__SignatureDef__InputsEntry *const *)b)->key);
}

static gn_status build_signature(wctx *c, Tensorflow__SignatureDef **out)
{
    gn_graph *w = c->w;
    if (c->p->n_fetches == 0)
        return fail(c, GN_ERR_ARG, "saving a GraphDef as a SavedModel needs its signature's fetches (--fetch NAME)");
    gn_status si = gn__graph_infer_shapes(w);
    if (si != GN_OK) gn__err_clear(&w->err);   /* dtypes then come from attrs */
    Tensorflow__SignatureDef *sd = az(c, sizeof *sd);
    if (!sd) return fail(c, GN_ERR_NOMEM, "out of memory");
    tensorflow__signature_def__init(sd);
    sd->method_name = "tensorflow/serving/predict";
    /* feeds: given, else every Placeholder */
    size_t nf = c->p->n_feeds;
    const char **feeds = NULL;
    if (nf) {
        feeds = (const char **)c->p->feeds;
    } else {
        feeds = az(c, (w->n_nodes + 1) * sizeof *feeds);
        if (!feeds) return fail(c, GN_ERR_NOMEM, "out of memory");
        for (gn_id i = 0; i < w->n_nodes; i++)
            if (gn__node_live(w, i) && strcmp(gn__node_op(w, i), "Placeholder") == 0) feeds[nf++] = gn__node_name(w, i);
    }
    sd->inputs = az(c, (nf + 1) * sizeof *sd->inputs);
    sd->outputs = az(c, (c->p->n_fetches + 1) * sizeof *sd->outputs);
    if (!sd->inputs || !sd->outputs) return fail(c, GN_ERR_NOMEM, "out of memory");
    for (int side = 0; side < 2; side++) {
        size_t n = side ? c->p->n_fetches : nf;
        const char *const *names = side ? c->p->fetches : feeds;
        /* inputs and outputs entries share a layout (key, value) */
        Tensorflow__SignatureDef__InputsEntry **ents = side ? (Tensorflow__SignatureDef__InputsEntry **)sd->outputs
                                                            : sd->inputs;
        for (size_t i = 0; i < n; i++) {
            char *key = NULL;
            Tensorflow__TensorInfo *ti = NULL;
            GN_TRY(tensor_info(c, names[i], side ? "fetch" : "feed", &key, &ti));
            Tensorflow__SignatureDef__InputsEntry *e = az(c, sizeof *e);
            if (!e) return fail(c, GN_ERR_NOMEM, "out of memory");
            if (side) tensorflow__signature_def__outputs_entry__init((Tensorflow__SignatureDef__OutputsEntry *)e);
            else tensorflow__signature_def__inputs_entry__init(e);
            e->key = key;
            e->value = ti;
            for (size_t j = 0; j < i; j++)
                if (strcmp(ents[j]->key, key) == 0)
                    return fail(c, GN_ERR_ARG, "%s '%s': signature key '%s' is already used by '%s'",
                                side ? "fetch" : "feed", names[i], key, ents[j]->value->name);
            ents[i] = e;
        }
        qsort(ents, n, sizeof *ents, cmp_in_entry);
        if (side) sd->n_outputs = n;
        else sd->n_inputs = n;
    }
    *out = sd;
    return GN_OK;
}

/* ---- the MetaGraphDef ---------------------------------------------------------------------- */
static int cmp_sig_entry(const void *a, const void *b)
{
    return strcmp((*(Tensorflow__MetaGraphDef__SignatureDefEntry *const *)a)->key,
                  (*(Tensorflow__MetaGraphDef__SignatureDefEntry *const *)b)->key);
}

static int cmp_alias_entry(const void *a, const void *b)
{
    return strcmp((*(Tensorflow__MetaGraphDef__MetaInfoDef__FunctionAliasesEntry *const *)a)->key,
                  (*(Tensorflow__MetaGraphDef__MetaInfoDef__FunctionAliasesEntry *const *)b)->key);
}

static gn_status build_meta_info(wctx *c, Tensorflow__MetaGraphDef__MetaInfoDef **out)
{
    if (c->src && !c->src->meta_info_def && !c->p->tags && !c->o.n_extra_tags && !c->o.n_function_aliases) {
        *out = NULL;   /* nothing to record: keep the message absent as loaded */
        return GN_OK;
    }
    Tensorflow__MetaGraphDef__MetaInfoDef *mi = az(c, sizeof *mi);
    if (!mi) return fail(c, GN_ERR_NOMEM, "out of memory");
    if (c->src && c->src->meta_info_def) *mi = *c->src->meta_info_def;
    else tensorflow__meta_graph_def__meta_info_def__init(mi);
    /* tags: params, else the loaded ones, else (a GraphDef) "serve"; then extra_tags */
    size_t cap = 8 + c->o.n_extra_tags;
    const char *tagsrc = c->p->tags;
    if (tagsrc) cap += strlen(tagsrc);
    else if (c->src && c->src->meta_info_def) cap += c->src->meta_info_def->n_tags;
    char **tags = az(c, cap * sizeof *tags);
    if (!tags) return fail(c, GN_ERR_NOMEM, "out of memory");
    size_t nt = 0;
    if (tagsrc) {
        const char *s = tagsrc;
        while (*s) {
            const char *e = strchr(s, ',');
            size_t l = e ? (size_t)(e - s) : strlen(s);
            if (l) tags[nt++] = gn__arena_strndup(&c->a, s, l);
            s += l + (e ? 1 : 0);
        }
    } else if (c->src) {
        /* the loaded tags as they are (a MetaGraphDef may have none) */
        if (c->src->meta_info_def)
            for (size_t i = 0; i < c->src->meta_info_def->n_tags; i++) tags[nt++] = c->src->meta_info_def->tags[i];
    } else {
        tags[nt++] = "serve";
    }
    for (size_t i = 0; i < c->o.n_extra_tags; i++) {
        bool dup = false;
        for (size_t j = 0; j < nt; j++) dup |= strcmp(tags[j], c->o.extra_tags[i]) == 0;
        if (!dup) tags[nt++] = (char *)c->o.extra_tags[i];
    }
    for (size_t i = 0; i < nt; i++)
        if (!tags[i]) return fail(c, GN_ERR_NOMEM, "out of memory");
    mi->tags = tags;
    mi->n_tags = nt;
    /* function_aliases: key = FunctionDef name, value = alias */
    if (c->o.n_function_aliases) {
        size_t n0 = mi->n_function_aliases;
        Tensorflow__MetaGraphDef__MetaInfoDef__FunctionAliasesEntry **fa =
            az(c, (n0 + c->o.n_function_aliases) * sizeof *fa);
        if (!fa) return fail(c, GN_ERR_NOMEM, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < n0; i++) {
            bool over = false;
            for (size_t k = 0; k < c->o.n_function_aliases; k++)
                over |= strcmp(mi->function_aliases[i]->key, c->o.function_aliases[k].function) == 0;
            if (!over) fa[n++] = mi->function_aliases[i];
        }
        for (size_t k = 0; k < c->o.n_function_aliases; k++) {
            const gn_function_alias *al = &c->o.function_aliases[k];
            if (!al->alias || !al->function) return fail(c, GN_ERR_ARG, "function_aliases: entry %zu has a NULL name", k);
            if (!gn__graph_find_function(c->w, al->function))
                return fail(c, GN_ERR_ARG, "function_aliases: alias '%s' names '%s', which is not a function of the graph's library",
                            al->alias, al->function);
            bool dup = false;
            for (size_t j = n0; j < n && !dup; j++) dup = strcmp(fa[j]->key, al->function) == 0;
            if (dup)
                return fail(c, GN_ERR_ARG, "function_aliases: function '%s' is given two aliases", al->function);
            Tensorflow__MetaGraphDef__MetaInfoDef__FunctionAliasesEntry *e = az(c, sizeof *e);
            if (!e) return fail(c, GN_ERR_NOMEM, "out of memory");
            tensorflow__meta_graph_def__meta_info_def__function_aliases_entry__init(e);
            e->key = (char *)al->function;
            e->value = (char *)al->alias;
            fa[n++] = e;
        }
        qsort(fa, n, sizeof *fa, cmp_alias_entry);
        mi->function_aliases = fa;
        mi->n_function_aliases = n;
    }
    *out = mi;
    return GN_OK;
}

/* experimental_variable_policy on the object graph: NONE clears
 * SavedVariable.device and drops distributed components;
 * SAVE_VARIABLE_DEVICES keeps the device, drops components;
 * EXPAND_DISTRIBUTED_VARIABLES keeps both. */
static gn_status apply_variable_policy(wctx *c, Tensorflow__SavedObjectGraph **og_io)
{
    const Tensorflow__SavedObjectGraph *og = *og_io;
    gn_variable_policy vp = c->o.experimental_variable_policy;
    if (!og || vp == GN_VARIABLE_POLICY_EXPAND_DISTRIBUTED_VARIABLES) return GN_OK;
    Tensorflow__SavedObjectGraph *n = az(c, sizeof *n);
    Tensorflow__SavedObject **nodes = az(c, og->n_nodes * sizeof *nodes);
    if (!n || (og->n_nodes && !nodes)) return fail(c, GN_ERR_NOMEM, "out of memory");
    *n = *og;
    for (size_t i = 0; i < og->n_nodes; i++) {
        nodes[i] = og->nodes[i];
        const Tensorflow__SavedObject *so = og->nodes[i];
        if (so->kind_case != TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE || !so->variable) continue;
        const Tensorflow__SavedVariable *v = so->variable;
        bool clear_dev = vp == GN_VARIABLE_POLICY_NONE && v->device && v->device[0];
        if (!clear_dev && !v->n_experimental_distributed_variable_components) continue;
        Tensorflow__SavedObject *so2 = az(c, sizeof *so2);
        Tensorflow__SavedVariable *v2 = az(c, sizeof *v2);
        if (!so2 || !v2) return fail(c, GN_ERR_NOMEM, "out of memory");
        *so2 = *so;
        *v2 = *v;
        if (clear_dev) v2->device = (char *)protobuf_c_empty_string;
        v2->n_experimental_distributed_variable_components = 0;
        v2->experimental_distributed_variable_components = NULL;
        so2->variable = v2;
        nodes[i] = so2;
    }
    n->nodes = nodes;
    *og_io = n;
    return GN_OK;
}

/* ---- files -------------------------------------------------------------------------------- */
/* Writes m, deterministically serialized, atomically at path. */
static gn_status write_msg(wctx *c, const char *path, const ProtobufCMessage *m)
{
    uint8_t *buf = NULL;
    size_t n = 0;
    gn_status s = gn__pack_deterministic(m, &buf, &n, &c->g->err);
    if (s == GN_OK) s = gn__write_file_atomic(path, buf, n, c->g->fsync_writes, &c->g->err);
    free(buf);
    return s;
}

static gn_status copy_file(wctx *c, const char *from, const char *to, uint64_t *fp)
{
    uint8_t *data = NULL;
    size_t n = 0;
    gn_status s = gn__read_file(from, &data, &n, &c->g->err);
    if (s == GN_OK) s = gn__write_file_atomic(to, data ? (const void *)data : "", n, c->g->fsync_writes, &c->g->err);
    if (s == GN_OK && fp) *fp = gn__fingerprint64(data ? (const void *)data : "", n);
    free(data);
    return s;
}

static char *path_join(wctx *c, const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *r = gn__arena_alloc(&c->a, n, 1);
    if (r) snprintf(r, n, "%s/%s", a, b);
    return r;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    if (flag == FTW_DP) rmdir(path);
    else unlink(path);
    return 0;
}

static void remove_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* This host's name as it goes into a temporary directory's name: letters,
 * digits, '.' and '_' only, at most 32 characters. */
static void host_tag(char *out, size_t n)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0]) snprintf(h, sizeof h, "host");
    size_t k = 0;
    for (const char *p = h; *p && k + 1 < n && k < 32; p++)
        out[k++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.'
                              ? *p
                              : '_');
    out[k] = 0;
}

/* A writer killed mid-way (SIGKILL, an OOM kill) leaves its directory
 * DIR.tmp-HOST-PID-XXXXXX beside DIR: the next save to DIR on the same host
 * removes those whose process is gone. Those of live processes (a concurrent
 * save), of other hosts (a shared file system) and any other name are kept. */
static void sweep_stale_temporaries(const char *dir, size_t dl, const char *host)
{
    const char *slash = NULL;
    for (size_t i = 0; i < dl; i++)
        if (dir[i] == '/') slash = dir + i;
    char parent[4096], prefix[512];
    if (!slash) snprintf(parent, sizeof parent, ".");
    else if (slash == dir) snprintf(parent, sizeof parent, "/");
    else snprintf(parent, sizeof parent, "%.*s", (int)(slash - dir), dir);
    const char *base = slash ? slash + 1 : dir;
    int pl = snprintf(prefix, sizeof prefix, "%.*s.tmp-%s-", (int)(dir + dl - base), base, host);
    if (pl <= 0 || (size_t)pl >= sizeof prefix) return;
    DIR *d = opendir(parent);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)pl) != 0) continue;
        char *end = NULL;
        errno = 0;
        long pid = strtol(e->d_name + pl, &end, 10);
        if (errno || end == e->d_name + pl || *end != '-' || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;   /* alive, or not ours to ask */
        char path[4096 + 256];
        snprintf(path, sizeof path, "%s/%s", parent, e->d_name);
        remove_tree(path);
    }
    closedir(d);
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct var_ref {
    const char *key;
    int32_t shard;
    int64_t offset;
} var_ref;

static int cmp_var_ref(const void *a, const void *b)
{
    const var_ref *x = a, *y = b;
    if (x->shard != y->shard) return x->shard < y->shard ? -1 : 1;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* MaxShardSizePolicy: the checkpoint's tensors rewritten, split across shards
 * as TensorFlow splits them (gn__bundle_write_max_shard). TensorFlow hands
 * the policy the tensors in its save order, which is the order they lie in
 * the data files of a checkpoint it wrote: the order used here. (A tensor
 * that was already partitioned in the source is read whole and placed by its
 * full-tensor entry.) */
static gn_status write_variables_max_shard(wctx *c, const char *vdir, const char *odir, uint64_t *index_fp)
{
    char *src = path_join(c, vdir, "variables");
    char *dst = path_join(c, odir, "variables");
    char *idx = path_join(c, odir, "variables.index");
    if (!src || !dst || !idx) return fail(c, GN_ERR_NOMEM, "out of memory");
    gn__bundle *b = NULL;
    GN_TRY(gn__bundle_open(src, &b, &c->g->err));
    size_t n = gn__bundle_count(b);
    var_ref *refs = calloc(n + 1, sizeof *refs);
    gn__tensor *ts = calloc(n + 1, sizeof *ts);
    const char **keys = calloc(n + 1, sizeof *keys);
    gn_status s = GN_OK;
    if (!refs || !ts || !keys) s = fail(c, GN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; s == GN_OK && i < n; i++) {
        const Tensorflow__BundleEntryProto *e = gn__bundle_entry(b, gn__bundle_key(b, i));
        refs[i].key = gn__bundle_key(b, i);
        refs[i].shard = e ? e->shard_id : 0;
        refs[i].offset = e ? e->offset : 0;
    }
    if (s == GN_OK) qsort(refs, n, sizeof *refs, cmp_var_ref);
    size_t nread = 0;
    for (; s == GN_OK && nread < n; nread++) {
        keys[nread] = refs[nread].key;
        s = gn__bundle_read(b, refs[nread].key, &ts[nread], &c->g->err);
    }
    if (s != GN_OK && nread) nread--;
    gn__bundle_writer *bw = NULL;
    if (s == GN_OK) s = gn__bundle_writer_new(dst, &bw, &c->g->err);
    if (s == GN_OK) gn__bundle_writer_set_durable(bw, c->g->fsync_writes);
    if (s == GN_OK) {
        s = gn__bundle_write_max_shard(bw, n, keys, ts, c->o.max_shard_size, &c->g->err);
        if (s == GN_OK) s = gn__bundle_writer_finish(bw, &c->g->err);
        else gn__bundle_writer_abort(bw);
        if (s != GN_OK) {
            char msg[sizeof c->g->err.msg];
            snprintf(msg, sizeof msg, "%s", c->g->err.msg);
            fail(c, s, "experimental_sharding_callback: %s", msg);
        }
    }
    for (size_t i = 0; i < nread; i++) gn__tensor_release(&ts[i]);
    free(refs);
    free(ts);
    free(keys);
    gn__bundle_close(b);
    if (s == GN_OK) {
        uint8_t *data = NULL;
        size_t len = 0;
        s = gn__read_file(idx, &data, &len, &c->g->err);
        if (s == GN_OK) *index_fp = gn__fingerprint64(data ? (const void *)data : "", len);
        free(data);
    }
    return s;
}

/* The checkpoint: the loaded SavedModel's variables/ files, byte for byte.
 * *index_fp gets Fingerprint64 of variables.index (0 when none). */
static gn_status write_variables(wctx *c, const char *tmp, uint64_t *index_fp)
{
    *index_fp = 0;
    if (!c->src_dir) return GN_OK;
    char *vdir = path_join(c, c->src_dir, "variables");
    char *vindex = vdir ? path_join(c, vdir, "variables.index") : NULL;
    if (!vindex) return fail(c, GN_ERR_NOMEM, "out of memory");
    struct stat st;
    if (stat(vindex, &st) != 0) return GN_OK;   /* a SavedModel without variables */
    DIR *d = opendir(vdir);
    if (!d) return fail(c, GN_ERR_IO, "%s: %s", vdir, strerror(errno));
    size_t n = 0, cap = 8;
    char **names = malloc(cap * sizeof *names);
    gn_status s = GN_OK;
    struct dirent *de;
    while (names && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "variables.data-", 15) != 0 && strcmp(de->d_name, "variables.index") != 0) continue;
        if (n == cap) {
            char **q = realloc(names, (cap *= 2) * sizeof *q);
            if (!q) break;
            names = q;
        }
        names[n] = gn__arena_strdup(&c->a, de->d_name);
        if (!names[n]) break;
        n++;
    }
    closedir(d);
    if (!names) return fail(c, GN_ERR_NOMEM, "out of memory");
    qsort(names, n, sizeof *names, cmp_cstr);
    char *odir = path_join(c, tmp, "variables");
    if (s == GN_OK && !odir) s = fail(c, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK && mkdir(odir, 0755) != 0) s = fail(c, GN_ERR_IO, "%s: %s", odir, strerror(errno));
    if (s == GN_OK && c->o.experimental_sharding_callback == GN_SHARDING_MAX_SHARD_SIZE) {
        free(names);
        return write_variables_max_shard(c, vdir, odir, index_fp);
    }
    for (size_t i = 0; s == GN_OK && i < n; i++) {
        char *from = path_join(c, vdir, names[i]), *to = path_join(c, odir, names[i]);
        if (!from || !to) s = fail(c, GN_ERR_NOMEM, "out of memory");
        else s = copy_file(c, from, to, strcmp(names[i], "variables.index") == 0 ? index_fp : NULL);
    }
    free(names);
    return s;
}

static gn_status copy_asset(wctx *c, const char *adir, const char *fn, const char *where)
{
    if (!fn || !*fn || strchr(fn, '/') || strcmp(fn, "..") == 0 || strcmp(fn, ".") == 0)
        return fail(c, GN_ERR_PARSE, "%s: '%s' is not a file name inside assets/", where, fn ? fn : "");
    if (!c->src_dir) return fail(c, GN_ERR_IO, "asset '%s': the SavedModel was not loaded from a directory", fn);
    char *from = path_join(c, c->src_dir, "assets");
    from = from ? path_join(c, from, fn) : NULL;
    char *to = path_join(c, adir, fn);
    if (!from || !to) return fail(c, GN_ERR_NOMEM, "out of memory");
    struct stat st;
    if (stat(to, &st) == 0) return GN_OK;   /* listed twice */
    return copy_file(c, from, to, NULL);
}

/* The assets: MetaGraphDef.asset_file_def (TF2) and the AssetFileDefs of the
 * "saved_model_assets" collection (TF1's SavedModelBuilder). */
static gn_status write_assets(wctx *c, const char *tmp)
{
    if (!c->src) return GN_OK;
    const Tensorflow__CollectionDef__AnyList *al = NULL;
    for (size_t i = 0; i < c->src->n_collection_def; i++) {
        const Tensorflow__MetaGraphDef__CollectionDefEntry *e = c->src->collection_def[i];
        if (strcmp(e->key, "saved_model_assets") == 0 && e->value &&
            e->value->kind_case == TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST)
            al = e->value->any_list;
    }
    if (!c->src->n_asset_file_def && (!al || !al->n_value)) return GN_OK;
    char *adir = path_join(c, tmp, "assets");
    if (!adir) return fail(c, GN_ERR_NOMEM, "out of memory");
    if (mkdir(adir, 0755) != 0) return fail(c, GN_ERR_IO, "%s: %s", adir, strerror(errno));
    char where[64];
    for (size_t i = 0; i < c->src->n_asset_file_def; i++) {
        snprintf(where, sizeof where, "asset_file_def %zu", i);
        GN_TRY(copy_asset(c, adir, c->src->asset_file_def[i]->filename, where));
    }
    for (size_t i = 0; al && i < al->n_value; i++) {
        const Google__Protobuf__Any *any = al->value[i];
        size_t tl = any->type_url ? strlen(any->type_url) : 0;
        if (tl < 23 || strcmp(any->type_url + tl - 23, "tensorflow.AssetFileDef") != 0) continue;
        Tensorflow__AssetFileDef *ad = tensorflow__asset_file_def__unpack(&c->pa, any->value.len, any->value.data);
        if (!ad && c->a.oom) return fail(c, GN_ERR_NOMEM, "out of memory");
        if (!ad) return fail(c, GN_ERR_PARSE, "collection saved_model_assets: value %zu is not an AssetFileDef", i);
        snprintf(where, sizeof where, "collection saved_model_assets %zu", i);
        GN_TRY(copy_asset(c, adir, ad->filename, where));
    }
    return GN_OK;
}

/* GraphDebugInfo: every node ("name") and every function node
 * ("name@function") mapped to one trace. grapnel has no Python stack
 * traces, so the trace (id 0) is empty. Keys sorted. */
static gn_status write_debug_info(wctx *c, const char *tmp)
{
    gn_graph *w = c->w;
    size_t total = w->n_live;
    for (uint32_t f = 0; f < w->n_fns; f++) total += w->fns[f].body->n_live;
    char **keys = az(c, (total + 1) * sizeof *keys);
    if (!keys) return fail(c, GN_ERR_NOMEM, "out of memory");
    size_t n = 0;
    for (gn_id i = 0; i < w->n_nodes; i++)
        if (gn__node_live(w, i)) keys[n++] = (char *)gn__node_name(w, i);
    for (uint32_t f = 0; f < w->n_fns; f++) {
        gn_graph *b = w->fns[f].body;
        const char *fname = gn__str(w, w->fns[f].name);
        for (gn_id i = 0; i < b->n_nodes; i++) {
            if (!gn__node_live(b, i) || (b->nodes[i].flags & (GN__NODE_FN_ARG | GN__NODE_FN_RET))) continue;
            size_t l = strlen(gn__node_name(b, i)) + strlen(fname) + 2;
            char *k = gn__arena_alloc(&c->a, l, 1);
            if (!k) return fail(c, GN_ERR_NOMEM, "out of memory");
            snprintf(k, l, "%s@%s", gn__node_name(b, i), fname);
            keys[n++] = k;
        }
    }
    qsort(keys, n, sizeof *keys, cmp_cstr);
    Tensorflow__GraphDebugInfo di = TENSORFLOW__GRAPH_DEBUG_INFO__INIT;
    Tensorflow__GraphDebugInfo__StackTrace st = TENSORFLOW__GRAPH_DEBUG_INFO__STACK_TRACE__INIT;
    Tensorflow__GraphDebugInfo__TracesByIdEntry te = TENSORFLOW__GRAPH_DEBUG_INFO__TRACES_BY_ID_ENTRY__INIT;
    Tensorflow__GraphDebugInfo__TracesByIdEntry *tep = &te;
    te.has_key = 1;
    te.key = 0;
    te.value = &st;
    di.n_traces_by_id = 1;
    di.traces_by_id = &tep;
    Tensorflow__GraphDebugInfo__NameToTraceIdEntry *ents = az(c, (n + 1) * sizeof *ents);
    Tensorflow__GraphDebugInfo__NameToTraceIdEntry **ep = az(c, (n + 1) * sizeof *ep);
    if (!ents || !ep) return fail(c, GN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        tensorflow__graph_debug_info__name_to_trace_id_entry__init(&ents[i]);
        ents[i].key = keys[i];
        ents[i].has_value = 1;
        ents[i].value = 0;
        ep[i] = &ents[i];
    }
    di.n_name_to_trace_id = n;
    di.name_to_trace_id = ep;
    char *ddir = path_join(c, tmp, "debug");
    char *file = ddir ? path_join(c, ddir, "saved_model_debug_info.pb") : NULL;
    if (!file) return fail(c, GN_ERR_NOMEM, "out of memory");
    if (mkdir(ddir, 0755) != 0) return fail(c, GN_ERR_IO, "%s: %s", ddir, strerror(errno));
    return write_msg(c, file, &di.base);
}

/* ---- the whole save ------------------------------------------------------------------------ */
static gn_status check_target(wctx *c, const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) return GN_OK;
        return fail(c, GN_ERR_IO, "%s: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) return fail(c, GN_ERR_IO, "%s: exists and is not a directory", dir);
    DIR *d = opendir(dir);
    if (!d) return fail(c, GN_ERR_IO, "%s: %s", dir, strerror(errno));
    struct dirent *de;
    bool empty = true;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) empty = false;
    closedir(d);
    if (!empty) return fail(c, GN_ERR_IO, "%s: exists and is not empty (grapnel saves into a new or empty directory)", dir);
    return GN_OK;
}

static gn_status build_graph(wctx *c, Tensorflow__GraphDef **out)
{
    Tensorflow__GraphDef *gd = NULL;
    gn_status s = gn__graph_to_graphdef(c->w, &c->a, &gd, &c->g->err);
    if (s != GN_OK) return s;
    if (!c->o.experimental_custom_gradients && gd->library && gd->library->n_registered_gradients) {
        Tensorflow__FunctionDefLibrary *lib = az(c, sizeof *lib);
        if (!lib) return fail(c, GN_ERR_NOMEM, "out of memory");
        *lib = *gd->library;
        lib->n_registered_gradients = 0;
        lib->registered_gradients = NULL;
        gd->library = lib;
    }
    *out = gd;
    return GN_OK;
}

static gn_status save(wctx *c, const char *dir)
{
    gn_graph *w = c->w;
    GN_TRY(check_target(c, dir));
    /* options that refuse or change the graph */
    if (c->o.has_namespace_whitelist) GN_TRY(each_node(c, w, check_namespace));
    if (c->o.experimental_debug_stripper) {
        gn_status s = each_node(c, w, strip_assert);
        if (s != GN_OK) return fail(c, s, "experimental_debug_stripper: %s", w->err.msg);
    }
    if (c->o.experimental_skip_saver) GN_TRY(remove_saver(c));
    if (c->o.experimental_io_device) GN_TRY(each_node(c, w, set_io_device));

    /* the MetaGraphDef */
    Tensorflow__MetaGraphDef *mg = az(c, sizeof *mg);
    if (!mg) return fail(c, GN_ERR_NOMEM, "out of memory");
    if (c->src) *mg = *c->src;
    else tensorflow__meta_graph_def__init(mg);
    GN_TRY(build_meta_info(c, &mg->meta_info_def));
    GN_TRY(build_graph(c, &mg->graph_def));
    if (c->o.experimental_skip_saver) mg->saver_def = NULL;
    GN_TRY(apply_variable_policy(c, &mg->object_graph_def));
    if (!c->src || c->p->n_fetches) {
        Tensorflow__SignatureDef *sd = NULL;
        GN_TRY(build_signature(c, &sd));
        const char *key = c->p->signature_key ? c->p->signature_key : "serving_default";
        size_t n0 = c->src ? c->src->n_signature_def : 0;
        Tensorflow__MetaGraphDef__SignatureDefEntry **se = az(c, (n0 + 1) * sizeof *se);
        Tensorflow__MetaGraphDef__SignatureDefEntry *e = az(c, sizeof *e);
        if (!se || !e) return fail(c, GN_ERR_NOMEM, "out of memory");
        size_t n = 0;
        for (size_t i = 0; i < n0; i++)
            if (strcmp(c->src->signature_def[i]->key, key) != 0) se[n++] = c->src->signature_def[i];
        tensorflow__meta_graph_def__signature_def_entry__init(e);
        e->key = adup(c, key);
        e->value = sd;
        if (!e->key) return fail(c, GN_ERR_NOMEM, "out of memory");
        se[n++] = e;
        if (!c->src) qsort(se, n, sizeof *se, cmp_sig_entry);
        mg->signature_def = se;
        mg->n_signature_def = n;
    }
    Tensorflow__SavedModel sm = TENSORFLOW__SAVED_MODEL__INIT;
    sm.saved_model_schema_version = 1;
    sm.n_meta_graphs = 1;
    sm.meta_graphs = &mg;
    size_t size = protobuf_c_message_get_packed_size(&sm.base);
    if (size > (size_t)INT32_MAX && !c->o.experimental_image_format)
        return fail(c, GN_ERR_UNSUPPORTED,
                    "%s: the SavedModel proto would be %zu bytes, over protobuf's 2 GiB limit; save it with "
                    "experimental_image_format (the chunked saved_model.cpb)",
                    dir, size);

    /* the files, in a fresh sibling directory renamed at the end */
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    char host[40];
    host_tag(host, sizeof host);
    sweep_stale_temporaries(dir, dl, host);
    size_t tmpl = dl + strlen(host) + 40;
    char *tmp = gn__arena_alloc(&c->a, tmpl, 1);
    if (!tmp) return fail(c, GN_ERR_NOMEM, "out of memory");
    snprintf(tmp, tmpl, "%.*s.tmp-%s-%ld-XXXXXX", (int)dl, dir, host, (long)getpid());
    if (!mkdtemp(tmp)) return fail(c, GN_ERR_IO, "%s: cannot create a directory beside it: %s", dir, strerror(errno));
    chmod(tmp, 0755);
    uint64_t index_fp = 0, sm_fp = 0;
    gn_status s = write_variables(c, tmp, &index_fp);
    if (s == GN_OK) s = write_assets(c, tmp);
    if (s == GN_OK) s = gn__engine_assets_write(c->g, c->w, tmp, &c->g->err);   /* engines (io/engine_store.h) */
    char *smpath = path_join(c, tmp, "saved_model.pb");
    char *cpbpath = path_join(c, tmp, "saved_model.cpb");
    if (s == GN_OK && (!smpath || !cpbpath)) s = fail(c, GN_ERR_NOMEM, "out of memory");
    bool chunked = false;
    if (s == GN_OK && c->o.experimental_image_format)
        s = gn__savedmodel_write_chunked(&sm, cpbpath, c->chunk_max, c->g->fsync_writes, &c->a, &chunked, &sm_fp,
                                         &c->g->err);
    if (s == GN_OK && !chunked) {
        uint8_t *bytes = NULL;
        size_t nbytes = 0;
        s = gn__pack_deterministic(&sm.base, &bytes, &nbytes, &c->g->err);
        if (s == GN_OK) s = gn__write_file_atomic(smpath, bytes, nbytes, c->g->fsync_writes, &c->g->err);
        if (s == GN_OK) sm_fp = gn__fingerprint64(bytes, nbytes);
        free(bytes);
    }
    if (s == GN_OK) {
        Tensorflow__FingerprintDef fp = TENSORFLOW__FINGERPRINT_DEF__INIT;
        Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
        /* a chunked image: producer 2, and the checksum over its chunks */
        ver.producer = chunked ? 2 : 1;
        fp.saved_model_checksum = sm_fp;
        fp.checkpoint_hash = index_fp;
        fp.version = &ver;
        char *fpath = path_join(c, tmp, "fingerprint.pb");
        s = fpath ? write_msg(c, fpath, &fp.base) : fail(c, GN_ERR_NOMEM, "out of memory");
    }
    if (s == GN_OK && c->o.save_debug_info) s = write_debug_info(c, tmp);
    if (s == GN_OK) {
        char *final = gn__arena_strndup(&c->a, dir, dl);
        if (!final) s = fail(c, GN_ERR_NOMEM, "out of memory");
        else if (rename(tmp, final) != 0) s = fail(c, GN_ERR_IO, "%s: %s", final, strerror(errno));
        else if (c->g->fsync_writes) return gn__sync_parent_dir(final, &c->g->err);
    }
    if (s != GN_OK) {
        remove_tree(tmp);
        /* a file of the directory being written is named as it would have been
         * in dir: the temporary directory is gone */
        size_t tl = strlen(tmp);
        if (!strncmp(c->g->err.msg, tmp, tl) && (c->g->err.msg[tl] == '/' || c->g->err.msg[tl] == ':')) {
            char rest[sizeof c->g->err.msg];
            snprintf(rest, sizeof rest, "%s", c->g->err.msg + tl);
            gn__fail(&c->g->err, s, "%.*s%s", (int)dl, dir, rest);
        }
    }
    return s;
}

gn_status gn_savedmodel_save(gn_graph *g, const char *dir, const gn_save_options *o, const gn_save_params *p)
{
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    if (!dir || !*dir) return gn__fail(&g->err, GN_ERR_ARG, "gn_savedmodel_save: no directory");
    if (g->kind != GN__GRAPH_TOP) return gn__fail(&g->err, GN_ERR_ARG, "gn_savedmodel_save: not a top-level graph");
    wctx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    gn_save_options_init(&c.o);
    if (o) {
        if (o->struct_size < offsetof(gn_save_options, struct_size) + sizeof(uint32_t) ||
            o->struct_size > sizeof(gn_save_options))
            return gn__fail(&g->err, GN_ERR_ARG, "gn_save_options: struct_size %u is not a size this library knows "
                            "(call gn_save_options_init)", (unsigned)o->struct_size);
        memcpy(&c.o, o, o->struct_size);
    }
    gn_save_params dp;
    gn_save_params_init(&dp);
    if (p && (p->struct_size < sizeof(uint32_t) || p->struct_size > sizeof(gn_save_params)))
        return gn__fail(&g->err, GN_ERR_ARG, "gn_save_params: struct_size %u is not a size this library knows "
                        "(call gn_save_params_init)", (unsigned)p->struct_size);
    if (p) memcpy(&dp, p, p->struct_size);
    c.p = &dp;
    if (dp.struct_size >= offsetof(gn_save_params, chunk_max_size) + sizeof dp.chunk_max_size &&
        dp.chunk_max_size < 0)
        return gn__fail(&g->err, GN_ERR_ARG, "gn_save_params: chunk_max_size %lld is negative",
                        (long long)dp.chunk_max_size);
    c.chunk_max = dp.chunk_max_size > 0 ? dp.chunk_max_size : GN__CPB_MAX_SIZE;
    if (c.o.experimental_sharding_callback == GN_SHARDING_MAX_SHARD_SIZE && c.o.max_shard_size <= 0)
        return gn__fail(&g->err, GN_ERR_ARG, "MaxShardSizePolicy: max_shard_size must be positive");
    if ((unsigned)c.o.experimental_variable_policy > GN_VARIABLE_POLICY_EXPAND_DISTRIBUTED_VARIABLES)
        return gn__fail(&g->err, GN_ERR_ARG, "experimental_variable_policy: %d is not a VariablePolicy",
                        (int)c.o.experimental_variable_policy);
    if (gn__graph_saved(g)) {
        c.src = gn__graph_saved(g)->mg;
        c.src_dir = gn__graph_saved(g)->dir;
    }
    gn__arena_init(&c.a, 64 * 1024);
    gn__arena_pb_allocator(&c.a, &c.pa);
    gn_status s = gn__graph_clone(g, &c.w);
    if (s != GN_OK) {
        if (c.w && c.w->err.msg[0]) gn__fail(&g->err, s, "%s", c.w->err.msg);
        else gn__fail(&g->err, s, "cannot copy the graph");
    } else {
        s = save(&c, dir);
    }
    gn_graph_free(c.w);
    gn__arena_free(&c.a);
    if (s != GN_OK && !g->err.msg[0]) gn__fail(&g->err, s, "%s: %s", dir, gn_status_str(s));
    return s;
}
