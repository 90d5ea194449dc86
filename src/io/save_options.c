/* gn_save_options: defaults, Python dict text parsing and printing
 * (include/grapnel/save.h). */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
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
    const char *s;
    size_t i;
    gn_save_options *o;
    opt_store *store;
    char *err;
    size_t errlen;
} parser;

static gn_status perr(parser *p, const char *fmt, ...) GN__PRINTF(2, 3);
static gn_status perr(parser *p, const char *fmt, ...)
{
    if (p->err && p->errlen) {
        int k = snprintf(p->err, p->errlen, "save options: at offset %zu: ", p->i);
        if (k >= 0 && (size_t)k < p->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return GN_ERR_ARG;
}

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

static void ws(parser *p)
{
    while (p->s[p->i] && isspace((unsigned char)p->s[p->i])) p->i++;
}

static bool eat(parser *p, char c)
{
    ws(p);
    if (p->s[p->i] != c) return false;
    p->i++;
    return true;
}

static bool at_string(parser *p)
{
    ws(p);
    return p->s[p->i] == '\'' || p->s[p->i] == '"';
}

/* A Python string literal (simple escapes). */
static gn_status parse_string(parser *p, char **out)
{
    ws(p);
    char q = p->s[p->i];
    if (q != '\'' && q != '"') return perr(p, "expected a string");
    size_t start = ++p->i;
    size_t n = 0;
    while (p->s[p->i] && p->s[p->i] != q) {
        if (p->s[p->i] == '\\' && p->s[p->i + 1]) p->i++;
        p->i++;
        n++;
    }
    if (!p->s[p->i]) return perr(p, "unterminated string");
    char *r = keep(p, n + 1);
    if (!r) return perr(p, "out of memory");
    size_t k = 0;
    for (size_t j = start; j < p->i; j++) {
        char c = p->s[j];
        if (c == '\\') {
            c = p->s[++j];
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
        }
        r[k++] = c;
    }
    r[k] = 0;
    p->i++;
    *out = r;
    return GN_OK;
}

/* An identifier, dots allowed ("tf.train.experimental.MaxShardSizePolicy"). */
static size_t parse_ident(parser *p, char *buf, size_t cap)
{
    ws(p);
    size_t n = 0;
    while (isalnum((unsigned char)p->s[p->i]) || p->s[p->i] == '_' || p->s[p->i] == '.') {
        if (n + 1 < cap) buf[n++] = p->s[p->i];
        p->i++;
    }
    buf[n] = 0;
    return n;
}

static gn_status parse_int(parser *p, int64_t *v)
{
    ws(p);
    const char *b = p->s + p->i;
    char *e = NULL;
    long long x = strtoll(b, &e, 10);
    if (e == b) return perr(p, "expected an integer");
    p->i += (size_t)(e - b);
    /* Python allows 1_000_000 and simple products like 1024 * 1024 */
    *v = x;
    while (eat(p, '*')) {
        ws(p);
        b = p->s + p->i;
        x = strtoll(b, &e, 10);
        if (e == b) return perr(p, "expected an integer after '*'");
        p->i += (size_t)(e - b);
        *v *= x;
    }
    return GN_OK;
}

static bool peek_word(parser *p, const char *w)
{
    ws(p);
    size_t n = strlen(w);
    return strncmp(p->s + p->i, w, n) == 0 && !isalnum((unsigned char)p->s[p->i + n]) && p->s[p->i + n] != '_';
}

static bool eat_word(parser *p, const char *w)
{
    if (!peek_word(p, w)) return false;
    p->i += strlen(w);
    return true;
}

static gn_status parse_bool(parser *p, const char *key, int32_t *out)
{
    if (eat_word(p, "True")) *out = 1;
    else if (eat_word(p, "False")) *out = 0;
    else return perr(p, "'%s' takes True or False", key);
    return GN_OK;
}

/* None, or a [list] (or (tuple)) of strings. *has = 0 for None. */
static gn_status parse_str_list(parser *p, const char *key, int32_t *has, size_t *n_out, const char *const **out)
{
    if (eat_word(p, "None")) {
        *has = 0;
        *n_out = 0;
        *out = NULL;
        return GN_OK;
    }
    char close;
    if (eat(p, '[')) close = ']';
    else if (eat(p, '(')) close = ')';
    else return perr(p, "'%s' takes a list of strings or None", key);
    size_t n = 0, cap = 4;
    const char **v = keep(p, cap * sizeof *v);
    if (!v) return perr(p, "out of memory");
    while (!eat(p, close)) {
        if (n && !eat(p, ',')) return perr(p, "expected ',' or '%c' in '%s'", close, key);
        if (eat(p, close)) break;
        if (!at_string(p)) return perr(p, "'%s' takes a list of strings", key);
        char *s;
        GN_TRY(parse_string(p, &s));
        if (n == cap) {
            const char **w = keep(p, cap * 2 * sizeof *w);
            if (!w) return perr(p, "out of memory");
            memcpy(w, v, n * sizeof *v);
            v = w;
            cap *= 2;
        }
        v[n++] = s;
    }
    *has = 1;
    *n_out = n;
    *out = v;
    return GN_OK;
}

static gn_status parse_aliases(parser *p)
{
    gn_save_options *o = p->o;
    if (eat_word(p, "None")) {
        o->n_function_aliases = 0;
        o->function_aliases = NULL;
        return GN_OK;
    }
    if (!eat(p, '{')) return perr(p, "'function_aliases' takes a dict {'alias': 'function name'} or None");
    size_t n = 0, cap = 4;
    gn_function_alias *v = keep(p, cap * sizeof *v);
    if (!v) return perr(p, "out of memory");
    while (!eat(p, '}')) {
        if (n && !eat(p, ',')) return perr(p, "expected ',' or '}' in 'function_aliases'");
        if (eat(p, '}')) break;
        char *k, *f;
        GN_TRY(parse_string(p, &k));
        if (!eat(p, ':')) return perr(p, "expected ':' after alias '%s'", k);
        if (!at_string(p)) return perr(p, "alias '%s': expected a function name string", k);
        GN_TRY(parse_string(p, &f));
        if (n == cap) {
            gn_function_alias *w = keep(p, cap * 2 * sizeof *w);
            if (!w) return perr(p, "out of memory");
            memcpy(w, v, n * sizeof *v);
            v = w;
            cap *= 2;
        }
        v[n].alias = k;
        v[n].function = f;
        n++;
    }
    o->n_function_aliases = n;
    o->function_aliases = v;
    return GN_OK;
}

static gn_status parse_policy(parser *p)
{
    char buf[128];
    const char *name;
    char *s = NULL;
    if (eat_word(p, "None")) {
        p->o->experimental_variable_policy = GN_VARIABLE_POLICY_NONE;
        return GN_OK;
    }
    if (at_string(p)) {
        GN_TRY(parse_string(p, &s));
        name = s;
    } else {
        if (!parse_ident(p, buf, sizeof buf)) return perr(p, "'experimental_variable_policy' takes a VariablePolicy, a string or None");
        const char *dot = strrchr(buf, '.');
        name = dot ? dot + 1 : buf;
    }
    char low[128];
    size_t k = 0;
    for (; name[k] && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)name[k]);
    low[k] = 0;
    if (strcmp(low, "none") == 0) p->o->experimental_variable_policy = GN_VARIABLE_POLICY_NONE;
    else if (strcmp(low, "save_variable_devices") == 0)
        p->o->experimental_variable_policy = GN_VARIABLE_POLICY_SAVE_VARIABLE_DEVICES;
    else if (strcmp(low, "expand_distributed_variables") == 0)
        p->o->experimental_variable_policy = GN_VARIABLE_POLICY_EXPAND_DISTRIBUTED_VARIABLES;
    else
        return perr(p, "'experimental_variable_policy': '%s' is not one of None, 'save_variable_devices', "
                       "'expand_distributed_variables'", name);
    return GN_OK;
}

static gn_status parse_sharding(parser *p)
{
    char buf[128];
    if (eat_word(p, "None")) {
        p->o->experimental_sharding_callback = GN_SHARDING_DEFAULT;
        p->o->max_shard_size = 0;
        return GN_OK;
    }
    if (!parse_ident(p, buf, sizeof buf))
        return perr(p, "'experimental_sharding_callback' takes ShardByTaskPolicy(), MaxShardSizePolicy(N) or None");
    const char *dot = strrchr(buf, '.');
    const char *name = dot ? dot + 1 : buf;
    if (!eat(p, '(')) return perr(p, "expected '(' after '%s'", name);
    if (strcmp(name, "ShardByTaskPolicy") == 0) {
        if (!eat(p, ')')) return perr(p, "ShardByTaskPolicy takes no arguments");
        p->o->experimental_sharding_callback = GN_SHARDING_BY_TASK;
        p->o->max_shard_size = 0;
        return GN_OK;
    }
    if (strcmp(name, "MaxShardSizePolicy") == 0) {
        if (peek_word(p, "max_shard_size")) {
            eat_word(p, "max_shard_size");
            if (!eat(p, '=')) return perr(p, "expected '=' after max_shard_size");
        }
        int64_t v = 0;
        GN_TRY(parse_int(p, &v));
        if (v <= 0) return perr(p, "MaxShardSizePolicy: max_shard_size must be positive, got %" PRId64, v);
        if (!eat(p, ')')) return perr(p, "expected ')' after MaxShardSizePolicy's argument");
        p->o->experimental_sharding_callback = GN_SHARDING_MAX_SHARD_SIZE;
        p->o->max_shard_size = v;
        return GN_OK;
    }
    return perr(p, "'experimental_sharding_callback': '%s' is not ShardByTaskPolicy or MaxShardSizePolicy", name);
}

static gn_status parse_value(parser *p, const char *key)
{
    gn_save_options *o = p->o;
    if (strcmp(key, "namespace_whitelist") == 0)
        return parse_str_list(p, key, &o->has_namespace_whitelist, &o->n_namespace_whitelist, &o->namespace_whitelist);
    if (strcmp(key, "save_debug_info") == 0) return parse_bool(p, key, &o->save_debug_info);
    if (strcmp(key, "function_aliases") == 0) return parse_aliases(p);
    if (strcmp(key, "experimental_debug_stripper") == 0) return parse_bool(p, key, &o->experimental_debug_stripper);
    if (strcmp(key, "experimental_io_device") == 0) {
        if (eat_word(p, "None")) {
            o->experimental_io_device = NULL;
            return GN_OK;
        }
        char *s;
        if (!at_string(p)) return perr(p, "'experimental_io_device' takes a device string or None");
        GN_TRY(parse_string(p, &s));
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
    return perr(p, "unknown SaveOptions field '%s'", key);
}

gn_status gn_save_options_parse(gn_save_options *o, const char *text, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!o || !text) return GN_ERR_ARG;
    if (!o->internal) {
        o->internal = calloc(1, sizeof(opt_store));
        if (!o->internal) return GN_ERR_NOMEM;
    }
    parser p = {text, 0, o, o->internal, err, errlen};
    ws(&p);
    if (!p.s[p.i]) return GN_OK;   /* empty text: nothing to change */
    if (!eat(&p, '{')) return perr(&p, "expected '{'");
    bool first = true;
    while (!eat(&p, '}')) {
        if (!first && !eat(&p, ',')) return perr(&p, "expected ',' or '}'");
        first = false;
        if (eat(&p, '}')) break;
        char *key;
        GN_TRY(parse_string(&p, &key));
        if (!eat(&p, ':')) return perr(&p, "expected ':' after '%s'", key);
        GN_TRY(parse_value(&p, key));
    }
    ws(&p);
    if (p.s[p.i]) return perr(&p, "unexpected text after '}'");
    return GN_OK;
}

/* ---- printing ------------------------------------------------------------------- */
static void put_str(gn__buf *b, const char *s)
{
    gn__buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'' || *s == '\\') gn__buf_putc(b, '\\');
        gn__buf_putc(b, *s);
    }
    gn__buf_putc(b, '\'');
}

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
