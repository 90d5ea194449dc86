/* bench_inline: cost of function-call inlining (src/optimizer/inline.h).
 *
 *   bench_inline [N ...]            (default: 1000 10000 100000)
 *
 * For each N, builds a graph with N calls of a small library function: a chain
 * x -> call_0 -> call_1 -> ... -> call_{N-1}, the calls alternating between
 * PartitionedCall and a call by op name, each with a control input on the
 * previous call (so every call gets an input control node too). The function
 * `cell(a) = Relu(a * 0.5 + 1)` calls `half(a) = a * 0.5` by op name, so each
 * call opens into a nested one as well: 2N inlinings in all. Then times
 * gn__inline_calls (every call, nested ones included, one sweep) and the
 * compaction after it. The graph is built through the IR (not timed).
 *
 * Prints one line per N:
 *   calls=N inlined=.. nodes_before=.. nodes_after=.. inline_ms=.. compact_ms=..
 *   ns_per_node=..   (inline_ms over nodes_after)
 * Exits 1 with grapnel's message on a failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grapnel/grapnel.h"
#include "graph/ir.h"
#include "optimizer/inline.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#define TF "attr { key: 'T' value { type: DT_FLOAT } } "
#define FCONST(n, v)                                                                                                 \
    "node_def { name: '" n "' op: 'Const' attr { key: 'dtype' value { type: DT_FLOAT } } attr { key: 'value' value { " \
    "tensor { dtype: DT_FLOAT tensor_shape { } float_val: " v " } } } }\n"

static const char *const TEMPLATE =
    "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
    "node { name: 'tpl_pc' op: 'PartitionedCall' input: 'x' attr { key: 'Tin' value { list { type: DT_FLOAT } } } "
    "attr { key: 'Tout' value { list { type: DT_FLOAT } } } attr { key: 'f' value { func { name: 'cell' } } } }\n"
    "library {\n"
    "function { signature { name: 'half' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT "
    "} }\n" FCONST("h", "0.5") "node_def { name: 'm' op: 'Mul' input: 'a' input: 'h:output:0' " TF "}\n"
    "ret { key: 'y' value: 'm:z:0' } }\n"
    "function { signature { name: 'cell' input_arg { name: 'a' type: DT_FLOAT } output_arg { name: 'y' type: DT_FLOAT "
    "} }\n" FCONST("one", "1") "node_def { name: 'hf' op: 'half' input: 'a' }\n"
    "node_def { name: 'add' op: 'AddV2' input: 'hf:y:0' input: 'one:output:0' " TF "}\n"
    "node_def { name: 'r' op: 'Relu' input: 'add:z:0' " TF "}\n"
    "ret { key: 'y' value: 'r:activations:0' } }\n"
    "}\n";

static int die(const char *what, gn_graph *g)
{
    fprintf(stderr, "bench_inline: %s: %s\n", what, g ? gn_graph_errmsg(g) : "");
    return 1;
}

static int run(uint32_t n)
{
    gn_graph *g = NULL;
    if (gn_graph_load_buffer(TEMPLATE, strlen(TEMPLATE), "bench.pbtxt", NULL, &g) != GN_OK) return die("load", g);
    gn_id tpl = gn__graph_find(g, "tpl_pc"), x = gn__graph_find(g, "x");
    const Tensorflow__AttrValue *tin = gn__node_attr(g, tpl, "Tin"), *tout = gn__node_attr(g, tpl, "Tout"),
                                *f = gn__node_attr(g, tpl, "f");
    gn__edge prev = {x, 0};
    gn_id prev_id = GN_NONE;
    char name[64];
    for (uint32_t i = 0; i < n; i++) {
        gn_id id;
        snprintf(name, sizeof name, "call_%u", i);
        bool pc = (i & 1) == 0;
        if (gn__node_add(g, name, pc ? "PartitionedCall" : "cell", &id) != GN_OK) return die("add", g);
        if (pc && (gn__node_set_attr(g, id, "Tin", tin) != GN_OK || gn__node_set_attr(g, id, "Tout", tout) != GN_OK ||
                   gn__node_set_attr(g, id, "f", f) != GN_OK))
            return die("attr", g);
        if (gn__node_add_input(g, id, prev) != GN_OK) return die("input", g);
        if (prev_id != GN_NONE && gn__node_add_control(g, id, prev_id) != GN_OK) return die("control", g);
        prev = (gn__edge){id, 0};
        prev_id = id;
    }
    if (gn__node_remove(g, tpl) != GN_OK || gn__graph_compact(g) != GN_OK) return die("template", g);
    uint32_t before = g->n_live;
    gn__inline_opts o = {0};
    o.drop_caller = true;
    gn__err err;
    gn__err_clear(&err);
    uint32_t inlined = 0;
    double t0 = now_ms();
    if (gn__inline_calls(g, &o, &inlined, &err) != GN_OK) {
        fprintf(stderr, "bench_inline: inline: %s\n", err.msg);
        return 1;
    }
    double t1 = now_ms();
    if (gn__graph_compact(g) != GN_OK) return die("compact", g);
    double t2 = now_ms();
    uint32_t after = g->n_live;
    if (gn__graph_validate(g) != GN_OK) return die("validate", g);
    if (inlined != 2 * n) {
        fprintf(stderr, "bench_inline: %u inlined, expected %u\n", inlined, 2 * n);
        return 1;
    }
    printf("calls=%u inlined=%u nodes_before=%u nodes_after=%u inline_ms=%.2f compact_ms=%.2f ns_per_node=%.1f\n", n,
           inlined, before, after, t1 - t0, t2 - t1, (t1 - t0) * 1e6 / after);
    gn_graph_free(g);
    return 0;
}

int main(int argc, char **argv)
{
    static const uint32_t def[] = {1000, 10000, 100000};
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (run((uint32_t)strtoul(argv[i], NULL, 10))) return 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof def / sizeof def[0]; i++)
        if (run(def[i])) return 1;
    return 0;
}
