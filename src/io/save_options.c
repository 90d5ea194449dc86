/* gn_save_options: defaults, Python dict text parsing and printing
 * (include/grapnel/save.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/pylit.h"
#include "grapnel/save.h"

/* Heap blocks owned by an options struct (o->internal). */
typedef struct opt_store {
    void **p;
    size_t n, cap;
} opt_store;

void gn_save_options_init(gn_save_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = (uint32_t)sizeof *o;
    o->experimental_custom_gradients = 1;
}

void gn_save_options_clear(gn_save_options *o)
{
    if (!o) return;
    opt_store *s = o->internal;
    if (s) {
        for (size_t i = 0; i < s->n; i++) free(s->p[i]);
        free(s->p);
        free(s);
    }
    gn_save_options_init(o);
}

void gn_save_params_init(gn_save_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->struct_size = (uint32_t)sizeof *p;
}

/* ---- parser -------------------------------------------------------------------- */
typedef struct parser {
    gn__py r;
    gn_save_options *o;
    opt_store *store;
    gn__err *err;
} parser;

static void *keep(parser *p, size_t n)
{
    if (p->store->n == p->store->cap) {
        size_t c = p->store->cap ? p->store->cap * 2 : 8;
        void **q = realloc(p->store->p, c * sizeof *q);
        if (!q) return NULL;
        p->store->p = q;
        p->store->cap = c;
    }
    void *m = calloc(1, n ? n : 1);
    if (m) p->store->p[p->store->n++] = m;
    return m;
}

static gn_status nomem(parser *p) { return gn__fail(p->err, GN_ERR_NOMEM, "out of memory"); }

/* The string at r->tok, decoded into memory the options keep; else fails
 * with msg (formatted with key). */
static gn_status read_string(parser *p, const char *msg, const char *key, char **out)
{
    gn__py_tok t = p->r.tok;
    if (t.kind != GN__PY_STR) return gn__py_fail(&p->r, t.pos, msg, key);
    size_t n = gn__py_str(&t, NULL, 0);
    char *s = keep(p, n + 1);
    if (!s) return nomem(p);
    gn__py_str(&t, s, n + 1);
    *out = s;
    return gn__py_advance(&p->r);
}

static gn_status parse_bool(parser *p, const char *key, int32_t *out)
{
    if (gn__py_is_word(&p->r, "True")) *out = 1;
    else if (gn__py_is_word(&p->r, "False")) *out = 0;
    else return gn__py_fail(&p->r, p->r.tok.pos, "'%s' takes True or False", key);
    return gn__py_advance(&p->r);
}

/* Appends item to the array *v of *n items (capacity *cap), in kept memory. */
static gn_status push(parser *p, void **v, size_t *n, size_t *cap, size_t size, const void *item)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 4;
        void *w = keep(p, c * size);
        if (!w) return nomem(p);
        if (*n) memcpy(w, *v, *n * size);
        *v = w;
        *cap = c;
    }
    memcpy((char *)*v + *n * size, item, size);
    (*n)++;
    return GN_OK;
}

/* None, or a [list] (or (tuple)) of strings. *has = 0 for None. */
static gn_status parse_str_list(parser *p, const char *key, int32_t *has, size_t *n_out, const char *const **out)
{
    gn__py *r = &p->r;
    if (gn__py_is_word(r, "None")) {
        *has = 0;
        *n_out = 0;
        *out = NULL;
        return gn__py_advance(r);
    }
    if (!gn__py_is(r, '[') && !gn__py_is(r, '('))
        return gn__py_fail(r, r->tok.pos, "'%s' takes a list of strings or None", key);
    gn__py_seq q;
    GN_TRY(gn__py_open(r, r->tok.punct, &q));
    void *v = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        bool more;
        GN_TRY(gn__py_item(r, &q, &more));
        if (!more) break;
        char *s;
        GN_TRY(read_string(p, "'%s' takes a list of strings", key, &s));
        GN_TRY(push(p, &v, &n, &cap, sizeof s, &s));
    }
    if (!v && !(v = keep(p, sizeof(char *)))) return nomem(p);
    *has = 1;
    *n_out = n;
    *out = v;
    return GN_OK;
}

static gn_status parse_aliases(parser *p)
{
    gn__py *r = &p->r;
    gn_save_options *o = p->o;
    if (gn__py_is_word(r, "None")) {
        o->n_function_aliases = 0;
        o->function_aliases = NULL;
        return gn__py_advance(r);
    }
    if (!gn__py_is(r, '{'))
        return gn__py_fail(r, r->tok.pos, "'function_aliases' takes a dict {'alias': 'function name'} or None");
    gn__py_seq q;
    GN_TRY(gn__py_open(r, '{', &q));
    void *v = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        bool more;
        GN_TRY(gn__py_item(r, &q, &more));
        if (!more) break;
        char *k, *f;
        GN_TRY(read_string(p, "'%s' takes a dict {'alias': 'function name'} or None", "function_aliases", &k));
        GN_TRY(gn__py_expect(r, ':'));
        GN_TRY(read_string(p, "alias '%s': expected a function name string", k, &f));
        gn_function_alias a = {k, f};
        GN_TRY(push(p, &v, &n, &cap, sizeof a, &a));
    }
    o->n_function_aliases = n;
    o->function_aliases = n ? v : NULL;
    return GN_OK;
}

/* The last component of a dotted word ("tf.saved_model.VariablePolicy.NONE"). */
static void last_name(const gn__py_tok *t, char *buf, size_t cap)
{
    size_t b = t->len;
    while (b > 0 && t->text[b - 1] != '.') b--;
    snprintf(buf, cap, "%.*s", (int)(t->len - b), t->text + b);
}

static gn_status parse_policy(parser *p)
{
    gn__py *r = &p->r;
    size_t pos = r->tok.pos;
    char name[128];
    if (r->tok.kind == GN__PY_STR) {
        gn__py_str(&r->tok, name, sizeof name);
    } else if (r->tok.kind == GN__PY_WORD) {
        last_name(&r->tok, name, sizeof name);
    } else {
        return gn__py_fail(r, pos, "'experimental_variable_policy' takes a VariablePolicy, a string or None");
    }
    GN_TRY(gn__py_advance(r));
    if (gn__py_ieq(name, strlen(name), "none")) p->o->experimental_variable_policy = GN_VARIABLE_POLICY_NONE;
    else if (gn__py_ieq(name, strlen(name), "save_variable_devices"))
        p->o->experimental_variable_policy = GN_VARIABLE_POLICY_SAVE_VARIABLE_DEVICES;
    else if (gn__py_ieq(name, strlen(name), "expand_distributed_variables"))
        p->o->experimental_variable_policy = GN_VARIABLE_POLICY_EXPAND_DISTRIBUTED_VARIABLES;
    else
        return gn__py_fail(r, pos, "'experimental_variable_policy': '%s' is not one of None, 'save_variable_devices', "
                                   "'expand_distributed_variables'", name);
    return GN_OK;
}

/* A positive integer, or a product of them (1024 * 1024). */
static gn_status parse_size(parser *p, int64_t *v)
{
    gn__py *r = &p->r;
    size_t pos = r->tok.pos;
    GN_TRY(gn__py_int(r, INT64_MIN, INT64_MAX, v));
    while (gn__py_is(r, '*')) {
        GN_TRY(gn__py_advance(r));
        int64_t x;
        GN_TRY(gn__py_int(r, INT64_MIN, INT64_MAX, &x));
        if (__builtin_mul_overflow(*v, x, v))
            return gn__py_fail(r, pos, "MaxShardSizePolicy: max_shard_size does not fit in 64 bits");
    }
    if (*v <= 0) return gn__py_fail(r, pos, "MaxShardSizePolicy: max_shard_size must be positive, got %" PRId64, *v);
    return GN_OK;
}

static gn_status parse_sharding(parser *p)
{
    gn__py *r = &p->r;
    if (gn__py_is_word(r, "None")) {
        p->o->experimental_sharding_callback = GN_SHARDING_DEFAULT;
        p->o->max_shard_size = 0;
        return gn__py_advance(r);
    }
    if (r->tok.kind != GN__PY_WORD)
        return gn__py_fail(r, r->tok.pos,
                           "'experimental_sharding_callback' takes ShardByTaskPolicy(), MaxShardSizePolicy(N) or None");
    char name[128];
    last_name(&r->tok, name, sizeof name);
    size_t pos = r->tok.pos;
    GN_TRY(gn__py_advance(r));
    if (!gn__py_is(r, '(')) return gn__py_fail(r, r->tok.pos, "expected '(' after '%s'", name);
    GN_TRY(gn__py_advance(r));
    if (strcmp(name, "ShardByTaskPolicy") == 0) {
        if (!gn__py_is(r, ')')) return gn__py_fail(r, r->tok.pos, "ShardByTaskPolicy takes no arguments");
        p->o->experimental_sharding_callback = GN_SHARDING_BY_TASK;
        p->o->max_shard_size = 0;
        return gn__py_advance(r);
    }
    if (strcmp(name, "MaxShardSizePolicy") == 0) {
        if (gn__py_is_word(r, "max_shard_size")) {
            GN_TRY(gn__py_advance(r));
            if (!gn__py_is(r, '=')) return gn__py_fail(r, r->tok.pos, "expected '=' after max_shard_size");
            GN_TRY(gn__py_advance(r));
        }
        int64_t v = 0;
        GN_TRY(parse_size(p, &v));
        if (!gn__py_is(r, ')'))
            return gn__py_fail(r, r->tok.pos, "expected ')' after MaxShardSizePolicy's argument");
        p->o->experimental_sharding_callback = GN_SHARDING_MAX_SHARD_SIZE;
        p->o->max_shard_size = v;
        return gn__py_advance(r);
    }
    return gn__py_fail(r, pos,
                       "'experimental_sharding_callback': '%s' is not ShardByTaskPolicy or MaxShardSizePolicy", name);
}

static gn_status parse_value(parser *p, const char *key, size_t key_pos)
{
    gn_save_options *o = p->o;
    if (strcmp(key, "namespace_whitelist") == 0)
        return parse_str_list(p, key, &o->has_namespace_whitelist, &o->n_namespace_whitelist, &o->namespace_whitelist);
    if (strcmp(key, "save_debug_info") == 0) return parse_bool(p, key, &o->save_debug_info);
    if (strcmp(key, "function_aliases") == 0) return parse_aliases(p);
    if (strcmp(key, "experimental_debug_stripper") == 0) return parse_bool(p, key, &o->experimental_debug_stripper);
    if (strcmp(key, "experimental_io_device") == 0) {
        if (gn__py_is_word(&p->r, "None")) {
            o->experimental_io_device = NULL;
            return gn__py_advance(&p->r);
        }
        char *s;
        GN_TRY(read_string(p, "'%s' takes a device string or None", key, &s));
        o->experimental_io_device = s;
        return GN_OK;
    }
    if (strcmp(key, "experimental_variable_policy") == 0) return parse_policy(p);
    if (strcmp(key, "experimental_custom_gradients") == 0) return parse_bool(p, key, &o->experimental_custom_gradients);
    if (strcmp(key, "experimental_image_format") == 0) return parse_bool(p, key, &o->experimental_image_format);
    if (strcmp(key, "experimental_skip_saver") == 0) return parse_bool(p, key, &o->experimental_skip_saver);
    if (strcmp(key, "experimental_sharding_callback") == 0) return parse_sharding(p);
    if (strcmp(key, "extra_tags") == 0) {
        int32_t has;
        return parse_str_list(p, key, &has, &o->n_extra_tags, &o->extra_tags);
    }
    return gn__py_fail(&p->r, key_pos, "unknown SaveOptions field '%s'", key);
}

static gn_status parse_text(parser *p, const char *text)
{
    gn__py *r = &p->r;
    GN_TRY(gn__py_init(r, text, strlen(text), NULL, GN_ERR_ARG, p->err));
    if (r->tok.kind == GN__PY_END) return GN_OK; /* empty text: nothing to change */
    gn__py_seq q;
    GN_TRY(gn__py_open(r, '{', &q));
    for (;;) {
        bool more;
        gn__py_tok k;
        GN_TRY(gn__py_entry(r, &q, false, &k, &more));
        if (!more) break;
        char key[256];
        gn__py_str(&k, key, sizeof key);
        GN_TRY(parse_value(p, key, k.pos));
    }
    return gn__py_end(r);
}

gn_status gn_save_options_parse(gn_save_options *o, const char *text, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!o || !text) return GN_ERR_ARG;
    if (!o->internal) {
        o->internal = calloc(1, sizeof(opt_store));
        if (!o->internal) return GN_ERR_NOMEM;
    }
    gn__err e;
    gn__err_clear(&e);
    parser p = {.o = o, .store = o->internal, .err = &e};
    gn_status s = parse_text(&p, text);
    if (s != GN_OK) {
        gn__err_prefix(&e, "save options");
        if (err && errlen) snprintf(err, errlen, "%s", e.msg);
    }
    return s;
}

/* ---- printing ------------------------------------------------------------------- */
static void put_str(gn__buf *b, const char *s) { gn__py_quote(b, s, strlen(s)); }

static void put_list(gn__buf *b, bool has, size_t n, const char *const *v)
{
    if (!has) {
        gn__buf_puts(b, "None");
        return;
    }
    gn__buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i) gn__buf_puts(b, ", ");
        put_str(b, v[i]);
    }
    gn__buf_putc(b, ']');
}

char *gn_save_options_to_string(const gn_save_options *o)
{
    gn_save_options d;
    gn_save_options_init(&d);
    if (!o) o = &d;
    gn__buf b;
    gn__buf_init(&b);
    gn__buf_puts(&b, "{'namespace_whitelist': ");
    put_list(&b, o->has_namespace_whitelist != 0, o->n_namespace_whitelist, o->namespace_whitelist);
    gn__buf_printf(&b, ", 'save_debug_info': %s", o->save_debug_info ? "True" : "False");
    gn__buf_puts(&b, ", 'function_aliases': ");
    if (!o->n_function_aliases) {
        gn__buf_puts(&b, "None");
    } else {
        gn__buf_putc(&b, '{');
        for (size_t i = 0; i < o->n_function_aliases; i++) {
            if (i) gn__buf_puts(&b, ", ");
            put_str(&b, o->function_aliases[i].alias);
            gn__buf_puts(&b, ": ");
            put_str(&b, o->function_aliases[i].function);
        }
        gn__buf_putc(&b, '}');
    }
    gn__buf_printf(&b, ", 'experimental_debug_stripper': %s", o->experimental_debug_stripper ? "True" : "False");
    gn__buf_puts(&b, ", 'experimental_io_device': ");
    if (o->experimental_io_device) put_str(&b, o->experimental_io_device);
    else gn__buf_puts(&b, "None");
    static const char *const pol[] = {"VariablePolicy.NONE", "VariablePolicy.SAVE_VARIABLE_DEVICES",
                                      "VariablePolicy.EXPAND_DISTRIBUTED_VARIABLES"};
    unsigned vp = (unsigned)o->experimental_variable_policy;
    gn__buf_printf(&b, ", 'experimental_variable_policy': %s", vp < 3 ? pol[vp] : "?");
    gn__buf_printf(&b, ", 'experimental_custom_gradients': %s", o->experimental_custom_gradients ? "True" : "False");
    gn__buf_printf(&b, ", 'experimental_image_format': %s", o->experimental_image_format ? "True" : "False");
    gn__buf_printf(&b, ", 'experimental_skip_saver': %s", o->experimental_skip_saver ? "True" : "False");
    gn__buf_puts(&b, ", 'experimental_sharding_callback': ");
    if (o->experimental_sharding_callback == GN_SHARDING_BY_TASK) gn__buf_puts(&b, "ShardByTaskPolicy()");
    else if (o->experimental_sharding_callback == GN_SHARDING_MAX_SHARD_SIZE)
        gn__buf_printf(&b, "MaxShardSizePolicy(%" PRId64 ")", o->max_shard_size);
    else gn__buf_puts(&b, "None");
    gn__buf_puts(&b, ", 'extra_tags': ");
    put_list(&b, o->n_extra_tags > 0, o->n_extra_tags, o->extra_tags);
    gn__buf_putc(&b, '}');
    if (b.oom) {
        gn__buf_free(&b);
        return NULL;
    }
    return gn__buf_take(&b);
}
