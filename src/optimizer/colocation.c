/* Colocation attrs across rewrites (see colocation.h). */
#include "optimizer/colocation.h"

#include <stdlib.h>
#include <string.h>

/* The `_class` attr's value of id when it is a list of strings, else NULL. */
static const Tensorflow__AttrValue *class_attr(const gn_graph *g, gn_id id, uint32_t key)
{
    const gn__node *n = gn__node_at(g, id);
    for (uint32_t i = 0; i < n->n_attr; i++) {
        if (n->attr[i].key != key) continue;
        const Tensorflow__AttrValue *v = n->attr[i].value;
        if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list && v->list->n_s) return v;
        return NULL;
    }
    return NULL;
}

static bool is_loc(ProtobufCBinaryData s) { return s.len > 5 && !memcmp(s.data, "loc:@", 5); }

void gn__coloc_free(gn__coloc *c)
{
    free(c->r);
    memset(c, 0, sizeof *c);
}

gn_status gn__coloc_collect(const gn_graph *g, gn__coloc *c, gn__err *err)
{
    memset(c, 0, sizeof *c);
    uint32_t key = gn__intern_find(g, "_class", 6);
    if (key == UINT32_MAX) return GN_OK;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id)) continue;
        const Tensorflow__AttrValue *v = class_attr(g, id, key);
        if (!v) continue;
        const gn__node *h = gn__node_at(g, id);
        for (size_t k = 0; k < v->list->n_s; k++) {
            ProtobufCBinaryData s = v->list->s[k];
            if (!is_loc(s)) continue;
            gn_id t = gn__graph_find_n(g, (const char *)s.data + 5, s.len - 5);
            if (t == GN_NONE || t == id) continue;
            if (c->n == c->cap) {
                uint32_t nc = c->cap ? c->cap * 2 : 16;
                gn__coloc_rec *p = realloc(c->r, nc * sizeof *p);
                if (!p) goto nomem;
                c->r = p;
                c->cap = nc;
            }
            gn__coloc_rec *r = &c->r[c->n];
            memset(r, 0, sizeof *r);
            r->slot = -1;
            for (uint32_t i = 0; i < h->n_in && r->slot < 0; i++)
                if (h->in[i].node == t) r->slot = (int32_t)i;
            const gn__node *tn = gn__node_at(g, t);
            for (uint32_t i = 0; i < tn->n_use && !r->consumer; i++) {
                if (tn->use[i].node == id) continue;
                r->consumer = gn__node_name(g, tn->use[i].node);
                r->cslot = tn->use[i].slot;
            }
            r->holder = gn__node_name(g, id);
            r->target = (const char *)s.data + 5;
            r->target_len = s.len - 5;
            c->n++;
        }
    }
    return GN_OK;
nomem:
    gn__coloc_free(c);
    return gn__fail(err, GN_ERR_NOMEM, "out of memory");
}

/* The node that took target's place for record r, or GN_NONE. */
static gn_id successor(const gn_graph *g, const gn__coloc_rec *r, gn_id holder)
{
    const gn__node *h = gn__node_at(g, holder);
    if (r->slot >= 0 && (uint32_t)r->slot < h->n_in && h->in[r->slot].node != holder) return h->in[r->slot].node;
    gn_id c = r->consumer ? gn__graph_find(g, r->consumer) : GN_NONE;
    if (c != GN_NONE && r->cslot < gn__node_at(g, c)->n_in) {
        gn_id p = gn__node_at(g, c)->in[r->cslot].node;
        if (p != holder) return p;
    }
    return GN_NONE;
}

gn_status gn__coloc_fix(gn_graph *g, const gn__coloc *c, bool *changed, gn__err *err)
{
    *changed = false;
    uint32_t key = c->n ? gn__intern_find(g, "_class", 6) : UINT32_MAX;
    if (key == UINT32_MAX) return GN_OK;
    for (uint32_t i = 0; i < c->n; i++) {
        const gn__coloc_rec *r = &c->r[i];
        if (gn__graph_find_n(g, r->target, r->target_len) != GN_NONE) continue;
        gn_id h = gn__graph_find(g, r->holder);
        if (h == GN_NONE) continue;
        const Tensorflow__AttrValue *v = class_attr(g, h, key);
        if (!v) continue;
        gn_id y = successor(g, r, h);
        const char *yn = y != GN_NONE ? gn__node_name(g, y) : NULL;
        size_t tl = r->target_len, yl = yn ? strlen(yn) : 0;
        /* the new list: the entry rewritten (or dropped), no repeats */
        size_t ns = v->list->n_s;
        Tensorflow__AttrValue *nv = gn__attr_new_list(g);
        ProtobufCBinaryData *ss = gn__graph_value_alloc(g, ns * sizeof *ss);
        uint8_t *rep = yn ? gn__graph_value_alloc(g, yl + 6) : NULL;
        if (!nv || !ss || (yn && !rep)) return gn__fail(err, GN_ERR_NOMEM, "out of memory");
        if (rep) {
            memcpy(rep, "loc:@", 5);
            memcpy(rep + 5, yn, yl + 1);
        }
        size_t m = 0;
        for (size_t k = 0; k < ns; k++) {
            ProtobufCBinaryData s = v->list->s[k];
            if (is_loc(s) && s.len - 5 == tl && !memcmp(s.data + 5, r->target, tl)) {
                if (!rep) continue;
                s.data = rep;
                s.len = yl + 5;
            }
            bool dup = false;
            for (size_t j = 0; j < m && !dup; j++) dup = ss[j].len == s.len && !memcmp(ss[j].data, s.data, s.len);
            if (!dup) ss[m++] = s;
        }
        *changed = true;
        if (!m) {
            GN_TRY(gn__node_remove_attr(g, h, "_class"));
            continue;
        }
        nv->list->n_s = m;
        nv->list->s = ss;
        GN_TRY(gn__node_set_attr(g, h, "_class", nv));
    }
    return GN_OK;
}
