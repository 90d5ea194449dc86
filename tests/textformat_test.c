/* Tests for src/io/textformat.c: the protobuf text format reader and printer.
 *
 * Besides TensorFlow's own messages, the value forms are checked on two test
 * messages whose protoc-c output (protobuf-c 1.4.1, helper functions removed)
 * is inlined below, so every scalar type, oneof, map, proto2 has_ field,
 * proto2 default and required field is covered without touching proto/:
 *
@PROTO@ */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/common.h"
#include "io/textformat.h"
#include "io/wirecheck.h"
#include "tensorflow/core/framework/graph.pb-c.h"
#include "tensorflow/core/protobuf/fingerprint.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"

/* ---- protoc-c output for the test messages ---------------------------------- */
typedef struct Gntest__All Gntest__All;
typedef struct Gntest__All__MEntry Gntest__All__MEntry;
typedef enum _Gntest__Color {
  GNTEST__COLOR__RED = 0,
  GNTEST__COLOR__GREEN = 1,
  GNTEST__COLOR__BLUE = 2
    PROTOBUF_C__FORCE_ENUM_TO_BE_INT_SIZE(GNTEST__COLOR)
} Gntest__Color;
struct  Gntest__All__MEntry
{
  ProtobufCMessage base;
  char *key;
  int32_t value;
};
#define GNTEST__ALL__MENTRY__INIT \
 { PROTOBUF_C_MESSAGE_INIT (&gntest__all__mentry__descriptor) \
    , (char *)protobuf_c_empty_string, 0 }
typedef enum {
  GNTEST__ALL__CHOICE__NOT_SET = 0,
  GNTEST__ALL__CHOICE_O_STR = 23,
  GNTEST__ALL__CHOICE_O_I64 = 24,
  GNTEST__ALL__CHOICE_O_MSG = 25,
  GNTEST__ALL__CHOICE_O_BY = 26
    PROTOBUF_C__FORCE_ENUM_TO_BE_INT_SIZE(GNTEST__ALL__CHOICE__CASE)
} Gntest__All__ChoiceCase;
struct  Gntest__All
{
  ProtobufCMessage base;
  int32_t i32;
  int64_t i64;
  uint32_t u32;
  uint64_t u64;
  int32_t s32;
  int64_t s64;
  uint32_t f32;
  uint64_t f64;
  int32_t sf32;
  int64_t sf64;
  float fl;
  double db;
  protobuf_c_boolean b;
  Gntest__Color color;
  char *str;
  ProtobufCBinaryData by;
  Gntest__All *child;
  size_t n_r_i32;
  int32_t *r_i32;
  size_t n_r_fl;
  float *r_fl;
  size_t n_r_str;
  char **r_str;
  size_t n_r_child;
  Gntest__All **r_child;
  size_t n_m;
  Gntest__All__MEntry **m;
  size_t n_r_db;
  double *r_db;
  size_t n_r_b;
  protobuf_c_boolean *r_b;
  size_t n_r_color;
  Gntest__Color *r_color;
  size_t n_r_by;
  ProtobufCBinaryData *r_by;
  size_t n_r_s64;
  int64_t *r_s64;
  size_t n_r_f64;
  uint64_t *r_f64;
  size_t n_r_u64;
  uint64_t *r_u64;
  size_t n_r_sf32;
  int32_t *r_sf32;
  Gntest__All__ChoiceCase choice_case;
  union {
    char *o_str;
    int64_t o_i64;
    Gntest__All *o_msg;
    ProtobufCBinaryData o_by;
  };
};
#define GNTEST__ALL__INIT \
 { PROTOBUF_C_MESSAGE_INIT (&gntest__all__descriptor) \
    , 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, GNTEST__COLOR__RED, (char *)protobuf_c_empty_string, {0,NULL}, NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, 0,NULL, GNTEST__ALL__CHOICE__NOT_SET, {0} }
void   gntest__all__mentry__init
                     (Gntest__All__MEntry         *message);
void   gntest__all__init
                     (Gntest__All         *message);
extern const ProtobufCEnumDescriptor    gntest__color__descriptor;
extern const ProtobufCMessageDescriptor gntest__all__descriptor;
extern const ProtobufCMessageDescriptor gntest__all__mentry__descriptor;
typedef struct Gntest__Legacy Gntest__Legacy;
struct  Gntest__Legacy
{
  ProtobufCMessage base;
  char *id;
  protobuf_c_boolean has_n;
  int32_t n;
  char *s;
  Gntest__Legacy *sub;
  size_t n_r;
  int32_t *r;
  protobuf_c_boolean has_raw;
  ProtobufCBinaryData raw;
  protobuf_c_boolean has_x;
  float x;
};
extern char gntest__legacy__s__default_value[];
#define GNTEST__LEGACY__INIT \
 { PROTOBUF_C_MESSAGE_INIT (&gntest__legacy__descriptor) \
    , NULL, 0, 7, gntest__legacy__s__default_value, NULL, 0,NULL, 0, {0,NULL}, 0, 0 }
void   gntest__legacy__init
                     (Gntest__Legacy         *message);
extern const ProtobufCMessageDescriptor gntest__legacy__descriptor;
void   gntest__all__mentry__init
                     (Gntest__All__MEntry         *message)
{
  static const Gntest__All__MEntry init_value = GNTEST__ALL__MENTRY__INIT;
  *message = init_value;
}
void   gntest__all__init
                     (Gntest__All         *message)
{
  static const Gntest__All init_value = GNTEST__ALL__INIT;
  *message = init_value;
}
static const ProtobufCFieldDescriptor gntest__all__mentry__field_descriptors[2] =
{
  { "key", 1, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_STRING, 0, offsetof(Gntest__All__MEntry, key), NULL, &protobuf_c_empty_string, 0, 0,NULL,NULL },
  { "value", 2, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT32, 0, offsetof(Gntest__All__MEntry, value), NULL, NULL, 0, 0,NULL,NULL },
};
static const unsigned gntest__all__mentry__field_indices_by_name[] = {
  0,   
  1,   
};
static const ProtobufCIntRange gntest__all__mentry__number_ranges[1 + 1] =
{
  { 1, 0 },
  { 0, 2 }
};
const ProtobufCMessageDescriptor gntest__all__mentry__descriptor =
{
  PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,
  "gntest.All.MEntry",
  "MEntry",
  "Gntest__All__MEntry",
  "gntest",
  sizeof(Gntest__All__MEntry),
  2,
  gntest__all__mentry__field_descriptors,
  gntest__all__mentry__field_indices_by_name,
  1,  gntest__all__mentry__number_ranges,
  (ProtobufCMessageInit) gntest__all__mentry__init,
  NULL,NULL,NULL    
};
static const ProtobufCFieldDescriptor gntest__all__field_descriptors[34] =
{
  { "i32", 1, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT32, 0, offsetof(Gntest__All, i32), NULL, NULL, 0, 0,NULL,NULL },
  { "i64", 2, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT64, 0, offsetof(Gntest__All, i64), NULL, NULL, 0, 0,NULL,NULL },
  { "u32", 3, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_UINT32, 0, offsetof(Gntest__All, u32), NULL, NULL, 0, 0,NULL,NULL },
  { "u64", 4, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_UINT64, 0, offsetof(Gntest__All, u64), NULL, NULL, 0, 0,NULL,NULL },
  { "s32", 5, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SINT32, 0, offsetof(Gntest__All, s32), NULL, NULL, 0, 0,NULL,NULL },
  { "s64", 6, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SINT64, 0, offsetof(Gntest__All, s64), NULL, NULL, 0, 0,NULL,NULL },
  { "f32", 7, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_FIXED32, 0, offsetof(Gntest__All, f32), NULL, NULL, 0, 0,NULL,NULL },
  { "f64", 8, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_FIXED64, 0, offsetof(Gntest__All, f64), NULL, NULL, 0, 0,NULL,NULL },
  { "sf32", 9, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SFIXED32, 0, offsetof(Gntest__All, sf32), NULL, NULL, 0, 0,NULL,NULL },
  { "sf64", 10, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_SFIXED64, 0, offsetof(Gntest__All, sf64), NULL, NULL, 0, 0,NULL,NULL },
  { "fl", 11, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_FLOAT, 0, offsetof(Gntest__All, fl), NULL, NULL, 0, 0,NULL,NULL },
  { "db", 12, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_DOUBLE, 0, offsetof(Gntest__All, db), NULL, NULL, 0, 0,NULL,NULL },
  { "b", 13, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_BOOL, 0, offsetof(Gntest__All, b), NULL, NULL, 0, 0,NULL,NULL },
  { "color", 14, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_ENUM, 0, offsetof(Gntest__All, color), &gntest__color__descriptor, NULL, 0, 0,NULL,NULL },
  { "str", 15, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_STRING, 0, offsetof(Gntest__All, str), NULL, &protobuf_c_empty_string, 0, 0,NULL,NULL },
  { "by", 16, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_BYTES, 0, offsetof(Gntest__All, by), NULL, NULL, 0, 0,NULL,NULL },
  { "child", 17, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_MESSAGE, 0, offsetof(Gntest__All, child), &gntest__all__descriptor, NULL, 0, 0,NULL,NULL },
  { "r_i32", 18, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_INT32, offsetof(Gntest__All, n_r_i32), offsetof(Gntest__All, r_i32), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_fl", 19, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_FLOAT, offsetof(Gntest__All, n_r_fl), offsetof(Gntest__All, r_fl), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_str", 20, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_STRING, offsetof(Gntest__All, n_r_str), offsetof(Gntest__All, r_str), NULL, &protobuf_c_empty_string, 0, 0,NULL,NULL },
  { "r_child", 21, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_MESSAGE, offsetof(Gntest__All, n_r_child), offsetof(Gntest__All, r_child), &gntest__all__descriptor, NULL, 0, 0,NULL,NULL },
  { "m", 22, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_MESSAGE, offsetof(Gntest__All, n_m), offsetof(Gntest__All, m), &gntest__all__mentry__descriptor, NULL, 0, 0,NULL,NULL },
  { "o_str", 23, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_STRING, offsetof(Gntest__All, choice_case), offsetof(Gntest__All, o_str), NULL, &protobuf_c_empty_string, 0 | PROTOBUF_C_FIELD_FLAG_ONEOF, 0,NULL,NULL },
  { "o_i64", 24, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_INT64, offsetof(Gntest__All, choice_case), offsetof(Gntest__All, o_i64), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_ONEOF, 0,NULL,NULL },
  { "o_msg", 25, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_MESSAGE, offsetof(Gntest__All, choice_case), offsetof(Gntest__All, o_msg), &gntest__all__descriptor, NULL, 0 | PROTOBUF_C_FIELD_FLAG_ONEOF, 0,NULL,NULL },
  { "o_by", 26, PROTOBUF_C_LABEL_NONE, PROTOBUF_C_TYPE_BYTES, offsetof(Gntest__All, choice_case), offsetof(Gntest__All, o_by), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_ONEOF, 0,NULL,NULL },
  { "r_db", 29, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_DOUBLE, offsetof(Gntest__All, n_r_db), offsetof(Gntest__All, r_db), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_b", 30, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_BOOL, offsetof(Gntest__All, n_r_b), offsetof(Gntest__All, r_b), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_color", 31, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_ENUM, offsetof(Gntest__All, n_r_color), offsetof(Gntest__All, r_color), &gntest__color__descriptor, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_by", 32, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_BYTES, offsetof(Gntest__All, n_r_by), offsetof(Gntest__All, r_by), NULL, NULL, 0, 0,NULL,NULL },
  { "r_s64", 33, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_SINT64, offsetof(Gntest__All, n_r_s64), offsetof(Gntest__All, r_s64), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_f64", 34, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_FIXED64, offsetof(Gntest__All, n_r_f64), offsetof(Gntest__All, r_f64), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_u64", 35, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_UINT64, offsetof(Gntest__All, n_r_u64), offsetof(Gntest__All, r_u64), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "r_sf32", 36, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_SFIXED32, offsetof(Gntest__All, n_r_sf32), offsetof(Gntest__All, r_sf32), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
};
static const unsigned gntest__all__field_indices_by_name[] = {
  12,   
  15,   
  16,   
  13,   
  11,   
  6,   
  7,   
  10,   
  0,   
  1,   
  21,   
  25,   
  23,   
  24,   
  22,   
  27,   
  29,   
  20,   
  28,   
  26,   
  31,   
  18,   
  17,   
  30,   
  33,   
  19,   
  32,   
  4,   
  5,   
  8,   
  9,   
  14,   
  2,   
  3,   
};
static const ProtobufCIntRange gntest__all__number_ranges[2 + 1] =
{
  { 1, 0 },
  { 29, 26 },
  { 0, 34 }
};
const ProtobufCMessageDescriptor gntest__all__descriptor =
{
  PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,
  "gntest.All",
  "All",
  "Gntest__All",
  "gntest",
  sizeof(Gntest__All),
  34,
  gntest__all__field_descriptors,
  gntest__all__field_indices_by_name,
  2,  gntest__all__number_ranges,
  (ProtobufCMessageInit) gntest__all__init,
  NULL,NULL,NULL    
};
static const ProtobufCEnumValue gntest__color__enum_values_by_number[3] =
{
  { "RED", "GNTEST__COLOR__RED", 0 },
  { "GREEN", "GNTEST__COLOR__GREEN", 1 },
  { "BLUE", "GNTEST__COLOR__BLUE", 2 },
};
static const ProtobufCIntRange gntest__color__value_ranges[] = {
{0, 0},{0, 3}
};
static const ProtobufCEnumValueIndex gntest__color__enum_values_by_name[3] =
{
  { "BLUE", 2 },
  { "GREEN", 1 },
  { "RED", 0 },
};
const ProtobufCEnumDescriptor gntest__color__descriptor =
{
  PROTOBUF_C__ENUM_DESCRIPTOR_MAGIC,
  "gntest.Color",
  "Color",
  "Gntest__Color",
  "gntest",
  3,
  gntest__color__enum_values_by_number,
  3,
  gntest__color__enum_values_by_name,
  1,
  gntest__color__value_ranges,
  NULL,NULL,NULL,NULL   
};
void   gntest__legacy__init
                     (Gntest__Legacy         *message)
{
  static const Gntest__Legacy init_value = GNTEST__LEGACY__INIT;
  *message = init_value;
}
char gntest__legacy__s__default_value[] = "dflt";
static const int32_t gntest__legacy__n__default_value = 7;
static const ProtobufCFieldDescriptor gntest__legacy__field_descriptors[7] =
{
  { "id", 1, PROTOBUF_C_LABEL_REQUIRED, PROTOBUF_C_TYPE_STRING, 0, offsetof(Gntest__Legacy, id), NULL, NULL, 0, 0,NULL,NULL },
  { "n", 2, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_INT32, offsetof(Gntest__Legacy, has_n), offsetof(Gntest__Legacy, n), NULL, &gntest__legacy__n__default_value, 0, 0,NULL,NULL },
  { "s", 3, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_STRING, 0, offsetof(Gntest__Legacy, s), NULL, &gntest__legacy__s__default_value, 0, 0,NULL,NULL },
  { "sub", 4, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_MESSAGE, 0, offsetof(Gntest__Legacy, sub), &gntest__legacy__descriptor, NULL, 0, 0,NULL,NULL },
  { "r", 5, PROTOBUF_C_LABEL_REPEATED, PROTOBUF_C_TYPE_INT32, offsetof(Gntest__Legacy, n_r), offsetof(Gntest__Legacy, r), NULL, NULL, 0 | PROTOBUF_C_FIELD_FLAG_PACKED, 0,NULL,NULL },
  { "raw", 6, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_BYTES, offsetof(Gntest__Legacy, has_raw), offsetof(Gntest__Legacy, raw), NULL, NULL, 0, 0,NULL,NULL },
  { "x", 7, PROTOBUF_C_LABEL_OPTIONAL, PROTOBUF_C_TYPE_FLOAT, offsetof(Gntest__Legacy, has_x), offsetof(Gntest__Legacy, x), NULL, NULL, 0, 0,NULL,NULL },
};
static const unsigned gntest__legacy__field_indices_by_name[] = {
  0,   
  1,   
  4,   
  5,   
  2,   
  3,   
  6,   
};
static const ProtobufCIntRange gntest__legacy__number_ranges[1 + 1] =
{
  { 1, 0 },
  { 0, 7 }
};
const ProtobufCMessageDescriptor gntest__legacy__descriptor =
{
  PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,
  "gntest.Legacy",
  "Legacy",
  "Gntest__Legacy",
  "gntest",
  sizeof(Gntest__Legacy),
  7,
  gntest__legacy__field_descriptors,
  gntest__legacy__field_indices_by_name,
  1,  gntest__legacy__number_ranges,
  (ProtobufCMessageInit) gntest__legacy__init,
  NULL,NULL,NULL    
};
/* ---- helpers -------------------------------------------------------------------- */
static void *heap_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}

static void heap_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

/* Parses from an exact-size heap copy with nothing after it, so ASan reports
 * any read past len. */
static gn_status parse_with(const ProtobufCMessageDescriptor *d, const char *text, size_t n,
                            ProtobufCAllocator *pa, ProtobufCMessage **out, gn__err *e)
{
    char *b = malloc(n ? n : 1);
    assert_non_null(b);
    if (n) memcpy(b, text, n);
    gn__err_clear(e);
    gn_status s = gn__text_parse(d, b, n, pa, out, e);
    free(b);
    return s;
}

static ProtobufCMessage *parse_ok(gn__arena *a, const ProtobufCMessageDescriptor *d,
                                  const char *text)
{
    ProtobufCAllocator pa;
    gn__arena_pb_allocator(a, &pa);
    ProtobufCMessage *m = NULL;
    gn__err e;
    gn_status s = parse_with(d, text, strlen(text), &pa, &m, &e);
    if (s != GN_OK) fail_msg("parse failed (%d): %s\ninput:\n%s", (int)s, e.msg, text);
    assert_non_null(m);
    return m;
}

/* The parse fails with exactly msg, with an arena and with a freeing
 * allocator (ASan then proves the partial message was released). */
static void expect_error(const ProtobufCMessageDescriptor *d, const char *text, const char *msg)
{
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCAllocator pa;
    gn__arena_pb_allocator(&a, &pa);
    ProtobufCMessage *m = (ProtobufCMessage *)&a;
    gn__err e;
    gn_status s = parse_with(d, text, strlen(text), &pa, &m, &e);
    if (s != GN_ERR_PARSE || strcmp(e.msg, msg) != 0)
        fail_msg("input: %s\nexpected: %s\ngot (%d): %s", text, msg, (int)s, e.msg);
    assert_null(m);
    gn__arena_free(&a);
    ProtobufCAllocator heap = {heap_alloc, heap_free, NULL};
    s = parse_with(d, text, strlen(text), &heap, &m, &e);
    assert_int_equal(s, GN_ERR_PARSE);
    assert_string_equal(e.msg, msg);
    assert_null(m);
}

static char *print_str(const ProtobufCMessage *m)
{
    gn__buf b;
    gn__buf_init(&b);
    gn__err e;
    gn__err_clear(&e);
    gn_status s = gn__text_print(m, &b, &e);
    if (s != GN_OK) fail_msg("print failed: %s", e.msg);
    char *r = gn__buf_take(&b);
    assert_non_null(r);
    return r;
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *n)
{
    *n = protobuf_c_message_get_packed_size(m);
    uint8_t *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    assert_int_equal(protobuf_c_message_pack(m, b), *n);
    return b;
}

/* On a difference, shows the first line that differs (cmocka truncates long
 * messages). */
static void assert_text(const char *got, const char *want)
{
    if (strcmp(got, want) == 0) return;
    size_t line = 1, i = 0, ls = 0;
    while (got[i] && got[i] == want[i]) {
        if (got[i] == '\n') {
            line++;
            ls = i + 1;
        }
        i++;
    }
    int gl = (int)strcspn(got + ls, "\n"), wl = (int)strcspn(want + ls, "\n");
    fail_msg("text differs at line %zu\n want: %.*s\n  got: %.*s", line, wl, want + ls, gl, got + ls);
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* ---- reader: value forms ------------------------------------------------------- */

static void test_parse_integers(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All *m = (Gntest__All *)parse_ok(
        &a, &gntest__all__descriptor,
        "i32: -2147483648 i64: -9223372036854775808 u32: 4294967295\n"
        "u64: 18446744073709551615 s32: 2147483647 s64: 9223372036854775807\n"
        "f32: 0xffffffff f64: 0xFFFFFFFFFFFFFFFF sf32: -0x80000000 sf64: -01\n"
        "r_i32: 010 r_i32: 0x10 r_i32: -0 r_i32: 7 r_i32: - 3 r_u64: 0 r_s64: -9223372036854775808\n"
        "r_sf32: 2147483647");
    assert_int_equal(m->i32, INT32_MIN);
    assert_true(m->i64 == INT64_MIN);
    assert_int_equal(m->u32, UINT32_MAX);
    assert_true(m->u64 == UINT64_MAX);
    assert_int_equal(m->s32, INT32_MAX);
    assert_true(m->s64 == INT64_MAX);
    assert_int_equal(m->f32, 0xffffffffu);
    assert_true(m->f64 == UINT64_MAX);
    assert_int_equal(m->sf32, INT32_MIN);
    assert_true(m->sf64 == -1);
    assert_int_equal(m->n_r_i32, 5);
    assert_int_equal(m->r_i32[0], 8);
    assert_int_equal(m->r_i32[1], 16);
    assert_int_equal(m->r_i32[2], 0);
    assert_int_equal(m->r_i32[3], 7);
    assert_int_equal(m->r_i32[4], -3);
    assert_int_equal(m->n_r_u64, 1);
    assert_true(m->r_s64[0] == INT64_MIN);
    assert_int_equal(m->r_sf32[0], INT32_MAX);
    gn__arena_free(&a);
}

static void test_parse_integer_errors(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *d = &gntest__all__descriptor;
    expect_error(d, "i32: 2147483648", "line 1:6: value 2147483648 out of range for int32 field 'i32'");
    expect_error(d, "i32: -2147483649",
                 "line 1:6: value -2147483649 out of range for int32 field 'i32'");
    expect_error(d, "u32: -1", "line 1:6: value -1 out of range for uint32 field 'u32'");
    expect_error(d, "u32: 4294967296", "line 1:6: value 4294967296 out of range for uint32 field 'u32'");
    expect_error(d, "u64: 18446744073709551616",
                 "line 1:6: value 18446744073709551616 out of range for uint64 field 'u64'");
    expect_error(d, "u64: 0x10000000000000000",
                 "line 1:6: value 0x10000000000000000 out of range for uint64 field 'u64'");
    expect_error(d, "i64: 9223372036854775808",
                 "line 1:6: value 9223372036854775808 out of range for int64 field 'i64'");
    expect_error(d, "r_s64: -9223372036854775809",
                 "line 1:8: value -9223372036854775809 out of range for sint64 field 'r_s64'");
    expect_error(d, "s32: 0x80000000", "line 1:6: value 0x80000000 out of range for sint32 field 's32'");
    expect_error(d, "f32: -0", "line 1:6: value -0 out of range for fixed32 field 'f32'");
    expect_error(d, "sf32: 2147483648",
                 "line 1:7: value 2147483648 out of range for sfixed32 field 'sf32'");
    expect_error(d, "f32: 1.5", "line 1:6: expected integer for fixed32 field 'f32', got '1.5'");
    expect_error(d, "sf64: abc", "line 1:7: expected integer for sfixed64 field 'sf64', got 'abc'");
    expect_error(d, "i32: 1e3", "line 1:6: expected integer for int32 field 'i32', got '1e3'");
    expect_error(d, "i32: 09", "line 1:7: numbers starting with 0 must be octal");
    expect_error(d, "i32: 12abc", "line 1:8: need space between a number and what follows");
    expect_error(d, "i32: 0x", "line 1:8: expected hex digits after '0x'");
    expect_error(d, "i32:", "line 1:5: expected integer for int32 field 'i32', got end of input");
}

static void test_parse_floats(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All *m = (Gntest__All *)parse_ok(
        &a, &gntest__all__descriptor,
        "fl: 1 db: 1.5\n"
        "r_fl: -2e-05 r_fl: 1.5f r_fl: inf r_fl: -inf r_fl: infinity r_fl: -Infinity\n"
        "r_fl: nan r_fl: -nan r_fl: NaN r_fl: 1e+10 r_fl: .5 r_fl: 1. r_fl: 3.4028235e+38\n"
        "r_fl: -0 r_fl: 1E5 r_fl: 2F r_fl: 1e400 r_fl: 1e-50 r_fl: -INF r_fl: 3.4028236e38\n"
        "r_db: 0.1 r_db: -0.0 r_db: 1.7976931348623157e308 r_db: 4.9e-324 r_db: 5 r_db: -1e-7\n"
        "r_db: 18446744073709551616 r_db: 0.000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000000001");
    assert_true(m->fl == 1.0f);
    assert_true(m->db == 1.5);
    assert_int_equal(m->n_r_fl, 20);
    const float *f = m->r_fl;
    assert_true(f[0] == -2e-05f);
    assert_true(f[1] == 1.5f);
    assert_true(isinf(f[2]) && f[2] > 0);
    assert_true(isinf(f[3]) && f[3] < 0);
    assert_true(isinf(f[4]) && f[4] > 0);
    assert_true(isinf(f[5]) && f[5] < 0);
    assert_true(isnan(f[6]) && !signbit(f[6]));
    assert_true(isnan(f[7]) && signbit(f[7]));
    assert_true(isnan(f[8]));
    assert_true(f[9] == 1e10f);
    assert_true(f[10] == 0.5f);
    assert_true(f[11] == 1.0f);
    assert_true(f[12] == FLT_MAX);       /* rounds to nearest, not to inf */
    assert_int_equal(f2u(f[13]), 0x80000000u);
    assert_true(f[14] == 1e5f);
    assert_true(f[15] == 2.0f);
    assert_true(isinf(f[16]));
    assert_int_equal(f2u(f[17]), 0);
    assert_true(isinf(f[18]) && f[18] < 0);
    assert_true(isinf(f[19]));           /* beyond FLT_MAX + half an ulp */
    assert_int_equal(m->n_r_db, 8);
    assert_true(m->r_db[0] == 0.1);
    assert_true(d2u(m->r_db[1]) == 0x8000000000000000ull);
    assert_true(m->r_db[2] == DBL_MAX);
    assert_true(m->r_db[3] == 4.9e-324);
    assert_true(m->r_db[4] == 5.0);
    assert_true(m->r_db[5] == -1e-7);
    assert_true(m->r_db[6] == 18446744073709551616.0);
    assert_true(m->r_db[7] == 1e-140);
    gn__arena_free(&a);

    const ProtobufCMessageDescriptor *d = &gntest__all__descriptor;
    expect_error(d, "fl: 0x10", "line 1:5: expected a decimal number for float field 'fl', got '0x10'");
    expect_error(d, "fl: abc", "line 1:5: expected number for float field 'fl', got 'abc'");
    expect_error(d, "db: 1e", "line 1:7: expected digits in the exponent");
    expect_error(d, "db: \"1\"", "line 1:5: expected number for double field 'db', got a string");
    expect_error(d, "db: 1.5.5", "line 1:8: need space between a number and what follows");
}

static void test_parse_bools_and_enums(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All *m = (Gntest__All *)parse_ok(
        &a, &gntest__all__descriptor,
        "b: True r_b: [true, True, t, 1, false, False, f, 0, 0x1]\n"
        "color: BLUE r_color: GREEN r_color: 2 r_color: 7 r_color: -3 r_color: [RED]");
    assert_int_equal(m->b, 1);
    assert_int_equal(m->n_r_b, 9);
    const int want_b[] = {1, 1, 1, 1, 0, 0, 0, 0, 1};
    for (int i = 0; i < 9; i++) assert_int_equal(m->r_b[i], want_b[i]);
    assert_int_equal(m->color, GNTEST__COLOR__BLUE);
    assert_int_equal(m->n_r_color, 5);
    const int want_c[] = {1, 2, 7, -3, 0};
    for (int i = 0; i < 5; i++) assert_int_equal((int)m->r_color[i], want_c[i]);
    gn__arena_free(&a);

    const ProtobufCMessageDescriptor *d = &gntest__all__descriptor;
    expect_error(d, "b: yes", "line 1:4: expected true or false for bool field 'b', got 'yes'");
    expect_error(d, "b: TRUE", "line 1:4: expected true or false for bool field 'b', got 'TRUE'");
    expect_error(d, "b: 2", "line 1:4: value 2 out of range for bool field 'b'");
    expect_error(d, "b: \"true\"", "line 1:4: expected true or false for bool field 'b', got a string");
    expect_error(d, "color: PURPLE", "line 1:8: unknown enum value 'PURPLE' for field 'color' (gntest.Color)");
    expect_error(d, "color: 2147483648", "line 1:8: value 2147483648 out of range for enum field 'color'");
    expect_error(d, "color: 1.5", "line 1:8: expected integer for enum field 'color', got '1.5'");
    expect_error(&tensorflow__attr_value__descriptor, "type: DT_FLAOT",
                 "line 1:7: unknown enum value 'DT_FLAOT' for field 'type' (tensorflow.DataType)");
}

static void test_parse_strings(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All *m = (Gntest__All *)parse_ok(
        &a, &gntest__all__descriptor,
        "str: \"a\\n\\t\\\\\\\"\\'\\a\\b\\f\\v\\r\\?\"\n"
        "by: 'x\\0y\\101\\x41\\x4a\\377' \"\\u00e9\\U0001F600\"\n"
        "  # a comment between the pieces\n"
        "  'z\"'\n"
        "r_str: \"\\uD83D\\uDE00\" r_str: \"\" r_str: 'it''s' r_str: \"\\1234\"\n"
        "r_by: [\"\", '\\xff']");
    assert_string_equal(m->str, "a\n\t\\\"'\a\b\f\v\r?");
    static const uint8_t want_by[] = {'x', 0, 'y', 'A', 'A', 'J', 0xff, 0xc3, 0xa9,
                                      0xf0, 0x9f, 0x98, 0x80, 'z', '"'};
    assert_int_equal(m->by.len, sizeof want_by);
    assert_memory_equal(m->by.data, want_by, sizeof want_by);
    assert_int_equal(m->n_r_str, 4);
    assert_string_equal(m->r_str[0], "\xf0\x9f\x98\x80");
    assert_string_equal(m->r_str[1], "");
    assert_string_equal(m->r_str[2], "its");
    assert_string_equal(m->r_str[3], "S4");
    assert_int_equal(m->n_r_by, 2);
    assert_int_equal(m->r_by[0].len, 0);
    assert_int_equal(m->r_by[1].len, 1);
    assert_int_equal(m->r_by[1].data[0], 0xff);

    /* runs of octal escapes (TensorFlow's tensor_content), at and past three digits */
    char text[8 + 4 * 300 + 64];
    size_t n = (size_t)snprintf(text, sizeof text, "by: \"");
    for (int i = 0; i < 300; i++) n += (size_t)snprintf(text + n, sizeof text - n, "\\%03o", (unsigned)(i * 7) & 0xff);
    snprintf(text + n, sizeof text - n, "\\000\\001\\777\\0000\\12x\\1234\\7\"");
    m = (Gntest__All *)parse_ok(&a, &gntest__all__descriptor, text);
    assert_int_equal(m->by.len, 300 + 10);
    for (int i = 0; i < 300; i++) assert_int_equal(m->by.data[i], (i * 7) & 0xff);
    static const uint8_t want_tail[] = {0, 1, 0xff, 0, '0', 10, 'x', 'S', '4', 7};
    assert_memory_equal(m->by.data + 300, want_tail, sizeof want_tail);
    gn__arena_free(&a);

    const ProtobufCMessageDescriptor *d = &gntest__all__descriptor;
    expect_error(d, "str: \"abc", "line 1:6: unterminated string");
    expect_error(d, "i32: 1\nstr: 'abc\n'", "line 2:6: unterminated string");
    expect_error(d, "str: \"ab\\", "line 1:6: unterminated string");
    expect_error(d, "str: \"a\\qb\"", "line 1:8: invalid escape sequence '\\q' in string");
    expect_error(d, "str: \"\\x\"", "line 1:7: expected hex digits after '\\x'");
    expect_error(d, "str: \"\\u12\"", "line 1:7: expected 4 hex digits after '\\u'");
    expect_error(d, "str: \"\\U00110000\"", "line 1:7: code point out of range in '\\U'");
    expect_error(d, "str: \"a\\000b\"",
                 "line 1:6: string field 'str' contains a NUL byte, which protobuf-c strings "
                 "cannot hold");
    expect_error(d, "str: 5", "line 1:6: expected string for string field 'str', got '5'");
    expect_error(d, "by: x", "line 1:5: expected string for bytes field 'by', got 'x'");
}

/* ---- reader: structure ------------------------------------------------------------ */

static void test_parse_structure(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All *m = (Gntest__All *)parse_ok(
        &a, &gntest__all__descriptor,
        "# leading comment\n"
        "child { i32: 1 } ; child: { i64: 2 },\n"
        "r_child < str: \"a\" > r_child: < str: \"b\" >\n"
        "r_child [ { str: \"c\" }, < str: \"d\" > ] r_child: [] r_child [{}];\n"
        "r_i32: [1, 2, 3] r_i32: [] r_i32: 4;\n"
        "m { key: \"z\" value: 1 } m { key: \"a\" value: 2 } m <key: 'z'>\n"
        "o_str: \"x\" o_i64: 5\n"
        "r_str: 'a', r_str: 'b'; r_str: 'c'\t# trailing comment");
    assert_non_null(m->child);
    assert_int_equal(m->child->i32, 1);   /* a singular message given twice merges */
    assert_true(m->child->i64 == 2);
    assert_int_equal(m->n_r_child, 5);
    assert_string_equal(m->r_child[0]->str, "a");
    assert_string_equal(m->r_child[1]->str, "b");
    assert_string_equal(m->r_child[2]->str, "c");
    assert_string_equal(m->r_child[3]->str, "d");
    assert_ptr_equal(m->r_child[4]->str, protobuf_c_empty_string);
    assert_int_equal(m->n_r_i32, 4);
    assert_int_equal(m->r_i32[3], 4);
    assert_int_equal(m->n_m, 3);         /* map entries kept as given */
    assert_string_equal(m->m[0]->key, "z");
    assert_string_equal(m->m[1]->key, "a");
    assert_int_equal(m->m[1]->value, 2);
    assert_string_equal(m->m[2]->key, "z");
    assert_int_equal(m->choice_case, GNTEST__ALL__CHOICE_O_I64);   /* last oneof member wins */
    assert_true(m->o_i64 == 5);
    assert_int_equal(m->n_r_str, 3);
    assert_ptr_equal(m->str, protobuf_c_empty_string);   /* absent proto3 string */
    assert_null(m->by.data);

    /* many elements: arrays grow geometrically and keep every value */
    gn__buf b;
    gn__buf_init(&b);
    for (int i = 0; i < 5000; i++) gn__buf_printf(&b, "r_i32: %d r_child { i32: %d }\n", i, -i);
    Gntest__All *big = (Gntest__All *)parse_ok(&a, &gntest__all__descriptor, b.data);
    assert_int_equal(big->n_r_i32, 5000);
    assert_int_equal(big->n_r_child, 5000);
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(big->r_i32[i], i);
        assert_int_equal(big->r_child[i]->i32, -i);
    }
    gn__buf_free(&b);

    /* an empty text is an empty message */
    Gntest__All *e = (Gntest__All *)parse_ok(&a, &gntest__all__descriptor, "  # nothing\n");
    assert_int_equal(protobuf_c_message_get_packed_size(&e->base), 0);
    gn__arena_free(&a);
}

static void test_parse_oneof_and_proto2(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All *m = (Gntest__All *)parse_ok(&a, &gntest__all__descriptor,
                                             "o_msg { i32: 1 } o_msg { i64: 2 }");
    assert_int_equal(m->choice_case, GNTEST__ALL__CHOICE_O_MSG);
    assert_int_equal(m->o_msg->i32, 1);
    assert_true(m->o_msg->i64 == 2);
    /* an empty string or bytes oneof member is still set, and packed */
    m = (Gntest__All *)parse_ok(&a, &gntest__all__descriptor, "o_msg { i32: 1 } o_str: ''");
    assert_int_equal(m->choice_case, GNTEST__ALL__CHOICE_O_STR);
    assert_string_equal(m->o_str, "");
    assert_int_equal(protobuf_c_message_get_packed_size(&m->base), 3);
    Tensorflow__AttrValue *av =
        (Tensorflow__AttrValue *)parse_ok(&a, &tensorflow__attr_value__descriptor, "s: \"\"");
    assert_int_equal(av->value_case, TENSORFLOW__ATTR_VALUE__VALUE_S);
    assert_int_equal(protobuf_c_message_get_packed_size(&av->base), 2);

    /* proto2: has_ fields, defaults, required */
    Gntest__Legacy *l = (Gntest__Legacy *)parse_ok(&a, &gntest__legacy__descriptor, "id: 'x'");
    assert_string_equal(l->id, "x");
    assert_int_equal(l->has_n, 0);
    assert_int_equal(l->n, 7);
    assert_ptr_equal(l->s, gntest__legacy__s__default_value);
    char *p = print_str(&l->base);
    assert_text(p, "id: \"x\"\n");
    free(p);
    l = (Gntest__Legacy *)parse_ok(&a, &gntest__legacy__descriptor,
                                   "id: 'x' n: 7 s: 'dflt' raw: '' x: -0 r: [1, 2] sub { id: 'y' }");
    assert_int_equal(l->has_n, 1);
    assert_int_equal(l->has_raw, 1);
    assert_int_equal(l->has_x, 1);
    assert_true(l->s != gntest__legacy__s__default_value);
    p = print_str(&l->base);
    assert_text(p, "id: \"x\"\nn: 7\ns: \"dflt\"\nsub {\n  id: \"y\"\n}\nr: 1\nr: 2\nraw: \"\"\nx: -0\n");
    free(p);
    gn__arena_free(&a);

    expect_error(&gntest__legacy__descriptor, "n: 1", "line 1:5: missing required field 'id' in gntest.Legacy");
    expect_error(&gntest__legacy__descriptor, "id: 'a' sub { n: 1 }",
                 "line 1:20: missing required field 'id' in gntest.Legacy");
}

static void test_parse_syntax_errors(void **state)
{
    (void)state;
    const ProtobufCMessageDescriptor *g = &tensorflow__graph_def__descriptor;
    expect_error(g,
                 "node {\n  name: \"a\"\n  op: \"Const\"\n}\n\n# ten lines of preamble\n\n"
                 "versions {\n  producer: 27\n}\nnode {\n      nmae: \"b\"\n}\n",
                 "line 12:7: unknown field 'nmae' in tensorflow.NodeDef");
    expect_error(g, "node { name: 'a' ", "line 1:18: unexpected end of input: expected '}' to close tensorflow.NodeDef");
    expect_error(g, "node < name: 'a' }", "line 1:18: unexpected '}': expected '>' to close tensorflow.NodeDef");
    expect_error(g, "node { } }", "line 1:10: unexpected '}' at the top level");
    expect_error(g, "node: 'a'", "line 1:7: expected '{' or '<' to open message field 'node', got a string");
    expect_error(g, "versions { producer 5 }", "line 1:21: expected ':' after field 'producer', got '5'");
    expect_error(g, "[tensorflow.x] { }",
                 "line 1:1: extension and Any type names ('[...]') are not supported in tensorflow.GraphDef");
    expect_error(g, "versions: [ { } ]", "line 1:11: field 'versions' is not repeated: a list is not allowed");
    expect_error(g, "node [ { name: 'a' } { name: 'b' } ]",
                 "line 1:22: expected ',' or ']' in the list of field 'node', got '{'");
    expect_error(g, "node [ { name: 'a' }, name: 'b' ]",
                 "line 1:23: expected '{' or '<' to open message field 'node', got 'name'");
    expect_error(&gntest__all__descriptor, "r_i32: [1 2]",
                 "line 1:11: expected ',' or ']' in the list of field 'r_i32', got '2'");
    expect_error(&gntest__all__descriptor, "i32: [1]", "line 1:6: field 'i32' is not repeated: a list is not allowed");
    expect_error(&gntest__all__descriptor, "123: 4", "line 1:1: expected field name in gntest.All, got '123'");
    expect_error(&gntest__all__descriptor, "i32 { }", "line 1:5: expected ':' after field 'i32', got '{'");
    expect_error(&gntest__all__descriptor, "child: 1", "line 1:8: expected '{' or '<' to open message field 'child', got '1'");
    expect_error(&gntest__all__descriptor, "i32: 1 @", "line 1:8: expected field name in gntest.All, got '@'");
}

/* Hostile nesting: the reader must stop at 101 levels with an error, whatever
 * the input's depth, without using the C stack. */
static void test_parse_deep_nesting(void **state)
{
    (void)state;
    const char *unit = "attr { key: \"a\" value { func { ";
    size_t ul = strlen(unit), levels = 1000000;
    char *text = malloc(ul * levels + 1);
    assert_non_null(text);
    for (size_t i = 0; i < levels; i++) memcpy(text + ul * i, unit, ul);
    text[ul * levels] = '\0';
    /* NodeDef is level 0; unit k opens levels 3k+1..3k+3; level 101 is the
     * "value {" of unit 33 */
    char want[128];
    snprintf(want, sizeof want, "line 1:%zu: nesting deeper than 100",
             ul * 33 + (size_t)(strstr(unit, "value {") - unit) + 7);
    expect_error(&tensorflow__node_def__descriptor, text, want);
    free(text);

    /* exactly 100 levels parse and print; 101 do not */
    gn__buf b;
    gn__buf_init(&b);
    for (int i = 0; i < 100; i++) gn__buf_puts(&b, "child < ");
    gn__buf_puts(&b, "i32: 1");
    for (int i = 0; i < 100; i++) gn__buf_puts(&b, ">");
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCMessage *m = parse_ok(&a, &gntest__all__descriptor, b.data);
    char *p = print_str(m);
    assert_int_equal(strlen(p), 21007);
    free(p);
    b.len = 0;
    for (int i = 0; i < 101; i++) gn__buf_puts(&b, "child { ");
    expect_error(&gntest__all__descriptor, b.data, "line 1:807: nesting deeper than 100");

    /* a message 101 deep built by hand does not print */
    Gntest__All *deep = gn__arena_alloc(&a, sizeof *deep * 102, 16);
    for (int i = 0; i < 102; i++) {
        gntest__all__init(&deep[i]);
        if (i) deep[i - 1].child = &deep[i];
    }
    gn__err e;
    gn__err_clear(&e);
    b.len = 0;
    assert_int_equal(gn__text_print(&deep[0].base, &b, &e), GN_ERR_PARSE);
    assert_string_equal(e.msg, "text print: nesting deeper than 100 in field 'child' of gntest.All");
    deep[100].child = NULL;
    b.len = 0;
    assert_int_equal(gn__text_print(&deep[0].base, &b, &e), GN_OK);
    gn__buf_free(&b);
    gn__arena_free(&a);
}

/* Random edits of a valid text never crash the reader; failures say where. */
static void test_parse_mutations(void **state)
{
    (void)state;
    const char *base =
        "node { name: \"a\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
        "tensor_shape { dim { size: 2 } } float_val: [1.5, -2e-05] string_val: \"\\001x\" } } } "
        "attr { key: \"l\" value { list { i: [1, 2] type: DT_INT32 } } } }\n"
        "node < name: 'b' input: 'a:0' device: \"/cpu:0\" > versions { producer: 12 }\n";
    size_t n = strlen(base);
    char *buf = malloc(n + 8);
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    ProtobufCAllocator heap = {heap_alloc, heap_free, NULL};
    int ok = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(buf, base, n);
        size_t len = n;
        for (int k = 0; k < 1 + it % 3; k++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t pos = (size_t)(rng % len);
            switch ((rng >> 32) % 4) {
            case 0: buf[pos] = (char)(rng >> 40); break;
            case 1: len = pos; break;
            case 2: memmove(buf + pos, buf + pos + 1, len - pos - 1); len--; break;
            default: buf[pos] = "{}<>[]:;,\"'\\#-.0x"[(rng >> 40) % 17]; break;
            }
            if (len == 0) break;
        }
        ProtobufCMessage *m = NULL;
        gn__err e;
        gn_status s = parse_with(&tensorflow__graph_def__descriptor, buf, len, &heap, &m, &e);
        if (s == GN_OK) {
            ok++;
            size_t pn;
            free(pack(m, &pn));
            protobuf_c_message_free_unpacked(m, &heap);
        } else {
            assert_int_equal(s, GN_ERR_PARSE);
            assert_memory_equal(e.msg, "line ", 5);
        }
    }
    assert_true(ok > 0);
    free(buf);
}

/* ---- printer ------------------------------------------------------------------------ */

static void test_print_all_types(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCMessage *m = parse_ok(
        &a, &gntest__all__descriptor,
        "r_sf32: -3 r_u64: 2 r_f64: 1 r_s64: -1 r_by: \"\" r_color: [RED, 5] r_b: [true, false]\n"
        "i32: -5 i64: 1099511627776 u32: 4000000000 u64: 18446744073709551615 s32: -7 s64: -8\n"
        "f32: 9 f64: 10 sf32: -11 sf64: -12\n"
        "fl: 0.1 db: 0.1 b: true color: BLUE str: \"line\\n\\\"q\\\" 'a' \\\\ \\001 \xc3\xa9\\t\\r\\177\"\n"
        "by: \"\\000\\377\"\n"
        "child { i32: 1 child { } }\n"
        "r_i32: [3, 1, 2]\n"
        "r_fl: [1, 0.333333343, 1e-05, -0, inf, -inf, nan, 3.40282347e+38, 1.17549435e-38, "
        "16777216, 0.3, 1e+10, 123456, 1234567, 100]\n"
        "r_str: [\"\", \"x\"] r_child { } r_child { str: \"y\" }\n"
        "m { key: \"b\" value: 1 } m { key: \"a\" }\n"
        "o_msg { b: true }\n"
        "r_db: [0.1, 0.3333333333333333, 1e+100, -0, 123456789012345680, 5e-324, 1e15, 1e16]\n");
    char *p = print_str(m);
    assert_text(p,
                "i32: -5\n"
                "i64: 1099511627776\n"
                "u32: 4000000000\n"
                "u64: 18446744073709551615\n"
                "s32: -7\n"
                "s64: -8\n"
                "f32: 9\n"
                "f64: 10\n"
                "sf32: -11\n"
                "sf64: -12\n"
                "fl: 0.1\n"
                "db: 0.1\n"
                "b: true\n"
                "color: BLUE\n"
                "str: \"line\\n\\\"q\\\" \\'a\\' \\\\ \\001 \\303\\251\\t\\r\\177\"\n"
                "by: \"\\000\\377\"\n"
                "child {\n"
                "  i32: 1\n"
                "  child {\n"
                "  }\n"
                "}\n"
                "r_i32: 3\nr_i32: 1\nr_i32: 2\n"
                "r_fl: 1\nr_fl: 0.333333343\nr_fl: 1e-05\nr_fl: -0\nr_fl: inf\nr_fl: -inf\n"
                "r_fl: nan\nr_fl: 3.40282347e+38\nr_fl: 1.17549435e-38\nr_fl: 16777216\n"
                "r_fl: 0.3\nr_fl: 1e+10\nr_fl: 123456\nr_fl: 1234567\nr_fl: 100\n"
                "r_str: \"\"\nr_str: \"x\"\n"
                "r_child {\n}\n"
                "r_child {\n  str: \"y\"\n}\n"
                "m {\n  key: \"b\"\n  value: 1\n}\n"
                "m {\n  key: \"a\"\n}\n"
                "o_msg {\n  b: true\n}\n"
                "r_db: 0.1\nr_db: 0.33333333333333331\nr_db: 1e+100\nr_db: -0\n"
                "r_db: 1.2345678901234568e+17\nr_db: 4.94065645841247e-324\nr_db: 1e+15\n"
                "r_db: 1e+16\n"
                "r_b: true\nr_b: false\n"
                "r_color: RED\nr_color: 5\n"
                "r_by: \"\"\n"
                "r_s64: -1\n"
                "r_f64: 1\n"
                "r_u64: 2\n"
                "r_sf32: -3\n");
    free(p);

    /* proto3 scalars at their default are not printed (nor packed), -0.0 included */
    m = parse_ok(&a, &gntest__all__descriptor,
                 "i32: 0 fl: -0 db: 0 b: false color: RED str: '' by: '' u64: 0 child { }");
    p = print_str(m);
    assert_text(p, "child {\n}\n");
    free(p);
    size_t pn;
    uint8_t *pk = pack(m, &pn);
    assert_int_equal(pn, 3);   /* only the empty child: 8a 01 00 */
    free(pk);
    gn__arena_free(&a);
}

static void test_print_graphdef(void **state)
{
    (void)state;
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCMessage *m = parse_ok(
        &a, &tensorflow__graph_def__descriptor,
        "versions { producer: 1087 }\n"
        "node { name: 'conv1/weights' op: 'Const'\n"
        "  attr: { key: 'dtype' value: { type: DT_FLOAT } }\n"
        "  attr < key: 'value' value < tensor < dtype: DT_FLOAT tensor_shape { dim { size: 2 } }\n"
        "    float_val: [0.1, -2e-05] > > > }\n"
        "node { name: 'add' op: 'AddV2' input: ['conv1/weights', 'conv1/weights:0'];\n"
        "       device: '/device:CPU:0' attr { key: 'T' value { type: DT_FLOAT } } }\n");
    char *p = print_str(m);
    assert_text(p,
                "node {\n"
                "  name: \"conv1/weights\"\n"
                "  op: \"Const\"\n"
                "  attr {\n"
                "    key: \"dtype\"\n"
                "    value {\n"
                "      type: DT_FLOAT\n"
                "    }\n"
                "  }\n"
                "  attr {\n"
                "    key: \"value\"\n"
                "    value {\n"
                "      tensor {\n"
                "        dtype: DT_FLOAT\n"
                "        tensor_shape {\n"
                "          dim {\n"
                "            size: 2\n"
                "          }\n"
                "        }\n"
                "        float_val: 0.1\n"
                "        float_val: -2e-05\n"
                "      }\n"
                "    }\n"
                "  }\n"
                "}\n"
                "node {\n"
                "  name: \"add\"\n"
                "  op: \"AddV2\"\n"
                "  input: \"conv1/weights\"\n"
                "  input: \"conv1/weights:0\"\n"
                "  device: \"/device:CPU:0\"\n"
                "  attr {\n"
                "    key: \"T\"\n"
                "    value {\n"
                "      type: DT_FLOAT\n"
                "    }\n"
                "  }\n"
                "}\n"
                "versions {\n"
                "  producer: 1087\n"
                "}\n");
    /* the canonical text reads back to the same message */
    ProtobufCMessage *m2 = parse_ok(&a, &tensorflow__graph_def__descriptor, p);
    size_t n1, n2;
    uint8_t *b1 = pack(m, &n1), *b2 = pack(m2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    free(b1);
    free(b2);
    free(p);
    gn__arena_free(&a);
}

/* Every float and double prints to text that reads back to the same bits
 * (NaN aside, which prints as nan). */
static void test_float_roundtrip_bits(void **state)
{
    (void)state;
    enum { N = 100000 };
    gn__arena a;
    gn__arena_init(&a, 0);
    Gntest__All m;
    gntest__all__init(&m);
    float *fv = gn__arena_alloc(&a, sizeof(float) * N, 16);
    double *dv = gn__arena_alloc(&a, sizeof(double) * N, 16);
    uint64_t rng = 88172645463325252ull;
    size_t nf = 0, nd = 0;
    static const float fspecial[] = {0.0f, -0.0f, FLT_MIN, -FLT_MAX, FLT_MAX, 1e-45f, 0.1f,
                                     1.0f / 3, 16777217.0f, 3e-39f};
    static const double dspecial[] = {0.0, -0.0, DBL_MIN, DBL_MAX, -DBL_MAX, 5e-324, 0.1,
                                      1.0 / 3, 9007199254740993.0, 2.2250738585072009e-308};
    for (size_t i = 0; i < GN__ARRAY_LEN(fspecial); i++) fv[nf++] = fspecial[i];
    for (size_t i = 0; i < GN__ARRAY_LEN(dspecial); i++) dv[nd++] = dspecial[i];
    while (nf < N || nd < N) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        uint32_t u = (uint32_t)rng;
        float f;
        memcpy(&f, &u, 4);
        if (nf < N && !isnan(f)) fv[nf++] = f;
        double d;
        memcpy(&d, &rng, 8);
        if (nd < N && !isnan(d)) dv[nd++] = d;
    }
    m.n_r_fl = nf;
    m.r_fl = fv;
    m.n_r_db = nd;
    m.r_db = dv;
    char *p = print_str(&m.base);
    Gntest__All *r = (Gntest__All *)parse_ok(&a, &gntest__all__descriptor, p);
    assert_int_equal(r->n_r_fl, nf);
    assert_int_equal(r->n_r_db, nd);
    for (size_t i = 0; i < nf; i++)
        if (f2u(r->r_fl[i]) != f2u(fv[i])) fail_msg("float %.9g read back as %.9g", fv[i], r->r_fl[i]);
    for (size_t i = 0; i < nd; i++)
        if (d2u(r->r_db[i]) != d2u(dv[i])) fail_msg("double %.17g read back as %.17g", dv[i], r->r_db[i]);
    free(p);
    gn__arena_free(&a);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gn__err e;
    ProtobufCMessage *m = NULL;
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCAllocator pa;
    gn__arena_pb_allocator(&a, &pa);
    assert_int_equal(gn__text_parse(NULL, "", 0, &pa, &m, &e), GN_ERR_ARG);
    assert_int_equal(gn__text_parse(&gntest__all__descriptor, NULL, 3, &pa, &m, &e), GN_ERR_ARG);
    assert_int_equal(gn__text_parse(&gntest__all__descriptor, NULL, 0, &pa, &m, &e), GN_OK);
    assert_non_null(m);
    assert_int_equal(gn__text_print(NULL, NULL, &e), GN_ERR_ARG);
    gn__arena_free(&a);
}

/* ---- the corpus --------------------------------------------------------------------- */

typedef void (*file_fn)(const char *path, const char *name, void *ctx);

static void walk(const char *dir, file_fn fn, void *ctx)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    char **names = NULL;
    size_t n = 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        names = realloc(names, sizeof *names * (n + 1));
        names[n++] = strdup(de->d_name);
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {   /* sorted for a stable order */
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    }
    for (size_t i = 0; i < n; i++) {
        size_t pl = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(pl);
        assert_non_null(path);
        memcpy(path, dir, strlen(dir));
        path[strlen(dir)] = '/';
        memcpy(path + strlen(dir) + 1, names[i], strlen(names[i]) + 1);
        struct stat st;
        if (stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) walk(path, fn, ctx);
            else if (S_ISREG(st.st_mode)) fn(path, names[i], ctx);
        }
        free(path);
        free(names[i]);
    }
    free(names);
}

static bool ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct corpus_stats {
    int files, skipped;
} corpus_stats;

/* parse -> pack -> unpack -> print -> parse -> pack: same bytes; and the two
 * prints agree. */
static void text_file(const char *path, const char *name, void *ctx)
{
    corpus_stats *cs = ctx;
    if (!ends_with(name, ".pbtxt")) {
        if (strstr(name, ".pbtxt")) {
            print_message("  skipped %s (compressed; gzip is read elsewhere)\n", path);
            cs->skipped++;
        }
        return;
    }
    const ProtobufCMessageDescriptor *d = strcmp(name, "saved_model.pbtxt") == 0
                                              ? &tensorflow__saved_model__descriptor
                                              : &tensorflow__graph_def__descriptor;
    size_t len;
    unsigned char *text = gn_test_slurp(path, &len);
    assert_non_null(text);
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCAllocator pa;
    gn__arena_pb_allocator(&a, &pa);
    ProtobufCMessage *m1 = NULL;
    gn__err e;
    gn__err_clear(&e);
    gn_status s = gn__text_parse(d, (const char *)text, len, &pa, &m1, &e);
    if (s != GN_OK) fail_msg("%s: %s", path, e.msg);
    size_t na, nb;
    uint8_t *A = pack(m1, &na);
    assert_int_equal(gn__wire_check(d, A, na, 100, &e), GN_OK);
    ProtobufCMessage *u = protobuf_c_message_unpack(d, &pa, na, A);
    assert_non_null(u);
    char *p1 = print_str(u);
    char *p0 = print_str(m1);
    assert_text(p0, p1);
    ProtobufCMessage *m2 = parse_ok(&a, d, p1);
    uint8_t *B = pack(m2, &nb);
    if (na != nb || memcmp(A, B, na) != 0) fail_msg("%s: bytes differ after print and parse", path);
    char *p2 = print_str(m2);
    assert_text(p2, p1);
    print_message("  %s: %zu bytes of text, %zu packed, printed %zu\n", name, len, na, strlen(p1));
    cs->files++;
    free(A);
    free(B);
    free(p0);
    free(p1);
    free(p2);
    free(text);
    gn__arena_free(&a);
}

static void test_corpus_text_roundtrip(void **state)
{
    (void)state;
    char dir[1024];
    if (!gn_test_corpus("", dir, sizeof dir)) {
        print_message("corpus %s absent: skipped\n", GN_CORPUS_DIR);
        skip();
    }
    corpus_stats cs = {0, 0};
    walk(GN_CORPUS_DIR, text_file, &cs);
    print_message("%d text files round-tripped, %d skipped\n", cs.files, cs.skipped);
    assert_true(cs.files > 0);
}

/* wirecheck -> unpack -> print -> parse -> pack: the bytes of packing the
 * unpacked message. */
static void binary_file(const char *path, const char *name, void *ctx)
{
    corpus_stats *cs = ctx;
    if (!ends_with(name, ".pb")) return;
    const ProtobufCMessageDescriptor *d;
    if (strcmp(name, "saved_model.pb") == 0) d = &tensorflow__saved_model__descriptor;
    else if (strcmp(name, "fingerprint.pb") == 0) d = &tensorflow__fingerprint_def__descriptor;
    else if (strcmp(name, "keras_metadata.pb") == 0 || strcmp(name, "tfhub_module.pb") == 0) {
        print_message("  skipped %s (not a TensorFlow core message)\n", path);
        cs->skipped++;
        return;
    } else d = &tensorflow__graph_def__descriptor;
    size_t len;
    unsigned char *bin = gn_test_slurp(path, &len);
    assert_non_null(bin);
    gn__err e;
    gn__err_clear(&e);
    if (gn__wire_check(d, bin, len, 100, &e) != GN_OK) fail_msg("%s: %s", path, e.msg);
    gn__arena a;
    gn__arena_init(&a, 0);
    ProtobufCAllocator pa;
    gn__arena_pb_allocator(&a, &pa);
    ProtobufCMessage *u = protobuf_c_message_unpack(d, &pa, len, bin);
    assert_non_null(u);
    size_t na, nb;
    uint8_t *A = pack(u, &na);
    double t0 = now_ms();
    char *p = print_str(u);
    double t1 = now_ms();
    ProtobufCMessage *m = parse_ok(&a, d, p);
    double t2 = now_ms();
    uint8_t *B = pack(m, &nb);
    if (na != nb || memcmp(A, B, na) != 0) fail_msg("%s: bytes differ after print and parse", path);
    print_message("  %s: %zu bytes%s, text %zu bytes, print %.1f ms, parse %.1f ms\n", name, len,
                  na == len && memcmp(A, bin, len) == 0 ? " (repacks identically)" : "", strlen(p),
                  t1 - t0, t2 - t1);
    cs->files++;
    free(A);
    free(B);
    free(p);
    free(bin);
    gn__arena_free(&a);
}

static void test_corpus_binary_roundtrip(void **state)
{
    (void)state;
    char dir[1024];
    if (!gn_test_corpus("", dir, sizeof dir)) {
        print_message("corpus %s absent: skipped\n", GN_CORPUS_DIR);
        skip();
    }
    corpus_stats cs = {0, 0};
    walk(GN_CORPUS_DIR, binary_file, &cs);
    print_message("%d binary files round-tripped, %d skipped\n", cs.files, cs.skipped);
    assert_true(cs.files > 0);
}

/* Timing of the largest text GraphDef, and linear growth with size. */
static void test_parse_speed(void **state)
{
    (void)state;
    char path[1024];
    if (!gn_test_corpus("tensorflow__tfx/tfx__components__testdata__trainer__current__Format-Serving__graph.pbtxt",
                        path, sizeof path)) {
        print_message("tfx graph.pbtxt absent: skipped\n");
        skip();
    }
    size_t len;
    unsigned char *text = gn_test_slurp(path, &len);
    assert_non_null(text);
    enum { K = 8 };
    char *big = malloc(len * K);
    for (int i = 0; i < K; i++) memcpy(big + len * (size_t)i, text, len);
    double best1 = 1e9, bestk = 1e9, bestp = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        gn__arena a;
        gn__arena_init(&a, 1 << 20);
        ProtobufCAllocator pa;
        gn__arena_pb_allocator(&a, &pa);
        ProtobufCMessage *m = NULL;
        gn__err e;
        double t0 = now_ms();
        assert_int_equal(gn__text_parse(&tensorflow__graph_def__descriptor, (const char *)text, len,
                                        &pa, &m, &e),
                         GN_OK);
        double t1 = now_ms();
        gn__buf b;
        gn__buf_init(&b);
        assert_int_equal(gn__text_print(m, &b, &e), GN_OK);
        double t2 = now_ms();
        assert_int_equal(gn__text_parse(&tensorflow__graph_def__descriptor, big, len * K, &pa, &m, &e),
                         GN_OK);
        double t3 = now_ms();
        gn__buf_free(&b);
        gn__arena_free(&a);
        if (t1 - t0 < best1) best1 = t1 - t0;
        if (t2 - t1 < bestp) bestp = t2 - t1;
        if (t3 - t2 < bestk) bestk = t3 - t2;
    }
    print_message("tfx graph.pbtxt, %.2f MiB: parse %.1f ms (%.0f MiB/s), print %.1f ms; "
                  "%d copies (%.1f MiB): parse %.1f ms\n",
                  len / 1048576.0, best1, len / 1048576.0 / (best1 / 1e3), bestp, K,
                  len * K / 1048576.0, bestk);
    free(big);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_integers),
        cmocka_unit_test(test_parse_integer_errors),
        cmocka_unit_test(test_parse_floats),
        cmocka_unit_test(test_parse_bools_and_enums),
        cmocka_unit_test(test_parse_strings),
        cmocka_unit_test(test_parse_structure),
        cmocka_unit_test(test_parse_oneof_and_proto2),
        cmocka_unit_test(test_parse_syntax_errors),
        cmocka_unit_test(test_parse_deep_nesting),
        cmocka_unit_test(test_parse_mutations),
        cmocka_unit_test(test_print_all_types),
        cmocka_unit_test(test_print_graphdef),
        cmocka_unit_test(test_float_roundtrip_bits),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_corpus_text_roundtrip),
        cmocka_unit_test(test_corpus_binary_roundtrip),
        cmocka_unit_test(test_parse_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
