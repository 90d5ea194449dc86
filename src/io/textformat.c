/* Protocol buffer text format: a reader and a printer for any protobuf-c
 * message, driven by its descriptor.
 *
 * Mirrors C++ protobuf's google/protobuf/text_format.cc (Parser with the
 * default ALLOW_SINGULAR_OVERWRITES policy, Printer with default options),
 * io/tokenizer.cc (numbers, strings and escapes), io/strtod.cc (locale-free
 * number conversion) and stubs/strutil.cc (CEscape, SimpleFtoa, SimpleDtoa).
 *
 * Invariants:
 *  - Neither direction recurses: both keep an explicit stack of at most
 *    GN__TEXT_MAX_DEPTH + 1 frames, so hostile nesting costs an error, never
 *    the C stack.
 *  - The reader never reads text[len] or beyond; the text is not assumed to be
 *    NUL-terminated.
 *  - The reader grows a repeated field's array to the next power of two >= 4
 *    whenever its count reaches such a power: the capacity is a function of
 *    the count, so no side table is needed, and appends are amortised O(1).
 *  - The message under construction is always consistent (counts match
 *    arrays, every pointer valid or NULL), so a failed parse can hand it to
 *    protobuf_c_message_free_unpacked.
 *  - The printer prints a field exactly when protobuf-c's packer would
 *    serialise it, which makes parse(print(m)) pack to pack(m).
 *
 * Where this differs from C++ on purpose:
 *  - Map entries print in stored order (C++ sorts them by key): sorting would
 *    break print-then-parse byte identity for binary files whose maps are not
 *    sorted. Text TensorFlow wrote is sorted already and stays so.
 *  - A float field rounds the decimal value to the nearest float; C++'s
 *    SafeDoubleToFloat turns anything above FLT_MAX into inf, so C++ reads its
 *    own "3.40282347e+38" (FLT_MAX printed) back as inf.
 *  - The printer's "does %.6g read back?" test uses this reader's conversion,
 *    so printed floats always read back here bit for bit (-0 included).
 *  - Error columns count bytes (C++ advances tabs to multiples of 8).
 *  - Extension and Any-expansion names (`[type.googleapis.com/...]`) are
 *    rejected with an error; string fields holding a NUL byte are rejected
 *    (protobuf-c strings are NUL-terminated); a missing proto2 required field
 *    is an error only for strings and messages (protobuf-c cannot pack those).
 */
#include "io/textformat.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* ============================================================================
 * shared helpers
 * ========================================================================== */

static const char *const type_names[] = {
    "int32",  "sint32",  "sfixed32", "int64", "sint64", "sfixed64",
    "uint32", "fixed32", "uint64",   "fixed64", "float", "double",
    "bool",   "enum",    "string",   "bytes", "message",
};

static const char *type_name(ProtobufCType t)
{
    return (unsigned)t < GN__ARRAY_LEN(type_names) ? type_names[t] : "?";
}

static size_t elt_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_ENUM:
        return 4;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    }
    return 0;
}

static bool is_ptr_type(ProtobufCType t)
{
    return t == PROTOBUF_C_TYPE_STRING || t == PROTOBUF_C_TYPE_MESSAGE;
}

/* Field of d with number id, or NULL (protobuf-c's field_ranges: sorted runs
 * of consecutive numbers, with a sentinel whose orig_index is n_fields). */
static const ProtobufCFieldDescriptor *field_by_number(const ProtobufCMessageDescriptor *d,
                                                       uint32_t id)
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

/* Text -> double without the locale's help: strtod, and when it stops at the
 * '.' because the locale uses another radix, once more with that radix
 * (C++ protobuf's NoLocaleStrtod). s must be NUL-terminated. */
static double strtod_c(const char *s, const char **end)
{
    char *e;
    double v = strtod(s, &e);
    if (*e == '.') {
        char probe[32], radix[8];
        snprintf(probe, sizeof probe, "%.1f", 1.5);
        size_t rl = strlen(probe);
        if (rl >= 3 && rl - 2 < sizeof radix) {
            memcpy(radix, probe + 1, rl - 2);
            radix[rl - 2] = '\0';
            size_t n = strlen(s);
            char small[128];
            char *copy = n + sizeof radix < sizeof small ? small : malloc(n + sizeof radix);
            if (copy) {
                size_t pre = (size_t)(e - s);
                memcpy(copy, s, pre);
                memcpy(copy + pre, radix, rl - 2);
                memcpy(copy + pre + rl - 2, e + 1, n - pre);   /* includes the NUL */
                char *e2;
                double v2 = strtod(copy, &e2);
                size_t used = (size_t)(e2 - copy);
                if (used > pre + rl - 2) {
                    v = v2;
                    e = (char *)s + used - (rl - 2) + 1;
                }
                if (copy != small) free(copy);
            }
        }
    }
    *end = e;
    return v;
}

/* double -> float rounding to nearest, never relying on an out-of-range cast:
 * beyond FLT_MAX + half an ulp (2^128 - 2^103) is infinity, ties go to even,
 * which is infinity too. */
static float to_float(double x)
{
    if (isnan(x)) return (float)x;
    double ax = fabs(x);
    if (ax <= FLT_MAX) return (float)x;
    if (ax < 0x1.ffffffp127) return x < 0 ? -FLT_MAX : FLT_MAX;
    return x < 0 ? -INFINITY : INFINITY;
}

/* ============================================================================
 * reader
 * ========================================================================== */

typedef struct tp_frame {
    ProtobufCMessage *msg;
    /* set when this message is an element of a `[...]` list of that field */
    const ProtobufCFieldDescriptor *list_field;
    char close;    /* '}' or '>'; 0 for the root */
} tp_frame;

/* Field lookups by name, cached (direct-mapped by message type and name): a
 * text graph names the same few fields of the same few messages again and
 * again, and one comparison replaces a binary search of several. */
#define TP_FCACHE 64
typedef struct tp_fcache {
    const ProtobufCMessageDescriptor *d;   /* NULL: empty */
    const ProtobufCFieldDescriptor *f;
    size_t len;                            /* strlen(f->name) */
} tp_fcache;

typedef struct tp {
    const char *text, *p, *end;
    char *own;         /* text, writable, when the caller gave it to the parser
                          (gn__text_parse_owned); else NULL */
    ProtobufCAllocator *alloc;
    gn__err *err;
    gn__buf scratch;   /* decoded string literal */
    tp_frame stack[GN__TEXT_MAX_DEPTH + 1];
    tp_fcache fcache[TP_FCACHE];
} tp;

enum { NUM_NONE, NUM_BAD, NUM_DEC, NUM_HEX, NUM_OCT, NUM_FLOAT };

static inline bool is_alpha_(unsigned char c)
{
    return (unsigned)((c | 0x20) - 'a') < 26u || c == '_';
}
static inline bool is_digit(unsigned char c) { return (unsigned)(c - '0') < 10u; }
static inline bool is_alnum_(unsigned char c) { return is_alpha_(c) || is_digit(c); }
static inline int hex_val(unsigned char c)
{
    if (is_digit(c)) return c - '0';
    unsigned l = (unsigned)(c | 0x20) - 'a';
    return l < 6u ? (int)l + 10 : -1;
}

static void skip_ws(tp *t)
{
    const char *p = t->p, *e = t->end;
    while (p < e) {
        char c = *p;
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            p++;
        } else if (c == '#') {
            const char *nl = memchr(p, '\n', (size_t)(e - p));
            p = nl ? nl + 1 : e;
        } else {
            break;
        }
    }
    t->p = p;
}

static inline bool at_char(const tp *t, char c) { return t->p < t->end && *t->p == c; }

/* A short, printable rendering of the token at `at`, for error messages. */
static const char *describe(const tp *t, const char *at, char *buf, size_t n)
{
    if (at >= t->end) {
        snprintf(buf, n, "end of input");
        return buf;
    }
    size_t k = 0;
    unsigned char c = (unsigned char)*at;
    if (c == '"' || c == '\'') {
        snprintf(buf, n, "a string");
        return buf;
    }
    buf[k++] = '\'';
    if (is_alnum_(c) || c == '-' || c == '.' || c == '+') {
        const char *q = at;
        while (q < t->end && k + 5 < n && k < 41 &&
               (is_alnum_((unsigned char)*q) || *q == '.' || *q == '+' || *q == '-'))
            buf[k++] = *q++;
        if (q < t->end && k >= 41 && is_alnum_((unsigned char)*q)) {
            buf[k++] = '.';
            buf[k++] = '.';
            buf[k++] = '.';
        }
    } else {
        buf[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

static gn_status tp_fail(const tp *t, const char *at, const char *fmt, ...) GN__PRINTF(3, 4);
static gn_status tp_fail(const tp *t, const char *at, const char *fmt, ...)
{
    size_t line = 1;
    const char *ls = t->text, *nl;
    if (at > t->end) at = t->end;
    while (ls < at && (nl = memchr(ls, '\n', (size_t)(at - ls))) != NULL) {
        line++;
        ls = nl + 1;
    }
    char what[GN__ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return gn__fail(t->err, GN_ERR_PARSE, "line %zu:%zu: %.*s", line, (size_t)(at - ls) + 1,
                    GN__ERRMSG_MAX - 40, what);
}

static gn_status tp_nomem(const tp *t)
{
    return gn__fail(t->err, GN_ERR_NOMEM, "text parse: out of memory");
}

static void *pb_alloc(tp *t, size_t n)
{
    return t->alloc->alloc(t->alloc->allocator_data, n ? n : 1);
}

static void pb_free(tp *t, void *p)
{
    if (p && t->alloc->free) t->alloc->free(t->alloc->allocator_data, p);
}

static ProtobufCMessage *new_msg(tp *t, const ProtobufCMessageDescriptor *d)
{
    ProtobufCMessage *m = pb_alloc(t, d->sizeof_message);
    if (m) protobuf_c_message_init(d, m);
    return m;
}

/* Appends an element slot to repeated field f of m; NULL on OOM. */
static void *rep_append(tp *t, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    size_t *pn = (size_t *)((char *)m + f->quantifier_offset);
    void **pa = (void **)((char *)m + f->offset);
    size_t n = *pn, esz = elt_size(f->type);
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        size_t cap = n == 0 ? 4 : n * 2;
        if (cap < n || cap > SIZE_MAX / esz) return NULL;
        void *na = pb_alloc(t, cap * esz);
        if (!na) return NULL;
        if (n) {
            memcpy(na, *pa, n * esz);
            pb_free(t, *pa);
        }
        *pa = na;
    }
    *pn = n + 1;
    return (char *)*pa + n * esz;
}

/* Releases the value a singular member of field f holds (string, bytes or
 * message) and zeroes it. */
static void release_member(tp *t, const ProtobufCFieldDescriptor *f, void *member)
{
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: {
        char *s = *(char **)member;
        if (s && s != f->default_value && s != protobuf_c_empty_string) pb_free(t, s);
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        ProtobufCBinaryData *bd = member;
        const ProtobufCBinaryData *def = f->default_value;
        if (bd->data && (!def || bd->data != def->data)) pb_free(t, bd->data);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE: {
        ProtobufCMessage *sm = *(ProtobufCMessage **)member;
        if (sm && sm != f->default_value) protobuf_c_message_free_unpacked(sm, t->alloc);
        break;
    }
    default:
        break;
    }
    memset(member, 0, elt_size(f->type));
}

/* Selects oneof member f in m, releasing another member that was set. */
static void oneof_select(tp *t, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    uint32_t *pc = (uint32_t *)((char *)m + f->quantifier_offset);
    if (*pc == f->id) return;
    if (*pc != 0) {
        const ProtobufCFieldDescriptor *old = field_by_number(m->descriptor, *pc);
        if (old) release_member(t, old, (char *)m + old->offset);
    }
    memset((char *)m + f->offset, 0, elt_size(f->type));
    *pc = f->id;
}

/* Where the next value of non-message field f goes: a new element of a
 * repeated field, or the member itself (after releasing what it held and
 * marking it present). NULL on OOM. */
static void *value_slot(tp *t, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    char *member = (char *)m + f->offset;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) return rep_append(t, m, f);
    if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
        oneof_select(t, m, f);
        release_member(t, f, member);
        return member;
    }
    release_member(t, f, member);
    if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->quantifier_offset != 0 &&
        !is_ptr_type(f->type))
        *(protobuf_c_boolean *)((char *)m + f->quantifier_offset) = 1;
    return member;
}

static const ProtobufCFieldDescriptor *field_by_name(const ProtobufCMessageDescriptor *d,
                                                     const char *name, size_t n)
{
    unsigned lo = 0, hi = d->n_fields;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        const ProtobufCFieldDescriptor *f = &d->fields[d->fields_sorted_by_name[mid]];
        int c = strncmp(f->name, name, n);
        if (c == 0 && f->name[n] != '\0') c = 1;
        if (c == 0) return f;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

static const ProtobufCFieldDescriptor *field_cached(tp *t, const ProtobufCMessageDescriptor *d, const char *name,
                                                    size_t n)
{
    size_t h = (((uintptr_t)d >> 4) ^ (n * 0x9e37u) ^ ((unsigned char)name[0] * 0x85ebu) ^
                ((unsigned char)name[n - 1] * 0xc2b3u)) % TP_FCACHE;
    tp_fcache *e = &t->fcache[h];
    if (e->d == d && e->len == n && memcmp(e->f->name, name, n) == 0) return e->f;
    const ProtobufCFieldDescriptor *f = field_by_name(d, name, n);
    if (f) *e = (tp_fcache){d, f, n};
    return f;
}

/* Scans a number token (no sign) at p: the kind, its end in *endp, and for
 * NUM_BAD a reason. A trailing 'f'/'F' makes it a float (included in the
 * token); the token must not run into an identifier. */
static int scan_number(const char *p, const char *e, const char **endp, const char **why)
{
    int kind;
    *why = NULL;
    if (p >= e) {
        *endp = p;
        return NUM_NONE;
    }
    if (*p == '0' && p + 1 < e && (p[1] == 'x' || p[1] == 'X')) {
        p += 2;
        const char *h = p;
        while (p < e && hex_val((unsigned char)*p) >= 0) p++;
        if (p == h) {
            *endp = p;
            *why = "expected hex digits after '0x'";
            return NUM_BAD;
        }
        kind = NUM_HEX;
    } else if (*p == '0' && p + 1 < e && is_digit((unsigned char)p[1])) {
        p++;
        while (p < e && is_digit((unsigned char)*p)) {
            if (*p > '7') {
                *endp = p;
                *why = "numbers starting with 0 must be octal";
                return NUM_BAD;
            }
            p++;
        }
        kind = NUM_OCT;
    } else {
        const char *s = p;
        bool is_float = false;
        while (p < e && is_digit((unsigned char)*p)) p++;
        bool int_digits = p > s;
        if (p < e && *p == '.') {
            if (!int_digits && !(p + 1 < e && is_digit((unsigned char)p[1]))) {
                *endp = s;
                return NUM_NONE;
            }
            is_float = true;
            p++;
            while (p < e && is_digit((unsigned char)*p)) p++;
        } else if (!int_digits) {
            *endp = s;
            return NUM_NONE;
        }
        if (p < e && (*p == 'e' || *p == 'E')) {
            is_float = true;
            p++;
            if (p < e && (*p == '+' || *p == '-')) p++;
            if (!(p < e && is_digit((unsigned char)*p))) {
                *endp = p;
                *why = "expected digits in the exponent";
                return NUM_BAD;
            }
            while (p < e && is_digit((unsigned char)*p)) p++;
        }
        if (p < e && (*p == 'f' || *p == 'F')) {
            is_float = true;
            p++;
        }
        kind = is_float ? NUM_FLOAT : NUM_DEC;
    }
    if (p < e && (is_alnum_((unsigned char)*p) || *p == '.')) {
        *endp = p;
        *why = "need space between a number and what follows";
        return NUM_BAD;
    }
    *endp = p;
    return kind;
}

/* Reads an integer literal, optionally negative: magnitude in *mag. The
 * literal's text runs from *tok to t->p afterwards. */
static gn_status read_integer(tp *t, const ProtobufCFieldDescriptor *f, bool *neg,
                              uint64_t *mag, const char **tok)
{
    char d[64];
    const char *start = t->p;
    *tok = start;
    *neg = false;
    if (at_char(t, '-')) {
        *neg = true;
        t->p++;
        skip_ws(t);
    }
    const char *s = t->p, *e, *why;
    int kind = scan_number(s, t->end, &e, &why);
    if (kind == NUM_BAD) return tp_fail(t, e, "%s", why);
    if (kind == NUM_NONE || kind == NUM_FLOAT)
        return tp_fail(t, start, "expected integer for %s field '%s', got %s", type_name(f->type),
                       f->name, describe(t, start, d, sizeof d));
    uint64_t v = 0;
    bool over = false;
    if (kind == NUM_HEX) {
        for (const char *q = s + 2; q < e; q++) {
            if (v > (UINT64_MAX >> 4)) over = true;
            v = (v << 4) | (uint64_t)hex_val((unsigned char)*q);
        }
    } else if (kind == NUM_OCT) {
        for (const char *q = s + 1; q < e; q++) {
            if (v > (UINT64_MAX >> 3)) over = true;
            v = (v << 3) | (uint64_t)(*q - '0');
        }
    } else {
        for (const char *q = s; q < e; q++) {
            uint64_t dg = (uint64_t)(*q - '0');
            if (v > (UINT64_MAX - dg) / 10) over = true;
            v = v * 10 + dg;
        }
    }
    t->p = e;
    if (over)
        return tp_fail(t, start, "value %.*s out of range for %s field '%s'", (int)(e - start),
                       start, type_name(f->type), f->name);
    *mag = v;
    return GN_OK;
}

static gn_status read_signed(tp *t, const ProtobufCFieldDescriptor *f, uint64_t max_pos,
                             int64_t *out)
{
    bool neg = false;
    uint64_t mag = 0;
    const char *tok = NULL;
    GN_TRY(read_integer(t, f, &neg, &mag, &tok));
    if (neg ? mag > max_pos + 1 : mag > max_pos)
        return tp_fail(t, tok, "value %.*s out of range for %s field '%s'", (int)(t->p - tok), tok,
                       type_name(f->type), f->name);
    /* two's complement without signed overflow */
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return GN_OK;
}

static gn_status read_unsigned(tp *t, const ProtobufCFieldDescriptor *f, uint64_t max,
                               uint64_t *out)
{
    bool neg = false;
    uint64_t mag = 0;
    const char *tok = NULL;
    GN_TRY(read_integer(t, f, &neg, &mag, &tok));
    if (neg || mag > max)
        return tp_fail(t, tok, "value %.*s out of range for %s field '%s'", (int)(t->p - tok), tok,
                       type_name(f->type), f->name);
    *out = mag;
    return GN_OK;
}

static bool ieq(const char *a, size_t n, const char *lit)
{
    size_t k = strlen(lit);
    if (n != k) return false;
    for (size_t i = 0; i < n; i++)
        if ((a[i] | 0x20) != lit[i]) return false;
    return true;
}

static gn_status read_double(tp *t, const ProtobufCFieldDescriptor *f, double *out)
{
    char d[64];
    const char *start = t->p;
    bool neg = false;
    if (at_char(t, '-')) {
        neg = true;
        t->p++;
        skip_ws(t);
    }
    const char *s = t->p;
    double v;
    if (s < t->end && is_alpha_((unsigned char)*s)) {
        const char *q = s;
        while (q < t->end && is_alnum_((unsigned char)*q)) q++;
        size_t n = (size_t)(q - s);
        if (ieq(s, n, "inf") || ieq(s, n, "infinity")) v = INFINITY;
        else if (ieq(s, n, "nan")) v = NAN;
        else
            return tp_fail(t, start, "expected number for %s field '%s', got %s",
                           type_name(f->type), f->name, describe(t, start, d, sizeof d));
        t->p = q;
    } else {
        const char *e, *why;
        int kind = scan_number(s, t->end, &e, &why);
        if (kind == NUM_BAD) return tp_fail(t, e, "%s", why);
        if (kind == NUM_NONE)
            return tp_fail(t, start, "expected number for %s field '%s', got %s",
                           type_name(f->type), f->name, describe(t, start, d, sizeof d));
        if (kind == NUM_HEX || kind == NUM_OCT)
            return tp_fail(t, start, "expected a decimal number for %s field '%s', got %s",
                           type_name(f->type), f->name, describe(t, start, d, sizeof d));
        size_t n = (size_t)(e - s);
        if (e[-1] == 'f' || e[-1] == 'F') n--;
        char small[96];
        char *buf = small;
        if (n >= sizeof small) {
            t->scratch.len = 0;
            gn__buf_append(&t->scratch, s, n);
            if (t->scratch.oom) return tp_nomem(t);
            buf = t->scratch.data;
        } else {
            memcpy(small, s, n);
            small[n] = '\0';
        }
        const char *end;
        v = strtod_c(buf, &end);
        if (end != buf + n)
            return tp_fail(t, start, "bad number %.*s for %s field '%s'", (int)(e - start), start,
                           type_name(f->type), f->name);
        t->p = e;
    }
    *out = neg ? -v : v;
    return GN_OK;
}

static gn_status read_bool(tp *t, const ProtobufCFieldDescriptor *f, protobuf_c_boolean *out)
{
    char d[64];
    const char *start = t->p;
    if (start < t->end && is_alpha_((unsigned char)*start)) {
        const char *q = start;
        while (q < t->end && is_alnum_((unsigned char)*q)) q++;
        size_t n = (size_t)(q - start);
#define GN__IS(lit) (n == sizeof(lit) - 1 && memcmp(start, lit, n) == 0)
        if (GN__IS("true") || GN__IS("True") || GN__IS("t")) *out = 1;
        else if (GN__IS("false") || GN__IS("False") || GN__IS("f")) *out = 0;
        else
            return tp_fail(t, start, "expected true or false for bool field '%s', got %s", f->name,
                           describe(t, start, d, sizeof d));
#undef GN__IS
        t->p = q;
        return GN_OK;
    }
    if (start < t->end && is_digit((unsigned char)*start)) {
        uint64_t v = 0;
        GN_TRY(read_unsigned(t, f, 1, &v));
        *out = v != 0;
        return GN_OK;
    }
    return tp_fail(t, start, "expected true or false for bool field '%s', got %s", f->name,
                   describe(t, start, d, sizeof d));
}

static gn_status read_enum(tp *t, const ProtobufCFieldDescriptor *f, int32_t *out)
{
    char d[64];
    const ProtobufCEnumDescriptor *ed = f->descriptor;
    const char *start = t->p;
    if (start < t->end && is_alpha_((unsigned char)*start)) {
        const char *q = start;
        while (q < t->end && is_alnum_((unsigned char)*q)) q++;
        size_t n = (size_t)(q - start);
        const ProtobufCEnumValue *ev = NULL;
        char name[256];
        if (n < sizeof name) {
            memcpy(name, start, n);
            name[n] = '\0';
            ev = protobuf_c_enum_descriptor_get_value_by_name(ed, name);
        }
        if (!ev)
            return tp_fail(t, start, "unknown enum value '%.*s' for field '%s' (%s)",
                           (int)(n > 200 ? 200 : n), start, f->name, ed->name);
        *out = ev->value;
        t->p = q;
        return GN_OK;
    }
    if (start < t->end && (*start == '-' || is_digit((unsigned char)*start))) {
        int64_t v = 0;
        GN_TRY(read_signed(t, f, INT32_MAX, &v));
        *out = (int32_t)v;
        return GN_OK;
    }
    return tp_fail(t, start, "expected enum value for field '%s' (%s), got %s", f->name, ed->name,
                   describe(t, start, d, sizeof d));
}

static void put_utf8(gn__buf *b, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    gn__buf_append(b, u, n);
}

/* Reads exactly n hex digits at p (bounded by e) into *v. */
static bool hex_digits(const char *p, const char *e, int n, uint32_t *v)
{
    if (e - p < n) return false;
    uint32_t x = 0;
    for (int i = 0; i < n; i++) {
        int h = hex_val((unsigned char)p[i]);
        if (h < 0) return false;
        x = (x << 4) | (uint32_t)h;
    }
    *v = x;
    return true;
}

/* Eight bytes at p as a little-endian number (one load where the host is). */
static inline uint64_t load_le64(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 | (uint64_t)u[7] << 56;
}

/* The first q at or after p that no backslash escapes (an odd run of
 * backslashes before it), found with memchr; e when there is none. Bounds
 * what the literal starting at p decodes to: a newline before it ends the
 * literal earlier, with an error. The backward counts cover disjoint runs of
 * backslashes, so the search is linear. */
static const char *closing_quote(const char *p, const char *e, char q)
{
    const char *from = p;
    for (;;) {
        const char *c = memchr(from, q, (size_t)(e - from));
        if (!c) return e;
        size_t bs = 0;
        while (c - bs > p && c[-1 - (ptrdiff_t)bs] == '\\') bs++;
        if (bs % 2 == 0) return c;
        from = c + 1;
    }
}

/* Reads one or more adjacent string literals, decoding escapes, into b
 * (t->scratch, or memory of the message's that has room for all of the one
 * literal there is: read_bytes_direct). */
static gn_status read_string(tp *t, const ProtobufCFieldDescriptor *f, gn__buf *b)
{
    char d[64];
    b->len = 0;
    const char *p = t->p, *e = t->end, *first = p;
    if (p >= e || (*p != '"' && *p != '\''))
        return tp_fail(t, p, "expected string for %s field '%s', got %s", type_name(f->type),
                       f->name, describe(t, p, d, sizeof d));
    do {
        const char *start = p;
        char q = *p++;
        /* the literal's bytes up to its closing quote bound what it decodes to
         * (no escape is shorter than what it stands for): room for all of it
         * once, then the escapes are stored without a call each */
        const char *close = closing_quote(p, e, q);
        if (!gn__buf_reserve(b, (size_t)(close - p))) return tp_nomem(t);
        for (;;) {
            /* runs of three-digit octal escapes (how TensorFlow writes
             * tensor_content: "\000\000\200?"), decoded without the switch */
            char *o = b->data + b->len;   /* a local cursor: no reload of b per byte */
            /* two escapes per 8-byte load: '\\' at bytes 0 and 4, octal digits
             * ('0'-'7': 0x30-0x37) at the six others */
            while (e - p >= 8) {
                uint64_t w = load_le64(p);
                if ((w & 0xF8F8F8FFF8F8F8FFull) != 0x3030305C3030305Cull) break;
                o[0] = (char)(unsigned char)(((w >> 8) & 7) << 6 | ((w >> 16) & 7) << 3 | ((w >> 24) & 7));
                o[1] = (char)(unsigned char)(((w >> 40) & 7) << 6 | ((w >> 48) & 7) << 3 | ((w >> 56) & 7));
                o += 2;
                p += 8;
            }
            while (e - p >= 4 && p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' &&
                   p[3] >= '0' && p[3] <= '7') {
                *o++ = (char)(unsigned char)((((unsigned)(p[1] - '0') << 6) | ((unsigned)(p[2] - '0') << 3) |
                                              (unsigned)(p[3] - '0')) &
                                             0xFF);
                p += 4;
            }
            b->len = (size_t)(o - b->data);
            const char *run = p;
            while (p < e && *p != q && *p != '\\' && *p != '\n') p++;
            if (p > run) gn__buf_append(b, run, (size_t)(p - run));
            if (p >= e || *p == '\n') return tp_fail(t, start, "unterminated string");
            if (*p == q) {
                p++;
                break;
            }
            const char *esc = p++;
            if (p >= e) return tp_fail(t, start, "unterminated string");
            char c = *p++, ch;
            switch (c) {
            case 'a': ch = '\a'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'v': ch = '\v'; break;
            case '\\': case '?': case '\'': case '"': ch = c; break;
            case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
                unsigned v = (unsigned)(c - '0');
                for (int k = 0; k < 2 && p < e && *p >= '0' && *p <= '7'; k++)
                    v = v * 8 + (unsigned)(*p++ - '0');
                ch = (char)(unsigned char)(v & 0xFF);
                break;
            }
            case 'x': case 'X': {
                int h = p < e ? hex_val((unsigned char)*p) : -1;
                if (h < 0) return tp_fail(t, esc, "expected hex digits after '\\%c'", c);
                unsigned v = (unsigned)h;
                p++;
                if (p < e && (h = hex_val((unsigned char)*p)) >= 0) {
                    v = v * 16 + (unsigned)h;
                    p++;
                }
                ch = (char)(unsigned char)v;
                break;
            }
            case 'u': case 'U': {
                uint32_t cp;
                int nd = c == 'u' ? 4 : 8;
                if (!hex_digits(p, e, nd, &cp))
                    return tp_fail(t, esc, "expected %d hex digits after '\\%c'", nd, c);
                p += nd;
                if (cp > 0x10FFFF) return tp_fail(t, esc, "code point out of range in '\\%c'", c);
                uint32_t lo;
                if (cp >= 0xD800 && cp < 0xDC00 && e - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
                    hex_digits(p + 2, e, 4, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
                put_utf8(b, cp);
                continue;
            }
            default:
                return tp_fail(t, esc, "invalid escape sequence '\\%c' in string",
                               (c >= 0x20 && c < 0x7f) ? c : '?');
            }
            b->data[b->len++] = ch;
        }
        b->data[b->len] = '\0';
        t->p = p;
        skip_ws(t);
        p = t->p;
    } while (p < e && (*p == '"' || *p == '\''));
    if (b->oom) return tp_nomem(t);
    if (f->type == PROTOBUF_C_TYPE_STRING && b->len && memchr(b->data, 0, b->len))
        return tp_fail(t, first,
                       "string field '%s' contains a NUL byte, which protobuf-c strings cannot "
                       "hold",
                       f->name);
    return GN_OK;
}

/* Literals of a bytes field from this size on are decoded straight into the
 * message's memory instead of the scratch buffer and then copied: a large
 * tensor_content is not held twice (the 8 MiB tensors of the 73 MB GNMT text
 * graph: its peak RSS 107 -> 99 MB). */
#define TP_DIRECT_MIN ((size_t)1 << 20)

/* The whole pages of a decoded literal's characters [from, to), in text the
 * parser owns, given back to the system (they read as zeros afterwards): the
 * 33 MB literals of the GNMT text graph are not kept until the parse ends.
 * The characters of its first and last page that stay are overwritten with
 * '0', so that what reads the text afterwards for positions (line and column
 * of a later error, gn__graphdef_node_pos) still finds a literal there with
 * its quotes where they were and no escape cut in two; a literal holds no
 * newline, so no line number moves. */
static void give_back_literal(tp *t, const char *from, const char *to)
{
    const uintptr_t page = 4096;
    char *w = t->own + (from - t->text), *we = w + (to - from);
    char *a = (char *)(((uintptr_t)w + page - 1) & ~(page - 1)), *z = (char *)((uintptr_t)we & ~(page - 1));
    if (z <= a) return;
    memset(w, '0', (size_t)(a - w));
    memset(z, '0', (size_t)(we - z));
    gn__release_pages(a, (size_t)(z - a));
}

/* A bytes literal of TP_DIRECT_MIN or more characters that no other literal
 * follows (adjacent literals are concatenated): decoded into memory from the
 * message's allocator as large as its characters (what it decodes to is no
 * longer), *bd set. false, nothing done, for any other: the scratch path. */
static bool read_bytes_direct(tp *t, const ProtobufCFieldDescriptor *f, ProtobufCBinaryData *bd, gn_status *st)
{
    const char *p = t->p, *e = t->end;
    if (f->type != PROTOBUF_C_TYPE_BYTES || p >= e || (*p != '"' && *p != '\'')) return false;
    const char *close = closing_quote(p + 1, e, *p);
    size_t bound = (size_t)(close - (p + 1));
    if (close >= e || bound < TP_DIRECT_MIN) return false;
    const char *q = close + 1;
    while (q < e) {   /* what follows the literal: another one? (skip_ws's rules) */
        if (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r' || *q == '\f' || *q == '\v') {
            q++;
        } else if (*q == '#') {
            const char *nl = memchr(q, '\n', (size_t)(e - q));
            q = nl ? nl + 1 : e;
        } else {
            break;
        }
    }
    if (q < e && (*q == '"' || *q == '\'')) return false;
    uint8_t *dst = pb_alloc(t, bound + 1);
    if (!dst) {
        *st = tp_nomem(t);
        return true;
    }
    /* a buffer over that memory: read_string's one reservation fits, so it
     * never grows it */
    gn__buf b = {(char *)dst, 0, bound + 1, false};
    *st = read_string(t, f, &b);
    if (*st != GN_OK) {
        pb_free(t, dst);
        return true;
    }
    *bd = (ProtobufCBinaryData){b.len, dst};
    if (t->own) give_back_literal(t, p + 1, close);
    return true;
}

static gn_status parse_string_value(tp *t, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    ProtobufCBinaryData direct;
    gn_status dst = GN_OK;
    if (read_bytes_direct(t, f, &direct, &dst)) {
        if (dst != GN_OK) return dst;
        ProtobufCBinaryData *slot = value_slot(t, m, f);
        if (!slot) {
            pb_free(t, direct.data);
            return tp_nomem(t);
        }
        *slot = direct;
        return GN_OK;
    }
    GN_TRY(read_string(t, f, &t->scratch));
    size_t n = t->scratch.len;
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        char *s;
        if (n == 0 && f->label == PROTOBUF_C_LABEL_NONE &&
            !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            f->default_value == (const void *)protobuf_c_empty_string) {
            s = (char *)protobuf_c_empty_string;
        } else {
            s = pb_alloc(t, n + 1);
            if (!s) return tp_nomem(t);
            if (n) memcpy(s, t->scratch.data, n);
            s[n] = '\0';
        }
        char **slot = value_slot(t, m, f);
        if (!slot) {
            if (s != protobuf_c_empty_string) pb_free(t, s);
            return tp_nomem(t);
        }
        *slot = s;
        return GN_OK;
    }
    ProtobufCBinaryData bd = {n, NULL};
    if (n) {
        bd.data = pb_alloc(t, n);
        if (!bd.data) return tp_nomem(t);
        memcpy(bd.data, t->scratch.data, n);
    }
    ProtobufCBinaryData *slot = value_slot(t, m, f);
    if (!slot) {
        pb_free(t, bd.data);
        return tp_nomem(t);
    }
    *slot = bd;
    return GN_OK;
}

/* One scalar (non-message) value of field f into m. */
static gn_status parse_value(tp *t, ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    union {
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float fl;
        double db;
        protobuf_c_boolean b;
    } v = {0};
    size_t size;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: {
        int64_t x = 0;
        GN_TRY(read_signed(t, f, INT32_MAX, &x));
        v.i32 = (int32_t)x;
        size = 4;
        break;
    }
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        GN_TRY(read_signed(t, f, INT64_MAX, &v.i64));
        size = 8;
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32: {
        uint64_t x = 0;
        GN_TRY(read_unsigned(t, f, UINT32_MAX, &x));
        v.u32 = (uint32_t)x;
        size = 4;
        break;
    }
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        GN_TRY(read_unsigned(t, f, UINT64_MAX, &v.u64));
        size = 8;
        break;
    case PROTOBUF_C_TYPE_FLOAT: {
        double x = 0;
        GN_TRY(read_double(t, f, &x));
        v.fl = to_float(x);
        size = 4;
        break;
    }
    case PROTOBUF_C_TYPE_DOUBLE:
        GN_TRY(read_double(t, f, &v.db));
        size = 8;
        break;
    case PROTOBUF_C_TYPE_BOOL:
        GN_TRY(read_bool(t, f, &v.b));
        size = sizeof v.b;
        break;
    case PROTOBUF_C_TYPE_ENUM:
        GN_TRY(read_enum(t, f, &v.i32));
        size = 4;
        break;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
        return parse_string_value(t, m, f);
    default:
        return gn__fail(t->err, GN_ERR_INTERNAL, "text parse: field '%s' has unknown type %d",
                        f->name, (int)f->type);
    }
    void *slot = value_slot(t, m, f);
    if (!slot) return tp_nomem(t);
    memcpy(slot, &v, size);
    return GN_OK;
}

/* Opens the message value of field f at t->p ('{' or '<'), pushing a frame. */
static gn_status open_message(tp *t, unsigned *depth, const ProtobufCFieldDescriptor *f,
                              const ProtobufCFieldDescriptor *list_field)
{
    char d[64];
    const char *at = t->p;
    if (at >= t->end || (*at != '{' && *at != '<'))
        return tp_fail(t, at, "expected '{' or '<' to open message field '%s', got %s", f->name,
                       describe(t, at, d, sizeof d));
    if (*depth >= GN__TEXT_MAX_DEPTH)
        return tp_fail(t, at, "nesting deeper than %d", GN__TEXT_MAX_DEPTH);
    ProtobufCMessage *m = t->stack[*depth].msg, *child;
    const ProtobufCMessageDescriptor *cd = f->descriptor;
    ProtobufCMessage **pm = (ProtobufCMessage **)((char *)m + f->offset);
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
        child = new_msg(t, cd);
        if (!child) return tp_nomem(t);
        ProtobufCMessage **slot = rep_append(t, m, f);
        if (!slot) {
            pb_free(t, child);
            return tp_nomem(t);
        }
        *slot = child;
    } else {
        bool reuse;
        if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
            reuse = *(uint32_t *)((char *)m + f->quantifier_offset) == f->id && *pm;
        else
            reuse = *pm && *pm != f->default_value;
        if (reuse) {
            child = *pm;   /* given twice: merge, as C++ does */
        } else {
            child = new_msg(t, cd);
            if (!child) return tp_nomem(t);
            if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) oneof_select(t, m, f);
            *pm = child;
        }
    }
    t->p++;
    (*depth)++;
    t->stack[*depth].msg = child;
    t->stack[*depth].list_field = list_field;
    t->stack[*depth].close = *at == '{' ? '}' : '>';
    return GN_OK;
}

/* protobuf-c cannot pack a required string or message that is missing. */
static gn_status check_required(tp *t, const ProtobufCMessage *m, const char *at)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->label == PROTOBUF_C_LABEL_REQUIRED && is_ptr_type(f->type) &&
            *(void *const *)((const char *)m + f->offset) == NULL)
            return tp_fail(t, at, "missing required field '%s' in %s", f->name, d->name);
    }
    return GN_OK;
}

static void skip_sep(tp *t)
{
    skip_ws(t);
    if (t->p < t->end && (*t->p == ';' || *t->p == ',')) t->p++;
}

static gn_status parse_loop(tp *t)
{
    char d[64];
    unsigned depth = 0;
    for (;;) {
        skip_ws(t);
        tp_frame *fr = &t->stack[depth];
        if (t->p >= t->end) {
            if (depth == 0) return check_required(t, fr->msg, t->p);
            return tp_fail(t, t->p, "unexpected end of input: expected '%c' to close %s",
                           fr->close, fr->msg->descriptor->name);
        }
        char c = *t->p;
        if (depth > 0 && c == fr->close) {
            const char *at = t->p++;
            GN_TRY(check_required(t, fr->msg, at));
            const ProtobufCFieldDescriptor *lf = fr->list_field;
            depth--;
            if (lf) {
                skip_ws(t);
                if (at_char(t, ',')) {
                    t->p++;
                    skip_ws(t);
                    GN_TRY(open_message(t, &depth, lf, lf));
                    continue;
                }
                if (!at_char(t, ']'))
                    return tp_fail(t, t->p, "expected ',' or ']' in the list of field '%s', got %s",
                                   lf->name, describe(t, t->p, d, sizeof d));
                t->p++;
            }
            skip_sep(t);
            continue;
        }
        if (c == '}' || c == '>') {
            if (depth == 0) return tp_fail(t, t->p, "unexpected '%c' at the top level", c);
            return tp_fail(t, t->p, "unexpected '%c': expected '%c' to close %s", c, fr->close,
                           fr->msg->descriptor->name);
        }
        if (c == '[')
            return tp_fail(t, t->p,
                           "extension and Any type names ('[...]') are not supported in %s",
                           fr->msg->descriptor->name);
        if (!is_alpha_((unsigned char)c))
            return tp_fail(t, t->p, "expected field name in %s, got %s",
                           fr->msg->descriptor->name, describe(t, t->p, d, sizeof d));
        const char *name = t->p;
        while (t->p < t->end && is_alnum_((unsigned char)*t->p)) t->p++;
        size_t nlen = (size_t)(t->p - name);
        const ProtobufCFieldDescriptor *f = field_cached(t, fr->msg->descriptor, name, nlen);
        if (!f)
            return tp_fail(t, name, "unknown field '%.*s' in %s", (int)(nlen > 200 ? 200 : nlen),
                           name, fr->msg->descriptor->name);
        skip_ws(t);
        if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
            if (at_char(t, ':')) {
                t->p++;
                skip_ws(t);
            }
            if (at_char(t, '[')) {
                if (f->label != PROTOBUF_C_LABEL_REPEATED)
                    return tp_fail(t, t->p, "field '%s' is not repeated: a list is not allowed",
                                   f->name);
                t->p++;
                skip_ws(t);
                if (at_char(t, ']')) {
                    t->p++;
                    skip_sep(t);
                    continue;
                }
                GN_TRY(open_message(t, &depth, f, f));
                continue;
            }
            GN_TRY(open_message(t, &depth, f, NULL));
            continue;
        }
        if (!at_char(t, ':'))
            return tp_fail(t, t->p, "expected ':' after field '%s', got %s", f->name,
                           describe(t, t->p, d, sizeof d));
        t->p++;
        skip_ws(t);
        if (at_char(t, '[')) {
            if (f->label != PROTOBUF_C_LABEL_REPEATED)
                return tp_fail(t, t->p, "field '%s' is not repeated: a list is not allowed",
                               f->name);
            t->p++;
            skip_ws(t);
            if (!at_char(t, ']')) {
                for (;;) {
                    GN_TRY(parse_value(t, fr->msg, f));
                    skip_ws(t);
                    if (at_char(t, ',')) {
                        t->p++;
                        skip_ws(t);
                        continue;
                    }
                    if (at_char(t, ']')) break;
                    return tp_fail(t, t->p, "expected ',' or ']' in the list of field '%s', got %s",
                                   f->name, describe(t, t->p, d, sizeof d));
                }
            }
            t->p++;
        } else {
            GN_TRY(parse_value(t, fr->msg, f));
        }
        skip_sep(t);
    }
}

static gn_status text_parse(const ProtobufCMessageDescriptor *d, const char *text, char *own, size_t len,
                            ProtobufCAllocator *alloc, ProtobufCMessage **out, gn__err *err)
{
    if (out) *out = NULL;
    if (!d || !alloc || !out || (!text && len))
        return gn__fail(err, GN_ERR_ARG, "text parse: NULL argument");
    tp *t = malloc(sizeof *t);
    if (!t) return gn__fail(err, GN_ERR_NOMEM, "text parse: out of memory");
    t->text = t->p = text ? text : "";
    t->own = text ? own : NULL;
    t->end = t->text + len;
    t->alloc = alloc;
    t->err = err;
    gn__buf_init(&t->scratch);
    memset(t->fcache, 0, sizeof t->fcache);
    gn_status s;
    ProtobufCMessage *root = new_msg(t, d);
    if (!root) {
        s = tp_nomem(t);
    } else {
        t->stack[0].msg = root;
        t->stack[0].list_field = NULL;
        t->stack[0].close = 0;
        s = parse_loop(t);
        if (s != GN_OK) protobuf_c_message_free_unpacked(root, alloc);
        else *out = root;
    }
    gn__buf_free(&t->scratch);
    free(t);
    return s;
}

gn_status gn__text_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
                         ProtobufCAllocator *alloc, ProtobufCMessage **out, gn__err *err)
{
    return text_parse(d, text, NULL, len, alloc, out, err);
}

gn_status gn__text_parse_owned(const ProtobufCMessageDescriptor *d, char *text, size_t len,
                               ProtobufCAllocator *alloc, ProtobufCMessage **out, gn__err *err)
{
    return text_parse(d, text, text, len, alloc, out, err);
}

/* ============================================================================
 * printer
 * ========================================================================== */

/* How many values of f m holds for the packer: the element count of a
 * repeated field, else 1 when protobuf-c would serialise the field, else 0.
 * Follows protobuf-c's required/optional/oneof/unlabeled packing rules. */
static size_t present_count(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f)
{
    const char *base = (const char *)m;
    const void *member = base + f->offset;
    const void *ptr = is_ptr_type(f->type) ? *(const void *const *)member : NULL;
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return *(const size_t *)(base + f->quantifier_offset);
    if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
        (f->label == PROTOBUF_C_LABEL_OPTIONAL || f->label == PROTOBUF_C_LABEL_NONE)) {
        if (*(const uint32_t *)(base + f->quantifier_offset) != f->id) return 0;
        if (is_ptr_type(f->type)) return ptr && ptr != f->default_value;
        return 1;
    }
    switch (f->label) {
    case PROTOBUF_C_LABEL_REQUIRED:
        return is_ptr_type(f->type) ? ptr != NULL : 1;
    case PROTOBUF_C_LABEL_OPTIONAL:
        if (is_ptr_type(f->type)) return ptr && ptr != f->default_value;
        if (f->quantifier_offset == 0) return 1;
        return *(const protobuf_c_boolean *)(base + f->quantifier_offset) != 0;
    case PROTOBUF_C_LABEL_NONE:
        switch (f->type) {
        case PROTOBUF_C_TYPE_BOOL:
            return *(const protobuf_c_boolean *)member != 0;
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SFIXED32:
        case PROTOBUF_C_TYPE_UINT32:
        case PROTOBUF_C_TYPE_FIXED32:
        case PROTOBUF_C_TYPE_ENUM:
            return *(const uint32_t *)member != 0;
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
            return *(const uint64_t *)member != 0;
        case PROTOBUF_C_TYPE_FLOAT:
            return *(const float *)member != 0;   /* -0.0 too is not packed */
        case PROTOBUF_C_TYPE_DOUBLE:
            return *(const double *)member != 0;
        case PROTOBUF_C_TYPE_STRING:
            return ptr && *(const char *)ptr;
        case PROTOBUF_C_TYPE_BYTES:
            return ((const ProtobufCBinaryData *)member)->len != 0;
        case PROTOBUF_C_TYPE_MESSAGE:
            return ptr != NULL;
        }
        return 0;
    default:
        return 0;
    }
}

/* C++ CEscape: \n \r \t \" \' \\ by name, other bytes outside 0x20..0x7e as
 * three octal digits. */
static void put_escaped(gn__buf *b, const uint8_t *s, size_t n)
{
    if (n > (SIZE_MAX - 3) / 4 || !gn__buf_reserve(b, n * 4 + 2)) {
        b->oom = true;
        return;
    }
    char *o = b->data + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        switch (c) {
        case '\n': *o++ = '\\'; *o++ = 'n'; break;
        case '\r': *o++ = '\\'; *o++ = 'r'; break;
        case '\t': *o++ = '\\'; *o++ = 't'; break;
        case '"': *o++ = '\\'; *o++ = '"'; break;
        case '\'': *o++ = '\\'; *o++ = '\''; break;
        case '\\': *o++ = '\\'; *o++ = '\\'; break;
        default:
            if (c < 0x20 || c >= 0x7f) {
                *o++ = '\\';
                *o++ = (char)('0' + (c >> 6));
                *o++ = (char)('0' + ((c >> 3) & 7));
                *o++ = (char)('0' + (c & 7));
            } else {
                *o++ = (char)c;
            }
        }
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    b->data[b->len] = '\0';
}

/* snprintf's %g writes the locale's radix; text format wants '.' (C++
 * DelocalizeRadix). */
static void delocalize(char *s)
{
    for (char *p = s; *p; p++) {
        if (is_digit((unsigned char)*p) || *p == '-' || *p == '+' || *p == 'e' || *p == 'E')
            continue;
        if (*p == '.') return;
        *p = '.';
        char *q = p + 1;
        while (*q && !is_digit((unsigned char)*q) && *q != 'e' && *q != 'E') q++;
        memmove(p + 1, q, strlen(q) + 1);
        return;
    }
}

static bool reads_back_float(const char *s, float v)
{
    const char *e;
    return to_float(strtod_c(s, &e)) == v;
}

static bool reads_back_double(const char *s, double v)
{
    const char *e;
    return strtod_c(s, &e) == v;
}

/* C++ SimpleFtoa / SimpleDtoa: the shorter precision when it reads back to
 * the same value (through this reader's own conversion), else the longer. */
static void put_float(gn__buf *b, double v, bool is_float)
{
    char s[40];
    if (isnan(v)) {
        gn__buf_append(b, "nan", 3);
        return;
    }
    if (isinf(v)) {
        gn__buf_puts(b, v < 0 ? "-inf" : "inf");
        return;
    }
    if (is_float) {
        snprintf(s, sizeof s, "%.*g", FLT_DIG, v);
        delocalize(s);
        if (!reads_back_float(s, (float)v)) {
            snprintf(s, sizeof s, "%.*g", FLT_DIG + 3, v);
            delocalize(s);
        }
    } else {
        snprintf(s, sizeof s, "%.*g", DBL_DIG, v);
        delocalize(s);
        if (!reads_back_double(s, v)) {
            snprintf(s, sizeof s, "%.*g", DBL_DIG + 2, v);
            delocalize(s);
        }
    }
    gn__buf_puts(b, s);
}

static void put_indent(gn__buf *b, unsigned depth)
{
    size_t n = (size_t)depth * 2;
    if (!gn__buf_reserve(b, n)) return;
    memset(b->data + b->len, ' ', n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* One `name: value` line for a non-message value at v. */
static void put_scalar(gn__buf *b, unsigned depth, const ProtobufCFieldDescriptor *f,
                       const void *v)
{
    char num[32];
    put_indent(b, depth);
    gn__buf_puts(b, f->name);
    gn__buf_append(b, ": ", 2);
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32:
    case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        snprintf(num, sizeof num, "%" PRId32, *(const int32_t *)v);
        gn__buf_puts(b, num);
        break;
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        snprintf(num, sizeof num, "%" PRId64, *(const int64_t *)v);
        gn__buf_puts(b, num);
        break;
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        snprintf(num, sizeof num, "%" PRIu32, *(const uint32_t *)v);
        gn__buf_puts(b, num);
        break;
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        snprintf(num, sizeof num, "%" PRIu64, *(const uint64_t *)v);
        gn__buf_puts(b, num);
        break;
    case PROTOBUF_C_TYPE_FLOAT:
        put_float(b, *(const float *)v, true);
        break;
    case PROTOBUF_C_TYPE_DOUBLE:
        put_float(b, *(const double *)v, false);
        break;
    case PROTOBUF_C_TYPE_BOOL:
        gn__buf_puts(b, *(const protobuf_c_boolean *)v ? "true" : "false");
        break;
    case PROTOBUF_C_TYPE_ENUM: {
        int32_t x = *(const int32_t *)v;
        const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, x);
        if (ev) {
            gn__buf_puts(b, ev->name);
        } else {
            snprintf(num, sizeof num, "%" PRId32, x);
            gn__buf_puts(b, num);
        }
        break;
    }
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(const char *const *)v;
        if (!s) s = "";
        put_escaped(b, (const uint8_t *)s, strlen(s));
        break;
    }
    case PROTOBUF_C_TYPE_BYTES: {
        const ProtobufCBinaryData *bd = v;
        put_escaped(b, bd->data, bd->data ? bd->len : 0);
        break;
    }
    case PROTOBUF_C_TYPE_MESSAGE:
        break;
    }
    gn__buf_putc(b, '\n');
}

typedef struct pr_frame {
    const ProtobufCMessage *m;
    unsigned fi;    /* next field index */
    size_t ei;      /* next element of fields[fi] (message fields) */
} pr_frame;

gn_status gn__text_print(const ProtobufCMessage *m, gn__buf *out, gn__err *err)
{
    if (!m || !out) return gn__fail(err, GN_ERR_ARG, "text print: NULL argument");
    pr_frame *st = malloc(sizeof *st * (GN__TEXT_MAX_DEPTH + 1));
    if (!st) return gn__fail(err, GN_ERR_NOMEM, "text print: out of memory");
    unsigned depth = 0;
    gn_status s = GN_OK;
    st[0] = (pr_frame){m, 0, 0};
    for (;;) {
        pr_frame *fr = &st[depth];
        const ProtobufCMessageDescriptor *d = fr->m->descriptor;
        bool descended = false;
        while (fr->fi < d->n_fields) {
            const ProtobufCFieldDescriptor *f = &d->fields[fr->fi];
            size_t n = present_count(fr->m, f);
            const char *member = (const char *)fr->m + f->offset;
            if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                const ProtobufCMessage *sub = NULL;
                while (fr->ei < n && !sub) {
                    sub = f->label == PROTOBUF_C_LABEL_REPEATED
                              ? (*(ProtobufCMessage *const *const *)member)[fr->ei]
                              : *(ProtobufCMessage *const *)member;
                    fr->ei++;
                }
                if (sub) {
                    if (depth >= GN__TEXT_MAX_DEPTH) {
                        s = gn__fail(err, GN_ERR_PARSE,
                                     "text print: nesting deeper than %d in field '%s' of %s",
                                     GN__TEXT_MAX_DEPTH, f->name, d->name);
                        goto done;
                    }
                    put_indent(out, depth);
                    gn__buf_puts(out, f->name);
                    gn__buf_append(out, " {\n", 3);
                    st[++depth] = (pr_frame){sub, 0, 0};
                    descended = true;
                    break;
                }
            } else if (n) {
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                    const char *arr = *(const char *const *)member;
                    size_t esz = elt_size(f->type);
                    for (size_t i = 0; i < n; i++) put_scalar(out, depth, f, arr + i * esz);
                } else {
                    put_scalar(out, depth, f, member);
                }
            }
            fr->fi++;
            fr->ei = 0;
        }
        if (out->oom) break;
        if (descended) continue;
        if (depth == 0) break;
        depth--;
        put_indent(out, depth);
        gn__buf_append(out, "}\n", 2);
    }
    if (out->oom) s = gn__fail(err, GN_ERR_NOMEM, "text print: out of memory");
done:
    free(st);
    return s;
}
