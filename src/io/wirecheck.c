/* Protobuf wire-format framing validator (see wirecheck.h).
 *
 * Mirrors the framing rules of protobuf-c's protobuf_c_message_unpack
 * (protobuf-c.c: parse_tag_and_wiretype, scan_length_prefixed_data,
 * count_packed_elements, parse_packed_repeated_member) and C++ protobuf's
 * 2 GiB limit (io/coded_stream.h), so that whatever passes here unpacks.
 *
 * Invariants:
 *  - No recursion: an explicit stack of (descriptor, payload start, end,
 *    entering field) per nesting level; at most max_depth + 1 levels.
 *  - The hot loop never allocates and never looks inside string or bytes
 *    payloads; all the work of naming a failure (element index, map key,
 *    node name) is done after the failure, by rescanning the bytes already
 *    validated. Each level rescans only its own bytes before the child it
 *    leads to, regions that do not overlap, so naming costs O(len) once.
 */
#include "io/wirecheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct wc_level {
    const ProtobufCMessageDescriptor *d;
    size_t start, end;        /* payload of this message */
    size_t tag_off;           /* tag of the field (in the parent) that holds it */
    const ProtobufCFieldDescriptor *field;   /* that field; NULL for the root */
    size_t nfields;           /* fields seen so far in this message (kept while below) */
} wc_level;

/* protobuf-c's unpack keeps a message's fields in 23 slabs of 16 << i
 * entries: it refuses a message with more fields than that. */
#define WC_MAX_FIELDS ((size_t)16 * ((1u << 23) - 1))

typedef struct wc {
    const uint8_t *b;
    wc_level *lv;
    unsigned depth;
    gn__err *err;
} wc;

static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d, uint32_t id)
{
    const ProtobufCIntRange *r = d->field_ranges;
    for (unsigned i = 0; i < d->n_field_ranges; i++) {
        uint32_t start = (uint32_t)r[i].start_value;
        if (id < start) return NULL;
        uint32_t cnt = (uint32_t)(r[i + 1].orig_index - r[i].orig_index);
        if (id - start < cnt) return &d->fields[(uint32_t)r[i].orig_index + (id - start)];
    }
    return NULL;
}

/* Reads a varint of at most 10 bytes at b[pos..limit): bytes used, 0 when it
 * runs past limit, 11 when it is longer than 10 bytes. */
static inline size_t get_varint(const uint8_t *b, size_t pos, size_t limit, uint64_t *v)
{
    uint64_t x = 0;
    for (size_t k = 0; k < 10; k++) {
        if (pos + k >= limit) return 0;
        uint8_t c = b[pos + k];
        x |= (uint64_t)(c & 0x7f) << (7 * k);
        if (c < 0x80) {
            *v = x;
            return k + 1;
        }
    }
    return 11;
}

static int wire_type_of(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    default:
        return 0;
    }
}

static bool packable(const ProtobufCFieldDescriptor *f)
{
    return f->label == PROTOBUF_C_LABEL_REPEATED && wire_type_of(f->type) != 2;
}

static const char *wire_type_name(unsigned wt)
{
    static const char *const names[] = {"varint", "64-bit", "length-delimited", "start-group",
                                        "end-group", "32-bit", "invalid", "invalid"};
    return names[wt & 7];
}

static const char *field_type_name(ProtobufCType t)
{
    static const char *const names[] = {
        "int32",  "sint32",  "sfixed32", "int64",   "sint64", "sfixed64",
        "uint32", "fixed32", "uint64",   "fixed64", "float",  "double",
        "bool",   "enum",    "string",   "bytes",   "message",
    };
    return (unsigned)t < GN__ARRAY_LEN(names) ? names[t] : "?";
}

/* ---- naming a failure ------------------------------------------------------- */

/* What a rescan of one message's fields in [pos, limit) found. */
typedef struct wc_scan {
    size_t count;            /* occurrences of the field number asked for */
    bool f1;                 /* field 1 seen (the last one counts) */
    unsigned f1_wt;
    uint64_t f1_val;         /* varint or fixed value */
    size_t f1_off, f1_len;   /* length-delimited payload */
} wc_scan;

static void scan_region(const uint8_t *b, size_t pos, size_t limit, uint32_t count_num,
                        wc_scan *r)
{
    memset(r, 0, sizeof *r);
    while (pos < limit) {
        uint64_t tag, v = 0, len = 0;
        size_t n = get_varint(b, pos, limit, &tag);
        if (n == 0 || n > 10) return;
        pos += n;
        uint32_t num = (uint32_t)(tag >> 3);
        unsigned wt = (unsigned)(tag & 7);
        size_t off = pos;
        if (num == count_num) r->count++;
        switch (wt) {
        case 0:
            n = get_varint(b, pos, limit, &v);
            if (n == 0 || n > 10) return;
            pos += n;
            break;
        case 1:
            if (limit - pos < 8) return;
            for (int k = 7; k >= 0; k--) v = (v << 8) | b[pos + (size_t)k];
            pos += 8;
            break;
        case 5:
            if (limit - pos < 4) return;
            for (int k = 3; k >= 0; k--) v = (v << 8) | b[pos + (size_t)k];
            pos += 4;
            break;
        case 2:
            n = get_varint(b, pos, limit, &len);
            if (n == 0 || n > 10 || len > limit - pos - n) return;
            off = pos + n;
            pos = off + (size_t)len;
            break;
        default:
            return;
        }
        if (num == 1) {
            r->f1 = true;
            r->f1_wt = wt;
            r->f1_val = v;
            r->f1_off = off;
            r->f1_len = (size_t)len;
        }
    }
}

/* Bounded appender into a fixed buffer; truncates silently. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *s, const char *fmt, ...) GN__PRINTF(2, 3);
static void sb_printf(sbuf *s, const char *fmt, ...)
{
    if (s->len + 1 >= s->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    s->len += (size_t)n;
    if (s->len >= s->cap) s->len = s->cap - 1;
}

/* A string payload, quoted, printable ASCII kept, at most max bytes shown. */
static void sb_quoted(sbuf *s, const uint8_t *p, size_t n, size_t max)
{
    sb_printf(s, "'");
    for (size_t i = 0; i < n && i < max; i++) {
        uint8_t c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') sb_printf(s, "%c", (char)c);
        else sb_printf(s, "\\x%02x", c);
    }
    sb_printf(s, n > max ? "...'" : "'");
}

static bool is_map_entry(const ProtobufCFieldDescriptor *f)
{
    if (f->label != PROTOBUF_C_LABEL_REPEATED || f->type != PROTOBUF_C_TYPE_MESSAGE) return false;
    const ProtobufCMessageDescriptor *d = f->descriptor;
    size_t sl = strlen(d->short_name);
    return d->n_fields == 2 && d->fields[0].id == 1 && d->fields[1].id == 2 &&
           strcmp(d->fields[0].name, "key") == 0 && strcmp(d->fields[1].name, "value") == 0 &&
           sl > 5 && strcmp(d->short_name + sl - 5, "Entry") == 0;
}

static bool has_name_field(const ProtobufCMessageDescriptor *d)
{
    return d->n_fields > 0 && d->fields[0].id == 1 && d->fields[0].type == PROTOBUF_C_TYPE_STRING &&
           d->fields[0].label != PROTOBUF_C_LABEL_REPEATED && strcmp(d->fields[0].name, "name") == 0;
}

/* The key of a map entry as it would be written in the path. */
static void sb_key(sbuf *s, const uint8_t *b, const ProtobufCFieldDescriptor *kf, const wc_scan *r)
{
    if (r->f1_wt == 2) {
        sb_quoted(s, b + r->f1_off, r->f1_len, 60);
        return;
    }
    uint64_t v = r->f1_val;
    switch (kf->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        sb_printf(s, "%" PRId32, (int32_t)(uint32_t)v);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        sb_printf(s, "%" PRId64, (int64_t)v);
        break;
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SINT64:
        sb_printf(s, "%" PRId64, (v & 1) ? -(int64_t)(v >> 1) - 1 : (int64_t)(v >> 1));
        break;
    case PROTOBUF_C_TYPE_BOOL:
        sb_printf(s, "%s", v ? "true" : "false");
        break;
    default:
        sb_printf(s, "%" PRIu64, v);
    }
}

/* " at <path>" for the levels 1..depth, then " (node 'x', ...)" for the
 * named levels; lim bounds the innermost level's rescan. */
static void sb_where(const wc *w, sbuf *s, size_t lim)
{
    const unsigned depth = w->depth;
    const wc_level *lv = w->lv;
    if (depth > 0) {
        /* a map entry's key stands for its value: attr['x'].tensor, not
         * attr['x'].value.tensor */
        bool after_key = false, any = false;
        sb_printf(s, " at ");
        for (unsigned k = 1; k <= depth; k++) {
            if (depth > 10 && k == 4) {
                sb_printf(s, ".[%u more levels]", depth - 7);
                k = depth - 3;
                after_key = false;
            }
            const ProtobufCFieldDescriptor *f = lv[k].field;
            if (after_key && f->id == 2) {
                after_key = false;
                continue;
            }
            after_key = false;
            sb_printf(s, "%s%s", any ? "." : "", f->name);
            any = true;
            if (f->label != PROTOBUF_C_LABEL_REPEATED) continue;
            wc_scan r;
            if (is_map_entry(f)) {
                size_t klim = k < depth ? lv[k + 1].tag_off : lim;
                scan_region(w->b, lv[k].start, klim, 0, &r);
                const ProtobufCFieldDescriptor *kf = &lv[k].d->fields[0];
                if (r.f1 && (r.f1_wt == 2) == (kf->type == PROTOBUF_C_TYPE_STRING ||
                                               kf->type == PROTOBUF_C_TYPE_BYTES)) {
                    sb_printf(s, "[");
                    sb_key(s, w->b, kf, &r);
                    sb_printf(s, "]");
                    after_key = true;
                    continue;
                }
            }
            scan_region(w->b, lv[k - 1].start, lv[k].tag_off, f->id, &r);
            sb_printf(s, "[%zu]", r.count);
        }
    }
    unsigned named[3], nn = 0, total = 0;
    wc_scan rs[GN__ARRAY_LEN(named)];
    for (unsigned k = 0; k <= depth; k++) {
        if (!has_name_field(lv[k].d)) continue;
        wc_scan r;
        scan_region(w->b, lv[k].start, k < depth ? lv[k + 1].tag_off : lim, 0, &r);
        if (!r.f1 || r.f1_wt != 2) continue;
        total++;
        /* keep the first two and the innermost */
        if (nn < GN__ARRAY_LEN(named)) {
            named[nn] = k;
            rs[nn++] = r;
        } else {
            named[nn - 1] = k;
            rs[nn - 1] = r;
        }
    }
    for (unsigned i = 0; i < nn; i++) {
        unsigned k = named[i];
        const char *word = strcmp(lv[k].d->short_name, "NodeDef") == 0 ? "node"
                           : lv[k].field                               ? lv[k].field->name
                                                                       : lv[k].d->short_name;
        if (i == nn - 1 && total > nn) sb_printf(s, ", ...");
        sb_printf(s, "%s%s ", i == 0 ? " (" : ", ", word);
        sb_quoted(s, w->b + rs[i].f1_off, rs[i].f1_len, 100);
    }
    if (nn) sb_printf(s, ")");
}

/* Records a failure. field_off is where the offending field's tag starts (the
 * innermost rescans stop there); num = 0 when no field is known yet.
 * of_form writes "<what> field N (name) of M" instead of "<what> in field
 * ...". tail (may be NULL) goes last. */
static gn_status wc_fail(const wc *w, size_t off, size_t field_off, const ProtobufCFieldDescriptor *f,
                         uint32_t num, bool of_form, const char *tail, const char *fmt, ...)
    GN__PRINTF(8, 9);
static gn_status wc_fail(const wc *w, size_t off, size_t field_off, const ProtobufCFieldDescriptor *f,
                         uint32_t num, bool of_form, const char *tail, const char *fmt, ...)
{
    char msg[GN__ERRMSG_MAX];
    sbuf s = {msg, 0, sizeof msg};
    sb_printf(&s, "byte %zu: ", off);
    va_list ap;
    va_start(ap, fmt);
    if (s.len + 1 < s.cap) {
        int n = vsnprintf(s.p + s.len, s.cap - s.len, fmt, ap);
        if (n > 0) s.len = s.len + (size_t)n < s.cap ? s.len + (size_t)n : s.cap - 1;
    }
    va_end(ap);
    const char *mname = w->lv[w->depth].d->name;
    if (num == 0) sb_printf(&s, " in %s", mname);
    else if (f) sb_printf(&s, "%sfield %" PRIu32 " (%s) of %s", of_form ? " " : " in ", num, f->name, mname);
    else sb_printf(&s, "%sfield %" PRIu32 " of %s", of_form ? " " : " in ", num, mname);
    sb_where(w, &s, field_off);
    if (tail) sb_printf(&s, "%s", tail);
    return gn__fail(w->err, GN_ERR_PARSE, "%s", msg);
}

/* ---- the walk ------------------------------------------------------------- */

/* Checks a packed payload b[pos..pos+len) of repeated scalar field f. */
static gn_status check_packed(const wc *w, size_t tag_off, const ProtobufCFieldDescriptor *f,
                              size_t pos, size_t len)
{
    const uint8_t *b = w->b;
    switch (f->type) {
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        if (len % 4)
            return wc_fail(w, tag_off, tag_off, f, f->id, false, NULL,
                           "packed length %zu is not a multiple of 4", len);
        return GN_OK;
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        if (len % 8)
            return wc_fail(w, tag_off, tag_off, f, f->id, false, NULL,
                           "packed length %zu is not a multiple of 8", len);
        return GN_OK;
    case PROTOBUF_C_TYPE_BOOL:
        /* protobuf-c counts one element per byte and refuses values > 1 */
        for (size_t i = 0; i < len; i++)
            if (b[pos + i] > 1)
                return wc_fail(w, pos + i, tag_off, f, f->id, false, NULL,
                               "packed bool byte 0x%02x is not 0 or 1", b[pos + i]);
        return GN_OK;
    default: {
        size_t run = 0;
        for (size_t i = 0; i < len; i++) {
            if (b[pos + i] & 0x80) {
                if (++run == 10)
                    return wc_fail(w, pos + i - 9, tag_off, f, f->id, false, " (packed)",
                                   "varint longer than 10 bytes");
            } else {
                run = 0;
            }
        }
        if (run)
            return wc_fail(w, pos + len - run, tag_off, f, f->id, false, " (packed)",
                           "truncated varint");
        return GN_OK;
    }
    }
}

gn_status gn__wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
                         unsigned max_depth, gn__err *err)
{
    if (!d || (!buf && len)) return gn__fail(err, GN_ERR_ARG, "wire check: NULL argument");
    if (len > GN__WIRE_MAX_LEN)
        return gn__fail(err, GN_ERR_PARSE,
                        "byte 0: %s of %zu bytes exceeds the 2 GiB protobuf limit (keep large "
                        "constants out of the graph, e.g. as SavedModel variables)",
                        d->name, len);
    wc_level small[64];
    size_t cap = GN__ARRAY_LEN(small);
    wc w = {buf, small, 0, err};
    gn_status s = GN_OK;
    const uint8_t *b = buf;
    w.lv[0] = (wc_level){d, 0, len, 0, NULL, 0};
    const ProtobufCMessageDescriptor *cd = d;
    size_t pos = 0, end = len, nfields = 0;
    for (;;) {
        if (pos >= end) {
            if (w.depth == 0) break;
            w.depth--;
            cd = w.lv[w.depth].d;
            end = w.lv[w.depth].end;
            nfields = w.lv[w.depth].nfields;
            continue;
        }
        const size_t tag_off = pos;
        if (++nfields > WC_MAX_FIELDS) {
            s = wc_fail(&w, tag_off, tag_off, NULL, 0, false, NULL,
                        "more than %zu fields in one message (protobuf-c's limit)", WC_MAX_FIELDS);
            goto done;
        }
        uint64_t tag;
        if (b[pos] < 0x80) {
            tag = b[pos++];
        } else {
            size_t n = get_varint(b, pos, end, &tag);
            if (n == 0) {
                s = wc_fail(&w, tag_off, tag_off, NULL, 0, false, NULL, "truncated tag");
                goto done;
            }
            if (n > 5 || tag > UINT32_MAX) {
                s = wc_fail(&w, tag_off, tag_off, NULL, 0, false, NULL,
                            "malformed tag (over 5 bytes or 32 bits)");
                goto done;
            }
            pos += n;
        }
        const uint32_t num = (uint32_t)(tag >> 3);
        const unsigned wt = (unsigned)(tag & 7);
        if (num == 0) {
            s = wc_fail(&w, tag_off, tag_off, NULL, 0, false, NULL, "invalid field number 0");
            goto done;
        }
        const ProtobufCFieldDescriptor *f = find_field(cd, num);
        if (f && (int)wt != wire_type_of(f->type) && !(wt == 2 && packable(f)) && wt < 6) {
            s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL,
                        "wrong wire type %u (%s) for %s%s", wt, wire_type_name(wt),
                        f->label == PROTOBUF_C_LABEL_REPEATED ? "repeated " : "",
                        field_type_name(f->type));
            goto done;
        }
        switch (wt) {
        case 0: {
            size_t k = 0;
            for (;;) {
                if (pos + k >= end) {
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL, "truncated varint");
                    goto done;
                }
                if (b[pos + k] < 0x80) break;
                if (++k == 10) {
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL,
                                "varint longer than 10 bytes");
                    goto done;
                }
            }
            pos += k + 1;
            break;
        }
        case 1:
            if (end - pos < 8) {
                s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL, "truncated 64-bit value");
                goto done;
            }
            pos += 8;
            break;
        case 5:
            if (end - pos < 4) {
                s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL, "truncated 32-bit value");
                goto done;
            }
            pos += 4;
            break;
        case 2: {
            uint64_t l;
            size_t n;
            if (pos < end && b[pos] < 0x80) {
                l = b[pos];
                n = 1;
            } else {
                n = get_varint(b, pos, end, &l);
                if (n == 0) {
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL, "truncated length");
                    goto done;
                }
                if (n > 10) {
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL,
                                "length varint longer than 10 bytes");
                    goto done;
                }
                if (l > GN__WIRE_MAX_LEN) {
                    char tail[128];
                    snprintf(tail, sizeof tail,
                             " (keep large constants out of the graph, e.g. as SavedModel "
                             "variables)");
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, tail,
                                "length %" PRIu64 " exceeds the 2 GiB protobuf limit", l);
                    goto done;
                }
                if (n > 5) {
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL,
                                "length varint longer than 5 bytes");
                    goto done;
                }
            }
            pos += n;
            if (l > end - pos) {
                char tail[96];
                snprintf(tail, sizeof tail, ": length %" PRIu64 ", only %zu bytes left", l,
                         end - pos);
                s = wc_fail(&w, tag_off, tag_off, f, num, true, tail,
                            "truncated length-delimited");
                goto done;
            }
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (w.depth >= max_depth) {
                    s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL,
                                "nesting deeper than %u levels", max_depth);
                    goto done;
                }
                if (w.depth + 1 >= cap) {
                    size_t ncap = cap * 2;
                    if (ncap > (size_t)max_depth + 1) ncap = (size_t)max_depth + 1;
                    wc_level *nl = w.lv == small ? malloc(ncap * sizeof *nl)
                                                 : realloc(w.lv, ncap * sizeof *nl);
                    if (!nl) {
                        s = gn__fail(err, GN_ERR_NOMEM, "wire check: out of memory");
                        goto done;
                    }
                    if (w.lv == small) memcpy(nl, small, sizeof small);
                    w.lv = nl;
                    cap = ncap;
                }
                w.lv[w.depth].nfields = nfields;
                w.depth++;
                w.lv[w.depth] = (wc_level){f->descriptor, pos, pos + (size_t)l, tag_off, f, 0};
                nfields = 0;
                cd = f->descriptor;
                end = pos + (size_t)l;
                continue;
            }
            if (f && packable(f)) {
                s = check_packed(&w, tag_off, f, pos, (size_t)l);
                if (s != GN_OK) goto done;
            }
            pos += (size_t)l;
            break;
        }
        case 3:
        case 4:
            s = wc_fail(&w, tag_off, tag_off, f, num, false, ": protobuf-c does not read groups",
                        "%s (wire type %u)", wt == 3 ? "group" : "end of group", wt);
            goto done;
        default:
            s = wc_fail(&w, tag_off, tag_off, f, num, false, NULL, "invalid wire type %u", wt);
            goto done;
        }
    }
done:
    if (w.lv != small) free(w.lv);
    return s;
}
