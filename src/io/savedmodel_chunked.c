/* The chunked SavedModel image, saved_model.cpb (docs/reference_formats.md
 * §B8): what TensorFlow's proto splitter (tensorflow/tools/proto_splitter:
 * SavedModelSplitter, GraphDefSplitter, split.py) writes with
 * SaveOptions(experimental_image_format=True), and its reader (merge.cc).
 *
 * Splitting (max = 1 GiB, TensorFlow's constants.max_size()): nothing is
 * split when the SavedModel is smaller than max (saved_model.pb is written
 * as usual). Otherwise the first MetaGraphDef's GraphDef, when it is at least
 * max, is split:
 *   - GraphDef.node, walked in order: a node larger than max must be a Const,
 *     whose tensor bytes become a BYTES chunk (the TensorProto keeps dtype,
 *     shape and version_number); a node (still) larger than max/3 becomes a
 *     chunk of its own, left empty in place; and whenever the nodes gathered
 *     since the last cut reach max, a new GraphDef chunk takes the nodes from
 *     there on;
 *   - GraphDef.library.function the same way (whole functions over max/3
 *     become chunks; a function over max would need its node_def split,
 *     which is refused here), first when the library outweighs the nodes;
 *   - the library, when the GraphDef is still over max, becomes a chunk;
 * then, when the SavedModel is still at least max, the GraphDef becomes a
 * chunk. Chunk 0 is the SavedModel itself; chunks inserted "at index 1" come
 * before the others. Every chunk is a record of a Riegeli file, each in its
 * own simple chunk (src/io/riegeli.c), and the last record is the
 * ChunkMetadata: VersionDef{splitter_version 1, join_version 0}, each chunk's
 * type, size and numeric record position, and the ChunkedMessage tree (here
 * flat: chunk 0 with one ChunkedField per other chunk, whose field_tag is the
 * path of field numbers, repeated indices and map keys it merges into).
 *
 * Reading merges the chunks back as TensorFlow's Merger does: chunk 0, then
 * the chunked fields sorted by depth and index, each merged at its path (a
 * message chunk merges into the message there, a bytes chunk sets the
 * bytes field). The merge works on the serialized form: a protobuf merge of
 * a message into a field is the concatenation of their encodings. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/farmhash.h"
#include "io/pbcanon.h"
#include "io/riegeli.h"
#include "io/savedmodel_chunked.h"
#include "tensorflow/tools/proto_splitter/chunk.pb-c.h"

/* field numbers along the paths the splitter uses */
#define F_SM_META_GRAPHS 2
#define F_MG_GRAPH_DEF 2
#define F_GD_NODE 1
#define F_GD_LIBRARY 2
#define F_LIB_FUNCTION 1
#define F_NODE_ATTR 5
#define F_ATTR_TENSOR 8
#define F_TENSOR_CONTENT 4

typedef struct tag {
    int kind;   /* 1 field, 2 map key (string), 3 index */
    uint64_t v;
    const char *key;
} tag;

typedef struct chunk {
    bool bytes;
    const ProtobufCMessage *msg;   /* !bytes */
    const uint8_t *data;           /* bytes */
    size_t len;
} chunk;

typedef struct cfield {
    tag t[12];
    int n;
    chunk *c;
} cfield;

typedef struct splitter {
    gn__arena *a;
    gn__err *err;
    int64_t max;
    chunk **chunks;   /* in file order */
    size_t n_chunks, cap_chunks;
    cfield *fields;   /* in the order they were added */
    size_t n_fields, cap_fields;
} splitter;

static gn_status oom(splitter *s) { return gn__fail(s->err, GN_ERR_NOMEM, "saved_model.cpb: out of memory"); }

static size_t psize(const ProtobufCMessage *m) { return m ? protobuf_c_message_get_packed_size(m) : 0; }

/* add_chunk: at the end, or at position 1 (after the SavedModel itself) */
static gn_status add_chunk(splitter *s, chunk *c, const tag *t, int nt, bool at1)
{
    if (s->n_chunks == s->cap_chunks) {
        size_t nc = s->cap_chunks ? s->cap_chunks * 2 : 16;
        chunk **n = realloc(s->chunks, nc * sizeof *n);
        if (!n) return oom(s);
        s->chunks = n;
        s->cap_chunks = nc;
    }
    if (s->n_fields == s->cap_fields) {
        size_t nc = s->cap_fields ? s->cap_fields * 2 : 16;
        cfield *n = realloc(s->fields, nc * sizeof *n);
        if (!n) return oom(s);
        s->fields = n;
        s->cap_fields = nc;
    }
    if (at1) {
        memmove(s->chunks + 2, s->chunks + 1, (s->n_chunks - 1) * sizeof *s->chunks);
        s->chunks[1] = c;
    } else {
        s->chunks[s->n_chunks] = c;
    }
    s->n_chunks++;
    cfield *f = &s->fields[s->n_fields++];
    memset(f, 0, sizeof *f);
    memcpy(f->t, t, (size_t)nt * sizeof *t);
    f->n = nt;
    f->c = c;
    return GN_OK;
}

static chunk *new_msg_chunk(splitter *s, const ProtobufCMessage *m)
{
    chunk *c = gn__arena_zalloc(s->a, sizeof *c, 8);
    if (c) c->msg = m;
    return c;
}

/* Which element splitters a repeated field gets. */
typedef enum { ELEMS_NODES, ELEMS_FUNCTIONS } elem_kind;

/* ConstantNodeDefSplitter: a node over max gives its tensor bytes away. */
static gn_status split_constant(splitter *s, Tensorflow__NodeDef **slot, size_t size, const tag *t, int nt,
                                size_t *diff)
{
    *diff = 0;
    if ((int64_t)size <= s->max) return GN_OK;
    Tensorflow__NodeDef *nd = *slot;
    Tensorflow__AttrValue *val = NULL;
    for (size_t i = 0; i < nd->n_attr; i++)
        if (strcmp(nd->attr[i]->key, "value") == 0) val = nd->attr[i]->value;
    if (strcmp(nd->op, "Const") != 0 || !val || val->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
        !val->tensor || val->tensor->dtype == TENSORFLOW__DATA_TYPE__DT_STRING)
        return gn__fail(s->err, GN_ERR_UNSUPPORTED,
                        "saved_model.cpb: node '%s' (%s) is %zu bytes, over the splitter's maximum of %lld bytes; "
                        "only Const nodes (with a numeric tensor) can be split further",
                        nd->name, nd->op, size, (long long)s->max);
    const Tensorflow__TensorProto *tp = val->tensor;
    if (tp->tensor_content.len == 0 && psize(&tp->base) > 64)
        return gn__fail(s->err, GN_ERR_UNSUPPORTED,
                        "saved_model.cpb: Const '%s' keeps its values in typed fields, not tensor_content", nd->name);
    /* the node copied with a TensorProto that keeps dtype, shape and version_number */
    Tensorflow__NodeDef *n2 = gn__arena_alloc(s->a, sizeof *n2, 8);
    Tensorflow__NodeDef__AttrEntry **attrs = gn__arena_alloc(s->a, nd->n_attr * sizeof *attrs, 8);
    Tensorflow__NodeDef__AttrEntry *e2 = gn__arena_alloc(s->a, sizeof *e2, 8);
    Tensorflow__AttrValue *v2 = gn__arena_alloc(s->a, sizeof *v2, 8);
    Tensorflow__TensorProto *t2 = gn__arena_alloc(s->a, sizeof *t2, 8);
    chunk *c = gn__arena_zalloc(s->a, sizeof *c, 8);
    if (!n2 || !attrs || !e2 || !v2 || !t2 || !c) return oom(s);
    *n2 = *nd;
    tensorflow__tensor_proto__init(t2);
    t2->dtype = tp->dtype;
    t2->tensor_shape = tp->tensor_shape;
    t2->version_number = tp->version_number;
    *v2 = *val;
    v2->tensor = t2;
    for (size_t i = 0; i < nd->n_attr; i++) {
        attrs[i] = nd->attr[i];
        if (strcmp(nd->attr[i]->key, "value") == 0) {
            *e2 = *nd->attr[i];
            e2->value = v2;
            attrs[i] = e2;
        }
    }
    n2->attr = attrs;
    *slot = n2;
    c->bytes = true;
    c->data = tp->tensor_content.data;
    c->len = tp->tensor_content.len;
    tag full[12];
    memcpy(full, t, (size_t)nt * sizeof *t);
    full[nt++] = (tag){1, F_NODE_ATTR, NULL};
    full[nt++] = (tag){2, 0, "value"};
    full[nt++] = (tag){1, F_ATTR_TENSOR, NULL};
    full[nt++] = (tag){1, F_TENSOR_CONTENT, NULL};
    GN_TRY(add_chunk(s, c, full, nt, false));
    *diff = c->len;
    return GN_OK;
}

/* LargeMessageSplitter: a message over max/3 becomes a chunk, left empty in place. */
static gn_status split_large(splitter *s, void **slot, const ProtobufCMessageDescriptor *d, size_t size, const tag *t,
                             int nt, size_t *diff)
{
    *diff = 0;
    if ((int64_t)size <= s->max / 3) return GN_OK;
    ProtobufCMessage *empty = gn__arena_zalloc(s->a, d->sizeof_message, 8);
    chunk *c = new_msg_chunk(s, *(ProtobufCMessage **)slot);
    if (!empty || !c) return oom(s);
    d->message_init(empty);
    GN_TRY(add_chunk(s, c, t, nt, false));
    *(ProtobufCMessage **)slot = empty;
    *diff = size;
    return GN_OK;
}

/* RepeatedMessageSplitter over parent's repeated field (elements in *elems,
 * *n_elems of them): returns the bytes moved out through *moved. parent_t
 * is the parent message's path; new_parent makes an empty parent-typed
 * message for the ranges cut off. */
static gn_status split_repeated(splitter *s, elem_kind kind, void ***elems, size_t *n_elems, const tag *parent_t,
                                int parent_nt, uint32_t field, const ProtobufCMessageDescriptor *parent_desc,
                                size_t *moved)
{
    *moved = 0;
    size_t total = 0, n = *n_elems;
    size_t *cuts = malloc((n + 1) * sizeof *cuts);
    ProtobufCMessage **parts = malloc((n + 1) * sizeof *parts);
    size_t n_cuts = 0;
    gn_status st = GN_OK;
    if (!cuts || !parts) st = oom(s);
    for (size_t i = 0; st == GN_OK && i < n; i++) {
        void **slot = &(*elems)[i];
        size_t size = psize(*(ProtobufCMessage **)slot), diff = 0;
        tag t[12];
        memcpy(t, parent_t, (size_t)parent_nt * sizeof *t);
        int nt = parent_nt;
        t[nt++] = (tag){1, field, NULL};
        t[nt++] = (tag){3, i, NULL};
        if (kind == ELEMS_NODES) {
            st = split_constant(s, (Tensorflow__NodeDef **)slot, size, t, nt, &diff);
            *moved += diff;
            size -= diff;
            if (st == GN_OK) st = split_large(s, slot, &tensorflow__node_def__descriptor, size, t, nt, &diff);
        } else {
            const Tensorflow__FunctionDef *fd = *slot;
            if ((int64_t)size > s->max)
                st = gn__fail(s->err, GN_ERR_UNSUPPORTED,
                              "saved_model.cpb: function '%s' is %zu bytes, over the splitter's maximum of %lld; "
                              "splitting a function's node_def is not implemented",
                              fd->signature ? fd->signature->name : "?", size, (long long)s->max);
            else
                st = split_large(s, slot, &tensorflow__function_def__descriptor, size, t, nt, &diff);
        }
        if (st != GN_OK) break;
        *moved += diff;
        size -= diff;
        if ((int64_t)(total + size) >= s->max) {
            ProtobufCMessage *part = gn__arena_zalloc(s->a, parent_desc->sizeof_message, 8);
            chunk *c = new_msg_chunk(s, part);
            if (!part || !c) {
                st = oom(s);
                break;
            }
            parent_desc->message_init(part);
            cuts[n_cuts] = i;
            parts[n_cuts++] = part;
            st = add_chunk(s, c, parent_t, parent_nt, false);
            *moved += total;
            total = 0;
        }
        total += size;
    }
    /* each cut-off range goes to its chunk (a message of the parent's type holding only that field) */
    const ProtobufCFieldDescriptor *fdesc = protobuf_c_message_descriptor_get_field(parent_desc, field);
    for (size_t k = 0; st == GN_OK && k < n_cuts; k++) {
        size_t from = cuts[k], to = k + 1 < n_cuts ? cuts[k + 1] : n;
        *(size_t *)((char *)parts[k] + fdesc->quantifier_offset) = to - from;
        *(void ***)((char *)parts[k] + fdesc->offset) = *elems + from;
    }
    if (st == GN_OK && n_cuts) *n_elems = cuts[0];
    free(cuts);
    free(parts);
    return st;
}

static gn_status split_graph_def(splitter *s, Tensorflow__MetaGraphDef *mg)
{
    Tensorflow__GraphDef *gd = mg->graph_def;
    size_t gd_size = psize(&gd->base);
    if ((int64_t)gd_size < s->max) return GN_OK;
    /* the GraphDef and its library are changed: shallow copies */
    Tensorflow__GraphDef *g2 = gn__arena_alloc(s->a, sizeof *g2, 8);
    void **nodes = gn__arena_alloc(s->a, (gd->n_node + 1) * sizeof *nodes, 8);
    if (!g2 || !nodes) return oom(s);
    *g2 = *gd;
    memcpy(nodes, gd->node, gd->n_node * sizeof *nodes);
    g2->node = (Tensorflow__NodeDef **)nodes;
    Tensorflow__FunctionDefLibrary *lib = NULL;
    void **fns = NULL;
    if (gd->library) {
        lib = gn__arena_alloc(s->a, sizeof *lib, 8);
        fns = gn__arena_alloc(s->a, (gd->library->n_function + 1) * sizeof *fns, 8);
        if (!lib || !fns) return oom(s);
        *lib = *gd->library;
        memcpy(fns, gd->library->function, gd->library->n_function * sizeof *fns);
        lib->function = (Tensorflow__FunctionDef **)fns;
        g2->library = lib;
    }
    mg->graph_def = g2;
    tag gt[3] = {{1, F_SM_META_GRAPHS, NULL}, {3, 0, NULL}, {1, F_MG_GRAPH_DEF, NULL}};
    tag lt[4] = {{1, F_SM_META_GRAPHS, NULL}, {3, 0, NULL}, {1, F_MG_GRAPH_DEF, NULL}, {1, F_GD_LIBRARY, NULL}};
    size_t lib_size = psize(lib ? &lib->base : NULL), node_size = gd_size - lib_size, moved;
    size_t *n_nodes = &g2->n_node;
    if (lib_size > node_size) {
        if (lib) {
            GN_TRY(split_repeated(s, ELEMS_FUNCTIONS, (void ***)&lib->function, &lib->n_function, lt, 4,
                                  F_LIB_FUNCTION, &tensorflow__function_def_library__descriptor, &moved));
            lib_size -= moved;
        }
        if ((int64_t)(lib_size + node_size) > s->max) {
            GN_TRY(split_repeated(s, ELEMS_NODES, (void ***)&g2->node, n_nodes, gt, 3, F_GD_NODE,
                                  &tensorflow__graph_def__descriptor, &moved));
            node_size -= moved;
        }
    } else {
        GN_TRY(split_repeated(s, ELEMS_NODES, (void ***)&g2->node, n_nodes, gt, 3, F_GD_NODE,
                              &tensorflow__graph_def__descriptor, &moved));
        node_size -= moved;
        if (lib && (int64_t)(lib_size + node_size) > s->max) {
            GN_TRY(split_repeated(s, ELEMS_FUNCTIONS, (void ***)&lib->function, &lib->n_function, lt, 4,
                                  F_LIB_FUNCTION, &tensorflow__function_def_library__descriptor, &moved));
            lib_size -= moved;
        }
    }
    if (lib && (int64_t)psize(&g2->base) > s->max) {
        chunk *c = new_msg_chunk(s, &lib->base);
        if (!c) return oom(s);
        GN_TRY(add_chunk(s, c, lt, 4, true));
        g2->library = NULL;
    }
    return GN_OK;
}

/* ---- writing --------------------------------------------------------------------------- */
/* TensorFlow's saved_model_checksum of a .cpb (CreateFingerprintDefCpb):
 * FingerprintCat64 over the Fingerprint64 of every chunk a field of the root
 * names, in the fields' order, then of the serialized empty SavedModel (the
 * message its HashFields leaves unfilled). */
static gn_status write_cpb(splitter *s, const char *path, bool durable, uint64_t *checksum)
{
    FILE *f = fopen(path, "wb");
    if (!f) return gn__fail(s->err, GN_ERR_IO, "%s: %s", path, strerror(errno));
    gn__riegeli_writer w;
    gn_status st = gn__riegeli_writer_start(&w, f, path, s->err);
    Tensorflow__ProtoSplitter__ChunkInfo *infos = calloc(s->n_chunks + 1, sizeof *infos);
    Tensorflow__ProtoSplitter__ChunkInfo **infop = calloc(s->n_chunks + 1, sizeof *infop);
    uint64_t *fps = calloc(s->n_chunks + 1, sizeof *fps);
    if (st == GN_OK && (!infos || !infop || !fps)) st = oom(s);
    for (size_t i = 0; st == GN_OK && i < s->n_chunks; i++) {
        chunk *c = s->chunks[i];
        uint8_t *buf = NULL;
        size_t len = c->len;
        const void *data = c->data;
        if (!c->bytes) {
            st = gn__pack_deterministic(c->msg, &buf, &len, s->err);
            data = buf;
        }
        uint64_t pos = 0;
        const void *parts[1] = {data ? data : ""};
        if (st == GN_OK) st = gn__riegeli_write_record(&w, 1, parts, &len, &pos, s->err);
        if (st == GN_OK) fps[i] = gn__fingerprint64(parts[0], len);
        free(buf);
        Tensorflow__ProtoSplitter__ChunkInfo *ci = &infos[i];
        tensorflow__proto_splitter__chunk_info__init(ci);
        ci->has_type = 1;
        ci->type = c->bytes ? TENSORFLOW__PROTO_SPLITTER__CHUNK_INFO__TYPE__BYTES
                            : TENSORFLOW__PROTO_SPLITTER__CHUNK_INFO__TYPE__MESSAGE;
        ci->has_size = len != 0;
        ci->size = len;
        ci->has_offset = pos != 0;
        ci->offset = pos;
        infop[i] = ci;
    }
    /* the metadata: the root ChunkedMessage (chunk 0) with one field per other chunk */
    size_t nf = s->n_fields, ntags = 0;
    for (size_t i = 0; i < nf; i++) ntags += (size_t)s->fields[i].n;
    Tensorflow__ProtoSplitter__ChunkedField *cf = calloc(nf + 1, sizeof *cf);
    Tensorflow__ProtoSplitter__ChunkedField **cfp = calloc(nf + 1, sizeof *cfp);
    Tensorflow__ProtoSplitter__ChunkedMessage *cm = calloc(nf + 1, sizeof *cm);
    Tensorflow__ProtoSplitter__FieldIndex *fi = calloc(ntags + 1, sizeof *fi);
    Tensorflow__ProtoSplitter__FieldIndex **fip = calloc(ntags + 1, sizeof *fip);
    Tensorflow__ProtoSplitter__FieldIndex__MapKey *mk = calloc(ntags + 1, sizeof *mk);
    if (st == GN_OK && (!cf || !cfp || !cm || !fi || !fip || !mk)) st = oom(s);
    size_t k = 0;
    *checksum = 0;
    for (size_t i = 0; st == GN_OK && i < nf; i++) {
        const cfield *fl = &s->fields[i];
        tensorflow__proto_splitter__chunked_field__init(&cf[i]);
        tensorflow__proto_splitter__chunked_message__init(&cm[i]);
        for (size_t j = 0; j < s->n_chunks; j++)
            if (s->chunks[j] == fl->c) cm[i].chunk_index = j;
        *checksum = gn__fingerprint_cat64(*checksum, fps[cm[i].chunk_index]);
        cm[i].has_chunk_index = 1;
        cf[i].message = &cm[i];
        cf[i].field_tag = &fip[k];
        cf[i].n_field_tag = (size_t)fl->n;
        for (int j = 0; j < fl->n; j++, k++) {
            tensorflow__proto_splitter__field_index__init(&fi[k]);
            if (fl->t[j].kind == 1) {
                fi[k].kind_case = TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_FIELD;
                fi[k].field = (uint32_t)fl->t[j].v;
            } else if (fl->t[j].kind == 3) {
                fi[k].kind_case = TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_INDEX;
                fi[k].index = fl->t[j].v;
            } else {
                tensorflow__proto_splitter__field_index__map_key__init(&mk[k]);
                mk[k].type_case = TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__MAP_KEY__TYPE_S;
                mk[k].s = (char *)fl->t[j].key;
                fi[k].kind_case = TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_MAP_KEY;
                fi[k].map_key = &mk[k];
            }
            fip[k] = &fi[k];
        }
        cfp[i] = &cf[i];
    }
    if (st == GN_OK) {
        Tensorflow__ProtoSplitter__VersionDef ver = TENSORFLOW__PROTO_SPLITTER__VERSION_DEF__INIT;
        ver.splitter_version = 1;
        Tensorflow__ProtoSplitter__ChunkedMessage root = TENSORFLOW__PROTO_SPLITTER__CHUNKED_MESSAGE__INIT;
        root.has_chunk_index = 1;
        root.chunk_index = 0;
        root.n_chunked_fields = nf;
        root.chunked_fields = cfp;
        Tensorflow__ProtoSplitter__ChunkMetadata md = TENSORFLOW__PROTO_SPLITTER__CHUNK_METADATA__INIT;
        md.version = &ver;
        md.n_chunks = s->n_chunks;
        md.chunks = infop;
        md.message = &root;
        uint8_t *buf = NULL;
        size_t len = 0;
        uint64_t pos;
        st = gn__pack_deterministic(&md.base, &buf, &len, s->err);
        const void *parts[1] = {buf};
        if (st == GN_OK) st = gn__riegeli_write_record(&w, 1, parts, &len, &pos, s->err);
        free(buf);
        *checksum = gn__fingerprint_cat64(*checksum, gn__fingerprint64("", 0));
    }
    free(infos);
    free(fps);
    free(infop);
    free(cf);
    free(cfp);
    free(cm);
    free(fi);
    free(fip);
    free(mk);
    if (st == GN_OK && durable && (fflush(f) != 0 || (fsync(fileno(f)) != 0 && errno != EINVAL)))
        st = gn__fail(s->err, GN_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && st == GN_OK) st = gn__fail(s->err, GN_ERR_IO, "%s: %s", path, strerror(errno));
    if (st != GN_OK) unlink(path);
    return st;
}

gn_status gn__savedmodel_write_chunked(const Tensorflow__SavedModel *sm_in, const char *path, int64_t max_size,
                                       bool durable, gn__arena *a, bool *chunked, uint64_t *checksum, gn__err *err)
{
    *chunked = false;
    *checksum = 0;
    if ((int64_t)psize(&sm_in->base) < max_size || sm_in->n_meta_graphs == 0) return GN_OK;
    splitter s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.err = err;
    s.max = max_size;
    Tensorflow__SavedModel *sm = gn__arena_alloc(a, sizeof *sm, 8);
    Tensorflow__MetaGraphDef **mgs = gn__arena_alloc(a, sm_in->n_meta_graphs * sizeof *mgs, 8);
    Tensorflow__MetaGraphDef *mg = gn__arena_alloc(a, sizeof *mg, 8);
    chunk *root = gn__arena_zalloc(a, sizeof *root, 8);
    gn_status st = GN_OK;
    if (!sm || !mgs || !mg || !root) return oom(&s);
    *sm = *sm_in;
    memcpy(mgs, sm_in->meta_graphs, sm_in->n_meta_graphs * sizeof *mgs);
    *mg = *sm_in->meta_graphs[0];
    mgs[0] = mg;
    sm->meta_graphs = mgs;
    root->msg = &sm->base;
    s.chunks = malloc(16 * sizeof *s.chunks);
    if (!s.chunks) return oom(&s);
    s.cap_chunks = 16;
    s.chunks[s.n_chunks++] = root;
    if (mg->graph_def) st = split_graph_def(&s, mg);
    if (st == GN_OK && (int64_t)psize(&sm->base) >= max_size && mg->graph_def) {
        chunk *c = new_msg_chunk(&s, &mg->graph_def->base);
        tag gt[3] = {{1, F_SM_META_GRAPHS, NULL}, {3, 0, NULL}, {1, F_MG_GRAPH_DEF, NULL}};
        if (!c) st = oom(&s);
        else st = add_chunk(&s, c, gt, 3, true);
        mg->graph_def = NULL;
    }
    if (st == GN_OK && s.n_fields == 0) goto out;   /* nothing split: saved_model.pb */
    if (st == GN_OK && (int64_t)psize(&sm->base) > INT32_MAX)
        st = gn__fail(err, GN_ERR_UNSUPPORTED,
                      "saved_model.cpb: the SavedModel's first chunk is still %zu bytes after splitting the GraphDef, "
                      "over protobuf's 2 GiB limit", psize(&sm->base));
    if (st == GN_OK) st = write_cpb(&s, path, durable, checksum);
    if (st == GN_OK) *chunked = true;
out:
    free(s.chunks);
    free(s.fields);
    return st;
}

/* ---- reading --------------------------------------------------------------------------- */
typedef struct bbuf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} bbuf;

static void bb_put(bbuf *b, const void *d, size_t n)
{
    if (b->oom || !n) return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n) nc *= 2;
        uint8_t *q = realloc(b->p, nc);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void bb_varint(bbuf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    bb_put(b, t, n);
}

static void bb_field(bbuf *b, uint32_t f, const uint8_t *d, size_t n)
{
    bb_varint(b, (uint64_t)f << 3 | 2);
    bb_varint(b, n);
    bb_put(b, d, n);
}

static bool rd_varint(const uint8_t **p, const uint8_t *e, uint64_t *v)
{
    *v = 0;
    for (int s = 0; s < 64 && *p < e; s += 7) {
        uint8_t c = *(*p)++;
        *v |= (uint64_t)(c & 0x7f) << s;
        if (c < 0x80) return true;
    }
    return false;
}

/* One field of a message: [start, end) its whole encoding, (payload, plen) a length-delimited value. */
typedef struct wfield {
    uint32_t num;
    int wt;
    const uint8_t *start, *end, *payload;
    size_t plen;
} wfield;

static bool next_field(const uint8_t **p, const uint8_t *e, wfield *f)
{
    f->start = *p;
    uint64_t key, v;
    if (!rd_varint(p, e, &key)) return false;
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    f->payload = NULL;
    f->plen = 0;
    switch (f->wt) {
    case 0:
        if (!rd_varint(p, e, &v)) return false;
        break;
    case 1:
        if (e - *p < 8) return false;
        *p += 8;
        break;
    case 5:
        if (e - *p < 4) return false;
        *p += 4;
        break;
    case 2:
        if (!rd_varint(p, e, &v) || v > (uint64_t)(e - *p)) return false;
        f->payload = *p;
        f->plen = (size_t)v;
        *p += v;
        break;
    default:
        return false;
    }
    f->end = *p;
    return true;
}

typedef struct mtag {
    int kind;   /* 1 field, 2 map key, 3 index */
    uint64_t v;
    const char *key;
    size_t key_len;
} mtag;

static gn_status merge_at(const uint8_t *m, size_t n, const mtag *t, int nt, const uint8_t *c, size_t cl, bbuf *out,
                          gn__err *err);

/* The message m with the occurrence `which` of field f (a length-delimited
 * one, or a new one appended when which is -1) replaced by the merge of the
 * rest of the path into it. */
static gn_status rewrite(const uint8_t *m, size_t n, uint32_t f, const uint8_t *which, const mtag *t, int nt,
                         const uint8_t *c, size_t cl, bbuf *out, gn__err *err)
{
    const uint8_t *p = m, *e = m + n;
    wfield w;
    gn_status st = GN_OK;
    while (p < e) {
        if (!next_field(&p, e, &w))
            return gn__fail(err, GN_ERR_PARSE, "saved_model.cpb: a chunk is not a valid protobuf message");
        if (w.start != which) {
            bb_put(out, w.start, (size_t)(w.end - w.start));
            continue;
        }
        bbuf sub = {0};
        st = merge_at(w.payload, w.plen, t, nt, c, cl, &sub, err);
        if (st == GN_OK) bb_field(out, f, sub.p, sub.n);
        if (sub.oom) st = gn__fail(err, GN_ERR_NOMEM, "saved_model.cpb: out of memory");
        free(sub.p);
        if (st != GN_OK) return st;
    }
    if (!which) {
        bbuf sub = {0};
        st = merge_at(NULL, 0, t, nt, c, cl, &sub, err);
        if (st == GN_OK) bb_field(out, f, sub.p, sub.n);
        if (sub.oom) st = gn__fail(err, GN_ERR_NOMEM, "saved_model.cpb: out of memory");
        free(sub.p);
    }
    return st;
}

static gn_status merge_at(const uint8_t *m, size_t n, const mtag *t, int nt, const uint8_t *c, size_t cl, bbuf *out,
                          gn__err *err)
{
    if (nt == 0) {   /* the message itself: merging is concatenation */
        bb_put(out, m, n);
        bb_put(out, c, cl);
        return GN_OK;
    }
    if (t[0].kind != 1) return gn__fail(err, GN_ERR_PARSE, "saved_model.cpb: a field_tag path does not start with a field");
    uint32_t f = (uint32_t)t[0].v;
    const uint8_t *p = m, *e = m + n, *which = NULL;
    wfield w;
    uint64_t count = 0;
    if (nt > 1 && t[1].kind == 3) {   /* element t[1].v of a repeated field */
        while (p < e && next_field(&p, e, &w))
            if (w.num == f && w.wt == 2 && count++ == t[1].v) which = w.start;
        if (!which) {
            /* the missing elements before it are empty messages */
            bbuf tmp = {0};
            bb_put(&tmp, m, n);
            for (uint64_t k = count; k < t[1].v; k++) bb_field(&tmp, f, NULL, 0);
            gn_status st = tmp.oom ? gn__fail(err, GN_ERR_NOMEM, "saved_model.cpb: out of memory")
                                   : rewrite(tmp.p, tmp.n, f, NULL, t + 2, nt - 2, c, cl, out, err);
            free(tmp.p);
            return st;
        }
        return rewrite(m, n, f, which, t + 2, nt - 2, c, cl, out, err);
    }
    if (nt > 1 && t[1].kind == 2) {   /* the value of a map entry: field 2 of the entry whose key (field 1) matches */
        while (p < e && next_field(&p, e, &w)) {
            if (w.num != f || w.wt != 2) continue;
            const uint8_t *q = w.payload, *qe = w.payload + w.plen;
            wfield k;
            while (q < qe && next_field(&q, qe, &k))
                if (k.num == 1 && k.wt == 2 && k.plen == t[1].key_len && memcmp(k.payload, t[1].key, k.plen) == 0)
                    which = w.start;
        }
        mtag sub[16];
        if (nt - 1 > 16) return gn__fail(err, GN_ERR_PARSE, "saved_model.cpb: field_tag path too deep");
        sub[0] = (mtag){1, 2, NULL, 0};
        memcpy(sub + 1, t + 2, (size_t)(nt - 2) * sizeof *t);
        if (which) return rewrite(m, n, f, which, sub, nt - 1, c, cl, out, err);
        /* a new entry: the key, then the value */
        bbuf entry = {0};
        bb_field(&entry, 1, (const uint8_t *)t[1].key, t[1].key_len);
        bbuf tmp = {0};
        bb_put(&tmp, m, n);
        bb_field(&tmp, f, entry.p, entry.n);
        gn_status st = GN_OK;
        if (tmp.oom || entry.oom) st = gn__fail(err, GN_ERR_NOMEM, "saved_model.cpb: out of memory");
        else {
            /* the entry just appended is the last occurrence of f */
            const uint8_t *last = NULL;
            const uint8_t *r = tmp.p, *re = tmp.p + tmp.n;
            while (r < re && next_field(&r, re, &w))
                if (w.num == f) last = w.start;
            st = rewrite(tmp.p, tmp.n, f, last, sub, nt - 1, c, cl, out, err);
        }
        free(entry.p);
        free(tmp.p);
        return st;
    }
    /* a singular field (a message, or bytes at the end of the path): merge into
     * its last occurrence, or a new one. One occurrence keeps later paths'
     * repeated indices counting the elements merged so far; for bytes the
     * merge concatenates, as TensorFlow's Merger does. */
    while (p < e && next_field(&p, e, &w))
        if (w.num == f && w.wt == 2) which = w.start;
    return rewrite(m, n, f, which, t + 1, nt - 1, c, cl, out, err);
}

typedef struct rfield {
    const Tensorflow__ProtoSplitter__ChunkedField *f;
} rfield;

static int cmp_fields(const void *a, const void *b)
{
    const Tensorflow__ProtoSplitter__ChunkedField *x = ((const rfield *)a)->f, *y = ((const rfield *)b)->f;
    size_t depth = x->n_field_tag < y->n_field_tag ? x->n_field_tag : y->n_field_tag;
    for (size_t i = 0; i < depth; i++) {
        const Tensorflow__ProtoSplitter__FieldIndex *p = x->field_tag[i], *q = y->field_tag[i];
        if (p->kind_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_FIELD &&
            q->kind_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_FIELD) {
            if (p->field != q->field) return p->field < q->field ? -1 : 1;
        } else if (p->kind_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_INDEX &&
                   q->kind_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_INDEX) {
            if (p->index != q->index) return p->index < q->index ? -1 : 1;
        } else {
            return 0;
        }
    }
    if (x->n_field_tag != y->n_field_tag) return x->n_field_tag < y->n_field_tag ? -1 : 1;
    uint64_t ix = x->message ? x->message->chunk_index : 0, iy = y->message ? y->message->chunk_index : 0;
    return ix < iy ? -1 : ix > iy;
}

static gn_status read_fields(const Tensorflow__ProtoSplitter__ChunkedMessage *cm, const gn__riegeli_record *chunks,
                             size_t n_chunks, int depth, bbuf *out, gn__err *err)
{
    if (depth > 32) return gn__fail(err, GN_ERR_PARSE, "saved_model.cpb: chunked messages nested too deeply");
    if (cm->has_chunk_index) {
        if (cm->chunk_index >= n_chunks)
            return gn__fail(err, GN_ERR_PARSE, "saved_model.cpb: chunk_index %llu, but there are %zu chunks",
                            (unsigned long long)cm->chunk_index, n_chunks);
        bb_put(out, chunks[cm->chunk_index].data, chunks[cm->chunk_index].len);
    }
    rfield *fs = malloc((cm->n_chunked_fields + 1) * sizeof *fs);
    if (!fs) return gn__fail(err, GN_ERR_NOMEM, "saved_model.cpb: out of memory");
    for (size_t i = 0; i < cm->n_chunked_fields; i++) fs[i].f = cm->chunked_fields[i];
    qsort(fs, cm->n_chunked_fields, sizeof *fs, cmp_fields);
    gn_status st = GN_OK;
    for (size_t i = 0; st == GN_OK && i < cm->n_chunked_fields; i++) {
        const Tensorflow__ProtoSplitter__ChunkedField *f = fs[i].f;
        mtag t[32];
        if (f->n_field_tag > 32) {
            st = gn__fail(err, GN_ERR_PARSE, "saved_model.cpb: field_tag path too deep");
            break;
        }
        for (size_t k = 0; k < f->n_field_tag; k++) {
            const Tensorflow__ProtoSplitter__FieldIndex *x = f->field_tag[k];
            memset(&t[k], 0, sizeof t[k]);
            if (x->kind_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_FIELD) {
                t[k].kind = 1;
                t[k].v = x->field;
            } else if (x->kind_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__KIND_INDEX) {
                t[k].kind = 3;
                t[k].v = x->index;
            } else if (x->map_key && x->map_key->type_case == TENSORFLOW__PROTO_SPLITTER__FIELD_INDEX__MAP_KEY__TYPE_S) {
                t[k].kind = 2;
                t[k].key = x->map_key->s;
                t[k].key_len = strlen(x->map_key->s);
            } else {
                st = gn__fail(err, GN_ERR_UNSUPPORTED, "saved_model.cpb: only string map keys are supported in field_tag");
                break;
            }
        }
        if (st != GN_OK) break;
        bbuf sub = {0};
        if (f->message) st = read_fields(f->message, chunks, n_chunks, depth + 1, &sub, err);
        bbuf merged = {0};
        if (st == GN_OK) st = merge_at(out->p, out->n, t, (int)f->n_field_tag, sub.p, sub.n, &merged, err);
        free(sub.p);
        if (st == GN_OK && (merged.oom || sub.oom)) st = gn__fail(err, GN_ERR_NOMEM, "saved_model.cpb: out of memory");
        if (st == GN_OK) {
            free(out->p);
            *out = merged;
        } else {
            free(merged.p);
        }
    }
    free(fs);
    return st;
}

gn_status gn__savedmodel_read_chunked(const char *path, uint8_t **out, size_t *len, gn__err *err)
{
    *out = NULL;
    *len = 0;
    uint8_t *file = NULL;
    size_t fsize = 0;
    GN_TRY(gn__read_file(path, &file, &fsize, err));
    gn__riegeli_record *recs = NULL;
    size_t n = 0;
    gn_status st = gn__riegeli_read(file, fsize, path, &recs, &n, err);
    free(file);
    if (st != GN_OK) return st;
    Tensorflow__ProtoSplitter__ChunkMetadata *md = NULL;
    if (n == 0) st = gn__fail(err, GN_ERR_PARSE, "%s: no records (a chunked SavedModel ends with its ChunkMetadata)", path);
    if (st == GN_OK) {
        md = tensorflow__proto_splitter__chunk_metadata__unpack(NULL, recs[n - 1].len, recs[n - 1].data);
        if (!md) st = gn__fail(err, GN_ERR_PARSE, "%s: the last record is not a ChunkMetadata", path);
    }
    /* chunks by their numeric positions */
    gn__riegeli_record *chunks = NULL;
    if (st == GN_OK) {
        chunks = calloc(md->n_chunks + 1, sizeof *chunks);
        if (!chunks) st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; st == GN_OK && i < md->n_chunks; i++) {
        const Tensorflow__ProtoSplitter__ChunkInfo *ci = md->chunks[i];
        size_t k = 0;
        while (k + 1 < n && recs[k].pos != ci->offset) k++;
        if (k + 1 >= n)
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk %zu: no record at position %llu", path, i,
                          (unsigned long long)ci->offset);
        else if (recs[k].len != ci->size)
            st = gn__fail(err, GN_ERR_PARSE, "%s: chunk %zu: %zu bytes, the metadata says %llu", path, i,
                          recs[k].len, (unsigned long long)ci->size);
        else
            chunks[i] = recs[k];
    }
    bbuf b = {0};
    if (st == GN_OK && md->message) st = read_fields(md->message, chunks, md->n_chunks, 0, &b, err);
    if (st == GN_OK && b.oom) st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
    if (st == GN_OK) {
        *out = b.p ? b.p : malloc(1);
        *len = b.n;
        if (!*out) st = gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
    } else {
        free(b.p);
    }
    free(chunks);
    if (md) tensorflow__proto_splitter__chunk_metadata__free_unpacked(md, NULL);
    gn__riegeli_records_free(recs, n);
    return st;
}
