"""Prints TensorFlow's outputs for the small cases of the string kernels
(src/ops/kernels/strings.c): AsString, StringToHashBucket,
StringToHashBucketStrong, StringLower, StringUpper, StringStrip and
StringSplitV2, as C initialisers; tests/kernels_strings_test.c embeds them
(each test names this script).

Run with a Python that has TensorFlow (2.21) and numpy:
    TF_ENABLE_ONEDNN_OPTS=0 python tools/make_string_op_values.py
The inputs are fixed literals, so the output is the same on every run. Error
cases print TensorFlow's message."""
import os

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf

raw = tf.raw_ops

FLOATS = [1.5, -2.25, float("inf"), float("nan"), -float("inf"), 1e20, 1e-7, 0.0, 123.456]
WORDS = [b"", b"a", b"hello", b"Hello World", b"feature_column_value_42", b"\xc3\xa9t\xc3\xa9"]


def c_str(b):
    out = '"'
    for ch in b:
        if ch in (0x22, 0x5C):
            out += "\\" + chr(ch)
        elif 0x20 <= ch < 0x7F:
            out += chr(ch)
        else:
            out += "\\%03o" % ch
    return out + '"'


def c_list(a):
    a = np.asarray(a)
    if a.dtype == object or a.dtype.kind == "S":
        return ", ".join(c_str(bytes(v)) for v in a.ravel())
    return ", ".join(str(int(v)) for v in a.ravel())


def show(name, *outs):
    for k, o in enumerate(outs):
        o = np.asarray(o)
        print(f"/* {name} out{k} shape {list(o.shape)} */ {{{c_list(o)}}}")


def err(name, fn):
    try:
        fn()
        print(f"/* {name}: no error */")
    except Exception as e:
        print(f"/* {name} error */ {str(e).splitlines()[0]!r}")


print("/* AsString float inputs */ {" + ", ".join(repr(v) for v in FLOATS) + "}")
x = tf.constant(FLOATS, tf.float32)
for kw in [dict(), dict(shortest=True), dict(scientific=True, precision=3), dict(precision=2, width=12, fill="0"),
           dict(precision=2, width=12, fill="-"), dict(width=12, fill="+"), dict(width=12, fill="#", precision=0),
           dict(width=12, fill=" ", precision=1), dict(width=10, shortest=True, precision=3, fill="-")]:
    show(f"AsString float {kw}", raw.AsString(input=x, **kw))
xd = tf.constant([0.1, -1e300, 2.5e-310], tf.float64)
show("AsString double {'precision': 17}", raw.AsString(input=xd, precision=17))
show("AsString double {'shortest': True}", raw.AsString(input=xd, shortest=True))
show("AsString half [1.5,-0.1,65504] {'precision': 4}",
     raw.AsString(input=tf.constant([1.5, -0.1, 65504], tf.float16), precision=4))
show("AsString bfloat16 [1.5,-0.1,3e38] {}",
     raw.AsString(input=tf.constant([1.5, -0.1, 3e38], tf.bfloat16)))
show("AsString complex64 [1.5+2j,-1-0.5j] {'precision': 1, 'width': 6}",
     raw.AsString(input=tf.constant([1.5 + 2j, -1 - 0.5j], tf.complex64), precision=1, width=6))
ints = [-42, 0, 42, 127]
for dt in [tf.int8, tf.int32, tf.int64, tf.uint8, tf.uint64]:
    v = tf.cast(tf.constant(ints, tf.int64), dt)
    show(f"AsString {dt.name} {ints} {{}}", raw.AsString(input=v))
    show(f"AsString {dt.name} {ints} {{'width': 5, 'fill': '0'}}", raw.AsString(input=v, width=5, fill="0"))
show("AsString int32 {'width': 5, 'fill': '+'}", raw.AsString(input=tf.constant(ints), width=5, fill="+"))
show("AsString int32 {'width': 5, 'fill': '-'}", raw.AsString(input=tf.constant(ints), width=5, fill="-"))
show("AsString int32 {'width': 5, 'fill': '#'}", raw.AsString(input=tf.constant(ints), width=5, fill="#"))
show("AsString uint8 {'width': 5, 'fill': '+'}",
     raw.AsString(input=tf.constant([0, 255], tf.uint8), width=5, fill="+"))
show("AsString bool {'width': 8}", raw.AsString(input=tf.constant([True, False]), width=8))
strs = tf.constant([b"ab", b"", b"hello world"])
show("AsString string {'width': 6}", raw.AsString(input=strs, width=6))
show("AsString string {'width': 6, 'fill': '-'}", raw.AsString(input=strs, width=6, fill="-"))
show("AsString string {'width': 6, 'fill': '0', 'precision': 3}",
     raw.AsString(input=strs, width=6, fill="0", precision=3))
show("AsString string {}", raw.AsString(input=strs))
err("AsString int32 precision=2", lambda: raw.AsString(input=tf.constant([1]), precision=2))
err("AsString int32 shortest", lambda: raw.AsString(input=tf.constant([1]), shortest=True))
err("AsString float fill='ab'", lambda: raw.AsString(input=x, fill="ab"))
err("AsString float scientific+shortest", lambda: raw.AsString(input=x, scientific=True, shortest=True))
err("AsString float fill='x'", lambda: raw.AsString(input=x, fill="x"))

print("/* hash words */ {" + c_list(np.array(WORDS, dtype=object)) + "}")
w = tf.constant(WORDS)
for nb in [1, 10, 1000, 2**62]:
    show(f"StringToHashBucket num_buckets={nb}", raw.StringToHashBucket(string_tensor=w, num_buckets=nb))
for key in [[0, 0], [1, 2], [0x0123456789abcdef, -1]]:
    show(f"StringToHashBucketStrong num_buckets=1000 key={key}",
         raw.StringToHashBucketStrong(input=w, num_buckets=1000, key=key))
    show(f"StringToHashBucketStrong num_buckets=2**62 key={key}",
         raw.StringToHashBucketStrong(input=w, num_buckets=2**62, key=key))
err("StringToHashBucketStrong key=[1]", lambda: raw.StringToHashBucketStrong(input=w, num_buckets=10, key=[1]))

case = tf.constant([b"Hello World", b"MiXeD 123 _-", b"", b"caf\xc3\xa9 \xc3\x89T\xc3\x89"])
show("StringLower ''", raw.StringLower(input=case, encoding=""))
show("StringUpper ''", raw.StringUpper(input=case, encoding=""))
show("StringLower 'utf-8'", raw.StringLower(input=case, encoding="utf-8"))
show("StringUpper 'utf-8'", raw.StringUpper(input=case, encoding="utf-8"))
strip = tf.constant([b"  a b  ", b"\t\n\v\f\rx\r\n", b"   ", b"", b"none", b"\xa0y\xa0"])
show("StringStrip", raw.StringStrip(input=strip))

split_in = [b"pigs on the wing", b"  4  5    6  ", b"", b"a,b,,c,", b",lead", b"trail,", b"1<>2<>3", b"   ",
            b"one\ttwo\nthree"]
print("/* split inputs */ {" + c_list(np.array(split_in, dtype=object)) + "}")
si = tf.constant(split_in)
for sep in [b"", b",", b"<>", b" "]:
    for maxsplit in [-1, 0, 1, 2]:
        r = raw.StringSplitV2(input=si, sep=sep, maxsplit=maxsplit)
        show(f"StringSplitV2 sep={sep!r} maxsplit={maxsplit}", r.indices, r.values, r.shape)
err("StringSplitV2 input matrix", lambda: raw.StringSplitV2(input=[[b"a"]], sep=b","))
err("StringSplitV2 sep vector", lambda: raw.StringSplitV2(input=[b"a"], sep=[b","]))

# the graph of kernels_strings_test.c's test_session_and_folding
x = tf.constant([b"  Pigs ON the Wing ", b"\tA,b ", b""])
r = raw.StringSplitV2(input=raw.StringLower(input=raw.StringStrip(input=x), encoding=""), sep=b" ", maxsplit=-1)
show("chain split", r.indices, r.values, r.shape)
a = raw.AsString(input=tf.constant([1.5, -2.25]), precision=1)
show("chain str, h", a, raw.StringToHashBucketStrong(input=a, num_buckets=1000, key=[1, 2]))

# Unicode case mapping (encoding 'utf-8'): kernels_strings_test.c's test_unicode_case
uni = ["Straße ǅ ﬁx", "ΟΔΟΣ ΣΑΣ. Σ ΑΣ' Σ-Α ΑΣ\u0301", "İstanbul IĞDIR", "Привет, МИР ёЁ", "և ԵՒ", "ΐ ΰ ᾳ ᾼ",
       "Ꭰ ꭰ 𐐀 𐐨 😀", "ǰ ŉ ẞ ß"]
ub = [u.encode("utf-8") for u in uni] + [b"ab\x00CD", b"\xe0\x80\x80A\xed\xa0\x80b\xf0\x9f\x98c\xf4\x90\x80\x80d\xc0\xafe\xe1\x80f\xff"]
show("unicode inputs", tf.constant(ub))
show("StringLower utf-8 unicode", raw.StringLower(input=ub, encoding="utf-8"))
show("StringUpper utf-8 unicode", raw.StringUpper(input=ub, encoding="utf-8"))
err("StringLower encoding='latin1'", lambda: raw.StringLower(input=[b"a"], encoding="latin1"))
