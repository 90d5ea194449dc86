/* Lowering functional control flow to Switch / Merge (lower_control_flow,
 * key function.lower_control_flow), as TensorFlow's lower_if_op.cc does, for
 * the nodes TensorFlow lowers: those with `_lower_using_switch_merge` = true.
 *
 * function.lower_if: `y = If(pred, x0..xn)[then_branch=T, else_branch=E]`
 * becomes, with p = "<if>/":
 *   p+switch_pred = Switch(pred, pred)
 *   p+pivot_f = Identity(p+switch_pred:0)   p+pivot_t = Identity(p+switch_pred:1)
 *   p+input_<k> = Switch(xk, pred)                       (one per input)
 *   p+then = T(p+input_0:1, ..., ^p+pivot_t)             (a call by op name)
 *   p+else = E(p+input_0:0, ..., ^p+pivot_f)
 *   p+output_<k> = Merge(p+else:k, p+then:k)             (one per output)
 *   p+branch_executed = Merge(p+pivot_f, p+pivot_t)       (control consumers)
 * and the If node goes (kept as an IdentityN over the outputs, or a NoOp,
 * when it is preserved). The branch calls are then inlined by function.inline
 * in the same pass (their control input gates the constants of the bodies).
 * StatelessIf is lowered the same way.
 *
 * function.lower_while: `y = While(x0..xn)[cond=C, body=B, T]` becomes, as
 * lower_while_op.cc does, with p = "<while>/" and the frame named after the
 * While node:
 *   p+enter_<k> = Enter(xk)[frame_name=<while>, is_constant=false,
 *                           parallel_iterations from the While]
 *   p+merge_<k> = Merge(p+enter_<k>, p+next_iteration_<k>)
 *   p+cond = C(p+merge_0, ..., ^p+merge_0)          (a call by op name)
 *   p+loop_cond = LoopCond(p+cond)
 *   p+switch_<k> = Switch(p+merge_<k>, p+loop_cond)
 *   p+exit_<k> = Exit(p+switch_<k>)                  (consumers of "while:k")
 *   p+identity_<k> = Identity(p+switch_<k>:1)
 *   p+body = B(p+identity_0, ..., ^p+identity_0)    (a call by op name)
 *   p+next_iteration_<k> = NextIteration(p+body:k)
 * The control inputs from the first Merge / Identity keep the constants of
 * the inlined cond and body inside the frame (through their input control
 * nodes). Control consumers of the While wait on a NoOp
 * p+executed(^every exit). The While goes (kept as an IdentityN over the
 * exits when preserved). Calls created here are inlined by function.inline
 * in the same pass. Refused: a While with no inputs, one whose T is not a
 * type list matching its inputs.
 *
 * function.lower_case: `y = Case(i, x0..xn)[branches=B0..Bm-1]` becomes, as
 * lower_case_op.cc does, with p = "<case>/":
 *   p+branch_index = _SwitchN(i, i)[num_outs=m]   (output b live when branch b
 *                                                 runs; out of range: the last)
 *   p+pivot_<b> = Identity(p+branch_index:b)              (one per branch)
 *   p+input_<k> = _SwitchN(xk, i)[num_outs=m]              (one per input)
 *   p+branch<b> = Bb(p+input_0:b, ..., ^p+pivot_<b>)       (a call by op name)
 *   p+output_<k> = Merge(p+branch0:k, ..., p+branch<m-1>:k) (one per output)
 *   p+branch_executed = Merge(p+pivot_0, ..., ^p+branch0, ...)
 * (TensorFlow names the input switches after their producers and makes the
 * names unique with a counter; ours are numbered, as for If.) Control
 * consumers of the Case wait on branch_executed; the Case goes (kept as an
 * IdentityN over the outputs, or a NoOp, when it is preserved). The branch
 * calls are inlined by function.inline in the same pass. StatelessCase is
 * lowered the same way. Refused: no branches, a branch not in the library,
 * Tin / Tout not matching the inputs, a name already taken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/inline.h"
#include "optimizer/passes/function_impl.h"

#define DT_INT32 3
#define DT_BOOL 10

static bool marked(const gn_graph *g, gn_id id)
{
    bool b = false;
    return gn__attr_get_bool(g, id, "_lower_using_switch_merge", &b) && b;
}

static bool taken(const gn_graph *g, const char *base, const char *sfx)
{
    char nm[4096];
    int m = snprintf(nm, sizeof nm, "%s/%s", base, sfx);
    return m < 0 || (size_t)m >= sizeof nm || gn__graph_find(g, nm) != GN_NONE;
}

typedef struct lower_ctx {
    gn__pass_ctx *c;
    gn_graph *g;
    uint32_t dev;
    char base[2048];
} lower_ctx;

static gn_status mk(lower_ctx *L, const char *sfx, const char *op, gn_id *out)
{
    char nm[4096];
    snprintf(nm, sizeof nm, "%s/%s", L->base, sfx);
    gn_status s = gn__node_add(L->g, nm, op, out);
    if (s != GN_OK) return gn__fail(L->c->err, s, "%s", L->g->err.msg);
    L->g->nodes[*out].device = L->dev;
    return GN_OK;
}

static gn_status set(lower_ctx *L, gn_id id, const char *key, const Tensorflow__AttrValue *v)
{
    if (!v) return gn__fail(L->c->err, GN_ERR_NOMEM, "out of memory");
    gn_status s = gn__node_set_attr(L->g, id, key, v);
    return s == GN_OK ? s : gn__fail(L->c->err, s, "%s", L->g->err.msg);
}

static gn_status edge(lower_ctx *L, gn_id id, gn__edge e)
{
    gn_status s = gn__node_add_input(L->g, id, e);
    return s == GN_OK ? s : gn__fail(L->c->err, s, "%s", L->g->err.msg);
}

static gn_status ctl(lower_ctx *L, gn_id id, gn_id dep)
{
    gn_status s = gn__node_add_control(L->g, id, dep);
    return s == GN_OK ? s : gn__fail(L->c->err, s, "%s", L->g->err.msg);
}

static const Tensorflow__AttrValue *list_attr(const gn_graph *g, gn_id id, const char *key)
{
    const Tensorflow__AttrValue *v = gn__node_attr(g, id, key);
    return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list ? v : NULL;
}

/* Can If node id be lowered? Writes the reason when not. */
static bool if_lowerable(const gn_graph *g, gn_id id, char *why, size_t n)
{
    const gn__node *nd = &g->nodes[id];
    const Tensorflow__AttrValue *tb = gn__node_attr(g, id, "then_branch"), *eb = gn__node_attr(g, id, "else_branch");
    const Tensorflow__AttrValue *tin = list_attr(g, id, "Tin"), *tout = list_attr(g, id, "Tout");
    int tc = 0;
    if (!tb || !eb || tb->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC ||
        eb->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !tb->func || !eb->func) {
        snprintf(why, n, "no then_branch / else_branch function");
        return false;
    }
    gn__function *tf = gn__graph_find_function(g, tb->func->name), *ef = gn__graph_find_function(g, eb->func->name);
    if (!tf || !ef) {
        snprintf(why, n, "branch function '%s' is not in the library", tf ? eb->func->name : tb->func->name);
        return false;
    }
    if (!tin || !tout || nd->n_in < 1 || tin->list->n_type != nd->n_in - 1) {
        snprintf(why, n, "Tin / Tout do not match the inputs");
        return false;
    }
    if (!gn__attr_get_type(g, id, "Tcond", &tc) || tc != DT_BOOL) {
        snprintf(why, n, "the predicate is not bool");
        return false;
    }
    int32_t no = gn__node_num_outputs(g, id);
    if (no < 0 || (size_t)no != tout->list->n_type) {
        snprintf(why, n, "output count unknown");
        return false;
    }
    const char *base = gn__node_name(g, id);
    if (strlen(base) > 1900 || taken(g, base, "switch_pred") || taken(g, base, "pivot_f") ||
        taken(g, base, "pivot_t") || taken(g, base, "then") || taken(g, base, "else") ||
        taken(g, base, "branch_executed")) {
        snprintf(why, n, "a node name under '%s/' is already taken", base);
        return false;
    }
    for (uint32_t k = 0; k + 1 < nd->n_in || k < tout->list->n_type; k++) {
        char s1[32], s2[32];
        snprintf(s1, sizeof s1, "input_%u", k);
        snprintf(s2, sizeof s2, "output_%u", k);
        if ((k + 1 < nd->n_in && taken(g, base, s1)) || (k < tout->list->n_type && taken(g, base, s2))) {
            snprintf(why, n, "a node name under '%s/' is already taken", base);
            return false;
        }
    }
    return true;
}

/* The end of an If or Case lowering: the functional node's control edges move
 * to the lowered form's barrier `be`, the node goes, the nodes made since
 * `first` take its orig_index, and a node that must stay reachable by name
 * (preserved, or a control return) comes back under its own name as an
 * IdentityN of the lowered outputs (a NoOp when there are none) after the
 * barrier. */
static gn_status finish_lowering(lower_ctx *L, gn_id id, gn_id be, gn_id first, uint32_t name_id, uint32_t orig,
                                 bool keep, bool cret, const gn_id *outs, uint32_t nout,
                                 const Tensorflow__AttrValue *tout)
{
    gn_graph *g = L->g;
    gn_status s = gn__graph_forward_control(g, id, be);
    if (s == GN_OK) s = gn__node_remove(g, id);
    if (s != GN_OK) return gn__fail(L->c->err, s, "%s", g->err.msg);
    for (gn_id k = first; k < g->n_nodes; k++) g->nodes[k].orig_index = orig;
    if (!keep) return GN_OK;
    gn_id kid;
    s = gn__node_add_interned(g, name_id, gn__intern_cstr(g, nout ? "IdentityN" : "NoOp"), &kid);
    if (s != GN_OK) return gn__fail(L->c->err, s, "%s", g->err.msg);
    g->nodes[kid].device = L->dev;
    g->nodes[kid].orig_index = orig;
    g->nodes[kid].flags |= GN__NODE_PRESERVE;
    for (uint32_t k = 0; k < nout; k++)
        if ((s = edge(L, kid, (gn__edge){outs[k], 0})) != GN_OK) return s;
    if (nout && (s = set(L, kid, "T", tout)) != GN_OK) return s;
    if ((s = ctl(L, kid, be)) != GN_OK) return s;
    if (cret) gn__retarget_control_ret(g, id, kid);
    return GN_OK;
}

static gn_status lower_if(lower_ctx *L, gn_id id)
{
    gn_graph *g = L->g;
    const gn__node *nd = &g->nodes[id];
    const uint32_t nin = nd->n_in - 1;
    const Tensorflow__NameAttrList *tb = gn__node_attr(g, id, "then_branch")->func;
    const Tensorflow__NameAttrList *eb = gn__node_attr(g, id, "else_branch")->func;
    const Tensorflow__AttrValue *tin = list_attr(g, id, "Tin"), *tout = list_attr(g, id, "Tout");
    const uint32_t nout = (uint32_t)tout->list->n_type;
    const bool cret = gn__is_control_ret(g, id);
    const bool keep = (nd->flags & GN__NODE_PRESERVE) != 0 || cret;
    const uint32_t name_id = nd->name, orig = nd->orig_index;
    gn__edge pred = nd->in[0];
    L->dev = nd->device;
    snprintf(L->base, sizeof L->base, "%s", gn__node_name(g, id));
    gn_status s = GN_OK;
    gn_id *ins = malloc((nin + 1) * sizeof *ins);
    gn_id *outs = malloc((nout + 1) * sizeof *outs);
    gn__edge *in_e = malloc((nin + 1) * sizeof *in_e);
    gn_id *ctrl = malloc((nd->n_ctrl + 1) * sizeof *ctrl);
    uint32_t n_ctrl = nd->n_ctrl;
    if (!ins || !outs || !in_e || !ctrl) {
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (nin) memcpy(in_e, nd->in + 1, nin * sizeof *in_e);
    if (n_ctrl) memcpy(ctrl, nd->ctrl, n_ctrl * sizeof *ctrl);
    gn_id sw, pf, pt, tc, ec, be;
#define T_(x)                                                                                                        \
    do {                                                                                                             \
        s = (x);                                                                                                     \
        if (s != GN_OK) goto out;                                                                                    \
    } while (0)
    T_(mk(L, "switch_pred", "Switch", &sw));
    T_(set(L, sw, "T", gn__attr_new_type(g, DT_BOOL)));
    T_(edge(L, sw, pred));
    T_(edge(L, sw, pred));
    for (uint32_t k = 0; k < n_ctrl; k++) T_(ctl(L, sw, ctrl[k]));
    T_(mk(L, "pivot_f", "Identity", &pf));
    T_(set(L, pf, "T", gn__attr_new_type(g, DT_BOOL)));
    T_(edge(L, pf, (gn__edge){sw, 0}));
    T_(mk(L, "pivot_t", "Identity", &pt));
    T_(set(L, pt, "T", gn__attr_new_type(g, DT_BOOL)));
    T_(edge(L, pt, (gn__edge){sw, 1}));
    for (uint32_t k = 0; k < nin; k++) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "input_%u", k);
        T_(mk(L, sfx, "Switch", &ins[k]));
        T_(set(L, ins[k], "T", gn__attr_new_type(g, tin->list->type[k])));
        T_(edge(L, ins[k], in_e[k]));
        T_(edge(L, ins[k], pred));
        for (uint32_t j = 0; j < n_ctrl; j++) T_(ctl(L, ins[k], ctrl[j]));
    }
    for (int w = 0; w < 2; w++) {
        const Tensorflow__NameAttrList *f = w ? eb : tb;
        gn_id *cid = w ? &ec : &tc;
        T_(mk(L, w ? "else" : "then", f->name, cid));
        for (size_t a = 0; a < f->n_attr; a++) T_(set(L, *cid, f->attr[a]->key, f->attr[a]->value));
        for (uint32_t k = 0; k < nin; k++) T_(edge(L, *cid, (gn__edge){ins[k], w ? 0u : 1u}));
        T_(ctl(L, *cid, w ? pf : pt));
    }
    for (uint32_t k = 0; k < nout; k++) {
        char sfx[32];
        snprintf(sfx, sizeof sfx, "output_%u", k);
        T_(mk(L, sfx, "Merge", &outs[k]));
        T_(set(L, outs[k], "N", gn__attr_new_int(g, 2)));
        T_(set(L, outs[k], "T", gn__attr_new_type(g, tout->list->type[k])));
        T_(edge(L, outs[k], (gn__edge){ec, k}));
        T_(edge(L, outs[k], (gn__edge){tc, k}));
        s = gn__graph_forward_output(g, (gn__edge){id, k}, (gn__edge){outs[k], 0});
        if (s != GN_OK) {
            s = gn__fail(L->c->err, s, "%s", g->err.msg);
            goto out;
        }
    }
    T_(mk(L, "branch_executed", "Merge", &be));
    T_(set(L, be, "N", gn__attr_new_int(g, 2)));
    T_(set(L, be, "T", gn__attr_new_type(g, DT_BOOL)));
    T_(edge(L, be, (gn__edge){pf, 0}));
    T_(edge(L, be, (gn__edge){pt, 0}));
    gn_id first = sw;
    T_(finish_lowering(L, id, be, first, name_id, orig, keep, cret, outs, nout, tout));
#undef T_
out:
    free(ins);
    free(outs);
    free(in_e);
    free(ctrl);
    return s;
}

static bool while_lowerable(const gn_graph *g, gn_id id, char *why, size_t n)
{
    const gn__node *nd = &g->nodes[id];
    const Tensorflow__AttrValue *cb = gn__node_attr(g, id, "cond"), *bb = gn__node_attr(g, id, "body");
    const Tensorflow__AttrValue *t = list_attr(g, id, "T");
    if (!cb || !bb || cb->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC ||
        bb->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !cb->func || !bb->func) {
        snprintf(why, n, "no cond / body function");
        return false;
    }
    if (!gn__graph_find_function(g, cb->func->name) || !gn__graph_find_function(g, bb->func->name)) {
        snprintf(why, n, "function '%s' is not in the library",
                 gn__graph_find_function(g, cb->func->name) ? bb->func->name : cb->func->name);
        return false;
    }
    if (nd->n_in == 0) {
        snprintf(why, n, "no loop variables");
        return false;
    }
    if (!t || t->list->n_type != nd->n_in) {
        snprintf(why, n, "T does not match the inputs");
        return false;
    }
    const char *base = gn__node_name(g, id);
    static const char *const fixed[] = {"cond", "loop_cond", "body", "executed"};
    for (size_t k = 0; k < 4; k++)
        if (strlen(base) > 1900 || taken(g, base, fixed[k])) {
            snprintf(why, n, "a node name under '%s/' is already taken", base);
            return false;
        }
    static const char *const per[] = {"enter_", "merge_", "switch_", "exit_", "identity_", "next_iteration_"};
    for (uint32_t k = 0; k < nd->n_in; k++)
        for (size_t j = 0; j < 6; j++) {
            char sfx[64];
            snprintf(sfx, sizeof sfx, "%s%u", per[j], k);
            if (taken(g, base, sfx)) {
                snprintf(why, n, "a node name under '%s/' is already taken", base);
                return false;
            }
        }
    return true;
}

static gn_status lower_while(lower_ctx *L, gn_id id)
{
    gn_graph *g = L->g;
    const gn__node *nd = &g->nodes[id];
    const uint32_t n = nd->n_in;
    const Tensorflow__NameAttrList *cf = gn__node_attr(g, id, "cond")->func;
    const Tensorflow__NameAttrList *bf = gn__node_attr(g, id, "body")->func;
    const Tensorflow__AttrValue *t = list_attr(g, id, "T");
    const bool cret = gn__is_control_ret(g, id);
    const bool keep = (nd->flags & GN__NODE_PRESERVE) != 0 || cret;
    const bool has_cuse = nd->n_cuse > 0;
    const uint32_t name_id = nd->name, orig = nd->orig_index;
    int64_t par = 10;
    gn__attr_get_int(g, id, "parallel_iterations", &par);
    L->dev = nd->device;
    snprintf(L->base, sizeof L->base, "%s", gn__node_name(g, id));
    gn_status s = GN_OK;
    gn_id *enter = malloc(n * sizeof *enter), *merge = malloc(n * sizeof *merge), *sw = malloc(n * sizeof *sw);
    gn_id *ex = malloc(n * sizeof *ex), *idn = malloc(n * sizeof *idn), *nx = malloc(n * sizeof *nx);
    gn__edge *in_e = malloc(n * sizeof *in_e);
    gn_id *ctrl = malloc((nd->n_ctrl + 1) * sizeof *ctrl);
    uint32_t n_ctrl = nd->n_ctrl;
    gn_id first = g->n_nodes;
    if (!enter || !merge || !sw || !ex || !idn || !nx || !in_e || !ctrl) {
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "out of memory");
        goto out;
    }
    memcpy(in_e, nd->in, n * sizeof *in_e);
    if (n_ctrl) memcpy(ctrl, nd->ctrl, n_ctrl * sizeof *ctrl);
    Tensorflow__AttrValue *frame = gn__attr_new_string(g, L->base, strlen(L->base));
    Tensorflow__AttrValue *notconst = gn__attr_new_bool(g, false), *pi = gn__attr_new_int(g, par);
    Tensorflow__AttrValue *two = gn__attr_new_int(g, 2);
#define T_(x)                                                                                                        \
    do {                                                                                                             \
        s = (x);                                                                                                     \
        if (s != GN_OK) goto out;                                                                                    \
    } while (0)
    char sfx[64];
    for (uint32_t k = 0; k < n; k++) {
        Tensorflow__AttrValue *ty = gn__attr_new_type(g, t->list->type[k]);
        snprintf(sfx, sizeof sfx, "enter_%u", k);
        T_(mk(L, sfx, "Enter", &enter[k]));
        T_(set(L, enter[k], "T", ty));
        T_(set(L, enter[k], "frame_name", frame));
        T_(set(L, enter[k], "is_constant", notconst));
        T_(set(L, enter[k], "parallel_iterations", pi));
        T_(edge(L, enter[k], in_e[k]));
        for (uint32_t j = 0; j < n_ctrl; j++) T_(ctl(L, enter[k], ctrl[j]));
        snprintf(sfx, sizeof sfx, "merge_%u", k);
        T_(mk(L, sfx, "Merge", &merge[k]));
        T_(set(L, merge[k], "T", ty));
        T_(set(L, merge[k], "N", two));
        T_(edge(L, merge[k], (gn__edge){enter[k], 0}));
    }
    gn_id cc, lc, bc;
    T_(mk(L, "cond", cf->name, &cc));
    for (size_t a = 0; a < cf->n_attr; a++) T_(set(L, cc, cf->attr[a]->key, cf->attr[a]->value));
    for (uint32_t k = 0; k < n; k++) T_(edge(L, cc, (gn__edge){merge[k], 0}));
    T_(ctl(L, cc, merge[0]));
    T_(mk(L, "loop_cond", "LoopCond", &lc));
    T_(edge(L, lc, (gn__edge){cc, 0}));
    for (uint32_t k = 0; k < n; k++) {
        Tensorflow__AttrValue *ty = gn__attr_new_type(g, t->list->type[k]);
        snprintf(sfx, sizeof sfx, "switch_%u", k);
        T_(mk(L, sfx, "Switch", &sw[k]));
        T_(set(L, sw[k], "T", ty));
        T_(edge(L, sw[k], (gn__edge){merge[k], 0}));
        T_(edge(L, sw[k], (gn__edge){lc, 0}));
        snprintf(sfx, sizeof sfx, "exit_%u", k);
        T_(mk(L, sfx, "Exit", &ex[k]));
        T_(set(L, ex[k], "T", ty));
        T_(edge(L, ex[k], (gn__edge){sw[k], 0}));
        snprintf(sfx, sizeof sfx, "identity_%u", k);
        T_(mk(L, sfx, "Identity", &idn[k]));
        T_(set(L, idn[k], "T", ty));
        T_(edge(L, idn[k], (gn__edge){sw[k], 1}));
    }
    T_(mk(L, "body", bf->name, &bc));
    for (size_t a = 0; a < bf->n_attr; a++) T_(set(L, bc, bf->attr[a]->key, bf->attr[a]->value));
    for (uint32_t k = 0; k < n; k++) T_(edge(L, bc, (gn__edge){idn[k], 0}));
    T_(ctl(L, bc, idn[0]));
    for (uint32_t k = 0; k < n; k++) {
        snprintf(sfx, sizeof sfx, "next_iteration_%u", k);
        T_(mk(L, sfx, "NextIteration", &nx[k]));
        T_(set(L, nx[k], "T", gn__attr_new_type(g, t->list->type[k])));
        T_(edge(L, nx[k], (gn__edge){bc, k}));
        T_(edge(L, merge[k], (gn__edge){nx[k], 0}));
        s = gn__graph_forward_output(g, (gn__edge){id, k}, (gn__edge){ex[k], 0});
        if (s != GN_OK) {
            s = gn__fail(L->c->err, s, "%s", g->err.msg);
            goto out;
        }
    }
    gn_id done = GN_NONE;
    if (has_cuse || keep) {
        T_(mk(L, "executed", "NoOp", &done));
        for (uint32_t k = 0; k < n; k++) T_(ctl(L, done, ex[k]));
    }
    /* no control consumer: nothing is forwarded, done may be none */
    T_(finish_lowering(L, id, done, first, name_id, orig, keep, cret, ex, n, t));
#undef T_
out:
    free(enter);
    free(merge);
    free(sw);
    free(ex);
    free(idn);
    free(nx);
    free(in_e);
    free(ctrl);
    return s;
}

/* ---- Case ------------------------------------------------------------------------------------ */
static bool case_lowerable(const gn_graph *g, gn_id id, char *why, size_t n)
{
    const gn__node *nd = &g->nodes[id];
    const Tensorflow__AttrValue *br = list_attr(g, id, "branches");
    const Tensorflow__AttrValue *tin = list_attr(g, id, "Tin"), *tout = list_attr(g, id, "Tout");
    if (!br || br->list->n_func == 0) {
        snprintf(why, n, "no branch functions");
        return false;
    }
    if (br->list->n_func > 4096) {
        snprintf(why, n, "%zu branches (at most 4096)", br->list->n_func);
        return false;
    }
    for (size_t b = 0; b < br->list->n_func; b++) {
        const Tensorflow__NameAttrList *f = br->list->func[b];
        if (!f || !f->name || !gn__graph_find_function(g, f->name)) {
            snprintf(why, n, "branch function '%s' is not in the library", f && f->name ? f->name : "");
            return false;
        }
    }
    if (!tin || !tout || nd->n_in < 1 || tin->list->n_type != nd->n_in - 1) {
        snprintf(why, n, "Tin / Tout do not match the inputs");
        return false;
    }
    int32_t no = gn__node_num_outputs(g, id);
    if (no < 0 || (size_t)no != tout->list->n_type) {
        snprintf(why, n, "output count unknown");
        return false;
    }
    const char *base = gn__node_name(g, id);
    if (strlen(base) > 1900 || taken(g, base, "branch_index") || taken(g, base, "branch_executed")) {
        snprintf(why, n, "a node name under '%s/' is already taken", base);
        return false;
    }
    for (uint32_t k = 0; k < br->list->n_func; k++) {
        char s1[32], s2[32];
        snprintf(s1, sizeof s1, "pivot_%u", k);
        snprintf(s2, sizeof s2, "branch%u", k);
        if (taken(g, base, s1) || taken(g, base, s2)) {
            snprintf(why, n, "a node name under '%s/' is already taken", base);
            return false;
        }
    }
    for (uint32_t k = 0; k + 1 < nd->n_in || k < tout->list->n_type; k++) {
        char s1[32], s2[32];
        snprintf(s1, sizeof s1, "input_%u", k);
        snprintf(s2, sizeof s2, "output_%u", k);
        if ((k + 1 < nd->n_in && taken(g, base, s1)) || (k < tout->list->n_type && taken(g, base, s2))) {
            snprintf(why, n, "a node name under '%s/' is already taken", base);
            return false;
        }
    }
    return true;
}

static gn_status lower_case(lower_ctx *L, gn_id id)
{
    gn_graph *g = L->g;
    const gn__node *nd = &g->nodes[id];
    const uint32_t nin = nd->n_in - 1;
    const Tensorflow__AttrValue *br = list_attr(g, id, "branches");
    const Tensorflow__AttrValue *tin = list_attr(g, id, "Tin"), *tout = list_attr(g, id, "Tout");
    const uint32_t nb = (uint32_t)br->list->n_func;
    const uint32_t nout = (uint32_t)tout->list->n_type;
    const bool cret = gn__is_control_ret(g, id);
    const bool keep = (nd->flags & GN__NODE_PRESERVE) != 0 || cret;
    const uint32_t name_id = nd->name, orig = nd->orig_index;
    gn__edge index = nd->in[0];
    L->dev = nd->device;
    snprintf(L->base, sizeof L->base, "%s", gn__node_name(g, id));
    gn_status s = GN_OK;
    gn_id *ins = malloc((nin + 1) * sizeof *ins);
    gn_id *outs = malloc((nout + 1) * sizeof *outs);
    gn_id *piv = malloc(nb * sizeof *piv), *call = malloc(nb * sizeof *call);
    gn__edge *in_e = malloc((nin + 1) * sizeof *in_e);
    gn_id *ctrl = malloc((nd->n_ctrl + 1) * sizeof *ctrl);
    uint32_t n_ctrl = nd->n_ctrl;
    gn_id first = g->n_nodes;
    if (!ins || !outs || !piv || !call || !in_e || !ctrl) {
        s = gn__fail(L->c->err, GN_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (nin) memcpy(in_e, nd->in + 1, nin * sizeof *in_e);
    if (n_ctrl) memcpy(ctrl, nd->ctrl, n_ctrl * sizeof *ctrl);
    Tensorflow__AttrValue *nouts = gn__attr_new_int(g, nb), *nmerge = gn__attr_new_int(g, nb);
    gn_id bi, be;
#define T_(x)                                                                                                        \
    do {                                                                                                             \
        s = (x);                                                                                                     \
        if (s != GN_OK) goto out;                                                                                    \
    } while (0)
    /* the pivots: one live per run, the one of the taken branch */
    T_(mk(L, "branch_index", "_SwitchN", &bi));
    T_(set(L, bi, "T", gn__attr_new_type(g, DT_INT32)));
    T_(set(L, bi, "num_outs", nouts));
    T_(edge(L, bi, index));
    T_(edge(L, bi, index));
    for (uint32_t k = 0; k < n_ctrl; k++) T_(ctl(L, bi, ctrl[k]));
    char sfx[32];
    for (uint32_t b = 0; b < nb; b++) {
        snprintf(sfx, sizeof sfx, "pivot_%u", b);
        T_(mk(L, sfx, "Identity", &piv[b]));
        T_(set(L, piv[b], "T", gn__attr_new_type(g, DT_INT32)));
        T_(edge(L, piv[b], (gn__edge){bi, b}));
    }
    /* the inputs: output b of "input_<k>" is live when branch b runs */
    for (uint32_t k = 0; k < nin; k++) {
        snprintf(sfx, sizeof sfx, "input_%u", k);
        T_(mk(L, sfx, "_SwitchN", &ins[k]));
        T_(set(L, ins[k], "T", gn__attr_new_type(g, tin->list->type[k])));
        T_(set(L, ins[k], "num_outs", nouts));
        T_(edge(L, ins[k], in_e[k]));
        T_(edge(L, ins[k], index));
        for (uint32_t j = 0; j < n_ctrl; j++) T_(ctl(L, ins[k], ctrl[j]));
    }
    for (uint32_t b = 0; b < nb; b++) {
        const Tensorflow__NameAttrList *f = br->list->func[b];
        snprintf(sfx, sizeof sfx, "branch%u", b);
        T_(mk(L, sfx, f->name, &call[b]));
        for (size_t a = 0; a < f->n_attr; a++) T_(set(L, call[b], f->attr[a]->key, f->attr[a]->value));
        for (uint32_t k = 0; k < nin; k++) T_(edge(L, call[b], (gn__edge){ins[k], b}));
        T_(ctl(L, call[b], piv[b]));
    }
    for (uint32_t k = 0; k < nout; k++) {
        snprintf(sfx, sizeof sfx, "output_%u", k);
        T_(mk(L, sfx, "Merge", &outs[k]));
        T_(set(L, outs[k], "N", nmerge));
        T_(set(L, outs[k], "T", gn__attr_new_type(g, tout->list->type[k])));
        for (uint32_t b = 0; b < nb; b++) T_(edge(L, outs[k], (gn__edge){call[b], k}));
        s = gn__graph_forward_output(g, (gn__edge){id, k}, (gn__edge){outs[k], 0});
        if (s != GN_OK) {
            s = gn__fail(L->c->err, s, "%s", g->err.msg);
            goto out;
        }
    }
    /* runs once the taken branch ran, side effects included (the branch
     * calls' control outputs), whether or not it has outputs */
    T_(mk(L, "branch_executed", "Merge", &be));
    T_(set(L, be, "N", nmerge));
    T_(set(L, be, "T", gn__attr_new_type(g, DT_INT32)));
    for (uint32_t b = 0; b < nb; b++) T_(edge(L, be, (gn__edge){piv[b], 0}));
    for (uint32_t b = 0; b < nb; b++) T_(ctl(L, be, call[b]));
    T_(finish_lowering(L, id, be, first, name_id, orig, keep, cret, outs, nout, tout));
#undef T_
out:
    free(ins);
    free(outs);
    free(piv);
    free(call);
    free(in_e);
    free(ctrl);
    return s;
}

gn_status gn__fn_lower_control_flow(gn__pass_ctx *c, gn_graph *g)
{
    lower_ctx *L = malloc(sizeof *L);
    if (!L) return gn__fail(c->err, GN_ERR_NOMEM, "out of memory");
    L->c = c;
    L->g = g;
    char why[512];
    gn_status s = GN_OK;
    gn_id n0 = g->n_nodes;
    for (gn_id i = 0; i < n0 && s == GN_OK; i++) {
        if (!gn__node_live(g, i)) continue;
        const char *op = gn__node_op(g, i);
        bool is_if = strcmp(op, "If") == 0 || strcmp(op, "StatelessIf") == 0;
        bool is_while = strcmp(op, "While") == 0 || strcmp(op, "StatelessWhile") == 0;
        bool is_case = strcmp(op, "Case") == 0 || strcmp(op, "StatelessCase") == 0;
        if (!is_if && !is_while && !is_case) continue;
        const char *pat = is_if ? "function.lower_if" : is_while ? "function.lower_while" : "function.lower_case";
        if (!gn__pattern_enabled(c, pat)) continue;
        if (!marked(g, i)) {
            gn__pass_refused(c, pat, g, i, "not lowered: no _lower_using_switch_merge attr");
            continue;
        }
        if (is_while) {
            if (!while_lowerable(g, i, why, sizeof why)) {
                gn__pass_refused(c, pat, g, i, "not lowered: %s", why);
                continue;
            }
            char wname[2048];
            snprintf(wname, sizeof wname, "%s", gn__node_name(g, i));
            s = lower_while(L, i);
            if (s != GN_OK) break;
            c->changed = true;
            gn__pass_rewrote(c, pat, g, GN_NONE, "lowered While '%s' to Enter / Merge / Switch / Exit / NextIteration",
                             wname);
            continue;
        }
        if (is_case) {
            if (!case_lowerable(g, i, why, sizeof why)) {
                gn__pass_refused(c, pat, g, i, "not lowered: %s", why);
                continue;
            }
            char cname[2048];
            snprintf(cname, sizeof cname, "%s", gn__node_name(g, i));
            s = lower_case(L, i);
            if (s != GN_OK) break;
            c->changed = true;
            gn__pass_rewrote(c, pat, g, GN_NONE, "lowered Case '%s' to _SwitchN / Merge", cname);
            continue;
        }
        if (!if_lowerable(g, i, why, sizeof why)) {
            gn__pass_refused(c, pat, g, i, "not lowered: %s", why);
            continue;
        }
        char name[2048];
        snprintf(name, sizeof name, "%s", gn__node_name(g, i));
        s = lower_if(L, i);
        if (s != GN_OK) break;
        c->changed = true;
        gn__pass_rewrote(c, pat, g, GN_NONE, "lowered If '%s' to Switch / Merge", name);
    }
    free(L);
    return s;
}
