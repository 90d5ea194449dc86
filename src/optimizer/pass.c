/* What the passes call on the meta-optimizer's side: the deadline and step
 * budget, the patterns the options disable, the events of the report, unique
 * names, where a node runs. The meta-optimizer (meta.c) runs the passes; the
 * passes call these, never meta.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "optimizer/pass.h"
#include "optimizer/report.h"

int64_t gn__now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool gn__pass_may_claim_bytes(const gn__pass_ctx *c, const gn_graph *g, const void *p, size_t n)
{
    uint32_t holders = gn__graph_bytes_holders(g, p, n);
    /* the copy is the one other holder: it shares the blob, which has two */
    return holders == 1 || (holders == 2 && c->snapshot && c->snapshot->holds(c->snapshot->user, p, n));
}

void gn__pass_claim_bytes(gn__pass_ctx *c)
{
    if (c->snapshot) c->snapshot->give_up(c->snapshot->user);
}

bool gn__pass_snapshot_again(gn__pass_ctx *c, const gn_graph *g)
{
    return !c->snapshot || c->snapshot->again(c->snapshot->user, g);
}

bool gn__pass_deadline_passed(const gn__pass_ctx *c)
{
    gn__pass_guard *gd = c->guard;
    if (gd && (gd->tripped || ++gd->polls > gd->poll_limit)) {
        gd->tripped = true;
        return true;
    }
    return c->deadline_us > 0 && gn__now_us() > c->deadline_us;
}

static bool list_has(const char *list, const char *id, size_t idlen)
{
    if (!list) return false;
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && t[-1] == ' ') t--;
        if ((size_t)(t - p) == idlen && memcmp(p, id, idlen) == 0) return true;
        p = e;
    }
    return false;
}

bool gn__pattern_enabled(const gn__pass_ctx *c, const char *pattern)
{
    if (!c || !c->opts || !c->opts->disabled_patterns) return true;
    const char *list = c->opts->disabled_patterns;
    if (list_has(list, pattern, strlen(pattern))) return false;
    const char *dot = strchr(pattern, '.');
    if (dot && list_has(list, pattern, (size_t)(dot - pattern))) return false;
    return true;
}

static void add_event(gn__pass_ctx *c, bool refused, const char *pattern, const gn_graph *g, gn_id node,
                      const char *fmt, va_list ap)
{
    /* remap.policy 'grapnel' fusions, counted for the report's note even
     * when no event is recorded */
    if (c && c->n_grapnel_only && !refused && strstr(fmt, "[grapnel-only: ")) (*c->n_grapnel_only)++;
    gn_report *r = c ? c->report : NULL;
    if (!r) return;
    char detail[1024];
    int dn = vsnprintf(detail, sizeof detail, fmt, ap);
    if (dn < 0) dn = 0;
    if ((size_t)dn >= sizeof detail) dn = (int)sizeof detail - 1;
    const char *item = c->fn_name ? c->fn_name : "main";
    const char *node_name = g && node != GN_NONE && node < g->n_nodes ? gn__node_name(g, node) : "";
    size_t li = strlen(item), lp = strlen(pattern), ln = strlen(node_name);
    char *buf = gn__arena_alloc(&r->strings, li + lp + ln + (size_t)dn + 4, 1);
    if (!buf) {
        r->oom = true;
        return;
    }
    if (r->n_events == r->cap_events) {
        size_t nc = r->cap_events ? r->cap_events * 2 : 64;
        event *ne = realloc(r->events, nc * sizeof *ne);
        if (!ne) {
            r->oom = true;
            return;
        }
        r->events = ne;
        r->cap_events = nc;
    }
    event *e = &r->events[r->n_events++];
    e->item = buf;
    memcpy(buf, item, li + 1);
    buf += li + 1;
    e->pattern = buf;
    memcpy(buf, pattern, lp + 1);
    buf += lp + 1;
    e->node = buf;
    memcpy(buf, node_name, ln + 1);
    buf += ln + 1;
    e->detail = buf;
    memcpy(buf, detail, (size_t)dn);
    buf[dn] = '\0';
    e->iteration = (int32_t)c->iteration;
    e->refused = refused;
}

void gn__pass_rewrote(gn__pass_ctx *c, const char *pattern, const gn_graph *g, gn_id node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_event(c, false, pattern, g, node, fmt, ap);
    va_end(ap);
}

void gn__pass_refused(gn__pass_ctx *c, const char *pattern, const gn_graph *g, gn_id node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_event(c, true, pattern, g, node, fmt, ap);
    va_end(ap);
}

void gn__pass_unique_name(const gn_graph *g, const char *base, const char *suffix, char *buf, size_t buflen)
{
    snprintf(buf, buflen, "%s/%s", base, suffix);
    if (gn__graph_find(g, buf) == GN_NONE) return;
    for (uint32_t k = 1;; k++) {
        snprintf(buf, buflen, "%s/%s_%u", base, suffix, k);
        if (gn__graph_find(g, buf) == GN_NONE) return;
    }
}

/* ---- target ------------------------------------------------------------------------------- */
/* Does a device string name a GPU? "/device:GPU:0", "/job:w/replica:0/task:0/device:GPU:1",
 * "/gpu:0", "GPU:0" (case-insensitive on the type, as TensorFlow's DeviceNameUtils). */
static bool device_is(const char *d, const char *type)
{
    size_t tl = strlen(type);
    for (const char *p = d; *p; p++) {
        bool start = p == d || p[-1] == '/' || p[-1] == ':';
        if (!start) continue;
        size_t k = 0;
        while (k < tl && p[k] && (p[k] | 0x20) == (type[k] | 0x20)) k++;
        if (k == tl && (p[k] == ':' || p[k] == '\0')) {
            /* "device:GPU" or a legacy "/gpu:0": not a job or task named "gpu" */
            if (p == d || p[-1] == '/' || (p - d >= 7 && !strncmp(p - 7, "device:", 7))) return true;
        }
    }
    return false;
}

bool gn__pass_on_gpu(const gn__pass_ctx *c, const gn_graph *g, gn_id id)
{
    const char *d = gn__str(g, g->nodes[id].device);
    if (!d[0]) return c->target && c->target->kind == GN_TARGET_GPU;
    return device_is(d, "GPU");
}

bool gn__list_has(const char *list, const char *s)
{
    if (!list || !s) return false;
    size_t n = strlen(s);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && t[-1] == ' ') t--;
        if ((size_t)(t - p) == n && n && !memcmp(p, s, n)) return true;
        p = e;
    }
    return false;
}
