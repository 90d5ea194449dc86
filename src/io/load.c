/* The file front end: format sniffing, gzip, framing checks, SavedModel
 * MetaGraphDef selection, and the public load / save / serialize calls. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "grapnel/grapnel.h"
#include "io/graphdef.h"
#include "io/textformat.h"
#include "io/wirecheck.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "io/savedmodel_chunked.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"
#include "io/savedmodel.h"

void gn_load_options_init(gn_load_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->format = GN_FORMAT_AUTO;
    o->tags = NULL;
    o->validate = 1;
}

/* ---- sniffing ---------------------------------------------------------------------- */
bool gn__is_blank_text(const uint8_t *d, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = d[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            i++;
        } else if (c == '#') {
            while (i < n && d[i] != '\n') i++;
        } else {
            return false;
        }
    }
    return true;
}

bool gn__looks_like_text(const uint8_t *d, size_t n)
{
    size_t i = 0;
    /* skip a UTF-8 byte order mark */
    if (n >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF) i = 3;
    size_t first = SIZE_MAX;
    size_t lim = n < 65536 ? n : 65536;
    for (size_t j = i; j < lim; j++) {
        uint8_t c = d[j];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
        if (c == 0x7f) return false;
    }
    /* first meaningful character: a field name or a comment */
    while (i < n) {
        uint8_t c = d[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            i++;
        } else if (c == '#') {
            while (i < n && d[i] != '\n') i++;
        } else {
            first = i;
            break;
        }
    }
    if (first == SIZE_MAX) return true;
    uint8_t c = d[first];
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '[';
}

/* ---- positions for messages ---------------------------------------------------------- */
static bool read_varint(const uint8_t *d, size_t n, size_t *i, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned s = 0; s < 64 && *i < n; s += 7) {
        uint8_t b = d[(*i)++];
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static bool is_ident(uint8_t c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void gn__graphdef_node_pos(const gn__source *src, uint32_t k, char *buf, size_t buflen)
{
    buf[0] = '\0';
    if (!src || !src->data) return;
    const uint8_t *d = src->data;
    size_t n = src->len;
    uint32_t seen = 0;
    if (!src->text) {
        size_t i = 0;
        while (i < n) {
            size_t start = i;
            uint64_t tag, v;
            if (!read_varint(d, n, &i, &tag)) return;
            switch (tag & 7) {
            case 0:
                if (!read_varint(d, n, &i, &v)) return;
                break;
            case 1: i += 8; break;
            case 5: i += 4; break;
            case 2:
                if (!read_varint(d, n, &i, &v) || v > n - i) return;
                if ((tag >> 3) == 1) {
                    if (seen == k) {
                        snprintf(buf, buflen, "byte %zu", start);
                        return;
                    }
                    seen++;
                }
                i += v;
                break;
            default: return;
            }
        }
        return;
    }
    /* text: top-level "node" fields; track depth, strings and comments */
    size_t line = 1, col = 1;
    int depth = 0;
    for (size_t i = 0; i < n;) {
        uint8_t c = d[i];
        if (c == '\n') {
            line++;
            col = 1;
            i++;
            continue;
        }
        if (c == '#') {
            while (i < n && d[i] != '\n') i++;
            continue;
        }
        if (c == '"' || c == '\'') {
            uint8_t q = c;
            i++;
            col++;
            while (i < n && d[i] != q && d[i] != '\n') {
                if (d[i] == '\\' && i + 1 < n) {
                    i++;
                    col++;
                }
                i++;
                col++;
            }
            i++;
            col++;
            continue;
        }
        if (c == '{' || c == '<') depth++;
        else if (c == '}' || c == '>') depth--;
        else if (depth == 0 && c == 'n' && i + 4 <= n && memcmp(d + i, "node", 4) == 0 &&
                 (i == 0 || !is_ident(d[i - 1])) && (i + 4 == n || !is_ident(d[i + 4]))) {
            if (seen == k) {
                snprintf(buf, buflen, "line %zu:%zu", line, col);
                return;
            }
            seen++;
            i += 4;
            col += 4;
            continue;
        }
        i++;
        col++;
    }
}

/* ---- decoding ------------------------------------------------------------------------ */
/* owned: data is the load's own writable copy (a file's image, a gunzipped
 * buffer), which the text parser may give back in part (gn__text_parse_owned). */
static gn_status decode_message(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len, bool text,
                                bool owned, gn__blob *blob, ProtobufCMessage **out, gn__err *err)
{
    ProtobufCAllocator alloc;
    gn__arena_pb_allocator(&blob->arena, &alloc);
    if (text && owned) return gn__text_parse_owned(desc, (char *)(uintptr_t)data, len, &alloc, out, err);
    if (text) return gn__text_parse(desc, (const char *)data, len, &alloc, out, err);
    GN_TRY(gn__wire_check(desc, data, len, GN__MAX_PROTO_DEPTH, err));
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &alloc, len, data);
    if (!m && blob->arena.oom) return gn__fail(err, GN_ERR_NOMEM, "out of memory reading %s", desc->name);
    if (!m) return gn__fail(err, GN_ERR_PARSE, "not a valid %s", desc->name);
    *out = m;
    return GN_OK;
}

gn_status gn__decode_graphdef(const uint8_t *data, size_t len, bool text, gn__blob *blob,
                              Tensorflow__GraphDef **out, gn__err *err)
{
    return decode_message(&tensorflow__graph_def__descriptor, data, len, text, false, blob, (ProtobufCMessage **)out,
                          err);
}

/* ---- SavedModel: pick the MetaGraphDef -------------------------------------------------- */
static bool has_tag(const Tensorflow__MetaGraphDef *m, const char *t, size_t tl)
{
    const Tensorflow__MetaGraphDef__MetaInfoDef *mi = m->meta_info_def;
    if (!mi) return false;
    for (size_t i = 0; i < mi->n_tags; i++)
        if (strlen(mi->tags[i]) == tl && memcmp(mi->tags[i], t, tl) == 0) return true;
    return false;
}

static size_t n_tags(const Tensorflow__MetaGraphDef *m) { return m->meta_info_def ? m->meta_info_def->n_tags : 0; }

/* true when m's tag set equals the comma-separated set `tags` */
static bool tags_equal(const Tensorflow__MetaGraphDef *m, const char *tags)
{
    size_t want = 0;
    const char *p = tags;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && *p == ' ') {
            p++;
            l--;
        }
        while (l && p[l - 1] == ' ') l--;
        if (l) {
            if (!has_tag(m, p, l)) return false;
            want++;
        }
        if (!e) break;
        p = e + 1;
    }
    return want == n_tags(m);
}

static void list_tag_sets(const Tensorflow__SavedModel *sm, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sm->n_meta_graphs && o < n; i++) {
        const Tensorflow__MetaGraphDef *m = sm->meta_graphs[i];
        o += (size_t)snprintf(buf + o, n - o, "%s[", i ? ", " : "");
        for (size_t t = 0; t < n_tags(m) && o < n; t++)
            o += (size_t)snprintf(buf + o, n - o, "%s%s", t ? "," : "", m->meta_info_def->tags[t]);
        if (o < n) o += (size_t)snprintf(buf + o, n - o, "]");
    }
}

static gn_status pick_meta_graph(const Tensorflow__SavedModel *sm, const char *tags,
                                 const Tensorflow__MetaGraphDef **out, gn__err *err)
{
    char sets[512];
    list_tag_sets(sm, sets, sizeof sets);
    if (sm->n_meta_graphs == 0) return gn__fail(err, GN_ERR_PARSE, "SavedModel has no MetaGraphDef");
    if (tags && tags[0]) {
        for (size_t i = 0; i < sm->n_meta_graphs; i++)
            if (tags_equal(sm->meta_graphs[i], tags)) {
                *out = sm->meta_graphs[i];
                return GN_OK;
            }
        return gn__fail(err, GN_ERR_NOT_FOUND, "no MetaGraphDef with tags [%s]; tag sets: %s", tags, sets);
    }
    if (sm->n_meta_graphs == 1) {
        *out = sm->meta_graphs[0];
        return GN_OK;
    }
    for (size_t i = 0; i < sm->n_meta_graphs; i++)
        if (tags_equal(sm->meta_graphs[i], "serve")) {
            *out = sm->meta_graphs[i];
            return GN_OK;
        }
    for (size_t i = 0; i < sm->n_meta_graphs; i++)
        if (has_tag(sm->meta_graphs[i], "serve", 5)) {
            *out = sm->meta_graphs[i];
            return GN_OK;
        }
    return gn__fail(err, GN_ERR_NOT_FOUND, "%zu MetaGraphDefs and none tagged \"serve\"; pick one with --tag: %s",
                    sm->n_meta_graphs, sets);
}

/* ---- load ---------------------------------------------------------------------------- */
/* The file at path read whole into one block of a fresh blob (*image, which
 * owns *data; a NUL byte follows the len bytes). A binary GraphDef's large
 * tensors then point into it (gn__graph_from_wire) instead of being copied:
 * the bytes are read once, into memory of the process's own, so a file
 * truncated or rewritten afterwards changes nothing here (no mapping of the
 * file). Messages as gn__read_file's. */
static gn_status read_file_image(const char *path, gn__blob **image, const uint8_t **data, size_t *len,
                                 gn__err *err)
{
    *image = NULL;
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return gn__fail(err, GN_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return gn__fail(err, GN_ERR_IO, "%s: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return gn__fail(err, GN_ERR_IO, "%s: is a directory", path);
    }
    /* one byte more than the size, so the read that finds the end needs no
     * larger buffer; a file that grew meanwhile gets a block twice as large */
    size_t cap = st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 4 ? (size_t)st.st_size + 1 : 4096;
    gn__blob *b = gn__blob_new(4096);
    uint8_t *buf = b ? gn__arena_alloc(&b->arena, cap + 1, 64) : NULL;
    if (!buf) {
        gn__blob_unref(b);
        close(fd);
        return gn__fail(err, GN_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, cap);
    }
    size_t n = 0;
    if (S_ISREG(st.st_mode) && cap > (size_t)st.st_size) {
        /* the size fstat gave, in parallel parts; then on as below, so that a
         * file that grew or shrank meanwhile is read to its end */
        int e = 0;
        n = gn__pread_full(fd, buf, (size_t)st.st_size, 0, &e);
        if (e || lseek(fd, (off_t)n, SEEK_SET) < 0) {
            if (!e) e = errno;
            gn__blob_unref(b);
            close(fd);
            return gn__fail(err, GN_ERR_IO, "%s: read error: %s", path, strerror(e));
        }
    }
    for (;;) {
        if (n == cap) {
            uint8_t *nb = cap < SIZE_MAX / 4 ? gn__arena_alloc(&b->arena, cap * 2 + 1, 64) : NULL;
            if (!nb) {
                gn__blob_unref(b);
                close(fd);
                return gn__fail(err, GN_ERR_NOMEM, "%s: out of memory", path);
            }
            memcpy(nb, buf, n);
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            gn__blob_unref(b);
            close(fd);
            return gn__fail(err, GN_ERR_IO, "%s: read error: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *image = b;
    *data = buf;
    *len = n;
    return GN_OK;
}

static gn_status load_image(gn_graph *g, const uint8_t *data, size_t len, const char *name,
                            const gn_load_options *o, bool savedmodel, const char *dir, gn__blob *image)
{
    uint8_t *unz = NULL;
    size_t unz_len = 0;
    gn_status s = gn__maybe_gunzip(data, len, &unz, &unz_len, &g->err);
    if (s != GN_OK) {
        gn__err_prefix(&g->err, "%s", name);
        return s;
    }
    if (unz) {
        data = unz;
        len = unz_len;
    }
    /* the gunzipped copy, or the file's image read for this load alone */
    bool owned = unz != NULL || image != NULL;
    bool text;
    if (o->format == GN_FORMAT_TEXT) text = true;
    else if (o->format == GN_FORMAT_BINARY) text = false;
    else text = gn__looks_like_text(data, len);
    if (len == 0 || (text && gn__is_blank_text(data, len))) {
        free(unz);
        return gn__fail(&g->err, GN_ERR_PARSE, "%s: empty model: no nodes and no functions", name);
    }
    bool wire = !savedmodel && !text;
    /* a protobuf-c tree takes about twice the bytes it was decoded from; the
     * wire decoder keeps only distinct attr values */
    gn__blob *blob = gn__blob_new(len <= (1u << 20) ? (size_t)64 << 10 : wire ? len / 8 : len * 2);
    if (!blob) {
        free(unz);
        return gn__fail(&g->err, GN_ERR_NOMEM, "%s: out of memory", name);
    }
    const Tensorflow__GraphDef *gd = NULL;
    const Tensorflow__SavedModel *sm = NULL;
    const Tensorflow__MetaGraphDef *mg = NULL;
    if (savedmodel) {
        ProtobufCMessage *m = NULL;
        s = decode_message(&tensorflow__saved_model__descriptor, data, len, text, owned, blob, &m, &g->err);
        if (s == GN_OK) {
            sm = (const Tensorflow__SavedModel *)m;
            s = pick_meta_graph(sm, o->tags, &mg, &g->err);
            if (s == GN_OK) {
                gd = mg->graph_def;
                if (!gd) s = gn__fail(&g->err, GN_ERR_PARSE, "MetaGraphDef has no graph_def");
            }
        }
    } else if (wire) {
        gn__source wsrc = {name, data, len, false};
        bool framing = false, empty = false;
        s = gn__graph_from_wire(g, data, len, blob, unz ? NULL : image, &wsrc, &framing, &empty);
        if (s != GN_OK && framing) gn__err_prefix(&g->err, "%s", name);
        if (s == GN_OK && empty) s = gn__fail(&g->err, GN_ERR_PARSE, "%s: empty model: no nodes and no functions", name);
        gn__blob_unref(blob); /* the graph holds its reference */
        if (s != GN_OK) {
            free(unz);
            return s;
        }
    } else {
        ProtobufCMessage *m = NULL;
        s = decode_message(&tensorflow__graph_def__descriptor, data, len, text, owned, blob, &m, &g->err);
        gd = (const Tensorflow__GraphDef *)m;
    }
    gn__source src = {name, savedmodel ? NULL : data, savedmodel ? 0 : len, text};
    if (!wire) {
        if (s != GN_OK) {
            gn__err_prefix(&g->err, "%s", name);
            gn__blob_unref(blob);
            free(unz);
            return s;
        }
        if (gd->n_node == 0 && (!gd->library || gd->library->n_function == 0)) {
            gn__blob_unref(blob);
            free(unz);
            return gn__fail(&g->err, GN_ERR_PARSE, "%s: empty model: no nodes and no functions", name);
        }
        s = gn__graph_from_graphdef(g, gd, blob, &src);
        if (s == GN_OK && savedmodel) {
            gn__savedmodel *saved = gn__savedmodel_new(blob, sm, mg, dir);
            if (saved) gn__graph_set_saved(g, saved);
            else s = gn__fail(&g->err, GN_ERR_NOMEM, "%s: out of memory", name);
        }
        gn__blob_unref(blob); /* the graph holds its reference */
    }
    if (s == GN_OK && o->validate) {
        s = gn__graph_validate(g);
        if (s != GN_OK) {
            /* add the position of the node when the message names one */
            char pos[64] = "";
            const char *q = strstr(g->err.msg, "node '");
            if (q && !savedmodel && strncmp(g->err.msg, "function '", 10) != 0) {
                q += 6;
                const char *e = strchr(q, '\'');
                if (e) {
                    gn_id id = gn__graph_find_n(g, q, (size_t)(e - q));
                    if (id != GN_NONE) gn__graphdef_node_pos(&src, g->nodes[id].orig_index, pos, sizeof pos);
                }
            }
            if (pos[0]) gn__err_prefix(&g->err, "%s: %s", name, pos);
            else gn__err_prefix(&g->err, "%s", name);
        }
    }
    free(unz);
    return s;
}

static gn_graph *new_handle(const char *name)
{
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    if (g && name) g->source = strdup(name);
    return g;
}

static const gn_load_options *opts_or_default(const gn_load_options *o, gn_load_options *tmp)
{
    if (o) return o;
    gn_load_options_init(tmp);
    return tmp;
}

gn_status gn_graph_load_buffer(const void *data, size_t size, const char *name, const gn_load_options *opts,
                               gn_graph **out)
{
    if (!out) return GN_ERR_ARG;
    gn_load_options tmp;
    const gn_load_options *o = opts_or_default(opts, &tmp);
    gn_graph *g = new_handle(name);
    *out = g;
    if (!g) return GN_ERR_NOMEM;
    if (!data && size) return gn__fail(&g->err, GN_ERR_ARG, "NULL data");
    return load_image(g, data, size, name ? name : "<buffer>", o, o->format == GN_FORMAT_SAVEDMODEL, NULL, NULL);
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

gn_status gn_graph_load(const char *path, const gn_load_options *opts, gn_graph **out)
{
    if (!out) return GN_ERR_ARG;
    gn_load_options tmp;
    const gn_load_options *o = opts_or_default(opts, &tmp);
    gn_graph *g = new_handle(path);
    *out = g;
    if (!g) return GN_ERR_NOMEM;
    if (!path) return gn__fail(&g->err, GN_ERR_ARG, "NULL path");
    char *file = NULL;
    bool savedmodel = false, chunked = false;
    if (is_dir(path)) {
        size_t n = strlen(path) + 32;
        file = malloc(n);
        if (!file) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        snprintf(file, n, "%s/saved_model.pb", path);
        if (!file_exists(file)) snprintf(file, n, "%s/saved_model.pbtxt", path);
        if (!file_exists(file)) {
            /* the chunked image (experimental_image_format), merged back by src/io/savedmodel_chunked.c */
            snprintf(file, n, "%s/saved_model.cpb", path);
            chunked = file_exists(file);
        }
        if (!file_exists(file)) {
            free(file);
            return gn__fail(&g->err, GN_ERR_IO, "%s: a directory without saved_model.pb or saved_model.pbtxt", path);
        }
        savedmodel = true;
    } else {
        /* a saved_model.pb named directly is a SavedModel too */
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        savedmodel = o->format == GN_FORMAT_SAVEDMODEL || strcmp(base, "saved_model.pb") == 0 ||
                     strcmp(base, "saved_model.pbtxt") == 0;
    }
    uint8_t *data = NULL;     /* the chunked image, merged */
    const uint8_t *bytes = NULL;
    size_t len = 0;
    gn__blob *image = NULL;   /* the file's bytes otherwise */
    gn_status s = chunked ? gn__savedmodel_read_chunked(file, &data, &len, &g->err)
                          : read_file_image(file ? file : path, &image, &bytes, &len, &g->err);
    if (chunked) bytes = data;
    if (s == GN_OK) {
        gn_load_options o2 = *o;
        if (o2.format == GN_FORMAT_SAVEDMODEL) o2.format = GN_FORMAT_AUTO;
        if (chunked) o2.format = GN_FORMAT_BINARY;
        char *dir = NULL;
        if (savedmodel) {
            /* the directory: path itself, or the folder holding saved_model.pb[txt] */
            if (file) {
                dir = strdup(path);
            } else {
                const char *slash = strrchr(path, '/');
                dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
            }
            if (dir) {
                size_t dl = strlen(dir);
                while (dl > 1 && dir[dl - 1] == '/') dir[--dl] = '\0';
            }
        }
        if (savedmodel && !dir) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        else s = load_image(g, bytes, len, file ? file : path, &o2, savedmodel, dir, image);
        free(dir);
    }
    gn__blob_unref(image);   /* the graph keeps a reference when its tensors point into it */
    free(data);
    free(file);
    if (s == GN_OK) gn__err_clear(&g->err);
    return s;
}

/* ---- SavedModel state ------------------------------------------------------------------ */
gn__savedmodel *gn__savedmodel_new(gn__blob *blob, const Tensorflow__SavedModel *sm,
                                   const Tensorflow__MetaGraphDef *mg, const char *dir)
{
    gn__savedmodel *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (dir && !(s->dir = strdup(dir))) {
        free(s);
        return NULL;
    }
    s->refs = 1;
    s->blob = gn__blob_ref(blob);
    s->sm = sm;
    s->mg = mg;
    return s;
}

gn__savedmodel *gn__savedmodel_ref(gn__savedmodel *s)
{
    if (s) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void gn__savedmodel_unref(gn__savedmodel *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
    gn__savedmodel_drop_index(s);
    gn__blob_unref(s->blob);
    free(s->dir);
    free(s);
}

static void saved_free(void *s) { gn__savedmodel_unref(s); }
static void *saved_share(void *s) { return gn__savedmodel_ref(s); }

void gn__graph_set_saved(gn_graph *g, gn__savedmodel *s)
{
    gn__attachment_set(&g->saved, s, saved_free, saved_share);
}

/* ---- save ---------------------------------------------------------------------------- */
static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static gn_status serialize(gn_graph *g, gn_format fmt, gn__buf *out)
{
    if (fmt != GN_FORMAT_TEXT) {
        gn_status s = gn__graph_write_binary(g, out);
        if (s == GN_OK && out->oom) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
        return s;
    }
    gn__arena a;
    gn__arena_init(&a, 64 * 1024);
    Tensorflow__GraphDef *gd = NULL;
    gn_status s = gn__graph_to_graphdef(g, &a, &gd, &g->err);
    if (s == GN_OK) {
        if (fmt == GN_FORMAT_TEXT) {
            s = gn__text_print(&gd->base, out, &g->err);
        } else {
            size_t n = protobuf_c_message_get_packed_size(&gd->base);
            if (n > (size_t)INT32_MAX) {
                s = gn__fail(&g->err, GN_ERR_UNSUPPORTED,
                             "GraphDef would be %zu bytes, over protobuf's 2 GiB limit (keep weights in a "
                             "SavedModel's variables instead)", n);
            } else if (!gn__buf_reserve(out, n)) {
                s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory for %zu bytes", n);
            } else {
                size_t w = protobuf_c_message_pack(&gd->base, (uint8_t *)out->data + out->len);
                out->len += w;
                if (w != n) s = gn__fail(&g->err, GN_ERR_INTERNAL, "packed %zu bytes, expected %zu", w, n);
            }
        }
        if (s == GN_OK && out->oom) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    }
    gn__arena_free(&a);
    return s;
}

gn_status gn_graph_serialize(gn_graph *g, gn_format fmt, void **data, size_t *size)
{
    if (!g || !data || !size) return GN_ERR_ARG;
    *data = NULL;
    *size = 0;
    gn__err_clear(&g->err);
    gn__buf b;
    gn__buf_init(&b);
    gn_status s = serialize(g, fmt == GN_FORMAT_TEXT ? GN_FORMAT_TEXT : GN_FORMAT_BINARY, &b);
    if (s != GN_OK) {
        gn__buf_free(&b);
        return s;
    }
    *size = b.len;
    *data = gn__buf_take(&b);
    if (!*data) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    return GN_OK;
}

gn_status gn_graph_save(gn_graph *g, const char *path, gn_format fmt)
{
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    if (!path) return gn__fail(&g->err, GN_ERR_ARG, "NULL path");
    if (fmt == GN_FORMAT_SAVEDMODEL)
        return gn__fail(&g->err, GN_ERR_UNSUPPORTED, "%s: writing a SavedModel is done by the SavedModel writer", path);
    if (fmt == GN_FORMAT_AUTO) fmt = (ends_with(path, ".pbtxt") || ends_with(path, ".txt")) ? GN_FORMAT_TEXT : GN_FORMAT_BINARY;
    gn__buf b;
    gn__buf_init(&b);
    if (fmt == GN_FORMAT_TEXT) {
        gn_status s = serialize(g, fmt, &b);
        if (s == GN_OK) s = gn__write_file_atomic(path, b.data ? b.data : "", b.len, g->fsync_writes, &g->err);
        else gn__err_prefix(&g->err, "%s", path);
        gn__buf_free(&b);
        return s;
    }
    /* binary: the large values already in memory (the loaded file's tensors,
     * folded results) are written from where they are, not copied first */
    gn__wire_piece *pc = NULL;
    size_t n_pc = 0;
    gn_status s = gn__graph_write_binary_pieces(g, &b, &pc, &n_pc);
    if (s == GN_OK && b.oom) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    struct iovec *iov = NULL;
    if (s == GN_OK && !(iov = malloc((2 * n_pc + 1) * sizeof *iov))) s = gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    if (s == GN_OK) {
        size_t k = 0, at = 0;
        for (size_t i = 0; i < n_pc; i++) {
            iov[k++] = (struct iovec){b.data + at, pc[i].off - at};
            iov[k++] = (struct iovec){(void *)(uintptr_t)pc[i].p, pc[i].len};
            at = pc[i].off;
        }
        iov[k++] = (struct iovec){b.data ? b.data + at : "", b.len - at};
        s = gn__write_file_atomicv(path, iov, k, g->fsync_writes, &g->err);
    } else {
        gn__err_prefix(&g->err, "%s", path);
    }
    free(iov);
    free(pc);
    gn__buf_free(&b);
    return s;
}
