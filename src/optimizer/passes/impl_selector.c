/* Implementation selector (Grappler's implementation_selector with
 * function_api_info, docs/reference_grappler.md §3.2).
 *
 * Library functions carrying the attr `api_implements` (an interface name)
 * and optionally `api_preferred_device` ("CPU", "GPU") are interchangeable
 * implementations of that interface when they have the same function type
 * (FORWARD: attr `backward_function_name`; BACKWARD: attr
 * `forward_function_name`; INFERENCE otherwise) and the same signature (input
 * and output arg types). For every node whose func attr `f` (PartitionedCall,
 * StatefulPartitionedCall, ...) or whose op names such a function, the
 * implementation whose preferred device is the node's device type ("GPU" when
 * gn__pass_on_gpu, else "CPU") is swapped in: the `f` attr's name, or the op,
 * is rewritten (implementation_selector.swap). A call with no implementation
 * for its device keeps its function and the report says so.
 * Left out: BACKWARD functions whose input count differs between
 * implementations (TensorFlow adds or drops forward-state inputs; here they
 * must match), and the DeviceIndex-to-Const rewrite for Case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opdef/registry.h"
#include "optimizer/pass.h"

const gn__pattern gn__patterns_impl_selector[] = {
    {"implementation_selector.swap", "call the implementation of an api_implements interface preferred on the node's device"},
    {NULL, NULL},
};

typedef struct api_info {
    const char *name;
    const char *iface;   /* NULL: no api_implements */
    const char *device;  /* "" when none */
    int type;            /* 0 inference, 1 forward, 2 backward */
    const Tensorflow__OpDef *sig;
} api_info;

static const Tensorflow__AttrValue *fdef_attr(const Tensorflow__FunctionDef *d, const char *key)
{
    if (!d) return NULL;
    for (size_t i = 0; i < d->n_attr; i++)
        if (d->attr[i] && strcmp(d->attr[i]->key, key) == 0) return d->attr[i]->value;
    return NULL;
}

static const char *attr_str(const Tensorflow__AttrValue *v, char *buf, size_t len)
{
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_S) return NULL;
    size_t n = v->s.len < len - 1 ? v->s.len : len - 1;
    memcpy(buf, v->s.data, n);
    buf[n] = 0;
    return buf;
}

static bool same_args(Tensorflow__OpDef__ArgDef **a, size_t na, Tensorflow__OpDef__ArgDef **b, size_t nb)
{
    if (na != nb) return false;
    for (size_t i = 0; i < na; i++) {
        if (a[i]->type != b[i]->type) return false;
        if (strcmp(a[i]->type_attr, b[i]->type_attr) != 0 || strcmp(a[i]->number_attr, b[i]->number_attr) != 0 ||
            strcmp(a[i]->type_list_attr, b[i]->type_list_attr) != 0)
            return false;
    }
    return true;
}

static bool same_signature(const Tensorflow__OpDef *a, const Tensorflow__OpDef *b)
{
    return a && b && same_args(a->input_arg, a->n_input_arg, b->input_arg, b->n_input_arg) &&
           same_args(a->output_arg, a->n_output_arg, b->output_arg, b->n_output_arg);
}

/* Device type upper-case comparison ("gpu" == "GPU"). */
static bool same_device(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'a' && *a <= 'z' ? (char)(*a - 32) : *a;
        char y = *b >= 'a' && *b <= 'z' ? (char)(*b - 32) : *b;
        if (x != y) return false;
    }
    return *a == *b;
}

/* Builds the API table of the library (strings interned in g so they outlive the call). */
static gn_status build_table(gn__pass_ctx *c, gn_graph *g, const gn_graph *lib, api_info **out, uint32_t *n_out)
{
    api_info *t = calloc((size_t)lib->n_fns + 1, sizeof *t);
    if (!t) return gn__fail(c->err, GN_ERR_NOMEM, "implementation_selector: out of memory");
    uint32_t n = 0;
    char buf[512];
    for (uint32_t i = 0; i < lib->n_fns; i++) {
        const gn__function *f = &lib->fns[i];
        const char *iface = attr_str(fdef_attr(f->def, "api_implements"), buf, sizeof buf);
        if (!iface || !iface[0]) continue;
        api_info *a = &t[n++];
        a->name = gn__str(lib, f->name);
        uint32_t id = gn__intern_cstr(g, iface);
        if (id == UINT32_MAX) goto nomem;
        a->iface = gn__str(g, id);
        const char *dev = attr_str(fdef_attr(f->def, "api_preferred_device"), buf, sizeof buf);
        id = gn__intern_cstr(g, dev ? dev : "");
        if (id == UINT32_MAX) goto nomem;
        a->device = gn__str(g, id);
        a->type = fdef_attr(f->def, "backward_function_name")  ? 1
                  : fdef_attr(f->def, "forward_function_name") ? 2
                                                                : 0;
        a->sig = f->def ? f->def->signature : NULL;
    }
    *out = t;
    *n_out = n;
    return GN_OK;
nomem:
    free(t);
    return gn__fail(c->err, GN_ERR_NOMEM, "implementation_selector: out of memory");
}

static const api_info *find_info(const api_info *t, uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

static gn_status set_func_name(gn_graph *g, gn_id id, const char *key, const Tensorflow__AttrValue *old,
                               const char *name)
{
    Tensorflow__NameAttrList *f = gn__graph_value_alloc(g, sizeof *f);
    size_t len = strlen(name);
    char *s = gn__graph_value_alloc(g, len + 1);
    if (!f || !s) return GN_ERR_NOMEM;
    memcpy(s, name, len + 1);
    tensorflow__name_attr_list__init(f);
    f->name = s;
    f->n_attr = old->func->n_attr;  /* the attr entries are shared (immutable) */
    f->attr = old->func->attr;
    return gn__node_set_attr_func(g, id, key, f);
}

gn_status gn__pass_impl_selector(gn__pass_ctx *c, gn_graph *g)
{
    if (!gn__pattern_enabled(c, "implementation_selector.swap")) return GN_OK;
    const gn_graph *lib = c->lib ? c->lib : g;
    if (!lib->n_fns) return GN_OK;
    api_info *t = NULL;
    uint32_t nt = 0;
    gn_status s = build_table(c, g, lib, &t, &nt);
    if (s != GN_OK || nt == 0) {
        free(t);
        return s;
    }
    uint32_t n = g->n_nodes;
    for (gn_id id = 0; id < n && s == GN_OK; id++) {
        if (!gn__node_live(g, id)) continue;
        const gn__node *nd = gn__node_at(g, id);
        /* the function called: attr f, or the op itself */
        const Tensorflow__AttrValue *fv = gn__node_attr(g, id, "f");
        const char *callee = NULL;
        if (fv && fv->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && fv->func)
            callee = fv->func->name;
        else if (nd->opdef < 0)
            callee = gn__node_op(g, id);
        if (!callee) continue;
        const api_info *cur = find_info(t, nt, callee);
        if (!cur) continue;
        const char *want = gn__pass_on_gpu(c, g, id) ? "GPU" : "CPU";
        if (same_device(cur->device, want)) continue;
        const api_info *pick = NULL;
        for (uint32_t i = 0; i < nt && !pick; i++)
            if (&t[i] != cur && strcmp(t[i].iface, cur->iface) == 0 && t[i].type == cur->type &&
                same_device(t[i].device, want))
                pick = &t[i];
        if (!pick) {
            gn__pass_refused(c, "implementation_selector.swap", g, id,
                             "'%s' keeps '%s': no implementation of '%s' prefers %s", gn__node_name(g, id), callee,
                             cur->iface, want);
            continue;
        }
        if (!same_signature(cur->sig, pick->sig)) {
            gn__pass_refused(c, "implementation_selector.swap", g, id,
                             "'%s' keeps '%s': '%s' (%s) has another signature", gn__node_name(g, id), callee,
                             pick->name, want);
            continue;
        }
        char from[512];
        snprintf(from, sizeof from, "%s", callee);
        if (fv && fv->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC)
            s = set_func_name(g, id, "f", fv, pick->name);
        else
            s = gn__node_set_op(g, id, pick->name);
        if (s != GN_OK) {
            s = gn__fail(c->err, s, "implementation_selector: %s", s == GN_ERR_NOMEM ? "out of memory" : g->err.msg);
            break;
        }
        c->changed = true;
        gn__pass_rewrote(c, "implementation_selector.swap", g, id, "'%s' calls '%s' (%s) instead of '%s' (%s)",
                         gn__node_name(g, id), pick->name, want, from, cur->device[0] ? cur->device : "no device");
    }
    free(t);
    return s;
}
