/* Freezing a SavedModel signature into a self-contained inference graph
 * (docs/reference_formats.md §B10; TensorFlow's convert_to_constants.py).
 *
 *  1. The signature's outputs (and inputs) must name tensors of the graph.
 *  2. Variable nodes are mapped to checkpoint keys on the loaded graph: TF2
 *     through the object graph (a call's captured inputs are its concrete
 *     function's bound_inputs, SavedObjectGraph node ids, which are also the
 *     ids of the checkpoint's TrackableObjectGraph, whose attributes carry the
 *     checkpoint key); TF1 through the restore ops (RestoreV2's tensor_names,
 *     output k assigned to a variable); else by name.
 *  3. On a clone: prune to what the outputs need (the inputs kept), inline
 *     every call, replace variables by Const nodes holding the checkpoint
 *     values and rewrite their readers (ReadVariableOp -> Identity,
 *     ResourceGather -> GatherV2, ResourceGatherNd -> GatherNd, VariableShape
 *     -> Shape, resource-typed pass-through ops get their dtype), prune
 *     again, compact, validate.
 *  4. Lookup tables (HashTableV2) the outputs need get their contents as
 *     constants: see "lookup tables" below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grapnel/savedmodel.h"
#include "io/bundle.h"
#include "io/savedmodel.h"
#include "ops/kernel.h"
#include "ops/lookup.h"
#include "opdef/registry.h"
#include "optimizer/inline.h"
#include "tensorflow/core/protobuf/trackable_object_graph.pb-c.h"

enum { DT_INT32 = 3, DT_STRING = 7, DT_BOOL = 10, DT_RESOURCE = 20 };

/* variable node name -> checkpoint key ("" when a sliced restore makes it unusable) */
typedef struct var_key {
    char *node;
    char *key;
    bool sliced;
} var_key;

typedef struct freezer {
    gn_graph *g;        /* the loaded graph (errors go here) */
    gn_graph *f;        /* the graph being frozen */
    const char *sig;
    var_key *map;
    size_t n_map, cap_map;
    gn__bundle *bundle;
    bool bundle_tried;
    gn_graph *cur;      /* the graph being converted: f, or a function body copied from f's library */
    struct fn_use *fu;  /* variables reaching While / If / Case nodes (see "functional ops") */
    size_t n_fu, cap_fu;
    uint32_t depth;     /* function bodies being converted, nested */
} freezer;

static gn_status oom(freezer *z)
{
    return gn__fail(&z->g->err, GN_ERR_NOMEM, "out of memory");
}

static const char *map_find(const freezer *z, const char *node, bool *sliced)
{
    for (size_t i = 0; i < z->n_map; i++)
        if (strcmp(z->map[i].node, node) == 0) {
            if (sliced) *sliced = z->map[i].sliced;
            return z->map[i].key;
        }
    return NULL;
}

static gn_status map_add(freezer *z, const char *node, const char *key, size_t key_len, bool sliced)
{
    if (map_find(z, node, NULL)) return GN_OK;   /* the first mapping wins */
    if (z->n_map == z->cap_map) {
        size_t cap = z->cap_map ? 2 * z->cap_map : 32;
        var_key *m = realloc(z->map, cap * sizeof *m);
        if (!m) return oom(z);
        z->map = m;
        z->cap_map = cap;
    }
    char *n = strdup(node), *k = malloc(key_len + 1);
    if (!n || !k) {
        free(n);
        free(k);
        return oom(z);
    }
    memcpy(k, key, key_len);
    k[key_len] = 0;
    z->map[z->n_map++] = (var_key){n, k, sliced};
    return GN_OK;
}

static gn_status need_bundle(freezer *z, const char *why_node)
{
    if (z->bundle) return GN_OK;
    if (!z->bundle_tried) {
        z->bundle_tried = true;
        GN_TRY(gn__savedmodel_open_bundle(z->g, &z->bundle));
    }
    if (z->bundle) return GN_OK;
    if (!gn__graph_saved(z->g)->dir)
        return gn__fail(&z->g->err, GN_ERR_IO,
                        "freezing signature '%s': variable '%s' needs a value, and a SavedModel loaded from a "
                        "buffer has no variables directory",
                        z->sig, why_node);
    return gn__fail(&z->g->err, GN_ERR_IO,
                    "%s/variables/variables.index: no such file (freezing signature '%s': variable '%s' needs "
                    "a value)",
                    gn__graph_saved(z->g)->dir, z->sig, why_node);
}

/* ---- TF2: object graph ------------------------------------------------------------ */
static const char *func_attr(const gn_graph *g, gn_id id)
{
    const Tensorflow__AttrValue *a = gn__node_attr(g, id, "f");
    if (a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && a->func) return a->func->name;
    return NULL;
}

static gn_status map_object_graph(freezer *z)
{
    gn_graph *g = z->g;
    const Tensorflow__SavedObjectGraph *og = gn__graph_saved(g)->mg->object_graph_def;
    if (!og || og->n_concrete_functions == 0) return GN_OK;
    /* does any top-level call capture a variable? then the checkpoint's object graph is needed */
    Tensorflow__TrackableObjectGraph *tog = NULL;
    gn_status st = GN_OK;
    for (gn_id id = 0; id < g->n_nodes && st == GN_OK; id++) {
        if (!gn__node_live(g, id)) continue;
        const char *op = gn__node_op(g, id);
        if (strcmp(op, "StatefulPartitionedCall") != 0 && strcmp(op, "PartitionedCall") != 0) continue;
        const char *fn = func_attr(g, id);
        if (!fn) continue;
        const Tensorflow__SavedConcreteFunction *cf = NULL;
        for (size_t i = 0; i < og->n_concrete_functions; i++)
            if (strcmp(og->concrete_functions[i]->key, fn) == 0) cf = og->concrete_functions[i]->value;
        if (!cf || cf->n_bound_inputs == 0) continue;
        const gn__node *n = gn__node_at(g, id);
        if (cf->n_bound_inputs > n->n_in) continue;
        uint32_t first = n->n_in - (uint32_t)cf->n_bound_inputs;
        for (size_t j = 0; j < cf->n_bound_inputs && st == GN_OK; j++) {
            int32_t obj = cf->bound_inputs[j];
            if (obj < 0 || (size_t)obj >= og->n_nodes) continue;
            if (og->nodes[obj]->kind_case != TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE) continue;
            gn_id p = n->in[first + j].node;
            const char *pop = gn__node_op(g, p);
            if (strcmp(pop, "VarHandleOp") != 0) continue;
            const char *pname = gn__node_name(g, p);
            if (map_find(z, pname, NULL)) continue;
            if (!tog) {
                st = need_bundle(z, pname);
                if (st != GN_OK) break;
                gn__tensor t = {0};
                st = gn__bundle_read(z->bundle, "_CHECKPOINTABLE_OBJECT_GRAPH", &t, &g->err);
                if (st != GN_OK) break;
                if (t.dtype != DT_STRING || gn__tensor_numel(&t) != 1) {
                    gn__tensor_release(&t);
                    st = gn__fail(&g->err, GN_ERR_PARSE,
                                  "variables.index: key '_CHECKPOINTABLE_OBJECT_GRAPH' is not a string scalar");
                    break;
                }
                const gn__tstring *s = t.data;
                tog = tensorflow__trackable_object_graph__unpack(NULL, s->len, (const uint8_t *)s->ptr);
                gn__tensor_release(&t);
                if (!tog) {
                    st = gn__fail(&g->err, GN_ERR_PARSE,
                                  "variables.index: key '_CHECKPOINTABLE_OBJECT_GRAPH' does not decode as a "
                                  "TrackableObjectGraph");
                    break;
                }
            }
            if ((size_t)obj >= tog->n_nodes) continue;
            const Tensorflow__TrackableObjectGraph__TrackableObject *to = tog->nodes[obj];
            for (size_t a = 0; a < to->n_attributes; a++) {
                const Tensorflow__TrackableObjectGraph__TrackableObject__SerializedTensor *at = to->attributes[a];
                if (at->name && strcmp(at->name, "VARIABLE_VALUE") == 0 && at->checkpoint_key) {
                    st = map_add(z, pname, at->checkpoint_key, strlen(at->checkpoint_key), false);
                    break;
                }
            }
        }
    }
    if (tog) tensorflow__trackable_object_graph__free_unpacked(tog, NULL);
    return st;
}

/* ---- TF1: restore ops ---------------------------------------------------------------- */
static bool const_strings(const gn_graph *g, gn_id id, gn__tensor *out, gn__err *err)
{
    memset(out, 0, sizeof *out);
    if (strcmp(gn__node_op(g, id), "Const") != 0) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, "value");
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR) return false;
    if (gn__tensor_from_proto(v->tensor, out, err) != GN_OK) {
        gn__err_clear(err);
        return false;
    }
    if (out->dtype != DT_STRING) {
        gn__tensor_release(out);
        return false;
    }
    return true;
}

/* The variable an assignment of a restored value writes: Assign(ref, value) or
 * AssignVariableOp(resource, value), possibly after Identity nodes. */
static gn_id assigned_var(const gn_graph *g, gn_id c, uint32_t slot)
{
    const char *op = gn__node_op(g, c);
    if ((strcmp(op, "Assign") == 0 || strcmp(op, "AssignVariableOp") == 0) && slot == 1) {
        const gn__node *n = gn__node_at(g, c);
        gn_id v = n->in[0].node;
        while (strcmp(gn__node_op(g, v), "Identity") == 0 && gn__node_at(g, v)->n_in > 0)
            v = gn__node_at(g, v)->in[0].node;
        return v;
    }
    return GN_NONE;
}

static gn_status map_restore_ops(freezer *z)
{
    gn_graph *g = z->g;
    for (gn_id id = 0; id < g->n_nodes; id++) {
        if (!gn__node_live(g, id)) continue;
        const char *op = gn__node_op(g, id);
        if (strcmp(op, "RestoreV2") != 0 && strcmp(op, "RestoreSlice") != 0 && strcmp(op, "Restore") != 0)
            continue;
        const gn__node *n = gn__node_at(g, id);
        if (n->n_in < 2) continue;
        gn__tensor names = {0}, slices = {0};
        gn__err scratch = {0};
        if (!const_strings(g, n->in[1].node, &names, &scratch)) continue;
        bool have_slices = n->n_in >= 3 && strcmp(op, "RestoreV2") == 0 &&
                           const_strings(g, n->in[2].node, &slices, &scratch);
        int64_t nn = gn__tensor_numel(&names);
        const gn__tstring *nm = names.data, *sl = have_slices ? slices.data : NULL;
        int64_t ns = have_slices ? gn__tensor_numel(&slices) : 0;
        gn_status st = GN_OK;
        for (uint32_t u = 0; u < n->n_use && st == GN_OK; u++) {
            gn_id c = n->use[u].node;
            /* which output of the restore op does c read? */
            const gn__node *cn = gn__node_at(g, c);
            uint32_t slot = n->use[u].slot, out = cn->in[slot].index;
            if ((int64_t)out >= nn && strcmp(op, "RestoreV2") == 0) continue;
            int64_t ki = strcmp(op, "RestoreV2") == 0 ? (int64_t)out : 0;
            gn_id v = assigned_var(g, c, slot);
            if (v == GN_NONE && strcmp(gn__node_op(g, c), "Identity") == 0) {
                /* resource variables: AssignVariableOp(var, Identity(RestoreV2:k)) */
                const gn__node *in = gn__node_at(g, c);
                for (uint32_t w = 0; w < in->n_use && v == GN_NONE; w++)
                    v = assigned_var(g, in->use[w].node, in->use[w].slot);
            }
            if (v == GN_NONE) continue;
            bool sliced = sl && ki < ns && sl[ki].len > 0;
            st = map_add(z, gn__node_name(g, v), nm[ki].ptr, nm[ki].len, sliced);
        }
        gn__tensor_release(&names);
        gn__tensor_release(&slices);
        GN_TRY(st);
    }
    return GN_OK;
}

/* ---- pruning ---------------------------------------------------------------------- */
/* Removes every node the fetches do not need (data and control inputs). */
static gn_status prune(freezer *z, char *const *fetch, size_t n_fetch)
{
    gn_graph *f = z->f;
    uint8_t *keep = calloc(f->n_nodes ? f->n_nodes : 1, 1);
    gn_id *stack = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof *stack);
    if (!keep || !stack) {
        free(keep);
        free(stack);
        return oom(z);
    }
    uint32_t sp = 0;
    for (size_t i = 0; i < n_fetch; i++) {
        gn_id id = gn__graph_find(f, fetch[i]);
        if (id == GN_NONE) {
            free(keep);
            free(stack);
            return gn__fail(&z->g->err, GN_ERR_INTERNAL, "freezing signature '%s': node '%s' was lost", z->sig,
                            fetch[i]);
        }
        if (!keep[id]) {
            keep[id] = 1;
            stack[sp++] = id;
        }
    }
    while (sp) {
        const gn__node *n = gn__node_at(f, stack[--sp]);
        for (uint32_t k = 0; k < n->n_in + n->n_ctrl; k++) {
            gn_id p = k < n->n_in ? n->in[k].node : n->ctrl[k - n->n_in];
            if (!keep[p]) {
                keep[p] = 1;
                stack[sp++] = p;
            }
        }
    }
    free(stack);
    gn_id *order = NULL;
    uint32_t n_order = 0;
    gn_status st = gn__graph_topo(f, &order, &n_order);
    if (st != GN_OK) {
        free(keep);
        gn__fail(&z->g->err, st, "freezing signature '%s': %s", z->sig, f->err.msg);
        return st;
    }
    for (uint32_t i = n_order; i-- > 0 && st == GN_OK;)
        if (!keep[order[i]]) st = gn__node_remove(f, order[i]);
    free(order);
    free(keep);
    if (st != GN_OK) gn__fail(&z->g->err, st, "freezing signature '%s': %s", z->sig, f->err.msg);
    return st;
}

/* ---- attr building (the IR's typed setters, graph/attr_value.c) ------------------ */
static Tensorflow__AttrValue *attr_new(gn_graph *f) { return gn__attr_new(f, TENSORFLOW__ATTR_VALUE__VALUE__NOT_SET); }

static gn_status set_type(freezer *z, gn_id id, const char *key, int32_t dtype)
{
    return gn__node_set_attr_type(z->cur, id, key, dtype);
}

static gn_status set_int(freezer *z, gn_id id, const char *key, int64_t i)
{
    return gn__node_set_attr_int(z->cur, id, key, i);
}

static gn_status set_tensor(freezer *z, gn_id id, const gn__tensor *t)
{
    Tensorflow__TensorProto *p = NULL;
    GN_TRY(gn__tensor_to_proto(t, gn__graph_value_allocator(z->cur), &p, &z->g->err));
    GN_TRY(set_type(z, id, "dtype", t->dtype));
    return gn__node_set_attr_tensor(z->cur, id, "value", p);
}

/* Drops every attr but the internal ones ("_class", ...) that still hold. */
static gn_status clear_attrs(freezer *z, gn_id id)
{
    gn__node *n = gn__node_at(z->cur, id);
    while (true) {
        const char *drop = NULL;
        for (uint32_t i = 0; i < n->n_attr && !drop; i++) {
            const char *k = gn__str(z->cur, n->attr[i].key);
            if (k[0] != '_' || strcmp(k, "_output_shapes") == 0) drop = k;
        }
        if (!drop) return GN_OK;
        GN_TRY(gn__node_remove_attr(z->cur, id, drop));
        n = gn__node_at(z->cur, id);
    }
}

/* Replaces a node's op and drops its inputs. */
static gn_status make_const(freezer *z, gn_id id, const gn__tensor *t)
{
    gn_graph *f = z->cur;
    while (gn__node_at(f, id)->n_in) GN_TRY(gn__node_remove_input(f, id, gn__node_at(f, id)->n_in - 1));
    GN_TRY(clear_attrs(z, id));
    GN_TRY(gn__node_set_op(f, id, "Const"));
    return set_tensor(z, id, t);
}

/* ---- conversion -------------------------------------------------------------------- */
static bool is_var_op(const char *op)
{
    return strcmp(op, "VarHandleOp") == 0 || strcmp(op, "VariableV2") == 0 || strcmp(op, "Variable") == 0;
}

static bool is_table_op(const char *op)
{
    return strcmp(op, "HashTableV2") == 0 || strcmp(op, "HashTable") == 0 ||
           strcmp(op, "MutableHashTableV2") == 0 || strcmp(op, "MutableHashTable") == 0 ||
           strcmp(op, "MutableDenseHashTableV2") == 0 || strcmp(op, "MutableHashTableOfTensorsV2") == 0 ||
           strcmp(op, "AnonymousHashTable") == 0;
}

static bool is_passthrough(const char *op)
{
    static const char *const ops[] = {"Identity", "Snapshot", "Enter", "Exit", "NextIteration", "Switch", "Merge",
                                      "RefIdentity", "RefEnter", "RefExit", "RefNextIteration", "RefSwitch",
                                      "RefMerge"};
    for (size_t i = 0; i < GN__ARRAY_LEN(ops); i++)
        if (strcmp(op, ops[i]) == 0) return true;
    return false;
}

static bool is_write_op(const char *op)
{
    return strncmp(op, "Assign", 6) == 0 || strncmp(op, "ResourceScatter", 15) == 0 ||
           strncmp(op, "ScatterN", 8) == 0 || strncmp(op, "Scatter", 7) == 0 ||
           strncmp(op, "ResourceApply", 13) == 0 || strncmp(op, "ResourceSparseApply", 19) == 0 ||
           strncmp(op, "Apply", 5) == 0 || strcmp(op, "DestroyResourceOp") == 0 || strcmp(op, "CountUpTo") == 0 ||
           strcmp(op, "ResourceCountUpTo") == 0;
}

typedef struct work {
    gn_id node;
    int32_t out;      /* output whose consumers to visit; -1: all */
} work;

/* ---- functional ops -------------------------------------------------------------------
 * A While, If or Case taking a variable reads it inside its functions
 * (Keras 3's RNN loops take their weights so). As TensorFlow's
 * convert_variables_to_constants_v2 does, the value goes in instead: the
 * functions are copied ("<name>_frozen") with those arguments typed as the
 * value and their readers converted as above (nested While / If / Case
 * too), and the node's type attrs, function attrs and the consumers of the
 * outputs that now carry the value follow. The uses are collected while the
 * variables are converted (fn_use_add) and handled once per node after
 * (fn_uses_run), so a loop taking three weights is copied once. */
typedef struct fn_use {
    gn_graph *g;      /* z->f or a body being converted */
    gn_id node;       /* GN_NONE once handled */
    uint32_t slot;
    int32_t dtype;
} fn_use;

/* The function argument input `slot` of a While / If / Case feeds, or -1. */
static int32_t functional_arg(const char *op, uint32_t slot)
{
    if (!strcmp(op, "While") || !strcmp(op, "StatelessWhile")) return (int32_t)slot;
    if (!strcmp(op, "If") || !strcmp(op, "StatelessIf") || !strcmp(op, "Case") || !strcmp(op, "StatelessCase"))
        return slot ? (int32_t)slot - 1 : -1;
    return -1;
}

static gn_status fn_use_add(freezer *z, gn_id node, uint32_t slot, int32_t dtype)
{
    if (z->n_fu == z->cap_fu) {
        size_t cap = z->cap_fu ? 2 * z->cap_fu : 16;
        fn_use *u = realloc(z->fu, cap * sizeof *u);
        if (!u) return oom(z);
        z->fu = u;
        z->cap_fu = cap;
    }
    z->fu[z->n_fu++] = (fn_use){z->cur, node, slot, dtype};
    return GN_OK;
}

static gn_status convert_uses(freezer *z, gn_id id, int32_t out, const char *var, int32_t dtype);

static gn_status convert_consumer(freezer *z, gn_id c, uint32_t slot, const char *var, int32_t dtype, work *wl,
                                  uint32_t *n_wl, uint32_t cap_wl)
{
    gn_graph *f = z->cur;
    const char *op = gn__node_op(f, c);
    const char *name = gn__node_name(f, c);
    if (strcmp(op, "ReadVariableOp") == 0) {
        GN_TRY(gn__node_remove_attr(f, c, "dtype"));
        GN_TRY(gn__node_set_op(f, c, "Identity"));
        return set_type(z, c, "T", dtype);
    }
    if (strcmp(op, "ResourceGather") == 0) {
        int64_t bd = 0;
        gn__attr_get_int(f, c, "batch_dims", &bd);
        if (bd != 0)
            return gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                            "freezing signature '%s': node '%s' (ResourceGather) has batch_dims %lld: only 0 is "
                            "supported",
                            z->sig, name, (long long)bd);
        size_t nl = strlen(name) + 8;
        char *an = malloc(nl);
        if (!an) return oom(z);
        snprintf(an, nl, "%s/axis", name);
        gn_id ax = GN_NONE;
        gn_status st = gn__node_add(f, an, "Const", &ax);
        free(an);
        GN_TRY(st);
        gn__node_at(f, ax)->device = gn__node_at(f, c)->device;
        int32_t zero = 0;
        gn__tensor t = {.dtype = DT_INT32, .rank = 0, .data = &zero, .nbytes = 4};
        GN_TRY(set_tensor(z, ax, &t));
        GN_TRY(gn__node_remove_attr(f, c, "dtype"));
        GN_TRY(gn__node_remove_attr(f, c, "validate_indices"));
        GN_TRY(gn__node_set_op(f, c, "GatherV2"));
        GN_TRY(set_type(z, c, "Tparams", dtype));
        GN_TRY(set_type(z, c, "Taxis", DT_INT32));
        GN_TRY(set_int(z, c, "batch_dims", 0));
        return gn__node_add_input(f, c, (gn__edge){ax, 0});
    }
    if (strcmp(op, "ResourceGatherNd") == 0) {
        GN_TRY(gn__node_remove_attr(f, c, "dtype"));
        GN_TRY(gn__node_set_op(f, c, "GatherNd"));
        return set_type(z, c, "Tparams", dtype);
    }
    if (strcmp(op, "VariableShape") == 0) {
        GN_TRY(gn__node_set_op(f, c, "Shape"));
        return set_type(z, c, "T", dtype);
    }
    if (strcmp(op, "VarIsInitializedOp") == 0 || strcmp(op, "IsVariableInitialized") == 0) {
        GN_TRY(gn__node_remove_input(f, c, slot));
        GN_TRY(clear_attrs(z, c));
        GN_TRY(gn__node_set_op(f, c, "Const"));
        bool yes = true;
        gn__tensor t = {.dtype = DT_BOOL, .rank = 0, .data = &yes, .nbytes = 1};
        return set_tensor(z, c, &t);
    }
    if (strcmp(op, "IdentityN") == 0) {
        const Tensorflow__AttrValue *tl = gn__node_attr(f, c, "T");
        if (tl && tl->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && tl->list && slot < tl->list->n_type &&
            (int)tl->list->type[slot] == DT_RESOURCE) {
            Tensorflow__AttrValue *v = attr_new(f);
            Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(f, sizeof *l);
            Tensorflow__DataType *ty = gn__graph_value_alloc(f, (tl->list->n_type + 1) * sizeof *ty);
            if (!v || !l || !ty) return oom(z);
            tensorflow__attr_value__list_value__init(l);
            memcpy(ty, tl->list->type, tl->list->n_type * sizeof *ty);
            ty[slot] = (Tensorflow__DataType)dtype;
            l->n_type = tl->list->n_type;
            l->type = ty;
            v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
            v->list = l;
            GN_TRY(gn__node_set_attr(f, c, "T", v));
            GN_TRY(gn__node_remove_attr(f, c, "_output_shapes"));
            if (*n_wl < cap_wl) wl[(*n_wl)++] = (work){c, (int32_t)slot};
        }
        return GN_OK;
    }
    if (is_passthrough(op)) {
        int t = 0;
        bool res = gn__attr_get_type(f, c, "T", &t) && t == DT_RESOURCE;
        bool ref = strncmp(op, "Ref", 3) == 0;
        if (!res && !ref) return GN_OK;   /* a value already (Identity of a ref variable) */
        if (ref) GN_TRY(gn__node_set_op(f, c, op + 3));
        if (res || ref) GN_TRY(set_type(z, c, "T", dtype));
        GN_TRY(gn__node_remove_attr(f, c, "_output_shapes"));
        if (*n_wl < cap_wl) wl[(*n_wl)++] = (work){c, -1};
        return GN_OK;
    }
    if (strcmp(op, "_Retval") == 0) return set_type(z, c, "T", dtype);   /* a function returns it */
    if (functional_arg(op, slot) >= 0) return fn_use_add(z, c, slot, dtype);
    if (is_write_op(op))
        return gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                        "freezing signature '%s': node '%s' (%s) writes variable '%s': a frozen graph holds "
                        "constants",
                        z->sig, name, op, var);
    return gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                    "freezing signature '%s': node '%s' (%s) takes variable '%s' as input %u: it cannot be "
                    "frozen",
                    z->sig, name, op, var, slot);
}

static gn_status convert_var(freezer *z, gn_id id)
{
    gn_graph *f = z->cur;
    char *var = strdup(gn__node_name(f, id));
    if (!var) return oom(z);
    const char *op = gn__node_op(f, id);
    bool sliced = false;
    const char *key = map_find(z, var, &sliced);
    gn_status st = GN_OK;
    if (!key) {
        /* by name: TF1 checkpoints keyed by the variable's name, or its shared_name */
        st = need_bundle(z, var);
        if (st == GN_OK) {
            const char *sn = NULL;
            size_t snl = 0;
            if (gn__bundle_entry(z->bundle, var)) key = var;
            else if (gn__attr_get_string(f, id, "shared_name", &sn, &snl) && snl) {
                char *s = strndup(sn, snl);
                if (!s) st = oom(z);
                else if (gn__bundle_entry(z->bundle, s)) {
                    st = map_add(z, var, s, snl, false);
                    key = map_find(z, var, NULL);
                }
                free(s);
            }
            if (st == GN_OK && !key)
                st = gn__fail(&z->g->err, GN_ERR_NOT_FOUND,
                              "freezing signature '%s': variable '%s' (%s): no checkpoint key maps to it",
                              z->sig, var, op);
        }
    }
    if (st == GN_OK && sliced)
        st = gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                      "freezing signature '%s': variable '%s' is restored from a slice of '%s': partitioned "
                      "variables are not supported",
                      z->sig, var, key);
    if (st == GN_OK) st = need_bundle(z, var);
    gn__tensor t = {0};
    if (st == GN_OK) {
        st = gn__bundle_read(z->bundle, key, &t, &z->g->err);
        if (st != GN_OK) gn__err_prefix(&z->g->err, "freezing signature '%s': variable '%s'", z->sig, var);
    }
    int dt = 0;
    if (st == GN_OK && gn__attr_get_type(f, id, "dtype", &dt) && dt % 100 != t.dtype)
        st = gn__fail(&z->g->err, GN_ERR_GRAPH,
                      "freezing signature '%s': variable '%s' is %s but checkpoint key '%s' holds %s", z->sig, var,
                      gn__dtype_name(dt % 100), key, gn__dtype_name(t.dtype));
    if (st == GN_OK) st = make_const(z, id, &t);
    int32_t dtype = t.dtype;
    gn__tensor_release(&t);
    if (st != GN_OK) {
        free(var);
        return st;
    }
    st = convert_uses(z, id, -1, var, dtype);
    free(var);
    return st;
}

/* The readers of output `out` of node id in z->cur (-1: every output), a
 * value of dtype now, and theirs through pass-through ops. */
static gn_status convert_uses(freezer *z, gn_id id, int32_t out, const char *var, int32_t dtype)
{
    gn_graph *f = z->cur;
    gn_status st = GN_OK;
    uint32_t cap = f->n_nodes + 16, n_wl = 0;
    work *wl = malloc(cap * sizeof *wl);
    if (!wl) return oom(z);
    wl[n_wl++] = (work){id, out};
    for (uint32_t w = 0; w < n_wl && st == GN_OK; w++) {
        work cur = wl[w];
        /* snapshot the uses: conversion may add fanouts (ResourceGather's axis) */
        const gn__node *n = gn__node_at(f, cur.node);
        uint32_t nu = n->n_use;
        gn__use *uses = malloc((nu ? nu : 1) * sizeof *uses);
        if (!uses) {
            st = oom(z);
            break;
        }
        memcpy(uses, n->use, nu * sizeof *uses);
        for (uint32_t u = 0; u < nu && st == GN_OK; u++) {
            const gn__node *cn = gn__node_at(f, uses[u].node);
            if (cur.out >= 0 && cn->in[uses[u].slot].index != (uint32_t)cur.out) continue;
            st = convert_consumer(z, uses[u].node, uses[u].slot, var, dtype, wl, &n_wl, cap);
        }
        free(uses);
    }
    free(wl);
    return st;
}

/* A list(type) attr value: list with entry k set to types[k] where nonzero. */
static Tensorflow__AttrValue *types_with(gn_graph *g, const Tensorflow__AttrValue *old, const int32_t *types, size_t n)
{
    if (!old || old->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !old->list || old->list->n_type != n) return NULL;
    Tensorflow__AttrValue *v = attr_new(g);
    Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
    Tensorflow__DataType *ty = gn__graph_value_alloc(g, (n + 1) * sizeof *ty);
    if (!v || !l || !ty) return NULL;
    tensorflow__attr_value__list_value__init(l);
    for (size_t k = 0; k < n; k++) ty[k] = types[k] ? (Tensorflow__DataType)types[k] : old->list->type[k];
    l->n_type = n;
    l->type = ty;
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
    v->list = l;
    return v;
}

/* Copies `n` ArgDefs, those with types[k] set retyped (NULL on no memory). */
static Tensorflow__OpDef__ArgDef **args_with(gn_graph *g, Tensorflow__OpDef__ArgDef *const *a, size_t n,
                                             const int32_t *types)
{
    Tensorflow__OpDef__ArgDef **v = gn__graph_value_alloc(g, (n + 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t k = 0; k < n; k++) {
        v[k] = a[k];
        if (!types || !types[k]) continue;
        Tensorflow__OpDef__ArgDef *c = gn__graph_value_alloc(g, sizeof *c);
        if (!c) return NULL;
        *c = *a[k];
        c->type = (Tensorflow__DataType)types[k];
        c->type_attr = (char *)"";
        c->number_attr = (char *)"";
        c->type_list_attr = (char *)"";
        v[k] = c;
    }
    return v;
}

/* The attrs of a function copied with argument k retyped (types[k] set): a
 * `_input_shapes` list, which TensorFlow's Python loader gives the body's
 * placeholders (function_def_to_graph), has those arguments' shapes made
 * unknown: the resource's scalar shape is not the value's, and a reader of it
 * whose `_output_shapes` is the value's would be refused ("Shapes must be
 * equal rank"). The other attrs are shared. od->attr itself on no change;
 * NULL on no memory. */
static Tensorflow__FunctionDef__AttrEntry **fn_attrs_retyped(gn_graph *g, const Tensorflow__FunctionDef *od,
                                                            const int32_t *types, size_t n)
{
    size_t at = od->n_attr;
    for (size_t i = 0; i < od->n_attr; i++)
        if (od->attr[i]->key && !strcmp(od->attr[i]->key, "_input_shapes")) at = i;
    const Tensorflow__AttrValue *old = at < od->n_attr ? od->attr[at]->value : NULL;
    if (!old || old->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST || !old->list || old->list->n_shape != n)
        return od->attr;
    Tensorflow__AttrValue *v = gn__attr_new_list(g);
    Tensorflow__TensorShapeProto **sh = gn__graph_value_alloc(g, (n + 1) * sizeof *sh);
    Tensorflow__FunctionDef__AttrEntry **a = gn__graph_value_alloc(g, (od->n_attr + 1) * sizeof *a);
    Tensorflow__FunctionDef__AttrEntry *e = gn__graph_value_alloc(g, sizeof *e);
    if (!v || !sh || !a || !e) return NULL;
    for (size_t k = 0; k < n; k++)
        if (!(sh[k] = types[k] ? gn__shape_proto_new(g, -1, NULL) : old->list->shape[k])) return NULL;
    v->list->n_shape = n;
    v->list->shape = sh;
    *e = *od->attr[at];
    e->value = v;
    for (size_t i = 0; i < od->n_attr; i++) a[i] = i == at ? e : od->attr[i];
    return a;
}

/* resource_arg_unique_id without the entries of retyped arguments (no longer
 * resources); *n_out their count. od's own array on no change; NULL on no
 * memory. */
static Tensorflow__FunctionDef__ResourceArgUniqueIdEntry **fn_unique_ids_retyped(gn_graph *g,
                                                                                 const Tensorflow__FunctionDef *od,
                                                                                 const int32_t *types, size_t n,
                                                                                 size_t *n_out)
{
    size_t keep = 0;
    for (size_t i = 0; i < od->n_resource_arg_unique_id; i++) {
        uint32_t k = od->resource_arg_unique_id[i]->key;
        keep += !(k < n && types[k]);
    }
    *n_out = keep;
    if (keep == od->n_resource_arg_unique_id) return od->resource_arg_unique_id;
    Tensorflow__FunctionDef__ResourceArgUniqueIdEntry **r = gn__graph_value_alloc(g, (keep + 1) * sizeof *r);
    if (!r) return NULL;
    size_t j = 0;
    for (size_t i = 0; i < od->n_resource_arg_unique_id; i++) {
        uint32_t k = od->resource_arg_unique_id[i]->key;
        if (!(k < n && types[k])) r[j++] = od->resource_arg_unique_id[i];
    }
    return r;
}

static gn_status fn_uses_run(freezer *z, gn_graph *g, size_t from);

/* Function fname of z->f's library copied with argument k typed in_types[k]
 * (0: unchanged) and its readers converted; *out_types (n_out entries,
 * heap) gets each result's new type (0: unchanged) and *name the copy's. */
static gn_status specialize_fn(freezer *z, const char *fname, const int32_t *in_types, size_t n_in, int32_t **out_types,
                               size_t *n_out, const char **name)
{
    gn_graph *f = z->f;
    const gn__function *fn = gn__graph_find_function(f, fname);
    const Tensorflow__OpDef *os = fn && fn->def ? fn->def->signature : NULL;
    if (!fn || !fn->body || !os)
        return gn__fail(&z->g->err, GN_ERR_GRAPH, "freezing signature '%s': function '%s' is not in the library",
                        z->sig, fname);
    if (os->n_input_arg != n_in)
        return gn__fail(&z->g->err, GN_ERR_GRAPH,
                        "freezing signature '%s': function '%s' takes %zu arguments, its caller gives %zu", z->sig,
                        fname, os->n_input_arg, n_in);
    if (z->depth >= 16)
        return gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                        "freezing signature '%s': function '%s': variables passed down more than 16 functions deep",
                        z->sig, fname);
    /* a free name */
    size_t nl = strlen(fname) + 32;
    char *nm = malloc(nl);
    if (!nm) return oom(z);
    snprintf(nm, nl, "%s_frozen", fname);
    for (int k = 2; gn__graph_find_function(f, nm); k++) snprintf(nm, nl, "%s_frozen_%d", fname, k);
    const Tensorflow__FunctionDef *od = fn->def;
    const uint32_t n_cr = fn->n_control_ret;
    uint32_t *cr_name = NULL;
    char **cr_node = NULL;
    gn_graph *b = NULL;
    int32_t *ot = calloc(os->n_output_arg + 1, sizeof *ot);
    gn_status st = ot ? gn__graph_clone(fn->body, &b) : oom(z);
    if (st == GN_OK && n_cr) {   /* the control returns, by name (fn moves when the library grows) */
        cr_name = malloc(n_cr * sizeof *cr_name);
        cr_node = calloc(n_cr, sizeof *cr_node);
        if (!cr_name || !cr_node) st = oom(z);
        for (uint32_t k = 0; st == GN_OK && k < n_cr; k++) {
            cr_name[k] = fn->control_ret_name[k];
            if (fn->control_ret_node[k] != GN_NONE && !(cr_node[k] = strdup(gn__node_name(fn->body, fn->control_ret_node[k]))))
                st = oom(z);
        }
    }
    /* the arguments, then what reads them */
    gn_graph *saved = z->cur;
    size_t mark = z->n_fu;
    bool entered = st == GN_OK;
    if (entered) {
        b->lib = f;
        z->cur = b;
        z->depth++;
    }
    for (size_t k = 0; st == GN_OK && k < n_in; k++) {
        if (!in_types[k]) continue;
        gn_id a = gn__graph_find(b, os->input_arg[k]->name);
        if (a == GN_NONE || !(gn__node_at(b, a)->flags & GN__NODE_FN_ARG)) {
            st = gn__fail(&z->g->err, GN_ERR_GRAPH, "freezing signature '%s': function '%s' has no argument '%s'",
                          z->sig, fname, os->input_arg[k]->name);
            break;
        }
        st = set_type(z, a, "T", in_types[k]);
        if (st == GN_OK) st = gn__node_remove_attr(b, a, "_output_shapes");
        if (st == GN_OK) st = convert_uses(z, a, -1, os->input_arg[k]->name, in_types[k]);
    }
    if (st == GN_OK) st = fn_uses_run(z, b, mark);
    if (entered) {
        z->cur = saved;
        z->depth--;
    }
    /* the results whose type changed */
    for (size_t k = 0; st == GN_OK && k < os->n_output_arg; k++) {
        char rn[4096];
        snprintf(rn, sizeof rn, "_retval:%s", os->output_arg[k]->name);
        gn_id r = gn__graph_find(b, rn);
        int t = 0;
        if (r != GN_NONE && gn__attr_get_type(b, r, "T", &t) && t != (int)os->output_arg[k]->type) ot[k] = t;
    }
    /* the copy's FunctionDef: the signature retyped, the rest shared */
    Tensorflow__FunctionDef *fd = st == GN_OK ? gn__graph_value_alloc(f, sizeof *fd) : NULL;
    Tensorflow__OpDef *sd = st == GN_OK ? gn__graph_value_alloc(f, sizeof *sd) : NULL;
    char *sname = st == GN_OK ? gn__graph_value_alloc(f, strlen(nm) + 1) : NULL;
    if (st == GN_OK && (!fd || !sd || !sname)) st = oom(z);
    if (st == GN_OK) {
        *fd = *od;
        *sd = *os;
        strcpy(sname, nm);
        sd->name = sname;
        sd->input_arg = args_with(f, os->input_arg, os->n_input_arg, in_types);
        sd->output_arg = args_with(f, os->output_arg, os->n_output_arg, ot);
        fd->attr = fn_attrs_retyped(f, od, in_types, n_in);
        fd->resource_arg_unique_id = fn_unique_ids_retyped(f, od, in_types, n_in, &fd->n_resource_arg_unique_id);
        if (!sd->input_arg || !sd->output_arg || (od->n_attr && !fd->attr) ||
            (od->n_resource_arg_unique_id && !fd->resource_arg_unique_id))
            st = oom(z);
        fd->signature = sd;
    }
    gn__function *nf = NULL;
    if (st == GN_OK) {
        st = gn__graph_add_function(f, sname, fd, b, &nf);
        if (st == GN_OK) b = NULL;   /* the library owns it */
        else gn__fail(&z->g->err, st, "freezing signature '%s': %s", z->sig, f->err.msg);
    }
    if (st == GN_OK && n_cr) {
        nf->control_ret_name = gn__arena_alloc(&f->arena, n_cr * sizeof *nf->control_ret_name, 4);
        nf->control_ret_node = gn__arena_alloc(&f->arena, n_cr * sizeof *nf->control_ret_node, 4);
        if (!nf->control_ret_name || !nf->control_ret_node) st = oom(z);
        for (uint32_t k = 0; st == GN_OK && k < n_cr; k++) {
            nf->control_ret_name[k] = cr_name[k];   /* the body is a clone: the same string ids */
            nf->control_ret_node[k] = cr_node[k] ? gn__graph_find(nf->body, cr_node[k]) : GN_NONE;
        }
        nf->n_control_ret = n_cr;
    }
    for (uint32_t k = 0; cr_node && k < n_cr; k++) free(cr_node[k]);
    free(cr_node);
    free(cr_name);
    free(nm);
    gn_graph_free(b);
    if (st != GN_OK) {
        free(ot);
        return st;
    }
    *out_types = ot;
    *n_out = os->n_output_arg;
    *name = sname;
    return GN_OK;
}

/* A func attr value naming `name`, the rest (its attrs) as in old. */
static Tensorflow__AttrValue *func_named(gn_graph *g, const Tensorflow__NameAttrList *old, const char *name)
{
    Tensorflow__AttrValue *v = attr_new(g);
    Tensorflow__NameAttrList *nl = gn__graph_value_alloc(g, sizeof *nl);
    if (!v || !nl) return NULL;
    *nl = *old;
    nl->name = (char *)name;
    v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_FUNC;
    v->func = nl;
    return v;
}

/* The uses from index `from` on that sit in g (z->cur), node by node. */
static gn_status fn_uses_run(freezer *z, gn_graph *g, size_t from)
{
    for (size_t i = from; i < z->n_fu; i++) {
        if (z->fu[i].g != g || z->fu[i].node == GN_NONE) continue;
        gn_id node = z->fu[i].node;
        const char *op = gn__node_op(g, node), *name = gn__node_name(g, node);
        bool loop = !strcmp(op, "While") || !strcmp(op, "StatelessWhile");
        bool cases = !strcmp(op, "Case") || !strcmp(op, "StatelessCase");
        const char *tkey = loop ? "T" : "Tin";
        const Tensorflow__AttrValue *tl = gn__node_attr(g, node, tkey);
        size_t n_args = tl && tl->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && tl->list ? tl->list->n_type : 0;
        int32_t *in = calloc(n_args + 1, sizeof *in);
        if (!in) return oom(z);
        gn_status st = GN_OK;
        for (size_t j = i; j < z->n_fu && st == GN_OK; j++) {
            if (z->fu[j].g != g || z->fu[j].node != node) continue;
            int32_t a = functional_arg(op, z->fu[j].slot);
            if (a < 0 || (size_t)a >= n_args)
                st = gn__fail(&z->g->err, GN_ERR_GRAPH, "freezing signature '%s': node '%s' (%s): input %u has no %s entry",
                              z->sig, name, op, z->fu[j].slot, tkey);
            else in[a] = z->fu[j].dtype;
            z->fu[j].node = GN_NONE;
        }
        /* the functions: While cond and body, If then and else, Case every branch */
        static const char *const keys_loop[2] = {"cond", "body"}, *const keys_if[2] = {"then_branch", "else_branch"};
        const Tensorflow__AttrValue *br = cases ? gn__node_attr(g, node, "branches") : NULL;
        size_t n_fn = cases ? (br && br->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && br->list ? br->list->n_func : 0) : 2;
        Tensorflow__NameAttrList **nfl = cases && n_fn ? gn__graph_value_alloc(g, n_fn * sizeof *nfl) : NULL;
        if (cases && n_fn && !nfl) st = oom(z);
        int32_t *res = NULL;   /* the results' new types (If / Case: all branches alike) */
        size_t n_res = 0;
        for (size_t k = 0; k < n_fn && st == GN_OK; k++) {
            const Tensorflow__NameAttrList *fa = NULL;
            if (cases) fa = br->list->func[k];
            else {
                const Tensorflow__AttrValue *v = gn__node_attr(g, node, loop ? keys_loop[k] : keys_if[k]);
                fa = v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC ? v->func : NULL;
            }
            if (!fa || !fa->name) {
                st = gn__fail(&z->g->err, GN_ERR_GRAPH, "freezing signature '%s': node '%s' (%s) has no function %zu",
                              z->sig, name, op, k);
                break;
            }
            int32_t *ot = NULL;
            size_t n_ot = 0;
            const char *nn = NULL;
            st = specialize_fn(z, fa->name, in, n_args, &ot, &n_ot, &nn);
            if (st != GN_OK) break;
            if (cases) {
                nfl[k] = gn__graph_value_alloc(g, sizeof **nfl);
                if (!nfl[k]) st = oom(z);
                else {
                    *nfl[k] = *fa;
                    nfl[k]->name = (char *)nn;
                }
            } else {
                Tensorflow__AttrValue *v = func_named(g, fa, nn);
                st = v ? gn__node_set_attr(g, node, loop ? keys_loop[k] : keys_if[k], v) : oom(z);
            }
            if (st == GN_OK && !(loop && k == 0)) {   /* a While's cond returns its bool */
                if (!res) {
                    res = ot;
                    n_res = n_ot;
                    ot = NULL;
                } else if (n_ot != n_res || memcmp(ot, res, n_ot * sizeof *ot)) {
                    st = gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                                  "freezing signature '%s': node '%s' (%s): its branches return a variable in "
                                  "different places",
                                  z->sig, name, op);
                }
            }
            free(ot);
        }
        if (st == GN_OK && cases) {
            Tensorflow__AttrValue *v = attr_new(g);
            Tensorflow__AttrValue__ListValue *l = gn__graph_value_alloc(g, sizeof *l);
            if (!v || !l) st = oom(z);
            else {
                *l = *br->list;
                l->func = nfl;
                *v = *br;
                v->list = l;
                st = gn__node_set_attr(g, node, "branches", v);
            }
        }
        /* the node's types, and the consumers of the outputs that now carry values */
        if (st == GN_OK) {
            Tensorflow__AttrValue *v = types_with(g, tl, in, n_args);
            st = v ? gn__node_set_attr(g, node, tkey, v) : oom(z);
        }
        if (st == GN_OK && loop) {
            if (!res || n_res != n_args || memcmp(res, in, n_args * sizeof *in))
                st = gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                              "freezing signature '%s': node '%s' (%s): its body does not return the variables it "
                              "takes unchanged",
                              z->sig, name, op);
            else st = gn__node_remove_attr(g, node, "output_shapes");
        } else if (st == GN_OK && res) {
            bool any = false;
            for (size_t k = 0; k < n_res; k++) any |= res[k] != 0;
            const Tensorflow__AttrValue *to = gn__node_attr(g, node, "Tout");
            Tensorflow__AttrValue *v = any ? types_with(g, to, res, n_res) : NULL;
            if (any) st = v ? gn__node_set_attr(g, node, "Tout", v) : oom(z);
            if (any && st == GN_OK) st = gn__node_remove_attr(g, node, "output_shapes");
        }
        if (st == GN_OK) st = gn__node_remove_attr(g, node, "_output_shapes");
        int32_t *outs = loop ? in : res;
        size_t n_outs = loop ? n_args : n_res;
        for (size_t k = 0; st == GN_OK && outs && k < n_outs; k++)
            if (outs[k]) st = convert_uses(z, node, (int32_t)k, name, outs[k]);
        free(in);
        free(res);
        if (st != GN_OK) return st;
    }
    return GN_OK;
}

/* ---- lookup tables ------------------------------------------------------------------ */
/* What TensorFlow does: convert_variables_to_constants_v2 on a signature
 * whose function reads a table leaves the table handle a captured input of
 * the frozen graph (a DT_RESOURCE Placeholder) and the table's initializer
 * (run by the SavedModel's __saved_model_init_op, InitializeTableFromTextFileV2
 * over an asset path) outside it: the GraphDef alone cannot run.
 *
 * Ours is self-contained: the initializers are found in the whole graph (the
 * init op's functions inlined on a scratch clone), each table's contents are
 * computed now (a text file under assets/ read as TF's text-file initializer
 * reads it, or the Const keys / values of InitializeTableV2 and
 * LookupTableImportV2), and the frozen graph keeps the HashTableV2 node with
 * an InitializeTableV2 "<table>/frozen_init" over Const keys and values, on
 * which every op that uses the table depends by a control edge (so the table
 * is filled before any lookup, and TF itself runs the result: re-running the
 * initializer on a filled table is a no-op there). Tables are told apart as
 * TF's resource manager does: by shared_name, else by node name. Mutable
 * tables (their contents are checkpoint state) are refused. */
typedef struct table_data {
    char *key;            /* shared_name, or the node name */
    char *init;           /* the initializer node (messages) */
    gn__tensor keys, values;
} table_data;

typedef struct tables {
    table_data *v;
    size_t n, cap;
} tables;

static void tables_free(tables *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].key);
        free(t->v[i].init);
        gn__tensor_release(&t->v[i].keys);
        gn__tensor_release(&t->v[i].values);
    }
    free(t->v);
    memset(t, 0, sizeof *t);
}

static bool is_table_init_op(const char *op)
{
    return strcmp(op, "InitializeTableV2") == 0 || strcmp(op, "LookupTableImportV2") == 0 ||
           strcmp(op, "InitializeTableFromTextFileV2") == 0;
}

static char *table_key(const gn_graph *g, gn_id id)
{
    const char *sn = NULL;
    size_t snl = 0;
    bool by_node = false;
    (void)gn__attr_get_bool(g, id, "use_node_name_sharing", &by_node);
    if (!by_node && gn__attr_get_string(g, id, "shared_name", &sn, &snl) && snl) return strndup(sn, snl);
    return strdup(gn__node_name(g, id));
}

/* The producer of e through Identity / Snapshot nodes. */
static gn__edge through_identity(const gn_graph *g, gn__edge e)
{
    for (int k = 0; k < 64; k++) {
        const char *op = gn__node_op(g, e.node);
        const gn__node *n = gn__node_at(g, e.node);
        if ((strcmp(op, "Identity") != 0 && strcmp(op, "Snapshot") != 0) || n->n_in == 0) break;
        e = n->in[0];
    }
    return e;
}

/* The asset file an asset tensor (by name) stands for, or NULL. */
static const char *asset_of(const gn_graph *g, gn_id id)
{
    const char *name = gn__node_name(g, id);
    size_t nl = strlen(name);
    for (size_t i = 0; i < gn_graph_asset_count(g); i++) {
        const char *t = gn_graph_asset_tensor(g, i);
        if (t && strncmp(t, name, nl) == 0 && (t[nl] == 0 || strcmp(t + nl, ":0") == 0))
            return gn_graph_asset_filename(g, i);
    }
    return NULL;
}

static bool const_tensor(const gn_graph *h, gn_id id, gn__tensor *out)
{
    memset(out, 0, sizeof *out);
    if (strcmp(gn__node_op(h, id), "Const") != 0) return false;
    const Tensorflow__AttrValue *v = gn__node_attr(h, id, "value");
    gn__err scratch = {0};
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR ||
        gn__tensor_from_proto(v->tensor, out, &scratch) != GN_OK) {
        gn__err_clear(&scratch);
        return false;
    }
    return true;
}

/* The file an initializer's filename input names: an asset (its Placeholder
 * or TF1 Const, possibly through a string variable the init op assigns it
 * to, as TF2 SavedModels do), else a string Const. *path is malloc'd. */
static gn_status init_file_path(freezer *z, const gn_graph *h, gn_id init, char **path)
{
    *path = NULL;
    gn__edge e = gn__node_at(h, init)->in[1];
    for (int step = 0; step < 64; step++) {
        e = through_identity(h, e);
        const char *op = gn__node_op(h, e.node);
        const char *asset = asset_of(z->g, e.node);
        if (asset) {
            if (!gn__graph_saved(z->g)->dir)
                return gn__fail(&z->g->err, GN_ERR_IO,
                                "freezing signature '%s': table initializer '%s' reads asset '%s', and a SavedModel "
                                "loaded from a buffer has no assets directory",
                                z->sig, gn__node_name(h, init), asset);
            size_t n = strlen(gn__graph_saved(z->g)->dir) + strlen(asset) + 16;
            if (!(*path = malloc(n))) return oom(z);
            snprintf(*path, n, "%s/assets/%s", gn__graph_saved(z->g)->dir, asset);
            return GN_OK;
        }
        if (strcmp(op, "ReadVariableOp") == 0 && gn__node_at(h, e.node)->n_in) {
            /* the value the variable is assigned (AssignVariableOp(var, value)) */
            gn_id var = through_identity(h, gn__node_at(h, e.node)->in[0]).node;
            const gn__node *vn = gn__node_at(h, var);
            gn__edge val = {GN_NONE, 0};
            for (uint32_t u = 0; u < vn->n_use && val.node == GN_NONE; u++) {
                gn_id c = vn->use[u].node;
                if (vn->use[u].slot == 0 && strcmp(gn__node_op(h, c), "AssignVariableOp") == 0 &&
                    gn__node_at(h, c)->n_in > 1)
                    val = gn__node_at(h, c)->in[1];
            }
            if (val.node == GN_NONE) break;
            e = val;
            continue;
        }
        gn__tensor t;
        if (const_tensor(h, e.node, &t)) {
            if (t.dtype == DT_STRING && gn__tensor_numel(&t) == 1) {
                const gn__tstring *s = t.data;
                *path = strndup(s->ptr, s->len);
            }
            gn__tensor_release(&t);
            if (*path) return GN_OK;
        }
        break;
    }
    return gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                    "freezing signature '%s': table initializer '%s' (InitializeTableFromTextFileV2) reads a file "
                    "named by '%s' (%s), which is neither an asset nor a constant",
                    z->sig, gn__node_name(h, init), gn__node_name(h, e.node), gn__node_op(h, e.node));
}

/* Input `slot` (the keys or the values) of a table initializer: a constant,
 * or a tensor the SavedModel's restore graph reads from the checkpoint
 * (output k of a RestoreV2, read whole: tensor_names[k] with no slice). A
 * MutableHashTable (Keras' StringLookup and TextVectorization once adapted)
 * has no initializer: TensorFlow 2 saves its contents in the checkpoint and
 * its restore function imports them (LookupTableImportV2), which is what the
 * inlined restore graph shows here. */
static gn_status init_input(freezer *z, const gn_graph *h, gn_id init, uint32_t slot, const char *what,
                            gn__tensor *out)
{
    gn__edge e = through_identity(h, gn__node_at(h, init)->in[slot]);
    if (const_tensor(h, e.node, out)) return GN_OK;
    const char *name = gn__node_name(h, init), *op = gn__node_op(h, init);
    const gn__node *r = gn__node_at(h, e.node);
    if (strcmp(gn__node_op(h, e.node), "RestoreV2") != 0 || r->n_in < 3)
        return gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                        "freezing signature '%s': table initializer '%s' (%s): its %s are neither a constant nor "
                        "read from the checkpoint (they come from '%s', %s)",
                        z->sig, name, op, what, gn__node_name(h, e.node), gn__node_op(h, e.node));
    gn__tensor names = {0}, slices = {0};
    gn__err scratch = {0};
    bool ok = const_strings(h, through_identity(h, r->in[1]).node, &names, &scratch) &&
              const_strings(h, through_identity(h, r->in[2]).node, &slices, &scratch) &&
              gn__tensor_numel(&names) == gn__tensor_numel(&slices) && (int64_t)e.index < gn__tensor_numel(&names) &&
              ((const gn__tstring *)slices.data)[e.index].len == 0;
    char *key = NULL;
    if (ok) {
        const gn__tstring *k = &((const gn__tstring *)names.data)[e.index];
        ok = (key = strndup(k->ptr, k->len)) != NULL;
    }
    gn__tensor_release(&names);
    gn__tensor_release(&slices);
    gn__err_clear(&scratch);
    if (!ok)
        return key ? oom(z)
                   : gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                              "freezing signature '%s': table initializer '%s' (%s): its %s come from '%s' "
                              "(RestoreV2) output %u, whose checkpoint key is not a constant name of a whole tensor",
                              z->sig, name, op, what, gn__node_name(h, e.node), (unsigned)e.index);
    gn_status st = need_bundle(z, name);
    if (st == GN_OK) st = gn__bundle_read(z->bundle, key, out, &z->g->err);
    if (st != GN_OK)
        gn__err_prefix(&z->g->err, "freezing signature '%s': table initializer '%s' (%s): %s '%s'", z->sig, name, op,
                       what, key);
    free(key);
    return st;
}

static gn_status init_contents(freezer *z, const gn_graph *h, gn_id init, gn_id tab, gn__tensor *keys,
                               gn__tensor *values)
{
    const char *op = gn__node_op(h, init);
    const char *name = gn__node_name(h, init);
    if (strcmp(op, "InitializeTableFromTextFileV2") == 0) {
        int kdt = 0, vdt = 0;
        int64_t ki = 0, vi = 0, vocab = -1, offset = 0;
        (void)gn__attr_get_type(h, tab, "key_dtype", &kdt);
        (void)gn__attr_get_type(h, tab, "value_dtype", &vdt);
        (void)gn__attr_get_int(h, init, "key_index", &ki);
        (void)gn__attr_get_int(h, init, "value_index", &vi);
        (void)gn__attr_get_int(h, init, "vocab_size", &vocab);
        (void)gn__attr_get_int(h, init, "offset", &offset);
        const char *d = "\t";
        size_t dl = 1;
        if (!gn__attr_get_string(h, init, "delimiter", &d, &dl) || !dl) d = "\t";
        char *path = NULL;
        GN_TRY(init_file_path(z, h, init, &path));
        gn_status st = gn__table_read_text_file(path, kdt, vdt, ki, vi, vocab, d[0], offset, keys, values, &z->g->err);
        free(path);
        if (st != GN_OK)
            gn__err_prefix(&z->g->err, "freezing signature '%s': table initializer '%s' (%s)", z->sig, name, op);
        return st;
    }
    const gn__node *n = gn__node_at(h, init);
    if (n->n_in < 3)
        return gn__fail(&z->g->err, GN_ERR_GRAPH, "freezing signature '%s': table initializer '%s' (%s) has %u inputs",
                        z->sig, name, op, n->n_in);
    GN_TRY(init_input(z, h, init, 1, "keys", keys));
    gn_status st = init_input(z, h, init, 2, "values", values);
    if (st != GN_OK) gn__tensor_release(keys);
    return st;
}

/* Every table initializer of the SavedModel's graph (calls inlined on a clone). */
static gn_status collect_tables(freezer *z, tables *out)
{
    gn_graph *h = NULL;
    GN_TRY(gn__graph_clone(z->g, &h));
    gn__attachment_drop(&h->saved);
    gn__inline_opts io = {.ignore_noinline = true, .ignore_xla = true};
    gn_status st = gn__inline_calls(h, &io, NULL, &h->err);
    if (st != GN_OK) gn__fail(&z->g->err, st, "freezing signature '%s': %s", z->sig, h->err.msg);
    for (gn_id id = 0; st == GN_OK && id < h->n_nodes; id++) {
        if (!gn__node_live(h, id) || !is_table_init_op(gn__node_op(h, id)) || gn__node_at(h, id)->n_in < 2) continue;
        gn_id tab = through_identity(h, gn__node_at(h, id)->in[0]).node;
        if (!is_table_op(gn__node_op(h, tab))) continue;   /* a table the graph does not make: not ours to fill */
        char *key = table_key(h, tab);
        if (!key) {
            st = oom(z);
            break;
        }
        gn__tensor k = {0}, v = {0};
        st = init_contents(z, h, id, tab, &k, &v);
        table_data *have = NULL;
        for (size_t i = 0; st == GN_OK && i < out->n && !have; i++)
            if (strcmp(out->v[i].key, key) == 0) have = &out->v[i];
        if (st == GN_OK && have) {
            /* initialized twice: TF accepts the second when it has as many entries */
            if (gn__tensor_numel(&have->keys) != gn__tensor_numel(&k))
                st = gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                              "freezing signature '%s': table '%s' is initialized by '%s' and by '%s' with different "
                              "data",
                              z->sig, gn__node_name(h, tab), have->init, gn__node_name(h, id));
            gn__tensor_release(&k);
            gn__tensor_release(&v);
            free(key);
            continue;
        }
        if (st == GN_OK && out->n == out->cap) {
            size_t cap = out->cap ? 2 * out->cap : 8;
            table_data *nv = realloc(out->v, cap * sizeof *nv);
            if (!nv) st = oom(z);
            else {
                out->v = nv;
                out->cap = cap;
            }
        }
        char *iname = st == GN_OK ? strdup(gn__node_name(h, id)) : NULL;
        if (st == GN_OK && !iname) st = oom(z);
        if (st != GN_OK) {
            gn__tensor_release(&k);
            gn__tensor_release(&v);
            free(key);
            break;
        }
        out->v[out->n++] = (table_data){key, iname, k, v};
    }
    gn_graph_free(h);
    return st;
}

static gn_status add_const(freezer *z, const char *name, const gn__tensor *t, int32_t device, gn_id *out)
{
    GN_TRY(gn__node_add(z->f, name, "Const", out));
    gn__node_at(z->f, *out)->device = device;
    return set_tensor(z, *out, t);
}

/* "<base>/frozen_init" (or with "_<k>" when taken) into buf */
static void free_name(const gn_graph *f, const char *base, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", base, suffix);
    for (int k = 1; gn__graph_find(f, buf) != GN_NONE; k++) snprintf(buf, n, "%s/%s_%d", base, suffix, k);
}

/* The frozen graph's table tab gets its contents and its users a control edge on them. */
static gn_status freeze_table(freezer *z, gn_id tab, const tables *all)
{
    gn_graph *f = z->f;
    const char *op = gn__node_op(f, tab);
    char *tname = strdup(gn__node_name(f, tab));
    char *key = table_key(f, tab);
    gn_status st = tname && key ? GN_OK : oom(z);
    const table_data *d = NULL;
    for (size_t i = 0; st == GN_OK && i < all->n && !d; i++)
        if (strcmp(all->v[i].key, key) == 0) d = &all->v[i];
    if (st == GN_OK && strcmp(op, "HashTableV2") != 0)
        st = gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                      "freezing signature '%s': node '%s' (%s) is a lookup table of a kind that cannot be frozen "
                      "(only HashTableV2)",
                      z->sig, tname, op);
    else if (st == GN_OK && !d)
        st = gn__fail(&z->g->err, GN_ERR_UNSUPPORTED,
                      "freezing signature '%s': node '%s' (HashTableV2): no initializer of the table is in the "
                      "SavedModel",
                      z->sig, tname);
    size_t nl = tname ? strlen(tname) + 48 : 0;
    char *nm = st == GN_OK ? malloc(nl) : NULL;
    if (st == GN_OK && !nm) st = oom(z);
    gn_id init = GN_NONE, kc = GN_NONE, vc = GN_NONE;
    int32_t device = gn__node_at(f, tab)->device;
    if (st == GN_OK) {
        free_name(f, tname, "frozen_init", nm, nl);
        st = gn__node_add(f, nm, "InitializeTableV2", &init);
    }
    char *iname = NULL;
    if (st == GN_OK) {
        gn__node_at(f, init)->device = device;
        if (!(iname = strdup(nm))) st = oom(z);
    }
    if (st == GN_OK) {
        free_name(f, iname, "keys", nm, nl);
        st = add_const(z, nm, &d->keys, device, &kc);
    }
    if (st == GN_OK) {
        free_name(f, iname, "values", nm, nl);
        st = add_const(z, nm, &d->values, device, &vc);
    }
    free(iname);
    if (st == GN_OK) st = gn__node_add_input(f, init, (gn__edge){tab, 0});
    if (st == GN_OK) st = gn__node_add_input(f, init, (gn__edge){kc, 0});
    if (st == GN_OK) st = gn__node_add_input(f, init, (gn__edge){vc, 0});
    if (st == GN_OK) st = set_type(z, init, "Tkey", d->keys.dtype);
    if (st == GN_OK) st = set_type(z, init, "Tval", d->values.dtype);
    /* every user of the table (through resource pass-throughs) after the init */
    uint32_t cap = f->n_nodes + 1, n_wl = 0;
    gn_id *wl = st == GN_OK ? malloc(cap * sizeof *wl) : NULL;
    if (st == GN_OK && !wl) st = oom(z);
    if (st == GN_OK) wl[n_wl++] = tab;
    for (uint32_t w = 0; st == GN_OK && w < n_wl; w++) {
        const gn__node *n = gn__node_at(f, wl[w]);
        for (uint32_t u = 0; st == GN_OK && u < n->n_use; u++) {
            gn_id c = n->use[u].node;
            if (c == init) continue;
            int t = 0;
            if (is_passthrough(gn__node_op(f, c)) && gn__attr_get_type(f, c, "T", &t) && t == DT_RESOURCE) {
                bool seen = false;
                for (uint32_t q = 0; q < n_wl && !seen; q++) seen = wl[q] == c;
                if (!seen && n_wl < cap) wl[n_wl++] = c;
                continue;
            }
            st = gn__node_add_control(f, c, init);
            n = gn__node_at(f, wl[w]);
        }
    }
    free(wl);
    free(nm);
    free(tname);
    free(key);
    return st;
}

static gn_status freeze_tables(freezer *z)
{
    bool any = false;
    for (gn_id id = 0; id < z->f->n_nodes && !any; id++)
        any = gn__node_live(z->f, id) && is_table_op(gn__node_op(z->f, id));
    if (!any) return GN_OK;
    tables all = {0};
    gn_status st = collect_tables(z, &all);
    uint32_t n0 = z->f->n_nodes;
    for (gn_id id = 0; st == GN_OK && id < n0; id++)
        if (gn__node_live(z->f, id) && is_table_op(gn__node_op(z->f, id))) st = freeze_table(z, id, &all);
    tables_free(&all);
    return st;
}

/* "node:k" -> node id and output; GN_NONE when the node is absent. */
static gn_id find_tensor(const gn_graph *g, const char *t, uint32_t *index)
{
    const char *c = strrchr(t, ':');
    *index = 0;
    if (c && c[1]) {
        char *end = NULL;
        unsigned long k = strtoul(c + 1, &end, 10);
        if (end && *end == 0) {
            *index = (uint32_t)k;
            return gn__graph_find_n(g, t, (size_t)(c - t));
        }
    }
    return gn__graph_find(g, t);
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

gn_status gn_graph_freeze(gn_graph *g, const char *sig, gn_graph **out)
{
    *out = NULL;
    if (!g) return GN_ERR_ARG;
    gn__err_clear(&g->err);
    if (!gn__graph_saved(g)) return gn__fail(&g->err, GN_ERR_ARG, "freezing needs a graph loaded from a SavedModel");
    if (!sig) sig = gn_graph_default_signature(g);
    const Tensorflow__SignatureDef *sd = gn__savedmodel_signature(g, sig);
    if (!sd) {
        char *list = gn__savedmodel_signature_list(g);
        gn__fail(&g->err, GN_ERR_NOT_FOUND, "no signature '%s' in the SavedModel (signatures: %s)", sig,
                 list ? list : "?");
        free(list);
        return GN_ERR_NOT_FOUND;
    }
    /* the signature's tensors */
    /* the outputs and the inputs: every input stays, needed or not, so the
     * signature's feeds all name tensors of the frozen graph (as TF's frozen
     * function keeps all its arguments) */
    /* A sparse (COO) argument is three tensors: values, indices and
     * dense_shape, all kept, as TensorFlow's frozen function keeps the three
     * component arguments of a SparseTensor. */
    size_t n_fetch = 3 * (sd->n_outputs + sd->n_inputs);
    char **fetch = calloc(n_fetch + 1, sizeof *fetch);
    if (!fetch) return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
    size_t n_kept = 0;
    for (int32_t o = 0; o <= 1; o++) {
        size_t n = o ? sd->n_outputs : sd->n_inputs;
        for (size_t k = 0; k < n; k++) {
            const char *key = NULL;
            const Tensorflow__TensorInfo *ti = gn__savedmodel_sig_arg(sd, o, k, &key);
            const char *what = o ? "output" : "input";
            const char *parts[3] = {gn__savedmodel_tensor_name(ti), NULL, NULL};
            if (ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE && ti->coo_sparse) {
                parts[1] = ti->coo_sparse->indices_tensor_name;
                parts[2] = ti->coo_sparse->dense_shape_tensor_name;
            } else if (ti->encoding_case != TENSORFLOW__TENSOR_INFO__ENCODING_NAME) {
                free_names(fetch, n_fetch);
                return gn__fail(&g->err, GN_ERR_UNSUPPORTED,
                                "signature '%s': %s '%s' is a composite tensor: only dense and sparse tensors can "
                                "be frozen",
                                sig, what, key);
            }
            for (int p = 0; p < 3; p++) {
                const char *t = parts[p];
                if (!t) continue;
                uint32_t index = 0;
                gn_id id = find_tensor(g, t, &index);
                if (id == GN_NONE) {
                    free_names(fetch, n_fetch);
                    return gn__fail(&g->err, GN_ERR_NOT_FOUND,
                                    "signature '%s': %s '%s' names tensor '%s', which is not in the graph", sig,
                                    what, key, t);
                }
                int32_t no = gn__node_num_outputs(g, id);
                if (no >= 0 && index >= (uint32_t)no) {
                    free_names(fetch, n_fetch);
                    return gn__fail(&g->err, GN_ERR_NOT_FOUND,
                                    "signature '%s': %s '%s' names tensor '%s', but node '%s' has %d output%s", sig,
                                    what, key, t, gn__node_name(g, id), no, no == 1 ? "" : "s");
                }
                if (!(fetch[n_kept++] = strdup(gn__node_name(g, id)))) {
                    free_names(fetch, n_fetch);
                    return gn__fail(&g->err, GN_ERR_NOMEM, "out of memory");
                }
            }
        }
    }
    n_fetch = n_kept;

    freezer z = {.g = g, .sig = sig};
    gn_status st = map_object_graph(&z);
    if (st == GN_OK) st = map_restore_ops(&z);
    if (st == GN_OK) st = gn__graph_clone(g, &z.f);
    z.cur = z.f;
    if (st == GN_OK) {
        gn__attachment_drop(&z.f->saved);
        st = prune(&z, fetch, n_fetch);
    }
    /* every call opened, so variable handles reach their readers */
    bool has_calls = false;
    for (gn_id id = 0; st == GN_OK && id < z.f->n_nodes && !has_calls; id++)
        if (gn__node_live(z.f, id) && (func_attr(z.f, id) || gn__graph_find_function(z.f, gn__node_op(z.f, id))))
            has_calls = true;
    if (st == GN_OK && has_calls) {
        gn__inline_opts io = {.ignore_noinline = true, .ignore_xla = true, .drop_unused_fns = true};
        st = gn__inline_calls(z.f, &io, NULL, &z.f->err);
        if (st != GN_OK) gn__fail(&g->err, st, "freezing signature '%s': %s", sig, z.f->err.msg);
        else st = prune(&z, fetch, n_fetch);
    }
    if (st == GN_OK) st = freeze_tables(&z);
    uint32_t n0 = z.f ? z.f->n_nodes : 0;
    for (gn_id id = 0; st == GN_OK && id < n0; id++)
        if (gn__node_live(z.f, id) && is_var_op(gn__node_op(z.f, id))) st = convert_var(&z, id);
    if (st == GN_OK && z.n_fu) {
        st = fn_uses_run(&z, z.f, 0);
        /* the originals, with their resource arguments, are no longer called */
        if (st == GN_OK) st = gn__prune_library(z.f, false, NULL, &z.f->err);
    }
    if (st == GN_OK) st = prune(&z, fetch, n_fetch);
    if (st == GN_OK) {
        st = gn__graph_compact(z.f);
        if (st == GN_OK) st = gn__graph_validate(z.f);
        if (st != GN_OK) gn__fail(&g->err, st, "freezing signature '%s': %s", sig, z.f->err.msg);
    }
    /* a failure of a graph call leaves its message on the graph being frozen */
    if (st != GN_OK && !g->err.msg[0])
        gn__fail(&g->err, st, "freezing signature '%s': %s", sig,
                 z.f && z.f->err.msg[0] ? z.f->err.msg : gn_status_str(st));
    free_names(fetch, n_fetch);
    for (size_t i = 0; i < z.n_map; i++) {
        free(z.map[i].node);
        free(z.map[i].key);
    }
    free(z.map);
    free(z.fu);
    gn__bundle_close(z.bundle);
    if (st != GN_OK) {
        gn_graph_free(z.f);
        return st;
    }
    gn__err_clear(&z.f->err);
    z.f->fsync_writes = g->fsync_writes;
    *out = z.f;
    return GN_OK;
}
