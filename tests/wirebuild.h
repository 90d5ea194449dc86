/* Building protobuf wire bytes by hand in tests (tests/wiregraph_test.c,
 * tests/wiretensor_test.c): a growable buffer, varints, length-delimited
 * fields, and a NodeDef attr entry. Test code only: allocation failure fails
 * the test. */
#ifndef GN_TESTS_WIREBUILD_H
#define GN_TESTS_WIREBUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct wb {
    uint8_t *p;
    size_t n, cap;
} wb;

static inline void wb_bytes(wb *w, const void *p, size_t n)
{
    if (n == 0) return;
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 64;
        w->p = realloc(w->p, w->cap);
        assert_non_null(w->p);
    }
    memcpy(w->p + w->n, p, n);
    w->n += n;
}

static inline void wb_varint(wb *w, uint64_t v)
{
    uint8_t b[10];
    size_t k = 0;
    while (v >= 0x80) {
        b[k++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b[k++] = (uint8_t)v;
    wb_bytes(w, b, k);
}

/* field `field`, wire type 2: length, then the bytes */
static inline void wb_ld(wb *w, uint32_t field, const void *p, size_t n)
{
    wb_varint(w, (uint64_t)field << 3 | 2);
    wb_varint(w, n);
    wb_bytes(w, p, n);
}

static inline void wb_str(wb *w, uint32_t field, const char *s) { wb_ld(w, field, s, strlen(s)); }
static inline void wb_msg(wb *w, uint32_t field, const wb *m) { wb_ld(w, field, m->p, m->n); }

/* NodeDef.attr entry (field 5): map entry {key, value: AttrValue val} */
static inline void wb_attr(wb *node, const char *key, const wb *val)
{
    wb e = {0};
    wb_str(&e, 1, key);
    wb_msg(&e, 2, val);
    wb_msg(node, 5, &e);
    free(e.p);
}

#endif
