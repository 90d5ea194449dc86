/* The graph IR: mutation with fanouts kept current, topological order, deep
 * graphs, compaction, clone, function bodies (node:out_arg:index inputs), the
 * validator's messages, unknown fields and SavedModel MetaGraphDef choice.
 * Every test asserts exact results so that it fails when the feature breaks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir.h"
#include "grapnel/grapnel.h"
#include "io/textformat.h"
#include "tensorflow/core/protobuf/meta_graph.pb-c.h"
#include "tensorflow/core/protobuf/saved_model.pb-c.h"
#include "testutil.h"
#include "passtest.h"

/* ---- helpers ------------------------------------------------------------------------- */

static gn_id nid(const gn_graph *g, const char *name)
{
    gn_id id = gn__graph_find(g, name);
    if (id == GN_NONE) fail_msg("no node '%s'", name);
    return id;
}

static void check_ok(gn_graph *g)
{
    gn_status s = gn__graph_check_fanouts(g);
    if (s != GN_OK) fail_msg("check_fanouts: %s", gn_graph_errmsg(g));
}

/* A fanout entry by names, for readable expectations. */
typedef struct use_exp {
    const char *node;
    uint32_t slot;
} use_exp;

static void expect_uses(const gn_graph *g, const char *prod, size_t n, const use_exp *want)
{
    const gn__node *p = gn__node_at(g, nid(g, prod));
    bool ok = p->n_use == n;
    for (size_t k = 0; ok && k < n; k++)
        ok = p->use[k].node == nid(g, want[k].node) && p->use[k].slot == want[k].slot;
    if (ok) return;
    char got[2048] = "", exp[2048] = "";
    size_t o = 0;
    for (uint32_t k = 0; k < p->n_use && o < sizeof got; k++)
        o += (size_t)snprintf(got + o, sizeof got - o, " (%s,%u)", gn__node_name(g, p->use[k].node), p->use[k].slot);
    o = 0;
    for (size_t k = 0; k < n && o < sizeof exp; k++)
        o += (size_t)snprintf(exp + o, sizeof exp - o, " (%s,%u)", want[k].node, want[k].slot);
    fail_msg("fanouts of '%s':%s\nwanted:%s", prod, got, exp);
}

#define USES(g, prod, ...)                                                                                    \
    expect_uses((g), (prod), sizeof((const use_exp[]){__VA_ARGS__}) / sizeof(use_exp), (const use_exp[]){__VA_ARGS__})
#define NO_USES(g, prod) expect_uses((g), (prod), 0, NULL)

static void expect_cuses(const gn_graph *g, const char *prod, size_t n, const char *const *want)
{
    const gn__node *p = gn__node_at(g, nid(g, prod));
    bool ok = p->n_cuse == n;
    for (size_t k = 0; ok && k < n; k++) ok = p->cuse[k] == nid(g, want[k]);
    if (ok) return;
    char got[2048] = "";
    size_t o = 0;
    for (uint32_t k = 0; k < p->n_cuse && o < sizeof got; k++)
        o += (size_t)snprintf(got + o, sizeof got - o, " %s", gn__node_name(g, p->cuse[k]));
    fail_msg("control fanouts of '%s':%s (wanted %zu)", prod, got, n);
}

#define CUSES(g, prod, ...)                                                                                  \
    expect_cuses((g), (prod), sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *),             \
                 (const char *const[]){__VA_ARGS__})
#define NO_CUSES(g, prod) expect_cuses((g), (prod), 0, NULL)

static void expect_ctrl(const gn_graph *g, const char *node, size_t n, const char *const *want)
{
    const gn__node *c = gn__node_at(g, nid(g, node));
    bool ok = c->n_ctrl == n;
    for (size_t k = 0; ok && k < n; k++) ok = c->ctrl[k] == nid(g, want[k]);
    if (!ok) fail_msg("control inputs of '%s': %u, wanted %zu", node, c->n_ctrl, n);
}

#define CTRL(g, node, ...)                                                                                   \
    expect_ctrl((g), (node), sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *),              \
                (const char *const[]){__VA_ARGS__})
#define NO_CTRL(g, node) expect_ctrl((g), (node), 0, NULL)

static void expect_in(const gn_graph *g, const char *node, uint32_t slot, const char *prod, uint32_t index)
{
    const gn__node *c = gn__node_at(g, nid(g, node));
    if (slot >= c->n_in) fail_msg("'%s' has %u inputs, wanted slot %u", node, c->n_in, slot);
    if (c->in[slot].node != nid(g, prod) || c->in[slot].index != index)
        fail_msg("'%s' input %u is %s:%u, wanted %s:%u", node, slot, gn__node_name(g, c->in[slot].node),
                 c->in[slot].index, prod, index);
}

static void expect_msg(const gn_graph *g, const char *want)
{
    if (strcmp(gn_graph_errmsg(g), want) != 0) fail_msg("message:\n  %s\nwanted:\n  %s", gn_graph_errmsg(g), want);
}

static gn__edge E(gn_id n, uint32_t i) { return (gn__edge){n, i}; }

/* ---- mutation API ---------------------------------------------------------------------- */
static const char *MUT_GRAPH =
    "node { name: 'a' op: 'Placeholder' }\n"
    "node { name: 'b' op: 'Placeholder' }\n"
    "node { name: 'dim' op: 'Const' }\n"
    "node { name: 's' op: 'Split' input: 'dim' input: 'a' }\n"
    "node { name: 'p' op: 'Identity' input: 's' }\n"
    "node { name: 'q' op: 'Identity' input: 's:1' }\n"
    "node { name: 'r' op: 'AddV2' input: 'b' input: 's' }\n"
    "node { name: 'y' op: 'AddN' input: 'a' input: 'b' input: 'a' }\n"
    "node { name: 'k' op: 'NoOp' input: '^s' input: '^a' }\n"
    "node { name: 'm' op: 'NoOp' input: '^s' }\n";

static void test_mutation(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(MUT_GRAPH, 0);
    check_ok(g);
    /* fanouts as loaded: in consumer order, then slot order */
    USES(g, "a", {"s", 1}, {"y", 0}, {"y", 2});
    USES(g, "b", {"r", 0}, {"y", 1});
    USES(g, "dim", {"s", 0});
    USES(g, "s", {"p", 0}, {"q", 0}, {"r", 1});
    CUSES(g, "s", "k", "m");
    CUSES(g, "a", "k");
    NO_USES(g, "y");

    /* add a node; a second one with the same name fails */
    gn_id n;
    assert_int_equal(gn__node_add(g, "n", "Identity", &n), GN_OK);
    assert_int_equal(n, 10);
    assert_int_equal(nid(g, "n"), n);
    assert_int_equal(g->n_live, 11);
    assert_int_equal(gn__node_add(g, "n", "Identity", NULL), GN_ERR_GRAPH);
    expect_msg(g, "duplicate node name 'n'");
    assert_int_equal(g->n_live, 11);
    assert_int_equal(gn__node_add_input(g, n, E(nid(g, "a"), 0)), GN_OK);
    USES(g, "a", {"s", 1}, {"y", 0}, {"y", 2}, {"n", 0});
    check_ok(g);

    /* set an input: the old producer loses the fanout, the new one gains it */
    gn_id y = nid(g, "y");
    assert_int_equal(gn__node_set_input(g, y, 1, E(nid(g, "s"), 1)), GN_OK);
    expect_in(g, "y", 1, "s", 1);
    USES(g, "b", {"r", 0});
    USES(g, "s", {"p", 0}, {"q", 0}, {"r", 1}, {"y", 1});
    check_ok(g);
    assert_int_equal(gn__node_set_input(g, y, 5, E(nid(g, "b"), 0)), GN_ERR_ARG);
    expect_msg(g, "node 'y': no input 5");
    check_ok(g);

    /* remove input 0 of y (a, s:1, a): later slots shift, their producers' slots follow */
    assert_int_equal(gn__node_remove_input(g, y, 0), GN_OK);
    assert_int_equal(gn__node_at(g, y)->n_in, 2);
    expect_in(g, "y", 0, "s", 1);
    expect_in(g, "y", 1, "a", 0);
    USES(g, "a", {"s", 1}, {"y", 1}, {"n", 0});
    USES(g, "s", {"p", 0}, {"q", 0}, {"r", 1}, {"y", 0});
    check_ok(g);
    assert_int_equal(gn__node_remove_input(g, y, 2), GN_ERR_ARG);
    check_ok(g);

    /* forward output 0 of s to b: only consumers of s:0 move */
    assert_int_equal(gn__graph_forward_output(g, E(nid(g, "s"), 0), E(nid(g, "b"), 0)), GN_OK);
    expect_in(g, "p", 0, "b", 0);
    expect_in(g, "r", 1, "b", 0);
    expect_in(g, "q", 0, "s", 1);
    expect_in(g, "y", 0, "s", 1);
    USES(g, "s", {"q", 0}, {"y", 0});
    USES(g, "b", {"r", 0}, {"p", 0}, {"r", 1});
    check_ok(g);
    /* forwarding an output with no consumers changes nothing */
    assert_int_equal(gn__graph_forward_output(g, E(nid(g, "s"), 0), E(nid(g, "a"), 0)), GN_OK);
    USES(g, "s", {"q", 0}, {"y", 0});
    check_ok(g);

    /* add a control dependency, twice: no duplicate */
    assert_int_equal(gn__node_add_control(g, n, nid(g, "s")), GN_OK);
    assert_int_equal(gn__node_add_control(g, n, nid(g, "s")), GN_OK);
    CTRL(g, "n", "s");
    CUSES(g, "s", "k", "m", "n");
    check_ok(g);

    /* forward control of s to a: k already depended on a and gets no duplicate */
    assert_int_equal(gn__graph_forward_control(g, nid(g, "s"), nid(g, "a")), GN_OK);
    NO_CUSES(g, "s");
    CTRL(g, "k", "a");
    CTRL(g, "m", "a");
    CTRL(g, "n", "a");
    CUSES(g, "a", "k", "n", "m");
    check_ok(g);

    /* forwarding control to the node itself changes nothing */
    assert_int_equal(gn__graph_forward_control(g, nid(g, "a"), nid(g, "a")), GN_OK);
    CUSES(g, "a", "k", "n", "m");
    CTRL(g, "m", "a");
    check_ok(g);

    /* remove a control dependency; removing an absent one is a no-op */
    assert_int_equal(gn__node_remove_control(g, nid(g, "m"), nid(g, "a")), GN_OK);
    NO_CTRL(g, "m");
    CUSES(g, "a", "k", "n");
    assert_int_equal(gn__node_remove_control(g, nid(g, "m"), nid(g, "a")), GN_OK);
    CUSES(g, "a", "k", "n");
    check_ok(g);

    /* removing a node with data consumers fails and changes nothing */
    gn_id a = nid(g, "a");
    assert_int_equal(gn__node_remove(g, a), GN_ERR_GRAPH);
    expect_msg(g, "cannot remove node 'a': node 's' still consumes it");
    assert_true(gn__node_live(g, a));
    assert_int_equal(g->n_live, 11);
    USES(g, "a", {"s", 1}, {"y", 1}, {"n", 0});
    check_ok(g);

    /* removing a leaf: its producers lose their fanouts, its name is free */
    gn_id q = nid(g, "q");
    assert_int_equal(gn__node_remove(g, q), GN_OK);
    assert_false(gn__node_live(g, q));
    assert_int_equal(gn__graph_find(g, "q"), GN_NONE);
    assert_int_equal(g->n_live, 10);
    USES(g, "s", {"y", 0});
    check_ok(g);
    assert_int_equal(gn__node_remove(g, q), GN_OK); /* already removed: no-op */
    assert_int_equal(g->n_live, 10);
    assert_int_equal(gn__node_remove(g, nid(g, "k")), GN_OK);
    CUSES(g, "a", "n");
    check_ok(g);

    /* a removed node's control consumers lose that dependency */
    assert_int_equal(gn__node_add_control(g, nid(g, "p"), nid(g, "m")), GN_OK);
    CUSES(g, "m", "p");
    assert_int_equal(gn__node_remove(g, nid(g, "m")), GN_OK);
    NO_CTRL(g, "p");
    check_ok(g);

    /* inputs may not name removed nodes */
    assert_int_equal(gn__node_add_input(g, nid(g, "p"), E(q, 0)), GN_ERR_GRAPH);
    expect_msg(g, "node 'p': input names a removed or invalid node");
    assert_int_equal(gn__node_add_control(g, nid(g, "p"), q), GN_ERR_GRAPH);
    check_ok(g);

    /* the name can be used again */
    gn_id q2;
    assert_int_equal(gn__node_add(g, "q", "Identity", &q2), GN_OK);
    assert_int_equal(q2, 11);
    assert_int_equal(nid(g, "q"), q2);
    assert_int_equal(gn__node_add_input(g, q2, E(nid(g, "s"), 2)), GN_OK);
    USES(g, "s", {"y", 0}, {"q", 0});
    check_ok(g);

    /* setting an input to another output of the same producer */
    assert_int_equal(gn__node_set_input(g, q2, 0, E(nid(g, "s"), 1)), GN_OK);
    expect_in(g, "q", 0, "s", 1);
    USES(g, "s", {"y", 0}, {"q", 0});
    check_ok(g);

    /* the public view agrees */
    assert_int_equal(gn_graph_node_count(g), 9);
    gn_graph_free(g);
}

/* ---- randomized stress ------------------------------------------------------------------- */
typedef struct shadow_node {
    bool live;
    uint32_t n_in, n_ctrl;
    gn__edge in[64];
    gn_id ctrl[64];
} shadow_node;

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % n);
}

static void shadow_compare(const gn_graph *g, const shadow_node *sh, uint32_t n)
{
    assert_int_equal(g->n_nodes, n);
    uint32_t live = 0;
    for (gn_id i = 0; i < n; i++) {
        const gn__node *nd = gn__node_at(g, i);
        assert_int_equal(gn__node_live(g, i), sh[i].live);
        if (!sh[i].live) continue;
        live++;
        if (nd->n_in != sh[i].n_in || nd->n_ctrl != sh[i].n_ctrl)
            fail_msg("node %u: %u/%u inputs, shadow %u/%u", i, nd->n_in, nd->n_ctrl, sh[i].n_in, sh[i].n_ctrl);
        for (uint32_t k = 0; k < nd->n_in; k++)
            if (nd->in[k].node != sh[i].in[k].node || nd->in[k].index != sh[i].in[k].index)
                fail_msg("node %u input %u differs from the shadow", i, k);
        for (uint32_t k = 0; k < nd->n_ctrl; k++)
            if (nd->ctrl[k] != sh[i].ctrl[k]) fail_msg("node %u control input %u differs from the shadow", i, k);
    }
    assert_int_equal(g->n_live, live);
}

static gn_id random_live(const shadow_node *sh, uint32_t n)
{
    for (;;) {
        gn_id i = rnd(n);
        if (sh[i].live) return i;
    }
}

static void shadow_remove_ctrl(shadow_node *c, gn_id dep)
{
    for (uint32_t k = 0; k < c->n_ctrl; k++)
        if (c->ctrl[k] == dep) {
            memmove(&c->ctrl[k], &c->ctrl[k + 1], (c->n_ctrl - k - 1) * sizeof c->ctrl[0]);
            c->n_ctrl--;
            return;
        }
}

static bool shadow_has_ctrl(const shadow_node *c, gn_id dep)
{
    for (uint32_t k = 0; k < c->n_ctrl; k++)
        if (c->ctrl[k] == dep) return true;
    return false;
}

static void test_stress(void **state)
{
    (void)state;
    enum { START = 200, STEPS = 2000, MAXN = 1200 };
    rng_state = 0x6772617063686e6cULL; /* fixed seed */
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    shadow_node *sh = calloc(MAXN, sizeof *sh);
    assert_non_null(sh);
    uint32_t n = 0;
    char name[32];
    for (; n < START; n++) {
        snprintf(name, sizeof name, "n%u", n);
        gn_id id;
        assert_int_equal(gn__node_add(g, name, "Op", &id), GN_OK);
        assert_int_equal(id, n);
        sh[n].live = true;
        /* a few inputs from earlier nodes */
        uint32_t k = n ? rnd(4) : 0;
        for (uint32_t j = 0; j < k; j++) {
            gn__edge e = {rnd(n), rnd(3)};
            assert_int_equal(gn__node_add_input(g, id, e), GN_OK);
            sh[n].in[sh[n].n_in++] = e;
        }
        if (n && rnd(3) == 0) {
            gn_id d = rnd(n);
            assert_int_equal(gn__node_add_control(g, id, d), GN_OK);
            if (!shadow_has_ctrl(&sh[n], d)) sh[n].ctrl[sh[n].n_ctrl++] = d;
        }
    }
    check_ok(g);
    shadow_compare(g, sh, n);
    uint32_t counts[9] = {0};
    for (uint32_t step = 1; step <= STEPS; step++) {
        uint32_t op = rnd(9);
        gn_id c = random_live(sh, n);
        shadow_node *s = &sh[c];
        switch (op) {
        case 0: /* add input */
            if (s->n_in < 60) {
                gn__edge e = {random_live(sh, n), rnd(3)};
                assert_int_equal(gn__node_add_input(g, c, e), GN_OK);
                s->in[s->n_in++] = e;
                counts[op]++;
            }
            break;
        case 1: /* set input */
            if (s->n_in) {
                uint32_t slot = rnd(s->n_in);
                gn__edge e = {random_live(sh, n), rnd(3)};
                assert_int_equal(gn__node_set_input(g, c, slot, e), GN_OK);
                s->in[slot] = e;
                counts[op]++;
            }
            break;
        case 2: /* remove input */
            if (s->n_in) {
                uint32_t slot = rnd(s->n_in);
                assert_int_equal(gn__node_remove_input(g, c, slot), GN_OK);
                memmove(&s->in[slot], &s->in[slot + 1], (s->n_in - slot - 1) * sizeof s->in[0]);
                s->n_in--;
                counts[op]++;
            }
            break;
        case 3: { /* add control */
            gn_id d = random_live(sh, n);
            if (s->n_ctrl < 60) {
                assert_int_equal(gn__node_add_control(g, c, d), GN_OK);
                if (!shadow_has_ctrl(s, d)) s->ctrl[s->n_ctrl++] = d;
                counts[op]++;
            }
            break;
        }
        case 4: { /* remove control (present or not) */
            gn_id d = s->n_ctrl && rnd(4) ? s->ctrl[rnd(s->n_ctrl)] : random_live(sh, n);
            assert_int_equal(gn__node_remove_control(g, c, d), GN_OK);
            shadow_remove_ctrl(s, d);
            counts[op]++;
            break;
        }
        case 5: { /* forward an output */
            gn__edge from = {c, rnd(3)}, to = {random_live(sh, n), rnd(3)};
            assert_int_equal(gn__graph_forward_output(g, from, to), GN_OK);
            for (gn_id i = 0; i < n; i++) {
                if (!sh[i].live) continue;
                for (uint32_t k = 0; k < sh[i].n_in; k++)
                    if (sh[i].in[k].node == from.node && sh[i].in[k].index == from.index) sh[i].in[k] = to;
            }
            counts[op]++;
            break;
        }
        case 6: { /* forward control */
            gn_id to = random_live(sh, n);
            if (to == c) break;
            assert_int_equal(gn__graph_forward_control(g, c, to), GN_OK);
            for (gn_id i = 0; i < n; i++) {
                if (!sh[i].live || !shadow_has_ctrl(&sh[i], c)) continue;
                shadow_remove_ctrl(&sh[i], c);
                if (i != to && !shadow_has_ctrl(&sh[i], to)) sh[i].ctrl[sh[i].n_ctrl++] = to;
            }
            counts[op]++;
            break;
        }
        case 7: { /* remove a node: fails while it has data consumers */
            bool used = false;
            for (gn_id i = 0; i < n && !used; i++)
                for (uint32_t k = 0; sh[i].live && k < sh[i].n_in; k++) used |= sh[i].in[k].node == c;
            gn_status st = gn__node_remove(g, c);
            if (used) {
                assert_int_equal(st, GN_ERR_GRAPH);
                assert_non_null(strstr(gn_graph_errmsg(g), "still consumes it"));
                break;
            }
            assert_int_equal(st, GN_OK);
            for (gn_id i = 0; i < n; i++)
                if (sh[i].live) shadow_remove_ctrl(&sh[i], c);
            s->live = false;
            s->n_in = s->n_ctrl = 0;
            counts[op]++;
            break;
        }
        case 8: /* add a node fed by a live one */
            if (n < MAXN) {
                snprintf(name, sizeof name, "n%u", n);
                gn_id id;
                assert_int_equal(gn__node_add(g, name, "Op", &id), GN_OK);
                assert_int_equal(id, n);
                sh[n].live = true;
                gn__edge e = {random_live(sh, n), 0};
                assert_int_equal(gn__node_add_input(g, id, e), GN_OK);
                sh[n].in[sh[n].n_in++] = e;
                n++;
                counts[op]++;
            }
            break;
        }
        if (step % 50 == 0) {
            check_ok(g);
            shadow_compare(g, sh, n);
        }
    }
    check_ok(g);
    shadow_compare(g, sh, n);
    /* every kind of mutation really happened */
    for (int k = 0; k < 9; k++)
        if (counts[k] < 20) fail_msg("mutation kind %d ran only %u times", k, counts[k]);
    /* compaction keeps it consistent too */
    uint32_t live = g->n_live;
    assert_int_equal(gn__graph_compact(g), GN_OK);
    assert_int_equal(g->n_nodes, live);
    check_ok(g);
    gn_graph_free(g);
    free(sh);
}

/* ---- batch removal, filtered forwarding, control dedup ------------------------------------ */
static const char *BATCH_GRAPH =
    "node { name: 'a' op: 'Placeholder' }\n"
    "node { name: 'b' op: 'Placeholder' }\n"
    "node { name: 'h' op: 'Identity' input: 'a' }\n"
    "node { name: 'c1' op: 'AddV2' input: 'h' input: 'b' }\n"
    "node { name: 'x1' op: 'Identity' input: 'h' }\n"
    "node { name: 'c2' op: 'Mul' input: 'h' input: 'h' input: '^c1' }\n"
    "node { name: 'x2' op: 'Identity' input: 'c1' input: '^a' }\n"
    "node { name: 'c3' op: 'Identity' input: 'h' input: '^x1' }\n"
    "node { name: 'z' op: 'NoOp' input: '^c1' input: '^b' input: '^x2' }\n"
    "node { name: 'w' op: 'Identity' input: 'c3' input: '^c2' }\n";

static void test_batch_remove(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(BATCH_GRAPH, 0);
    check_ok(g);
    USES(g, "h", {"c1", 0}, {"x1", 0}, {"c2", 0}, {"c2", 1}, {"c3", 0});
    USES(g, "b", {"c1", 1});
    CUSES(g, "c1", "c2", "z");
    CUSES(g, "a", "x2");
    CUSES(g, "b", "z");
    CTRL(g, "z", "c1", "b", "x2");

    /* a member with a data consumer outside: nothing changes */
    gn_id bad[] = {nid(g, "c1"), nid(g, "h")};
    assert_int_equal(gn__nodes_remove(g, bad, 2), GN_ERR_GRAPH);
    expect_msg(g, "cannot remove node 'c1': node 'x2' still consumes it");
    assert_true(gn__node_live(g, nid(g, "c1")));
    assert_true(gn__node_live(g, nid(g, "h")));
    assert_int_equal(g->n_live, 10);
    USES(g, "h", {"c1", 0}, {"x1", 0}, {"c2", 0}, {"c2", 1}, {"c3", 0});
    CTRL(g, "z", "c1", "b", "x2");
    check_ok(g);
    gn_id past[] = {nid(g, "x2"), 10};
    assert_int_equal(gn__nodes_remove(g, past, 2), GN_ERR_ARG);
    expect_msg(g, "cannot remove node id 10: the graph has 10 node(s)");
    assert_true(gn__node_live(g, nid(g, "x2")));
    check_ok(g);

    /* producers first, a repeat: the set is removed whatever the order */
    gn_id x2 = nid(g, "x2");
    gn_id set[] = {nid(g, "c1"), nid(g, "c2"), x2, nid(g, "c1")};
    assert_int_equal(gn__nodes_remove(g, set, 4), GN_OK);
    assert_int_equal(g->n_live, 7);
    assert_false(gn__node_live(g, x2));
    assert_int_equal(gn__graph_find(g, "c1"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "c2"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "x2"), GN_NONE);
    /* survivors keep their other links, in order */
    USES(g, "h", {"x1", 0}, {"c3", 0});
    NO_USES(g, "b");
    NO_CUSES(g, "a");
    CUSES(g, "b", "z");
    CUSES(g, "x1", "c3");
    CTRL(g, "z", "b");
    NO_CTRL(g, "w");
    expect_in(g, "w", 0, "c3", 0);
    check_ok(g);
    /* removed again, or an empty set: nothing to do */
    assert_int_equal(gn__nodes_remove(g, set, 4), GN_OK);
    assert_int_equal(gn__nodes_remove(g, NULL, 0), GN_OK);
    assert_int_equal(g->n_live, 7);
    /* the names are free again */
    gn_id c1;
    assert_int_equal(gn__node_add(g, "c1", "Identity", &c1), GN_OK);
    assert_int_equal(gn__node_add_input(g, c1, E(nid(g, "h"), 0)), GN_OK);
    USES(g, "h", {"x1", 0}, {"c3", 0}, {"c1", 0});
    check_ok(g);
    /* compaction after a batch keeps the lists */
    assert_int_equal(gn__graph_compact(g), GN_OK);
    assert_int_equal(g->n_nodes, 8);
    USES(g, "h", {"x1", 0}, {"c3", 0}, {"c1", 0});
    CTRL(g, "z", "b");
    check_ok(g);
    gn_graph_free(g);
}

/* Every list of every node, exactly (ids, order), in both graphs. */
static void expect_same_lists(const gn_graph *x, const gn_graph *y)
{
    assert_int_equal(x->n_nodes, y->n_nodes);
    assert_int_equal(x->n_live, y->n_live);
    for (gn_id i = 0; i < x->n_nodes; i++) {
        const gn__node *a = gn__node_at(x, i), *b = gn__node_at(y, i);
        assert_int_equal(a->flags, b->flags);
        if (a->n_in != b->n_in || a->n_ctrl != b->n_ctrl || a->n_use != b->n_use || a->n_cuse != b->n_cuse)
            fail_msg("node %u: list lengths differ", i);
        if ((a->n_in && memcmp(a->in, b->in, a->n_in * sizeof *a->in)) ||
            (a->n_ctrl && memcmp(a->ctrl, b->ctrl, a->n_ctrl * sizeof *a->ctrl)) ||
            (a->n_use && memcmp(a->use, b->use, a->n_use * sizeof *a->use)) ||
            (a->n_cuse && memcmp(a->cuse, b->cuse, a->n_cuse * sizeof *a->cuse)))
            fail_msg("node %u: lists differ", i);
        assert_int_equal(gn__graph_find(x, gn__node_name(x, i)), gn__graph_find(y, gn__node_name(y, i)));
    }
}

/* Batch removal gives exactly the graph of one-by-one removal, consumers
 * first, on random DAGs with hubs, repeated slots and control edges. */
static void test_batch_remove_random(void **state)
{
    (void)state;
    enum { N = 400, ROUNDS = 60 };
    rng_state = 0x62617463685f726dULL; /* fixed seed */
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    char name[32];
    uint32_t n = 0, removed = 0, ctl_cut = 0;
    gn_id *set = malloc(N * 2 * sizeof *set);
    uint8_t *in_set = calloc(N * 2, 1);
    assert_non_null(set);
    assert_non_null(in_set);
    for (uint32_t round = 0; round < ROUNDS; round++) {
        /* grow: new nodes read live earlier ones (a few hubs read often) */
        for (uint32_t k = 0; k < 12 || n < 40; k++) {
            if (n >= 2 * N) break;
            snprintf(name, sizeof name, "v%u", n);
            gn_id id;
            assert_int_equal(gn__node_add(g, name, "Op", &id), GN_OK);
            n++;
            uint32_t arity = id ? 1 + rnd(3) : 0;
            for (uint32_t j = 0; j < arity; j++) {
                gn_id p = rnd(4) == 0 ? rnd(id < 5 ? id : 5) : rnd(id);
                if (!gn__node_live(g, p)) continue;
                assert_int_equal(gn__node_add_input(g, id, E(p, rnd(2))), GN_OK);
            }
            if (id > 2 && rnd(3) == 0) {
                gn_id d = rnd(id);
                if (gn__node_live(g, d)) assert_int_equal(gn__node_add_control(g, id, d), GN_OK);
            }
        }
        /* a random seed set closed under data consumers (ids grow along edges,
         * so one pass upward closes it) */
        memset(in_set, 0, N * 2);
        for (uint32_t k = 0; k < 3; k++) {
            gn_id s = rnd(n);
            if (gn__node_live(g, s) && s > 5) in_set[s] = 1;
        }
        uint32_t ns = 0;
        for (gn_id i = 0; i < n; i++) {
            if (!gn__node_live(g, i)) continue;
            const gn__node *nd = gn__node_at(g, i);
            for (uint32_t k = 0; k < nd->n_in && !in_set[i]; k++) in_set[i] = in_set[nd->in[k].node];
            if (in_set[i]) set[ns++] = i;
        }
        for (uint32_t i = 0; i < ns; i++)
            for (uint32_t k = 0; k < gn__node_at(g, set[i])->n_cuse; k++)
                ctl_cut += !in_set[gn__node_at(g, set[i])->cuse[k]];
        gn_graph *seq = NULL;
        assert_int_equal(gn__graph_clone(g, &seq), GN_OK);
        for (uint32_t i = ns; i-- > 0;) assert_int_equal(gn__node_remove(seq, set[i]), GN_OK);
        /* the batch: shuffled, with a repeat */
        for (uint32_t i = ns; i > 1; i--) {
            uint32_t j = rnd(i);
            gn_id t = set[i - 1];
            set[i - 1] = set[j];
            set[j] = t;
        }
        if (ns) set[ns] = set[0];
        assert_int_equal(gn__nodes_remove(g, set, ns ? ns + 1 : 0), GN_OK);
        removed += ns;
        check_ok(g);
        expect_same_lists(g, seq);
        gn_graph_free(seq);
    }
    /* the rounds did remove sets and cut control edges into survivors */
    if (removed < 100 || ctl_cut < 10) fail_msg("only %u nodes removed, %u control edges cut", removed, ctl_cut);
    free(set);
    free(in_set);
    gn_graph_free(g);
}

static bool skip_named_r(const void *ctx, gn_id id)
{
    const gn_graph *g = ctx;
    return strcmp(gn__node_name(g, id), "r") == 0;
}

static void test_forward_output_if(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(MUT_GRAPH, 0);
    USES(g, "s", {"p", 0}, {"q", 0}, {"r", 1});
    gn_id n;
    assert_int_equal(gn__node_add(g, "n", "AddV2", &n), GN_OK);
    assert_int_equal(gn__node_add_input(g, n, E(nid(g, "s"), 0)), GN_OK);
    assert_int_equal(gn__node_add_input(g, n, E(nid(g, "s"), 0)), GN_OK);
    USES(g, "s", {"p", 0}, {"q", 0}, {"r", 1}, {"n", 0}, {"n", 1});
    /* s:0 to b:0 except r: p and both slots of n move, in s's order, after b's own */
    assert_int_equal(gn__graph_forward_output_if(g, E(nid(g, "s"), 0), E(nid(g, "b"), 0), skip_named_r, g), GN_OK);
    USES(g, "s", {"q", 0}, {"r", 1});
    USES(g, "b", {"r", 0}, {"y", 1}, {"p", 0}, {"n", 0}, {"n", 1});
    expect_in(g, "r", 1, "s", 0);
    expect_in(g, "p", 0, "b", 0);
    expect_in(g, "n", 1, "b", 0);
    check_ok(g);
    /* only skipped consumers left: nothing moves */
    assert_int_equal(gn__graph_forward_output_if(g, E(nid(g, "s"), 0), E(nid(g, "a"), 0), skip_named_r, g), GN_OK);
    USES(g, "s", {"q", 0}, {"r", 1});
    expect_in(g, "r", 1, "s", 0);
    /* same producer, another output: the skipped consumer keeps its index */
    assert_int_equal(gn__node_set_input(g, nid(g, "p"), 0, E(nid(g, "s"), 0)), GN_OK);
    assert_int_equal(gn__graph_forward_output_if(g, E(nid(g, "s"), 0), E(nid(g, "s"), 2), skip_named_r, g), GN_OK);
    expect_in(g, "p", 0, "s", 2);
    expect_in(g, "r", 1, "s", 0);
    USES(g, "s", {"q", 0}, {"r", 1}, {"p", 0});
    /* NULL: every consumer, as gn__graph_forward_output */
    assert_int_equal(gn__graph_forward_output_if(g, E(nid(g, "s"), 0), E(nid(g, "a"), 0), NULL, NULL), GN_OK);
    expect_in(g, "r", 1, "a", 0);
    USES(g, "s", {"q", 0}, {"p", 0});
    check_ok(g);
    gn_graph_free(g);
}

/* A control edge already there is found through either list (the shorter). */
static void test_control_dedup(void **state)
{
    (void)state;
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    gn_id d[6], e, c[6];
    char name[16];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "d%d", i);
        assert_int_equal(gn__node_add(g, name, "NoOp", &d[i]), GN_OK);
    }
    assert_int_equal(gn__node_add(g, "e", "NoOp", &e), GN_OK);
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "c%d", i);
        assert_int_equal(gn__node_add(g, name, "NoOp", &c[i]), GN_OK);
    }
    /* e depends on d0..d5: six control inputs, each d has one control consumer */
    for (int i = 0; i < 6; i++) assert_int_equal(gn__node_add_control(g, e, d[i]), GN_OK);
    for (int i = 5; i >= 0; i--) assert_int_equal(gn__node_add_control(g, e, d[i]), GN_OK);
    CTRL(g, "e", "d0", "d1", "d2", "d3", "d4", "d5");
    CUSES(g, "d3", "e");
    /* c0..c5 depend on d0: d0 has seven control consumers, each c one input */
    for (int i = 0; i < 6; i++) assert_int_equal(gn__node_add_control(g, c[i], d[0]), GN_OK);
    for (int i = 0; i < 6; i++) assert_int_equal(gn__node_add_control(g, c[i], d[0]), GN_OK);
    CUSES(g, "d0", "e", "c0", "c1", "c2", "c3", "c4", "c5");
    CTRL(g, "c4", "d0");
    /* a new edge between a long and a short list is added once */
    assert_int_equal(gn__node_add_control(g, c[2], d[4]), GN_OK);
    assert_int_equal(gn__node_add_control(g, c[2], d[4]), GN_OK);
    CTRL(g, "c2", "d0", "d4");
    CUSES(g, "d4", "e", "c2");
    check_ok(g);
    gn_graph_free(g);
}

/* ---- topological order ---------------------------------------------------------------------- */
static const char *topo_names(gn_graph *g, char *buf, size_t len)
{
    gn_id *order = NULL;
    uint32_t n = 0;
    if (gn__graph_topo(g, &order, &n) != GN_OK) fail_msg("topo: %s", gn_graph_errmsg(g));
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? " " : "", gn__node_name(g, order[i]));
    free(order);
    return buf;
}

static void test_topo_deterministic(void **state)
{
    (void)state;
    const char *text = "node { name: 'd' op: 'X' input: 'b' input: 'c' }\n"
                       "node { name: 'b' op: 'X' input: 'a' }\n"
                       "node { name: 'e' op: 'X' input: '^d' }\n"
                       "node { name: 'c' op: 'X' input: 'a' }\n"
                       "node { name: 'a' op: 'X' }\n"
                       "node { name: 'z' op: 'X' }\n";
    gn_graph *g = gn_test_load_text(text, 0);
    char b1[256], b2[256], b3[256];
    assert_string_equal(topo_names(g, b1, sizeof b1), "a z b c d e");
    assert_string_equal(topo_names(g, b2, sizeof b2), b1);
    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    assert_string_equal(topo_names(c, b3, sizeof b3), b1);
    /* removed nodes are left out */
    assert_int_equal(gn__node_remove(c, nid(c, "e")), GN_OK);
    assert_string_equal(topo_names(c, b3, sizeof b3), "a z b c d");
    gn_graph_free(c);
    gn_graph_free(g);
}

static void test_topo_while_loop(void **state)
{
    (void)state;
    char path[4096];
    if (!gn_test_corpus("tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__while_loop.pbtxt",
                        path, sizeof path))
        skip();
    gn_graph *g = NULL;
    if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(g->n_live, 21);
    gn_id *order = NULL;
    uint32_t n = 0;
    assert_int_equal(gn__graph_topo(g, &order, &n), GN_OK);
    assert_int_equal(n, 21);
    uint32_t *pos = malloc(g->n_nodes * sizeof *pos);
    for (gn_id i = 0; i < g->n_nodes; i++) pos[i] = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        assert_true(order[i] < g->n_nodes);
        assert_int_equal(pos[order[i]], UINT32_MAX); /* each once */
        pos[order[i]] = i;
    }
    /* every edge not out of NextIteration goes forward; the loop has back edges */
    uint32_t back = 0;
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *nd = gn__node_at(g, i);
        for (uint32_t k = 0; k < nd->n_in + nd->n_ctrl; k++) {
            gn_id p = k < nd->n_in ? nd->in[k].node : nd->ctrl[k - nd->n_in];
            if (strcmp(gn__node_op(g, p), "NextIteration") == 0) {
                back++;
                continue;
            }
            if (pos[p] >= pos[i]) fail_msg("'%s' comes before its input '%s'", gn__node_name(g, i), gn__node_name(g, p));
        }
    }
    assert_int_equal(back, 2);
    assert_int_equal(gn_graph_validate(g), GN_OK);
    free(pos);
    free(order);
    gn_graph_free(g);
}

/* A cycle c1 -> c2 -> c3 -> c1 with many nodes hanging off it, all of them
 * before the cycle in id order: the node named must be c1, c2 or c3. */
static void test_topo_cycle(void **state)
{
    (void)state;
    char text[16384];
    size_t o = 0;
    o += (size_t)snprintf(text + o, sizeof text - o, "node { name: 'src' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n");
    /* downstream of the cycle, and of each other */
    for (int i = 0; i < 40; i++)
        o += (size_t)snprintf(text + o, sizeof text - o,
                              "node { name: 'h%d' op: 'AddV2' input: '%s' input: 'src' attr { key: 'T' value { type: DT_FLOAT } } }\n",
                              i, i == 0 ? "c2" : (i % 3 == 0 ? "c3" : "h0"));
    const char *cyc = "node { name: 'c1' op: 'AddV2' input: 'c3' input: 'src' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                      "node { name: 'c2' op: 'Identity' input: 'c1' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                      "node { name: 'c3' op: 'Identity' input: 'c2' attr { key: 'T' value { type: DT_FLOAT } } }\n";
    o += (size_t)snprintf(text + o, sizeof text - o, "%s", cyc);
    gn_graph *g = gn_test_load_text(text, 0);
    gn_id *order = (gn_id *)1;
    uint32_t n = 7;
    assert_int_equal(gn__graph_topo(g, &order, &n), GN_ERR_GRAPH);
    assert_null(order);
    assert_int_equal(n, 0);
    const char *m = gn_graph_errmsg(g);
    if (strcmp(m, "node 'c1' (AddV2): cycle in the graph outside a loop") != 0 &&
        strcmp(m, "node 'c2' (Identity): cycle in the graph outside a loop") != 0 &&
        strcmp(m, "node 'c3' (Identity): cycle in the graph outside a loop") != 0)
        fail_msg("cycle message names a node off the cycle: %s", m);
    char first[512];
    snprintf(first, sizeof first, "%s", m);
    /* the validator reports the same */
    assert_int_equal(gn_graph_validate(g), GN_ERR_GRAPH);
    expect_msg(g, first);
    gn_graph_free(g);
    /* and loading with validation fails with it, naming the file */
    gn_graph *g2 = NULL;
    assert_int_equal(gn_graph_load_buffer(text, strlen(text), "cyc.pbtxt", NULL, &g2), GN_ERR_GRAPH);
    assert_non_null(strstr(gn_graph_errmsg(g2), first));
    assert_int_equal(strncmp(gn_graph_errmsg(g2), "cyc.pbtxt: ", 11), 0);
    gn_graph_free(g2);

    /* a cycle through a control edge counts too */
    const char *ctl = "node { name: 'x' op: 'NoOp' input: '^y' }\n"
                      "node { name: 'y' op: 'NoOp' input: '^x' }\n"
                      "node { name: 'w' op: 'NoOp' input: '^x' }\n";
    g = gn_test_load_text(ctl, 0);
    assert_int_equal(gn__graph_topo(g, &order, &n), GN_ERR_GRAPH);
    m = gn_graph_errmsg(g);
    if (strcmp(m, "node 'x' (NoOp): cycle in the graph outside a loop") != 0 &&
        strcmp(m, "node 'y' (NoOp): cycle in the graph outside a loop") != 0)
        fail_msg("control cycle: %s", m);
    gn_graph_free(g);

    /* a self loop */
    g = gn_test_load_text("node { name: 'a' op: 'X' }\nnode { name: 'b' op: 'X' input: 'a' input: 'self' }\n"
                       "node { name: 'self' op: 'X' input: 'self' }\n",
                       0);
    assert_int_equal(gn__graph_topo(g, &order, &n), GN_ERR_GRAPH);
    expect_msg(g, "node 'self' (X): cycle in the graph outside a loop");
    gn_graph_free(g);
}

/* ---- deep graphs ---------------------------------------------------------------------------- */
enum { DEEP = 600000 };

static gn_graph *build_chain(uint32_t len)
{
    gn_graph *g = gn__graph_new(GN__GRAPH_TOP);
    assert_non_null(g);
    Tensorflow__AttrValue *t = gn__graph_value_alloc(g, sizeof *t);
    Tensorflow__AttrValue *dt = gn__graph_value_alloc(g, sizeof *dt);
    Tensorflow__AttrValue *val = gn__graph_value_alloc(g, sizeof *val);
    Tensorflow__TensorProto *tp = gn__graph_value_alloc(g, sizeof *tp);
    Tensorflow__TensorShapeProto *sp = gn__graph_value_alloc(g, sizeof *sp);
    float *fv = gn__graph_value_alloc(g, sizeof *fv);
    assert_true(t && dt && val && tp && sp && fv);
    tensorflow__attr_value__init(t);
    t->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    t->type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    tensorflow__attr_value__init(dt);
    dt->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    dt->type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    tensorflow__tensor_shape_proto__init(sp);
    tensorflow__tensor_proto__init(tp);
    tp->dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    tp->tensor_shape = sp;
    *fv = 1.5f;
    tp->n_float_val = 1;
    tp->float_val = fv;
    tensorflow__attr_value__init(val);
    val->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
    val->tensor = tp;
    gn_id c;
    assert_int_equal(gn__node_add(g, "c", "Const", &c), GN_OK);
    assert_int_equal(gn__node_set_attr(g, c, "dtype", dt), GN_OK);
    assert_int_equal(gn__node_set_attr(g, c, "value", val), GN_OK);
    char name[32];
    gn_id prev = c;
    for (uint32_t i = 0; i < len; i++) {
        snprintf(name, sizeof name, "i%u", i);
        gn_id id;
        if (gn__node_add(g, name, "Identity", &id) != GN_OK) fail_msg("add: %s", gn_graph_errmsg(g));
        if (gn__node_add_input(g, id, E(prev, 0)) != GN_OK) fail_msg("input: %s", gn_graph_errmsg(g));
        if (gn__node_set_attr(g, id, "T", t) != GN_OK) fail_msg("attr: %s", gn_graph_errmsg(g));
        prev = id;
    }
    return g;
}

static void test_deep_chain(void **state)
{
    (void)state;
    gn_graph *g = build_chain(DEEP);
    assert_int_equal(g->n_live, DEEP + 1);
    check_ok(g);

    gn_id *order = NULL;
    uint32_t n = 0;
    assert_int_equal(gn__graph_topo(g, &order, &n), GN_OK);
    assert_int_equal(n, DEEP + 1);
    for (uint32_t i = 0; i < n; i++)
        if (order[i] != i) fail_msg("order[%u] = %u", i, order[i]);
    free(order);
    if (gn_graph_validate(g) != GN_OK) fail_msg("validate: %s", gn_graph_errmsg(g));

    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    assert_int_equal(c->n_live, DEEP + 1);
    check_ok(c);
    assert_int_equal(gn_graph_validate(c), GN_OK);

    /* bypass and drop every 3rd Identity of the clone, then compact */
    uint32_t removed = 0;
    for (uint32_t i = 3; i <= DEEP; i += 3) {
        gn__edge in = gn__node_at(c, i)->in[0];
        assert_int_equal(gn__graph_forward_output(c, E(i, 0), in), GN_OK);
        assert_int_equal(gn__node_remove(c, i), GN_OK);
        removed++;
    }
    assert_int_equal(gn__graph_compact(c), GN_OK);
    assert_int_equal(c->n_nodes, DEEP + 1 - removed);
    assert_int_equal(c->n_live, c->n_nodes);
    check_ok(c);
    assert_int_equal(gn__graph_topo(c, &order, &n), GN_OK);
    assert_int_equal(n, c->n_nodes);
    free(order);
    assert_int_equal(gn_graph_validate(c), GN_OK);
    /* the original is untouched */
    assert_int_equal(g->n_live, DEEP + 1);
    expect_in(g, "i3", 0, "i2", 0); /* ids: 0 is c, id k is i(k-1) */
    expect_in(c, "i3", 0, "i1", 0);
    assert_int_equal(gn__graph_find(c, "i2"), GN_NONE);
    assert_int_equal(gn__graph_find(c, "i599999"), GN_NONE); /* id 600000 */
    assert_int_equal(gn__graph_find(c, "i599998"), c->n_nodes - 1);

    /* serialize and load back, binary and text */
    void *bin = NULL, *txt = NULL;
    size_t nb = 0, nt = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &bin, &nb), GN_OK);
    gn_graph *g2 = NULL;
    if (gn_graph_load_buffer(bin, nb, "deep.pb", NULL, &g2) != GN_OK) fail_msg("reload: %s", gn_graph_errmsg(g2));
    assert_int_equal(gn_graph_node_count(g2), DEEP + 1);
    expect_in(g2, "i599999", 0, "i599998", 0);
    gn_graph_free(g2);
    assert_int_equal(gn_graph_serialize(c, GN_FORMAT_TEXT, &txt, &nt), GN_OK);
    gn_graph *g3 = NULL;
    if (gn_graph_load_buffer(txt, nt, "deep.pbtxt", NULL, &g3) != GN_OK) fail_msg("reload text: %s", gn_graph_errmsg(g3));
    assert_int_equal(gn_graph_node_count(g3), DEEP + 1 - removed);
    gn_free(bin);
    gn_free(txt);
    gn_graph_free(g3);
    gn_graph_free(c);
    gn_graph_free(g);
}

/* ---- compaction ----------------------------------------------------------------------------- */
static void test_compact(void **state)
{
    (void)state;
    const char *text = "node { name: 'a' op: 'X' }\n"
                       "node { name: 'dead1' op: 'X' input: 'a' }\n"
                       "node { name: 'b' op: 'X' input: 'a' input: '^a' }\n"
                       "node { name: 'dead2' op: 'X' input: 'b' input: '^a' }\n"
                       "node { name: 'c' op: 'X' input: 'b:1' input: 'a' input: '^b' }\n"
                       "node { name: 'dead3' op: 'X' }\n"
                       "node { name: 'd' op: 'X' input: 'c' input: 'b' }\n";
    gn_graph *g = gn_test_load_text(text, 0);
    assert_int_equal(gn__node_remove(g, nid(g, "dead1")), GN_OK);
    assert_int_equal(gn__node_remove(g, nid(g, "dead2")), GN_OK);
    assert_int_equal(gn__node_remove(g, nid(g, "dead3")), GN_OK);
    gn_id late;
    assert_int_equal(gn__node_add(g, "late", "X", &late), GN_OK);
    assert_int_equal(late, 7);
    assert_int_equal(gn__node_add_input(g, late, E(nid(g, "d"), 0)), GN_OK);
    assert_int_equal(gn__node_add_control(g, late, nid(g, "a")), GN_OK);
    assert_int_equal(g->n_nodes, 8);
    assert_int_equal(g->n_live, 5);

    assert_int_equal(gn__graph_compact(g), GN_OK);
    assert_int_equal(g->n_nodes, 5);
    assert_int_equal(g->n_live, 5);
    const char *names[] = {"a", "b", "c", "d", "late"};
    for (gn_id i = 0; i < 5; i++) {
        assert_false(gn__node_at(g, i)->flags & GN__NODE_DEAD);
        assert_string_equal(gn__node_name(g, i), names[i]);
        assert_int_equal(gn__graph_find(g, names[i]), i);
    }
    assert_int_equal(gn__graph_find(g, "dead1"), GN_NONE);
    assert_int_equal(gn__graph_find(g, "dead3"), GN_NONE);
    expect_in(g, "b", 0, "a", 0);
    expect_in(g, "c", 0, "b", 1);
    expect_in(g, "c", 1, "a", 0);
    expect_in(g, "d", 0, "c", 0);
    expect_in(g, "d", 1, "b", 0);
    expect_in(g, "late", 0, "d", 0);
    CTRL(g, "b", "a");
    CTRL(g, "c", "b");
    CTRL(g, "late", "a");
    USES(g, "a", {"b", 0}, {"c", 1});
    USES(g, "b", {"c", 0}, {"d", 1});
    USES(g, "c", {"d", 0});
    USES(g, "d", {"late", 0});
    CUSES(g, "a", "b", "late");
    CUSES(g, "b", "c");
    check_ok(g);
    /* compacting again is a no-op; mutation after it still works */
    assert_int_equal(gn__graph_compact(g), GN_OK);
    assert_int_equal(g->n_nodes, 5);
    gn_id e;
    assert_int_equal(gn__node_add(g, "dead1", "X", &e), GN_OK);
    assert_int_equal(e, 5);
    assert_int_equal(gn__node_add_input(g, e, E(nid(g, "c"), 0)), GN_OK);
    USES(g, "c", {"d", 0}, {"dead1", 0});
    check_ok(g);
    /* the public view and serialization agree */
    char buf[64];
    assert_int_equal(gn_graph_node_count(g), 6);
    assert_string_equal(gn_graph_node_name(g, 4), "late");
    assert_int_equal(gn_graph_node_input(g, 2, 0, buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "b:1");
    assert_int_equal(gn_graph_node_input(g, 2, 2, buf, sizeof buf), GN_OK);
    assert_string_equal(buf, "^b");
    gn_graph_free(g);
}

/* A function body with a control_ret after a removed node: the control_ret
 * follows the renumbering. */
static void test_compact_function_body(void **state)
{
    (void)state;
    const char *text = "library { function {\n"
                       "  signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT }\n"
                       "              control_output: 'done' }\n"
                       "  node_def { name: 'gone' op: 'Identity' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                       "  node_def { name: 'neg' op: 'Neg' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }\n"
                       "  node_def { name: 'fin' op: 'NoOp' input: '^neg' }\n"
                       "  ret { key: 'y' value: 'neg:y:0' }\n"
                       "  control_ret { key: 'done' value: 'fin' }\n"
                       "} }\n";
    gn_graph *g = gn_test_load_text(text, 1);
    gn__function *f = gn__graph_find_function(g, "f");
    assert_non_null(f);
    gn_graph *b = f->body;
    assert_int_equal(f->n_control_ret, 1);
    assert_int_equal(f->control_ret_node[0], nid(b, "fin"));
    assert_int_equal(gn__node_remove(b, nid(b, "gone")), GN_OK);
    assert_int_equal(gn__graph_compact(b), GN_OK);
    assert_int_equal(b->n_nodes, b->n_live);
    assert_int_equal(f->control_ret_node[0], nid(b, "fin"));
    check_ok(b);
    void *t = NULL;
    size_t tn = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_TEXT, &t, &tn), GN_OK);
    assert_non_null(strstr(t, "control_ret {\n      key: \"done\"\n      value: \"fin\"\n    }"));
    assert_null(strstr(t, "gone"));
    gn_free(t);
    assert_int_equal(gn_graph_validate(g), GN_OK);
    gn_graph_free(g);
}

/* ---- clone ---------------------------------------------------------------------------------- */
static const char *CLONE_GRAPH =
    "node { name: 'w' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } }\n"
    "  attr { key: 'value' value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } }\n"
    "    tensor_content: '\\000\\000\\200?\\000\\000\\000@\\000\\000@@\\000\\000\\200@' } } } }\n"
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'm' op: 'Mul' input: 'x' input: 'w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "node { name: 'o' op: 'Identity' input: 'm' input: '^w' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "library { function { signature { name: 'f' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'b' type: DT_FLOAT } }\n"
    "  node_def { name: 'n' op: 'Neg' input: 'a' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "  ret { key: 'b' value: 'n:y:0' } } }\n";

static void test_clone(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(CLONE_GRAPH, 1);
    void *before = NULL;
    size_t nbefore = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &before, &nbefore), GN_OK);

    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    assert_ptr_not_equal(c, g);
    assert_ptr_not_equal(c->nodes, g->nodes);
    assert_int_equal(c->n_nodes, g->n_nodes);
    assert_int_equal(c->n_live, g->n_live);
    for (gn_id i = 0; i < g->n_nodes; i++) {
        const gn__node *a = gn__node_at(g, i), *b = gn__node_at(c, i);
        assert_string_equal(gn__node_name(c, i), gn__node_name(g, i));
        assert_string_equal(gn__node_op(c, i), gn__node_op(g, i));
        assert_int_equal(b->n_in, a->n_in);
        assert_int_equal(b->n_ctrl, a->n_ctrl);
        assert_int_equal(b->n_attr, a->n_attr);
        assert_int_equal(b->n_use, a->n_use);
        assert_int_equal(b->n_cuse, a->n_cuse);
        if (a->n_in) assert_ptr_not_equal(b->in, a->in);
        if (a->n_attr) assert_ptr_not_equal(b->attr, a->attr);
        if (a->n_use) assert_ptr_not_equal(b->use, a->use);
        for (uint32_t k = 0; k < a->n_in; k++) {
            assert_int_equal(b->in[k].node, a->in[k].node);
            assert_int_equal(b->in[k].index, a->in[k].index);
        }
        for (uint32_t k = 0; k < a->n_attr; k++) {
            assert_string_equal(gn__str(c, b->attr[k].key), gn__str(g, a->attr[k].key));
            assert_ptr_equal(b->attr[k].value, a->attr[k].value); /* payload shared */
        }
    }
    /* the tensor payload itself is one copy */
    const Tensorflow__AttrValue *wv = gn__node_attr(g, nid(g, "w"), "value");
    assert_ptr_equal(gn__node_attr(c, nid(c, "w"), "value"), wv);
    /* functions: the body is another graph with the same structure */
    assert_int_equal(c->n_fns, 1);
    assert_ptr_not_equal(c->fns[0].body, g->fns[0].body);
    assert_ptr_equal(c->fns[0].body->lib, c);
    assert_int_equal(c->fns[0].body->n_nodes, g->fns[0].body->n_nodes);
    check_ok(c);
    check_ok(c->fns[0].body);

    /* the clone serializes to the same bytes */
    void *cb = NULL;
    size_t ncb = 0;
    assert_int_equal(gn_graph_serialize(c, GN_FORMAT_BINARY, &cb, &ncb), GN_OK);
    assert_int_equal(ncb, nbefore);
    assert_memory_equal(cb, before, nbefore);
    gn_free(cb);

    /* mutating the clone leaves the original as it was */
    gn_id o = nid(c, "o"), m = nid(c, "m");
    assert_int_equal(gn__graph_forward_output(c, E(m, 0), E(nid(c, "x"), 0)), GN_OK);
    assert_int_equal(gn__node_remove(c, m), GN_OK);
    assert_int_equal(gn__node_remove_control(c, o, nid(c, "w")), GN_OK);
    assert_int_equal(gn__node_remove_attr(c, o, "T"), GN_OK);
    gn_id extra;
    assert_int_equal(gn__node_add(c, "extra", "NoOp", &extra), GN_OK);
    assert_int_equal(gn__node_add_control(c, extra, nid(c, "x")), GN_OK);
    gn_graph *cbody = c->fns[0].body;
    assert_int_equal(gn__node_add(cbody, "body_extra", "NoOp", NULL), GN_OK);
    check_ok(c);
    check_ok(cbody);
    void *after = NULL;
    size_t nafter = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &after, &nafter), GN_OK);
    assert_int_equal(nafter, nbefore);
    assert_memory_equal(after, before, nbefore);
    gn_free(after);
    assert_int_equal(gn__graph_find(g, "extra"), GN_NONE);
    assert_int_equal(gn__graph_find(g->fns[0].body, "body_extra"), GN_NONE);
    assert_true(gn__node_live(g, nid(g, "m")));
    assert_int_equal(g->n_live, 4);
    check_ok(g);
    /* and the original's mutation leaves the clone alone */
    assert_int_equal(gn__node_remove(g, nid(g, "o")), GN_OK);
    assert_true(gn__node_live(c, o));

    /* free the original first: the clone still owns what it uses */
    gn_graph_free(g);
    const Tensorflow__AttrValue *v = gn__node_attr(c, nid(c, "w"), "value");
    assert_ptr_equal(v, wv);
    assert_int_equal(v->tensor->tensor_content.len, 16);
    float f[4];
    memcpy(f, v->tensor->tensor_content.data, 16);
    assert_true(f[0] == 1.0f && f[1] == 2.0f && f[2] == 3.0f && f[3] == 4.0f);
    expect_in(c, "o", 0, "x", 0);
    void *t = NULL;
    size_t tn = 0;
    assert_int_equal(gn_graph_serialize(c, GN_FORMAT_TEXT, &t, &tn), GN_OK);
    assert_non_null(strstr(t, "name: \"extra\""));
    assert_non_null(strstr(t, "name: \"body_extra\""));
    assert_non_null(strstr(t, "tensor_content: \"\\000\\000\\200?\\000\\000\\000@\\000\\000@@\\000\\000\\200@\""));
    gn_free(t);
    /* a clone of the clone, then the clone freed */
    gn_graph *cc = NULL;
    assert_int_equal(gn__graph_clone(c, &cc), GN_OK);
    gn_graph_free(c);
    assert_int_equal(gn__node_attr(cc, nid(cc, "w"), "value")->tensor->tensor_content.len, 16);
    /* new values built in the clone-of-clone's own blob */
    Tensorflow__AttrValue *nv = gn__graph_value_alloc(cc, sizeof *nv);
    tensorflow__attr_value__init(nv);
    nv->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
    nv->i = 7;
    assert_int_equal(gn__node_set_attr(cc, nid(cc, "extra"), "k", nv), GN_OK);
    int64_t iv = 0;
    assert_true(gn__attr_get_int(cc, nid(cc, "extra"), "k", &iv));
    assert_int_equal(iv, 7);
    /* the clone of the clone carries the first clone's edits */
    assert_int_equal(gn_graph_validate(cc), GN_ERR_GRAPH);
    expect_msg(cc, "node 'o' (Identity): missing attr 'T' (type)");
    gn_free(before);
    gn_graph_free(cc);
}

/* ---- function bodies ------------------------------------------------------------------------- */
/* f1 calls f2, which the library defines after it. */
static const char *FN_GRAPH =
    "node { name: 'ph' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'call1' op: 'f1' input: 'ph' }\n"
    "node { name: 'use3' op: 'Identity' input: 'call1:3' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "library {\n"
    "  function {\n"
    "    signature {\n"
    "      name: 'f1'\n"
    "      input_arg { name: 'a' type: DT_FLOAT }\n"
    "      output_arg { name: 'o_split' type: DT_FLOAT }\n"
    "      output_arg { name: 'o_idn' type: DT_FLOAT }\n"
    "      output_arg { name: 'o_call' type: DT_FLOAT }\n"
    "      output_arg { name: 'o_custom' type: DT_FLOAT }\n"
    "      output_arg { name: 'o_baz' type: DT_FLOAT }\n"
    "    }\n"
    "    node_def { name: 'dim' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }\n"
    "      attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
    "    node_def { name: 'split' op: 'Split' input: 'dim:output:0' input: 'a'\n"
    "      attr { key: 'T' value { type: DT_FLOAT } } attr { key: 'num_split' value { i: 3 } } }\n"
    "    node_def { name: 'idn' op: 'IdentityN' input: 'a' input: 'split:output:1'\n"
    "      attr { key: 'T' value { list { type: DT_FLOAT type: DT_FLOAT } } } }\n"
    "    node_def { name: 'call' op: 'f2' input: 'idn:output:1' }\n"
    "    node_def { name: 'c' op: 'MyCustomOp' input: 'call:x:0' input: '^split' }\n"
    "    node_def { name: 'k' op: 'IdentityN' input: 'c:foo:0' input: 'c:bar:1' input: 'c:foo:1'\n"
    "      attr { key: 'T' value { list { type: DT_FLOAT type: DT_FLOAT type: DT_FLOAT } } } }\n"
    "    ret { key: 'o_split' value: 'split:output:2' }\n"
    "    ret { key: 'o_idn' value: 'idn:output:1' }\n"
    "    ret { key: 'o_call' value: 'call:y:0' }\n"
    "    ret { key: 'o_custom' value: 'k:output:2' }\n"
    "    ret { key: 'o_baz' value: 'c:baz:0' }\n"
    "  }\n"
    "  function {\n"
    "    signature { name: 'f2' input_arg { name: 'p' type: DT_FLOAT }\n"
    "      output_arg { name: 'x' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT } }\n"
    "    node_def { name: 'n' op: 'Neg' input: 'p' attr { key: 'T' value { type: DT_FLOAT } } }\n"
    "    ret { key: 'x' value: 'p' }\n"
    "    ret { key: 'y' value: 'n:y:0' }\n"
    "  }\n"
    "}\n";

static void expect_edge(const gn_graph *b, const char *node, uint32_t slot, const char *prod, uint32_t index)
{
    expect_in(b, node, slot, prod, index);
}

static const Tensorflow__FunctionDef *find_fdef(const Tensorflow__GraphDef *gd, const char *name)
{
    for (size_t i = 0; gd->library && i < gd->library->n_function; i++)
        if (strcmp(gd->library->function[i]->signature->name, name) == 0) return gd->library->function[i];
    fail_msg("no function '%s' in the output", name);
    return NULL;
}

static void expect_node_inputs(const Tensorflow__FunctionDef *fd, const char *node, size_t n, const char *const *want)
{
    for (size_t i = 0; i < fd->n_node_def; i++) {
        const Tensorflow__NodeDef *nd = fd->node_def[i];
        if (strcmp(nd->name, node) != 0) continue;
        if (nd->n_input != n) fail_msg("'%s': %zu inputs, wanted %zu", node, nd->n_input, n);
        for (size_t k = 0; k < n; k++)
            if (strcmp(nd->input[k], want[k]) != 0) fail_msg("'%s' input %zu: '%s', wanted '%s'", node, k, nd->input[k], want[k]);
        return;
    }
    fail_msg("no node_def '%s'", node);
}

#define NODE_INPUTS(fd, node, ...)                                                                            \
    expect_node_inputs((fd), (node), sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *),      \
                       (const char *const[]){__VA_ARGS__})

static void expect_ret(const Tensorflow__FunctionDef *fd, const char *key, const char *value)
{
    for (size_t i = 0; i < fd->n_ret; i++)
        if (strcmp(fd->ret[i]->key, key) == 0) {
            if (strcmp(fd->ret[i]->value, value) != 0) fail_msg("ret '%s' = '%s', wanted '%s'", key, fd->ret[i]->value, value);
            return;
        }
    fail_msg("no ret '%s'", key);
}

static void test_function_bodies(void **state)
{
    (void)state;
    gn_graph *g = gn_test_load_text(FN_GRAPH, 1);
    assert_int_equal(gn_graph_function_count(g), 2);
    gn__function *f1 = gn__graph_find_function(g, "f1");
    assert_non_null(f1);
    gn_graph *b = f1->body;
    assert_int_equal(b->kind, GN__GRAPH_FUNCTION);
    assert_ptr_equal(b->lib, g);
    /* args and returns are nodes */
    gn_id a = nid(b, "a");
    assert_string_equal(gn__node_op(b, a), "_Arg");
    assert_true(gn__node_at(b, a)->flags & GN__NODE_FN_ARG);
    gn_id r = nid(b, "_retval:o_split");
    assert_string_equal(gn__node_op(b, r), "_Retval");
    assert_true(gn__node_at(b, r)->flags & GN__NODE_FN_RET);
    /* flat output indices */
    expect_edge(b, "split", 0, "dim", 0);
    expect_edge(b, "split", 1, "a", 0);
    expect_edge(b, "idn", 0, "a", 0);
    expect_edge(b, "idn", 1, "split", 1);
    expect_edge(b, "call", 0, "idn", 1);
    expect_edge(b, "c", 0, "call", 0);              /* call:x:0 */
    CTRL(b, "c", "split");
    expect_edge(b, "_retval:o_split", 0, "split", 2); /* split:output:2 */
    expect_edge(b, "_retval:o_idn", 0, "idn", 1);
    expect_edge(b, "_retval:o_call", 0, "call", 1); /* call:y:0, f2 outputs x, y */
    expect_edge(b, "_retval:o_custom", 0, "k", 2);
    /* unknown op: out_args numbered in order of first use, each sized by its largest index */
    expect_edge(b, "k", 0, "c", 0); /* c:foo:0 */
    expect_edge(b, "k", 1, "c", 3); /* c:bar:1 (foo takes 0..1, bar 2..3) */
    expect_edge(b, "k", 2, "c", 1); /* c:foo:1 */
    expect_edge(b, "_retval:o_baz", 0, "c", 4); /* c:baz:0, named only by a ret */
    assert_int_equal(gn__node_num_outputs(b, nid(b, "split")), 3);
    assert_int_equal(gn__node_num_outputs(b, nid(b, "call")), 2);
    assert_int_equal(gn__node_num_outputs(b, nid(b, "c")), -1);
    assert_int_equal(gn__node_num_outputs(g, nid(g, "call1")), 5);
    check_ok(b);
    gn__function *f2 = gn__graph_find_function(g, "f2");
    assert_non_null(f2);
    expect_edge(f2->body, "_retval:x", 0, "p", 0);
    expect_edge(f2->body, "_retval:y", 0, "n", 0);
    assert_int_equal(gn_graph_function_node_count(g, 0), 6);
    assert_int_equal(gn_graph_function_node_count(g, 1), 1);

    /* serialize: the same input strings and ret map come back */
    void *t = NULL;
    size_t tn = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_TEXT, &t, &tn), GN_OK);
    gn__arena ar;
    gn__arena_init(&ar, 1 << 16);
    ProtobufCAllocator al;
    gn__arena_pb_allocator(&ar, &al);
    ProtobufCMessage *msg = NULL;
    gn__err err;
    gn__err_clear(&err);
    if (gn__text_parse(&tensorflow__graph_def__descriptor, t, tn, &al, &msg, &err) != GN_OK) fail_msg("%s", err.msg);
    const Tensorflow__GraphDef *gd = (const Tensorflow__GraphDef *)msg;
    const Tensorflow__FunctionDef *fd1 = find_fdef(gd, "f1");
    assert_int_equal(fd1->n_node_def, 6);
    NODE_INPUTS(fd1, "split", "dim:output:0", "a");
    NODE_INPUTS(fd1, "idn", "a", "split:output:1");
    NODE_INPUTS(fd1, "call", "idn:output:1");
    NODE_INPUTS(fd1, "c", "call:x:0", "^split");
    NODE_INPUTS(fd1, "k", "c:foo:0", "c:bar:1", "c:foo:1");
    assert_int_equal(fd1->n_ret, 5);
    expect_ret(fd1, "o_split", "split:output:2");
    expect_ret(fd1, "o_idn", "idn:output:1");
    expect_ret(fd1, "o_call", "call:y:0");
    expect_ret(fd1, "o_custom", "k:output:2");
    expect_ret(fd1, "o_baz", "c:baz:0");
    const Tensorflow__FunctionDef *fd2 = find_fdef(gd, "f2");
    assert_int_equal(fd2->n_ret, 2);
    expect_ret(fd2, "x", "p");
    expect_ret(fd2, "y", "n:y:0");
    NODE_INPUTS(fd2, "n", "p");
    gn__arena_free(&ar);

    /* and the text loads back to the same binary */
    void *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &b1, &n1), GN_OK);
    gn_graph *g2 = NULL;
    if (gn_graph_load_buffer(t, tn, "out.pbtxt", NULL, &g2) != GN_OK) fail_msg("%s", gn_graph_errmsg(g2));
    assert_int_equal(gn_graph_serialize(g2, GN_FORMAT_BINARY, &b2, &n2), GN_OK);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, n1);
    gn_free(b1);
    gn_free(b2);
    gn_free(t);
    gn_graph_free(g2);

    /* a rewrite inside the body prints with the producer's out_arg names */
    gn_id idn = nid(b, "idn");
    assert_int_equal(gn__graph_forward_output(b, E(idn, 1), E(nid(b, "split"), 0)), GN_OK);
    assert_int_equal(gn__node_set_input(b, nid(b, "k"), 1, E(nid(b, "c"), 2)), GN_OK);
    check_ok(b);
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_TEXT, &t, &tn), GN_OK);
    gn__arena_init(&ar, 1 << 16);
    gn__arena_pb_allocator(&ar, &al);
    assert_int_equal(gn__text_parse(&tensorflow__graph_def__descriptor, t, tn, &al, &msg, &err), GN_OK);
    fd1 = find_fdef((const Tensorflow__GraphDef *)msg, "f1");
    NODE_INPUTS(fd1, "call", "split:output:0");
    NODE_INPUTS(fd1, "k", "c:foo:0", "c:bar:0", "c:foo:1");
    expect_ret(fd1, "o_idn", "split:output:0");
    gn__arena_free(&ar);
    gn_free(t);
    gn_graph_free(g);

    /* a top-level use past the function's outputs fails validation */
    char *bad = strdup(FN_GRAPH);
    char *p = strstr(bad, "'call1:3'");
    p[7] = '5';
    gn_graph *g3 = NULL;
    assert_int_equal(gn_graph_load_buffer(bad, strlen(bad), "t.pbtxt", NULL, &g3), GN_ERR_GRAPH);
    assert_non_null(strstr(gn_graph_errmsg(g3),
                           "node 'use3' (Identity): input 0 refers to output 5 of 'call1' (f1), which has 5 outputs"));
    gn_graph_free(g3);
    free(bad);
}

/* ---- validator ---------------------------------------------------------------------------------- */
static void expect_invalid(const char *text, const char *want)
{
    gn_graph *g = gn_test_load_text(text, 0);
    gn_status s = gn_graph_validate(g);
    if (s != GN_ERR_GRAPH || strcmp(gn_graph_errmsg(g), want) != 0)
        fail_msg("validate: status %d, message:\n  %s\nwanted:\n  %s", s, gn_graph_errmsg(g), want);
    gn_graph_free(g);
    /* loading with validation fails with the same message, after the position */
    g = NULL;
    s = gn_graph_load_buffer(text, strlen(text), "v.pbtxt", NULL, &g);
    const char *m = gn_graph_errmsg(g);
    size_t ml = strlen(m), wl = strlen(want);
    if (s != GN_ERR_GRAPH || ml < wl || strcmp(m + ml - wl, want) != 0 || strncmp(m, "v.pbtxt: ", 9) != 0)
        fail_msg("load: status %d, message:\n  %s\nwanted it to end with:\n  %s", s, m, want);
    gn_graph_free(g);
}

static void test_validator(void **state)
{
    (void)state;
    /* output index past the producer's outputs */
    expect_invalid(PH("a") "node { name: 'b' op: 'Identity' input: 'a:1' " TF " }\n",
                   "node 'b' (Identity): input 0 refers to output 1 of 'a' (Placeholder), which has 1 output");
    expect_invalid(PH("a") "node { name: 'dim' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
                           " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }\n"
                           "node { name: 's' op: 'Split' input: 'dim' input: 'a' " TF " attr { key: 'num_split' value { i: 2 } } }\n"
                           "node { name: 'b' op: 'AddV2' input: 's:1' input: 's:2' " TF " }\n",
                   "node 'b' (AddV2): input 1 refers to output 2 of 's' (Split), which has 2 outputs");
    /* missing attr without a default */
    expect_invalid(PH("a") "node { name: 'b' op: 'Identity' input: 'a' }\n",
                   "node 'b' (Identity): missing attr 'T' (type)");
    /* wrong attr kind */
    expect_invalid(PH("a") "node { name: 'b' op: 'Identity' input: 'a' attr { key: 'T' value { i: 3 } } }\n",
                   "node 'b' (Identity): attr 'T' has an int value; Identity expects type");
    /* wrong input count */
    expect_invalid(PH("a") "node { name: 'b' op: 'AddV2' input: 'a' " TF " }\n",
                   "node 'b' (AddV2): has 1 data input, AddV2 takes 2");
    expect_invalid(PH("a") "node { name: 'b' op: 'AddN' input: 'a' input: 'a' " TF " attr { key: 'N' value { i: 3 } } }\n",
                   "node 'b' (AddN): has 2 data inputs, AddN takes 3");
    /* errors inside a function body name the function */
    expect_invalid("library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT }"
                   " output_arg { name: 'y' type: DT_FLOAT } }\n"
                   "  node_def { name: 'n' op: 'Neg' input: 'x' }\n"
                   "  ret { key: 'y' value: 'n:y:0' } } }\n",
                   "function 'f': node 'n' (Neg): missing attr 'T' (type)");
    /* a correct graph passes; an op we do not know passes through */
    gn_graph *g = gn_test_load_text(PH("a") "node { name: 'b' op: 'AddV2' input: 'a' input: 'a' " TF " }\n"
                                    "node { name: 'u' op: 'MyCustomOp' input: 'b' input: 'a' }\n"
                                    "node { name: 'v' op: 'Identity' input: 'u:7' " TF " }\n", 1);
    assert_int_equal(gn_graph_validate(g), GN_OK);
    assert_string_equal(gn_graph_errmsg(g), "");
    gn_graph_free(g);

    /* a function whose ret names a missing node fails to load */
    const char *fn = "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT }"
                     " output_arg { name: 'y' type: DT_FLOAT } }\n"
                     "  node_def { name: 'n' op: 'Neg' input: 'x' " TF " }\n"
                     "  ret { key: 'y' value: 'nosuch:y:0' } } }\n";
    g = NULL;
    assert_int_equal(gn_graph_load_buffer(fn, strlen(fn), "f.pbtxt", NULL, &g), GN_ERR_GRAPH);
    expect_msg(g, "f.pbtxt: function 'f': ret 'y' names missing node 'nosuch'");
    gn_graph_free(g);
    /* a ret whose out_arg is not an output of the node */
    const char *fn2 = "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT }"
                      " output_arg { name: 'y' type: DT_FLOAT } }\n"
                      "  node_def { name: 'n' op: 'Neg' input: 'x' " TF " }\n"
                      "  ret { key: 'y' value: 'n:z:0' } } }\n";
    g = NULL;
    assert_int_equal(gn_graph_load_buffer(fn2, strlen(fn2), "f.pbtxt", NULL, &g), GN_ERR_GRAPH);
    expect_msg(g, "f.pbtxt: function 'f': ret 'y' 'n:z:0': Neg has no output named 'z'");
    gn_graph_free(g);
    /* a ret with no signature output, and an output with no ret */
    const char *fn3 = "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT }"
                      " output_arg { name: 'y' type: DT_FLOAT } }\n"
                      "  ret { key: 'y' value: 'x' } ret { key: 'q' value: 'x' } } }\n";
    g = NULL;
    assert_int_equal(gn_graph_load_buffer(fn3, strlen(fn3), "f.pbtxt", NULL, &g), GN_ERR_GRAPH);
    expect_msg(g, "f.pbtxt: function 'f': ret 'q' is not an output of the signature");
    gn_graph_free(g);
    const char *fn4 = "library { function { signature { name: 'f' input_arg { name: 'x' type: DT_FLOAT }"
                      " output_arg { name: 'y' type: DT_FLOAT } } } }\n";
    g = NULL;
    assert_int_equal(gn_graph_load_buffer(fn4, strlen(fn4), "f.pbtxt", NULL, &g), GN_ERR_GRAPH);
    expect_msg(g, "f.pbtxt: function 'f': output 'y' has no ret entry");
    gn_graph_free(g);
}

static void test_corpus_validates(void **state)
{
    (void)state;
    static const char *files[] = {
        "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__while_loop.pbtxt",
        "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__nested_loop.pbtxt",
        "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__loops_and_queues.pbtxt",
        "tensorflow__tensorflow/tensorflow__core__grappler__costs__graph_properties_testdata__function_functional_while.pbtxt",
        "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__functional-while-ops.pbtxt",
        "tensorflow__tensorflow/tensorflow__compiler__mlir__tensorflow__tests__graphdef2mlir__case_op.pbtxt",
        "tensorflow__tensorflow/tensorflow__compiler__tests__lstm_layer_inference.pbtxt",
        "tensorflow__tensorflow/tensorflow__compiler__jit__tests__opens2s_gnmt_mixed_precision.pbtxt.gz",
        "tensorflow__tensorflow/tensorflow__core__ir__importexport__tests__roundtrip__test10.pbtxt",
        "tensorflow__tensorflow/tensorflow__core__data__service__testdata__interleave_textline_dataset.pbtxt",
        "ARM-software__ML-KWS-for-MCU/Pretrained_models__LSTM__LSTM_S.pb",
        "tensorflow__serving/tensorflow_serving__servables__tensorflow__testdata__saved_model_half_plus_two_tf2_cpu__00000123",
        "SciSharp__TensorFlow.NET/test__TensorFlowNET.Keras.UnitTest__Assets__lstm_from_sequential",
    };
    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!gn_test_corpus(files[i], path, sizeof path)) fail_msg("corpus entry missing: %s", files[i]);
        gn_load_options o;
        gn_load_options_init(&o);
        o.validate = 0;
        gn_graph *g = NULL;
        if (gn_graph_load(path, &o, &g) != GN_OK) fail_msg("%s: %s", files[i], gn_graph_errmsg(g));
        if (gn_graph_validate(g) != GN_OK) fail_msg("%s: %s", files[i], gn_graph_errmsg(g));
        check_ok(g);
        for (uint32_t f = 0; f < g->n_fns; f++) check_ok(g->fns[f].body);
        /* a clone validates too */
        gn_graph *c = NULL;
        assert_int_equal(gn_graph_clone(g, &c), GN_OK);
        if (gn_graph_validate(c) != GN_OK) fail_msg("%s (clone): %s", files[i], gn_graph_errmsg(c));
        gn_graph_free(c);
        gn_graph_free(g);
    }
}

/* ---- unknown fields ---------------------------------------------------------------------------- */
typedef struct bytes {
    uint8_t d[4096];
    size_t n;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    assert_true(b->n + n <= sizeof b->d);
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put_varint(bytes *b, uint64_t v)
{
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        put(b, &c, 1);
        v >>= 7;
    } while (v);
}

static void put_ld(bytes *b, uint32_t field, const bytes *sub)
{
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, sub->n);
    put(b, sub->d, sub->n);
}

static void put_packed(bytes *b, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_get_packed_size(m);
    assert_true(b->n + n <= sizeof b->d);
    b->n += protobuf_c_message_pack(m, b->d + b->n);
}

static bool contains(const uint8_t *hay, size_t hn, const uint8_t *needle, size_t nn)
{
    for (size_t i = 0; i + nn <= hn; i++)
        if (memcmp(hay + i, needle, nn) == 0) return true;
    return false;
}

static void test_unknown_fields(void **state)
{
    (void)state;
    /* AttrValue { type: DT_FLOAT } + field 50 (varint 0x55) + field 51 (bytes "zz") */
    Tensorflow__AttrValue av = TENSORFLOW__ATTR_VALUE__INIT;
    av.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    av.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    static const uint8_t unk_attr[] = {0x90, 0x03, 0x55, 0x9a, 0x03, 0x02, 'z', 'z'};
    bytes attr = {.n = 0};
    put_packed(&attr, &av.base);
    put(&attr, unk_attr, sizeof unk_attr);
    bytes entry = {.n = 0};
    bytes key = {.n = 0};
    put(&key, "dtype", 5);
    put_ld(&entry, 1, &key);
    put_ld(&entry, 2, &attr);

    /* NodeDef { name, op } + attr entry + field 99 (varint 42) */
    Tensorflow__NodeDef nd = TENSORFLOW__NODE_DEF__INIT;
    nd.name = "ph";
    nd.op = "Placeholder";
    static const uint8_t unk_node[] = {0x98, 0x06, 0x2a};
    bytes node = {.n = 0};
    put_packed(&node, &nd.base);
    put_ld(&node, 5, &entry);
    put(&node, unk_node, sizeof unk_node);

    /* second node, plain */
    Tensorflow__NodeDef nd2 = TENSORFLOW__NODE_DEF__INIT;
    nd2.name = "id";
    nd2.op = "Identity";
    char *in[] = {"ph"};
    nd2.n_input = 1;
    nd2.input = in;
    Tensorflow__AttrValue tv = TENSORFLOW__ATTR_VALUE__INIT;
    tv.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    tv.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    Tensorflow__NodeDef__AttrEntry te = TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    te.key = "T";
    te.value = &tv;
    Tensorflow__NodeDef__AttrEntry *tes[] = {&te};
    nd2.n_attr = 1;
    nd2.attr = tes;
    bytes node2 = {.n = 0};
    put_packed(&node2, &nd2.base);

    /* GraphDef { node, node, versions } + field 100 (varint 7) + field 101 (fixed32) */
    Tensorflow__VersionDef vd = TENSORFLOW__VERSION_DEF__INIT;
    vd.producer = 1087;
    bytes ver = {.n = 0};
    put_packed(&ver, &vd.base);
    static const uint8_t unk_graph[] = {0xa0, 0x06, 0x07, 0xad, 0x06, 1, 2, 3, 4};
    bytes gd = {.n = 0};
    put_ld(&gd, 1, &node);
    put_ld(&gd, 1, &node2);
    put_ld(&gd, 4, &ver);
    put(&gd, unk_graph, sizeof unk_graph);

    gn_load_options o;
    gn_load_options_init(&o);
    o.format = GN_FORMAT_BINARY;
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(gd.d, gd.n, "unk.pb", &o, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(gn_graph_node_count(g), 2);
    void *out = NULL;
    size_t on = 0;
    assert_int_equal(gn_graph_serialize(g, GN_FORMAT_BINARY, &out, &on), GN_OK);
    assert_true(contains(out, on, unk_attr, sizeof unk_attr));
    assert_true(contains(out, on, unk_node, sizeof unk_node));
    assert_true(contains(out, on, unk_graph, sizeof unk_graph));
    /* input was canonical: the output is the same bytes */
    assert_int_equal(on, gd.n);
    assert_memory_equal(out, gd.d, gd.n);
    gn_free(out);

    /* still there after a clone and a rewrite elsewhere in the graph */
    gn_graph *c = NULL;
    assert_int_equal(gn_graph_clone(g, &c), GN_OK);
    gn_graph_free(g);
    assert_int_equal(gn__node_add(c, "extra", "NoOp", NULL), GN_OK);
    assert_int_equal(gn_graph_serialize(c, GN_FORMAT_BINARY, &out, &on), GN_OK);
    assert_true(contains(out, on, unk_attr, sizeof unk_attr));
    assert_true(contains(out, on, unk_node, sizeof unk_node));
    assert_true(contains(out, on, unk_graph, sizeof unk_graph));
    /* and through a reload of that output */
    gn_graph *g2 = NULL;
    if (gn_graph_load_buffer(out, on, "unk2.pb", NULL, &g2) != GN_OK) fail_msg("%s", gn_graph_errmsg(g2));
    void *out2 = NULL;
    size_t on2 = 0;
    assert_int_equal(gn_graph_serialize(g2, GN_FORMAT_BINARY, &out2, &on2), GN_OK);
    assert_int_equal(on2, on);
    assert_memory_equal(out2, out, on);
    gn_free(out);
    gn_free(out2);
    gn_graph_free(g2);
    gn_graph_free(c);
}

/* ---- SavedModel MetaGraphDef choice --------------------------------------------------------------- */
static void *saved_model_bytes(size_t *len)
{
    static char *serve_tags[] = {"serve"}, *train_tags[] = {"train"};
    char **tags[2] = {serve_tags, train_tags};
    static char *node_names[] = {"serve_node", "train_node"};
    Tensorflow__MetaGraphDef__MetaInfoDef mi[2];
    Tensorflow__GraphDef gd[2];
    Tensorflow__NodeDef nd[2];
    Tensorflow__NodeDef *ndp[2][1];
    Tensorflow__MetaGraphDef mg[2];
    Tensorflow__MetaGraphDef *mgp[2];
    Tensorflow__AttrValue dt = TENSORFLOW__ATTR_VALUE__INIT;
    dt.value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
    dt.type = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    Tensorflow__NodeDef__AttrEntry de = TENSORFLOW__NODE_DEF__ATTR_ENTRY__INIT;
    de.key = "dtype";
    de.value = &dt;
    Tensorflow__NodeDef__AttrEntry *dep[] = {&de};
    for (int i = 0; i < 2; i++) {
        tensorflow__meta_graph_def__meta_info_def__init(&mi[i]);
        mi[i].n_tags = 1;
        mi[i].tags = tags[i];
        tensorflow__node_def__init(&nd[i]);
        nd[i].name = node_names[i];
        nd[i].op = "Placeholder";
        nd[i].n_attr = 1;
        nd[i].attr = dep;
        ndp[i][0] = &nd[i];
        tensorflow__graph_def__init(&gd[i]);
        gd[i].n_node = 1;
        gd[i].node = ndp[i];
        tensorflow__meta_graph_def__init(&mg[i]);
        mg[i].meta_info_def = &mi[i];
        mg[i].graph_def = &gd[i];
        mgp[i] = &mg[i];
    }
    Tensorflow__SavedModel sm = TENSORFLOW__SAVED_MODEL__INIT;
    sm.saved_model_schema_version = 1;
    sm.n_meta_graphs = 2;
    sm.meta_graphs = mgp;
    *len = protobuf_c_message_get_packed_size(&sm.base);
    void *buf = malloc(*len);
    assert_non_null(buf);
    assert_int_equal(protobuf_c_message_pack(&sm.base, buf), *len);
    return buf;
}

static gn_status load_sm(const void *d, size_t n, const char *tags, gn_graph **g)
{
    gn_load_options o;
    gn_load_options_init(&o);
    o.format = GN_FORMAT_SAVEDMODEL;
    o.tags = tags;
    return gn_graph_load_buffer(d, n, "sm.pb", &o, g);
}

static void test_savedmodel_tags(void **state)
{
    (void)state;
    size_t n;
    void *d = saved_model_bytes(&n);
    gn_graph *g = NULL;
    /* no tags: the one tagged serve */
    if (load_sm(d, n, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_int_equal(gn_graph_node_count(g), 1);
    assert_string_equal(gn_graph_node_name(g, 0), "serve_node");
    gn_graph_free(g);
    if (load_sm(d, n, "train", &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_string_equal(gn_graph_node_name(g, 0), "train_node");
    gn_graph_free(g);
    if (load_sm(d, n, "serve", &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
    assert_string_equal(gn_graph_node_name(g, 0), "serve_node");
    gn_graph_free(g);
    assert_int_equal(load_sm(d, n, "gpu", &g), GN_ERR_NOT_FOUND);
    assert_int_equal(gn_graph_errcode(g), GN_ERR_NOT_FOUND);
    assert_non_null(strstr(gn_graph_errmsg(g), "[serve], [train]"));
    assert_non_null(strstr(gn_graph_errmsg(g), "gpu"));
    gn_graph_free(g);
    /* a tag set must match exactly */
    assert_int_equal(load_sm(d, n, "serve,train", &g), GN_ERR_NOT_FOUND);
    gn_graph_free(g);
    free(d);

    char path[4096];
    if (!gn_test_corpus("", path, sizeof path)) skip();
    /* a single MetaGraphDef tagged only "transform" */
    if (gn_test_corpus("tensorflow__tfx/tfx__components__testdata__transform__transform_graph__transform_fn", path,
                       sizeof path)) {
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
        assert_int_equal(gn_graph_node_count(g), 621);
        gn_graph_free(g);
        gn_load_options o;
        gn_load_options_init(&o);
        o.tags = "transform";
        if (gn_graph_load(path, &o, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
        assert_int_equal(gn_graph_node_count(g), 621);
        gn_graph_free(g);
        o.tags = "serve";
        assert_int_equal(gn_graph_load(path, &o, &g), GN_ERR_NOT_FOUND);
        assert_non_null(strstr(gn_graph_errmsg(g), "[transform]"));
        gn_graph_free(g);
    }
    /* a single MetaGraphDef with no tags at all */
    if (gn_test_corpus("tensorflow__text/tensorflow_text__python__ops__test_data__segmenter_hub_module", path,
                       sizeof path)) {
        if (gn_graph_load(path, NULL, &g) != GN_OK) fail_msg("%s", gn_graph_errmsg(g));
        assert_int_equal(gn_graph_node_count(g), 375);
        gn_graph_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mutation),
        cmocka_unit_test(test_stress),
        cmocka_unit_test(test_batch_remove),
        cmocka_unit_test(test_batch_remove_random),
        cmocka_unit_test(test_forward_output_if),
        cmocka_unit_test(test_control_dedup),
        cmocka_unit_test(test_topo_deterministic),
        cmocka_unit_test(test_topo_while_loop),
        cmocka_unit_test(test_topo_cycle),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_compact),
        cmocka_unit_test(test_compact_function_body),
        cmocka_unit_test(test_clone),
        cmocka_unit_test(test_function_bodies),
        cmocka_unit_test(test_validator),
        cmocka_unit_test(test_corpus_validates),
        cmocka_unit_test(test_unknown_fields),
        cmocka_unit_test(test_savedmodel_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
