/* Tests for src/common/pylit.c: the Python-literal reader under the options,
 * conversion parameters, save options and .npy header texts. Exact tokens,
 * decoded strings, integers, and the exact message of each failure. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "common/pylit.h"

/* Reads text's first token into r; asserts success. */
static void start(gn__py *r, gn__err *e, const char *text)
{
    gn__err_clear(e);
    if (gn__py_init(r, text, strlen(text), NULL, GN_ERR_ARG, e) != GN_OK) fail_msg("%s: %s", text, e->msg);
}

static void expect_tok(const gn__py_tok *t, gn__py_kind kind, const char *text, size_t pos)
{
    assert_int_equal(t->kind, kind);
    assert_int_equal(t->pos, pos);
    if (kind == GN__PY_PUNCT) {
        assert_int_equal(t->punct, text[0]);
    } else {
        assert_int_equal(t->len, strlen(text));
        assert_memory_equal(t->text, text, t->len);
    }
}

/* ---- tokens ------------------------------------------------------------------------ */
static void test_tokens(void **state)
{
    (void)state;
    gn__py r;
    gn__err e;
    start(&r, &e, " {'a' :\t-12, \"b\": VariablePolicy.NONE, # a comment\n x=1_000*2 (True)}");
    struct {
        gn__py_kind kind;
        const char *text;
        size_t pos;
    } want[] = {
        {GN__PY_PUNCT, "{", 1},  {GN__PY_STR, "a", 2},     {GN__PY_PUNCT, ":", 6},
        {GN__PY_WORD, "-12", 8}, {GN__PY_PUNCT, ",", 11},  {GN__PY_STR, "b", 13},
        {GN__PY_PUNCT, ":", 16}, {GN__PY_WORD, "VariablePolicy.NONE", 18},
        {GN__PY_PUNCT, ",", 37}, {GN__PY_WORD, "x", 52},   {GN__PY_PUNCT, "=", 53},
        {GN__PY_WORD, "1_000", 54}, {GN__PY_PUNCT, "*", 59}, {GN__PY_WORD, "2", 60},
        {GN__PY_PUNCT, "(", 62}, {GN__PY_WORD, "True", 63}, {GN__PY_PUNCT, ")", 67},
        {GN__PY_PUNCT, "}", 68}, {GN__PY_END, "", 69},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        expect_tok(&r.tok, want[i].kind, want[i].text, want[i].pos);
        assert_int_equal(gn__py_advance(&r), GN_OK);
    }
    expect_tok(&r.tok, GN__PY_END, "", 69); /* END stays */

    /* a punctuation set of the caller's: '=' and ',' only; ':' and '{' are word bytes */
    gn__err_clear(&e);
    assert_int_equal(gn__py_init(&r, "a:b={c},'d'", 11, "=,", GN_ERR_ARG, &e), GN_OK);
    expect_tok(&r.tok, GN__PY_WORD, "a:b", 0);
    assert_int_equal(gn__py_advance(&r), GN_OK);
    expect_tok(&r.tok, GN__PY_PUNCT, "=", 3);
    assert_int_equal(gn__py_advance(&r), GN_OK);
    expect_tok(&r.tok, GN__PY_WORD, "{c}", 4);
    assert_int_equal(gn__py_advance(&r), GN_OK);
    expect_tok(&r.tok, GN__PY_PUNCT, ",", 7);
    assert_int_equal(gn__py_advance(&r), GN_OK);
    expect_tok(&r.tok, GN__PY_STR, "d", 8);

    /* a text that is not NUL-terminated: the reader stops at n */
    const char buf[] = {'(', '7', ')', '9'};
    assert_int_equal(gn__py_init(&r, buf, 3, NULL, GN_ERR_PARSE, &e), GN_OK);
    gn__py_seq q;
    bool more;
    int64_t v = 0;
    assert_int_equal(gn__py_open(&r, '(', &q), GN_OK);
    assert_int_equal(gn__py_item(&r, &q, &more), GN_OK);
    assert_true(more);
    assert_int_equal(gn__py_int(&r, 0, 100, &v), GN_OK);
    assert_int_equal(v, 7);
    assert_int_equal(gn__py_item(&r, &q, &more), GN_OK);
    assert_false(more);
    assert_int_equal(gn__py_end(&r), GN_OK);
    assert_int_equal(r.depth, 0);
}

/* ---- a whole value ------------------------------------------------------------------- */
static void test_structure(void **state)
{
    (void)state;
    gn__py r;
    gn__err e;
    start(&r, &e, "{'shape': (2, 3,), \"tags\": ['a', 'b'], 'empty': (), 'd': {'k': None},}");
    gn__py_seq d, l;
    bool more;
    gn__py_tok k, v;
    char key[32];
    int64_t x;
    assert_int_equal(gn__py_open(&r, '{', &d), GN_OK);
    /* 'shape': (2, 3,) */
    assert_int_equal(gn__py_item(&r, &d, &more), GN_OK);
    assert_true(more);
    assert_int_equal(gn__py_key(&r, &d, false, &k), GN_OK);
    assert_int_equal(gn__py_str(&k, key, sizeof key), 5);
    assert_string_equal(key, "shape");
    assert_int_equal(gn__py_expect(&r, ':'), GN_OK);
    assert_int_equal(gn__py_open(&r, '(', &l), GN_OK);
    int64_t dims[2], n = 0;
    for (;;) {
        assert_int_equal(gn__py_item(&r, &l, &more), GN_OK);
        if (!more) break;
        assert_true(n < 2);
        assert_int_equal(gn__py_int(&r, 0, INT64_MAX, &x), GN_OK);
        dims[n++] = x;
    }
    assert_int_equal(n, 2);
    assert_int_equal(dims[0], 2);
    assert_int_equal(dims[1], 3);
    /* "tags": ['a', 'b'] */
    assert_int_equal(gn__py_item(&r, &d, &more), GN_OK);
    assert_int_equal(gn__py_key(&r, &d, false, &k), GN_OK);
    expect_tok(&k, GN__PY_STR, "tags", 19);
    assert_int_equal(gn__py_expect(&r, ':'), GN_OK);
    assert_int_equal(gn__py_open(&r, '[', &l), GN_OK);
    const char *items[] = {"a", "b"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(gn__py_item(&r, &l, &more), GN_OK);
        assert_true(more);
        assert_int_equal(gn__py_scalar(&r, &v), GN_OK);
        expect_tok(&v, GN__PY_STR, items[i], i ? 33 : 28);
    }
    assert_int_equal(gn__py_item(&r, &l, &more), GN_OK);
    assert_false(more);
    assert_int_equal(l.count, 2);
    /* 'empty': () */
    assert_int_equal(gn__py_item(&r, &d, &more), GN_OK);
    assert_int_equal(gn__py_key(&r, &d, false, &k), GN_OK);
    assert_int_equal(gn__py_expect(&r, ':'), GN_OK);
    assert_int_equal(gn__py_open(&r, '(', &l), GN_OK);
    assert_int_equal(gn__py_item(&r, &l, &more), GN_OK);
    assert_false(more);
    assert_int_equal(l.count, 0);
    /* 'd': {'k': None}, then the trailing comma and '}' */
    assert_int_equal(gn__py_item(&r, &d, &more), GN_OK);
    assert_int_equal(gn__py_key(&r, &d, false, &k), GN_OK);
    assert_int_equal(gn__py_expect(&r, ':'), GN_OK);
    assert_int_equal(gn__py_open(&r, '{', &l), GN_OK);
    assert_int_equal(r.depth, 2);
    assert_int_equal(gn__py_item(&r, &l, &more), GN_OK);
    assert_int_equal(gn__py_key(&r, &l, false, &k), GN_OK);
    assert_int_equal(gn__py_expect(&r, ':'), GN_OK);
    assert_true(gn__py_is_word(&r, "None"));
    assert_false(gn__py_is_word(&r, "none"));
    assert_false(gn__py_is_word(&r, "Non"));
    assert_int_equal(gn__py_scalar(&r, &v), GN_OK);
    expect_tok(&v, GN__PY_WORD, "None", 63);
    assert_int_equal(gn__py_item(&r, &l, &more), GN_OK);
    assert_false(more);
    assert_int_equal(gn__py_item(&r, &d, &more), GN_OK);
    assert_false(more);
    assert_int_equal(d.count, 4);
    assert_int_equal(r.depth, 0);
    assert_int_equal(gn__py_end(&r), GN_OK);
}

/* ---- strings --------------------------------------------------------------------------- */
/* The first token of text, a string, decoded. */
static size_t decoded(const char *text, char *buf, size_t cap)
{
    gn__py r;
    gn__err e;
    start(&r, &e, text);
    assert_int_equal(r.tok.kind, GN__PY_STR);
    return gn__py_str(&r.tok, buf, cap);
}

/* gn__py_entry: a dict's entries up to each value; bare keys only when asked. */
static void test_entries(void **state)
{
    (void)state;
    gn__py r;
    gn__err e;
    start(&r, &e, "{'a': 1, b: 'two',}");
    gn__py_seq q;
    assert_int_equal(gn__py_open(&r, '{', &q), GN_OK);
    gn__py_tok k;
    bool more = false;
    assert_int_equal(gn__py_entry(&r, &q, true, &k, &more), GN_OK);
    assert_true(more);
    expect_tok(&k, GN__PY_STR, "a", 1);
    expect_tok(&r.tok, GN__PY_WORD, "1", 6);
    assert_int_equal(gn__py_advance(&r), GN_OK);
    assert_int_equal(gn__py_entry(&r, &q, true, &k, &more), GN_OK);
    assert_true(more);
    expect_tok(&k, GN__PY_WORD, "b", 9);
    expect_tok(&r.tok, GN__PY_STR, "two", 12);
    assert_int_equal(gn__py_advance(&r), GN_OK);
    assert_int_equal(gn__py_entry(&r, &q, true, &k, &more), GN_OK);
    assert_false(more);
    assert_int_equal(gn__py_end(&r), GN_OK);

    start(&r, &e, "{b: 1}");
    assert_int_equal(gn__py_open(&r, '{', &q), GN_OK);
    assert_int_equal(gn__py_entry(&r, &q, false, &k, &more), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 1: expected a key in quotes or '}'");
    start(&r, &e, "{'b' 1}");
    assert_int_equal(gn__py_open(&r, '{', &q), GN_OK);
    assert_int_equal(gn__py_entry(&r, &q, false, &k, &more), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 5: expected ':'");
}

static void test_strings(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(decoded("'plain'", buf, sizeof buf), 5);
    assert_string_equal(buf, "plain");
    assert_int_equal(decoded("\"it's\"", buf, sizeof buf), 4);
    assert_string_equal(buf, "it's");
    assert_int_equal(decoded("''", buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    /* every escape Python has but \N{...} */
    assert_int_equal(decoded("'\\\\ \\' \\\" \\a\\b\\f\\n\\r\\t\\v'", buf, sizeof buf), 13);
    assert_memory_equal(buf, "\\ ' \" \a\b\f\n\r\t\v", 14);
    assert_int_equal(decoded("'\\x41\\101\\0\\7z\\1234'", buf, sizeof buf), 7);
    assert_memory_equal(buf, "AA\0\azS4", 7); /* \123 is 'S'; the 4 is a byte of its own */
    assert_int_equal(decoded("'a\\\nb'", buf, sizeof buf), 2); /* a line continuation */
    assert_string_equal(buf, "ab");
    /* code points as UTF-8: U+00E9, U+20AC, U+1F600, \xff is U+00FF */
    assert_int_equal(decoded("'\\u00e9\\u20AC\\U0001F600\\xff'", buf, sizeof buf), 11);
    assert_string_equal(buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xbf");
    /* raw bytes from 0x80 pass as they are */
    assert_int_equal(decoded("'\xc3\xa9t\xc3\xa9'", buf, sizeof buf), 5);
    assert_string_equal(buf, "\xc3\xa9t\xc3\xa9");
    /* a small buffer: cut, NUL-terminated, the whole length returned */
    char small[4];
    assert_int_equal(decoded("'abc\\tdef'", small, sizeof small), 7);
    assert_string_equal(small, "abc");
    assert_int_equal(decoded("'abcdef'", NULL, 0), 6);
    /* the token keeps its text as written */
    gn__py r;
    gn__err e;
    start(&r, &e, "'x\\ty'");
    expect_tok(&r.tok, GN__PY_STR, "x\\ty", 0);
    assert_true(r.tok.escapes);
    start(&r, &e, "'xty'");
    assert_false(r.tok.escapes);
}

/* gn__py_quote writes what gn__py_str reads back to the same bytes. */
static void test_quote(void **state)
{
    (void)state;
    struct {
        const char *in;
        const char *out;
    } cases[] = {
        {"abc", "'abc'"},
        {"it's", "\"it's\""},
        {"say \"hi\"", "'say \"hi\"'"},
        {"it's \"x\"", "'it\\'s \"x\"'"},
        {"a\\b", "'a\\\\b'"},
        {"tab\there\nnl\rcr", "'tab\\there\\nnl\\rcr'"},
        {"\x01\x1f\x7f", "'\\x01\\x1f\\x7f'"},
        {"\xc3\xa9", "'\xc3\xa9'"},
        {"", "''"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gn__buf b;
        gn__buf_init(&b);
        gn__py_quote(&b, cases[i].in, strlen(cases[i].in));
        char *s = gn__buf_take(&b);
        assert_non_null(s);
        assert_string_equal(s, cases[i].out);
        char back[64];
        assert_int_equal(decoded(s, back, sizeof back), strlen(cases[i].in));
        assert_string_equal(back, cases[i].in);
        free(s);
    }
    /* every byte 1..255 */
    char all[255];
    for (int c = 1; c < 256; c++) all[c - 1] = (char)c;
    gn__buf b;
    gn__buf_init(&b);
    gn__py_quote(&b, all, sizeof all);
    char *s = gn__buf_take(&b);
    assert_non_null(s);
    char back[300];
    assert_int_equal(decoded(s, back, sizeof back), sizeof all);
    assert_memory_equal(back, all, sizeof all);
    free(s);
}

/* ---- integers ---------------------------------------------------------------------------- */
static void test_ints(void **state)
{
    (void)state;
    struct {
        const char *text;
        gn__py_int_result res;
        int64_t v;
    } cases[] = {
        {"0", GN__PY_INT_OK, 0},
        {"+7", GN__PY_INT_OK, 7},
        {"-12", GN__PY_INT_OK, -12},
        {"1_000_000", GN__PY_INT_OK, 1000000},
        {"9223372036854775807", GN__PY_INT_OK, INT64_MAX},
        {"-9223372036854775808", GN__PY_INT_OK, INT64_MIN},
        {"9223372036854775808", GN__PY_INT_RANGE, 0},
        {"-9223372036854775809", GN__PY_INT_RANGE, 0},
        {"99999999999999999999999", GN__PY_INT_RANGE, 0},
        {"99999999999999999999999x", GN__PY_INT_BAD, 0}, /* not an integer, whatever its size */
        {"", GN__PY_INT_BAD, 0},
        {"-", GN__PY_INT_BAD, 0},
        {"1.5", GN__PY_INT_BAD, 0},
        {"0x10", GN__PY_INT_BAD, 0},
        {"1__0", GN__PY_INT_BAD, 0},
        {"_1", GN__PY_INT_BAD, 0},
        {"1_", GN__PY_INT_BAD, 0},
        {"- 1", GN__PY_INT_BAD, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t v = 12345;
        gn__py_int_result res = gn__py_parse_int(cases[i].text, strlen(cases[i].text), &v);
        if (res != cases[i].res) fail_msg("'%s': %d, want %d", cases[i].text, (int)res, (int)cases[i].res);
        assert_true(v == (res == GN__PY_INT_OK ? cases[i].v : 12345));
    }
    assert_true(gn__py_ieq("NoNe", 4, "None"));
    assert_false(gn__py_ieq("Non", 3, "None"));
    assert_false(gn__py_ieq("Nonee", 5, "None"));
}

/* ---- errors ------------------------------------------------------------------------------- */
/* Reads text as a dict of scalars (keys in quotes); returns the status and
 * the message. */
static gn_status read_dict(const char *text, gn__err *e)
{
    gn__py r;
    gn__err_clear(e);
    gn_status s = gn__py_init(&r, text, strlen(text), NULL, GN_ERR_PARSE, e);
    gn__py_seq q;
    if (s == GN_OK) s = gn__py_open(&r, '{', &q);
    for (bool more = true; s == GN_OK;) {
        gn__py_tok k, v;
        if ((s = gn__py_item(&r, &q, &more)) != GN_OK || !more) break;
        if ((s = gn__py_key(&r, &q, false, &k)) != GN_OK) break;
        if ((s = gn__py_expect(&r, ':')) != GN_OK) break;
        s = gn__py_scalar(&r, &v);
    }
    if (s == GN_OK) s = gn__py_end(&r);
    return s;
}

static void expect_error(const char *text, const char *msg)
{
    gn__err e;
    gn_status s = read_dict(text, &e);
    if (s != GN_ERR_PARSE) fail_msg("%s: status %d", text, (int)s);
    if (strcmp(e.msg, msg) != 0) fail_msg("%s:\n got  %s\n want %s", text, e.msg, msg);
}

static void test_errors(void **state)
{
    (void)state;
    gn__err e;
    assert_int_equal(read_dict("{'a': 1, \"b\": 'x', 'c': True,}", &e), GN_OK);
    assert_int_equal(read_dict("{}", &e), GN_OK);

    expect_error("{'a': 'xyz}", "at offset 6: unterminated string");
    expect_error("{'a': 'x\nyz'}", "at offset 6: unterminated string");
    expect_error("{'a': 'xyz\\", "at offset 6: unterminated string");
    expect_error("{'a': 'x\\qz'}", "at offset 8: bad escape '\\q' in a string");
    expect_error("{'a': 'x\\x4g'}", "at offset 8: bad escape '\\x' in a string: it needs 2 hex digits");
    expect_error("{'a': '\\u12'}", "at offset 7: bad escape '\\u' in a string: it needs 4 hex digits");
    expect_error("{'a': '\\ud800'}", "at offset 7: bad escape '\\u' in a string: a surrogate is not a character");
    expect_error("{'a': '\\U00110000'}", "at offset 7: bad escape '\\U' in a string: not a Unicode code point");
    expect_error("{'a': '\\N{DASH}'}", "at offset 7: bad escape '\\N' in a string: named characters are not supported");
    expect_error("{'a': '\\\x01'}", "at offset 7: bad escape in a string: '\\' before byte 0x01");
    expect_error("{'a': 1} x", "at offset 9: unexpected text after '}'");
    expect_error("{'a': 1}}", "at offset 8: unexpected text after '}'");
    expect_error("'a'", "at offset 0: expected '{'");
    expect_error("", "at offset 0: expected '{'");
    expect_error("{'a' 1}", "at offset 5: expected ':'");
    expect_error("{'a': 1 'b': 2}", "at offset 8: expected ',' or '}'");
    expect_error("{'a': 1", "at offset 7: expected ',' or '}'");
    expect_error("{'a': 1,, }", "at offset 8: expected a key or '}'");
    expect_error("{a: 1}", "at offset 1: expected a key in quotes or '}'");
    expect_error("{'a': }", "at offset 6: expected a value");
    expect_error("{'a': (1)}", "at offset 6: expected a value");
    /* past the first line: the line and column too */
    expect_error("{'a': 1,\n 'b': 2\n  'c': 3}", "at offset 19 (line 3:3): expected ',' or '}'");

    /* nesting: GN__PY_MAX_DEPTH brackets open, then one more */
    char deep[GN__PY_MAX_DEPTH + 2];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    gn__py r;
    gn__py_seq q;
    assert_int_equal(gn__py_init(&r, deep, strlen(deep), NULL, GN_ERR_ARG, &e), GN_OK);
    for (int i = 0; i < GN__PY_MAX_DEPTH; i++) assert_int_equal(gn__py_open(&r, '[', &q), GN_OK);
    assert_int_equal(gn__py_open(&r, '[', &q), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 32: brackets nested deeper than 32");
    assert_int_equal(gn__py_open(&r, '(', &q), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 32: expected '('");

    /* integers: not one, too large for 64 bits, outside the caller's range */
    int64_t v = 5;
    assert_int_equal(gn__py_init(&r, "x 99999999999999999999 300 -1 'q'", 33, NULL, GN_ERR_ARG, &e), GN_OK);
    assert_int_equal(gn__py_int(&r, 0, 255, &v), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 0: expected an integer");
    assert_int_equal(gn__py_advance(&r), GN_OK);
    assert_int_equal(gn__py_int(&r, INT64_MIN, INT64_MAX, &v), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 2: integer 99999999999999999999 is out of range "
                               "[-9223372036854775808, 9223372036854775807]");
    assert_int_equal(gn__py_advance(&r), GN_OK);
    assert_int_equal(gn__py_int(&r, 0, 255, &v), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 23: integer 300 is out of range [0, 255]");
    assert_int_equal(gn__py_advance(&r), GN_OK);
    assert_int_equal(gn__py_int(&r, -1, 0, &v), GN_OK);
    assert_int_equal(v, -1);
    assert_int_equal(gn__py_int(&r, 0, 255, &v), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 30: expected an integer");
    assert_int_equal(gn__py_end(&r), GN_ERR_ARG);
    assert_string_equal(e.msg, "at offset 30: unexpected text after the value");
    /* a NULL error record: the status alone */
    assert_int_equal(gn__py_init(&r, "'x", 2, NULL, GN_ERR_ARG, NULL), GN_ERR_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens), cmocka_unit_test(test_structure), cmocka_unit_test(test_entries), cmocka_unit_test(test_strings),
        cmocka_unit_test(test_quote),  cmocka_unit_test(test_ints),      cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
