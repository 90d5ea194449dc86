/* Typed attr values and setters (graph/ir.h): the one place that builds an
 * AttrValue message for a rewrite, so passes say what they set, not how the
 * protobuf is laid out. Everything lives in the graph's own value blob. */
#include <string.h>

#include "graph/ir.h"

Tensorflow__AttrValue *gn__attr_new(gn_graph *g, Tensorflow__AttrValue__ValueCase kind)
{
    Tensorflow__AttrValue *v = gn__graph_value_alloc(g, sizeof *v);
    if (!v) return NULL;
    tensorflow__attr_value__init(v);
    v->value_case = kind;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_int(gn_graph *g, int64_t i)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_I);
    if (v) v->i = i;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_float(gn_graph *g, float f)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_F);
    if (v) v->f = f;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_bool(gn_graph *g, bool b)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_B);
    if (v) v->b = b;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_type(gn_graph *g, int32_t dtype)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_TYPE);
    if (v) v->type = (Tensorflow__DataType)dtype;
    return v;
}

static uint8_t *copy_bytes(gn_graph *g, const char *s, size_t n)
{
    uint8_t *d = gn__graph_value_alloc(g, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

Tensorflow__AttrValue *gn__attr_new_string(gn_graph *g, const char *s, size_t n)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_S);
    uint8_t *d = copy_bytes(g, s, n);
    if (!v || !d) return NULL;
    v->s.data = d;
    v->s.len = n;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_tensor(gn_graph *g, Tensorflow__TensorProto *t)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
    if (v) v->tensor = t;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_func(gn_graph *g, Tensorflow__NameAttrList *f)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_FUNC);
    if (v) v->func = f;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_func_named(gn_graph *g, const char *name)
{
    Tensorflow__NameAttrList *f = gn__graph_value_alloc(g, sizeof *f);
    uint8_t *c = copy_bytes(g, name, strlen(name));
    if (!f || !c) return NULL;
    tensorflow__name_attr_list__init(f);
    f->name = (char *)c;
    return gn__attr_new_func(g, f);
}

Tensorflow__TensorShapeProto *gn__shape_proto_new(gn_graph *g, int32_t rank, const int64_t *dims)
{
    Tensorflow__TensorShapeProto *p = gn__graph_value_alloc(g, sizeof *p);
    Tensorflow__TensorShapeProto__Dim **dv = gn__graph_value_alloc(g, (size_t)(rank > 0 ? rank : 1) * sizeof *dv);
    if (!p || !dv) return NULL;
    tensorflow__tensor_shape_proto__init(p);
    if (rank < 0) {
        p->unknown_rank = 1;
        return p;
    }
    for (int32_t k = 0; k < rank; k++) {
        dv[k] = gn__graph_value_alloc(g, sizeof **dv);
        if (!dv[k]) return NULL;
        tensorflow__tensor_shape_proto__dim__init(dv[k]);
        dv[k]->size = dims[k];
    }
    p->n_dim = (size_t)rank;
    p->dim = dv;
    return p;
}

Tensorflow__AttrValue *gn__attr_new_shape(gn_graph *g, int32_t rank, const int64_t *dims)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_SHAPE);
    if (!v || !(v->shape = gn__shape_proto_new(g, rank, dims))) return NULL;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_list(gn_graph *g)
{
    Tensorflow__AttrValue *v = gn__attr_new(g, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
    Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
    if (!v || !l) return NULL;
    tensorflow__attr_value__list_value__init(l);
    v->list = l;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_ints(gn_graph *g, const int64_t *x, size_t n)
{
    Tensorflow__AttrValue *v = gn__attr_new_list(g);
    int64_t *d = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *d);
    if (!v || !d) return NULL;
    if (n) memcpy(d, x, n * sizeof *d);
    v->list->n_i = n;
    v->list->i = d;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_types(gn_graph *g, const int32_t *t, size_t n)
{
    Tensorflow__AttrValue *v = gn__attr_new_list(g);
    Tensorflow__DataType *d = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *d);
    if (!v || !d) return NULL;
    for (size_t i = 0; i < n; i++) d[i] = (Tensorflow__DataType)t[i];
    v->list->n_type = n;
    v->list->type = d;
    return v;
}

Tensorflow__AttrValue *gn__attr_new_strings(gn_graph *g, const char *const *s, size_t n)
{
    Tensorflow__AttrValue *v = gn__attr_new_list(g);
    ProtobufCBinaryData *items = gn__graph_value_alloc(g, (n ? n : 1) * sizeof *items);
    if (!v || !items) return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(s[i]);
        if (!(items[i].data = copy_bytes(g, s[i], len))) return NULL;
        items[i].len = len;
    }
    v->list->n_s = n;
    v->list->s = items;
    return v;
}

/* ---- setters ---- */
static gn_status set(gn_graph *g, gn_id id, const char *key, const Tensorflow__AttrValue *v)
{
    if (!v) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    return gn__node_set_attr(g, id, key, v);
}

gn_status gn__node_set_attr_int(gn_graph *g, gn_id id, const char *key, int64_t i)
{
    return set(g, id, key, gn__attr_new_int(g, i));
}

gn_status gn__node_set_attr_float(gn_graph *g, gn_id id, const char *key, float f)
{
    return set(g, id, key, gn__attr_new_float(g, f));
}

gn_status gn__node_set_attr_bool(gn_graph *g, gn_id id, const char *key, bool b)
{
    return set(g, id, key, gn__attr_new_bool(g, b));
}

gn_status gn__node_set_attr_type(gn_graph *g, gn_id id, const char *key, int32_t dtype)
{
    return set(g, id, key, gn__attr_new_type(g, dtype));
}

gn_status gn__node_set_attr_string(gn_graph *g, gn_id id, const char *key, const char *s)
{
    return set(g, id, key, gn__attr_new_string(g, s, strlen(s)));
}

gn_status gn__node_set_attr_tensor(gn_graph *g, gn_id id, const char *key, Tensorflow__TensorProto *t)
{
    return set(g, id, key, gn__attr_new_tensor(g, t));
}

gn_status gn__node_set_attr_func(gn_graph *g, gn_id id, const char *key, Tensorflow__NameAttrList *f)
{
    return set(g, id, key, gn__attr_new_func(g, f));
}

gn_status gn__node_set_attr_shape(gn_graph *g, gn_id id, const char *key, int32_t rank, const int64_t *dims)
{
    return set(g, id, key, gn__attr_new_shape(g, rank, dims));
}

gn_status gn__node_set_attr_ints(gn_graph *g, gn_id id, const char *key, const int64_t *v, size_t n)
{
    return set(g, id, key, gn__attr_new_ints(g, v, n));
}

gn_status gn__node_set_attr_types(gn_graph *g, gn_id id, const char *key, const int32_t *t, size_t n)
{
    return set(g, id, key, gn__attr_new_types(g, t, n));
}

gn_status gn__node_set_attr_strings(gn_graph *g, gn_id id, const char *key, const char *const *s, size_t n)
{
    return set(g, id, key, gn__attr_new_strings(g, s, n));
}
