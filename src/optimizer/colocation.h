/* Colocation attrs across rewrites (private). A node's `_class` attr lists
 * "loc:@NAME" entries: the node must be placed with node NAME. A pass that
 * replaces NAME by a node of another name (arithmetic's
 * "ArithmeticOptimizer/FoldTransposeIntoMatMul_MatMul" for "MatMul", a fused
 * node under its root's name, ...) leaves that entry naming a node that is
 * gone, and TensorFlow refuses such a graph at import ("expects to be
 * colocated with unknown node"). The meta-optimizer records, before each
 * pass, every loc:@ entry whose node exists, and after it rewrites the
 * entries whose node is gone to the node that took its place, as Grappler
 * keeps colocation groups on renamed nodes:
 *  - when the holder read the old node at data input k: the producer of its
 *    input k now;
 *  - else, a consumer of the old node that is still there: the producer of
 *    that consumer's input now;
 *  - else the entry is dropped (nothing took the node's place), and the
 *    attr with it when no entry is left. */
#ifndef GN_OPTIMIZER_COLOCATION_H
#define GN_OPTIMIZER_COLOCATION_H

#include "graph/ir.h"

/* The names point into the graph's own memory (interned node names, the
 * attr's bytes), which lives as long as the graph: a record copies nothing. */
typedef struct gn__coloc_rec {
    const char *holder;    /* the node with the `_class` attr */
    const char *target;    /* the node an entry names (target_len bytes, not terminated) */
    size_t target_len;
    int32_t slot;          /* the holder's data input read from target, -1 when none */
    const char *consumer;  /* another data consumer of target, NULL when none */
    uint32_t cslot;        /* its input slot */
} gn__coloc_rec;

typedef struct gn__coloc {
    gn__coloc_rec *r;
    uint32_t n, cap;
} gn__coloc;

/* Records every loc:@ entry of g whose node exists (nothing when no node has
 * a `_class` attr: O(1)). */
gn_status gn__coloc_collect(const gn_graph *g, gn__coloc *c, gn__err *err);
/* Rewrites (or drops) the entries whose node is gone since the collect;
 * *changed set when it did. */
gn_status gn__coloc_fix(gn_graph *g, const gn__coloc *c, bool *changed, gn__err *err);
void gn__coloc_free(gn__coloc *c);

#endif
