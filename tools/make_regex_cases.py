#!/usr/bin/env python3
"""Writes TensorFlow's results for the regex kernels (src/ops/kernels/regex.c)
to tests/data/misc/regex_cases.tsv, which tests/kernels_regex_test.c reads.

One case per line, tab-separated, every text field hex-encoded (so that any
byte survives):
    replace  PATTERN  REWRITE  GLOBAL(0/1)  INPUT  OUTPUT-or-ERR
    full     PATTERN  -        -            INPUT  1/0-or-ERR
OUTPUT is what tf.raw_ops.RegexReplace returns, 1/0 what RegexFullMatch
returns; ERR where TensorFlow refuses the pattern or the rewrite.

    PY=$(tools/tfvenv.sh)
    TF_ENABLE_ONEDNN_OPTS=0 $PY tools/make_regex_cases.py
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "misc", "regex_cases.tsv")
KERAS_PUNCT = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
TEXTS = [b"", b"The cat, sat! On the mat.", b"  hello   world  ", b"baaac", b"ab", b"a.b*c",
         b"foo foobar barfoo foo", b"x@y.com and me@home.com", b"l1\nl2\nxl3", "h\u00e9llo w\u00f6rld \U0001F600".encode(),
         b"A1 b22 c333 d4444", b"tab\there", b"\xff\xfeab", b"Say \"hi\" (now) [ok] {x} ~_^`|'\\"]
REPLACE = [
    (KERAS_PUNCT, b"", True), (r"\s+", b" ", True), (r"\s+", b" ", False), (r"^\s+|\s+$", b"", True),
    (r"(\w+)@(\w+)\.com", rb"\2 at \1", True), (r"a*", b"-", True), (r"a*?", b"-", True), (r"a+?", b"<\\0>", True),
    (r"a|ab", b"X", True), (r"(?i)HELLO|the", b"#", True), (r"[[:punct:]]", b"", True), (r"[^a-z]", b"_", True),
    (r"\d{2,3}", b"N", True), (r"\d{2,}", b"N", True), (r"x{0}", b"-", True), (r"\bfoo\b", b"FOO", True),
    (r"\Bfoo", b"F", True), (r"(a)|(b)", rb"[\1|\2]", True), (r"c", rb"\\", True), (r"(?m)^l", b"L", True),
    (r"^l", b"L", True), (r"(?m)\d$", b"#", True), (r"\d$", b"#", True), (r".", b"_", True), (r"(?s).", b"_", True),
    (r"\x41|\x{e9}", b"!", True), (r"\Q.*\E", b"!", True), (r"[\d\s]", b"", True), (r"[\W]", b"", True),
    (r"(?:ab)+|\w(\w)", rb"<\1>", True), (r"o(?P<x>.)", rb"\1\1", True), (r"[a-c-]", b"+", True),
    (r"[]a]", b"+", True), (r"\t|\n", b" ", True), (r"(?i:W)ORLD|w", b"@", True),
    (r"(", b"", True), (r"a**", b"", True), (r"(a)", rb"\2", True), (r"a", b"\\", True), (r"a", rb"\x", True),
    (r"x{1001}", b"", True), (r"$", b"END", True), (r"^", b"BEG", True), (r"\A|\z", b"|", True),
    (r"[[:^alpha:]]+", b"", True), (r"\w+", b"w", False),
]
FULL = [r"\d+", r"a|ab", r"[a-z]+", r".*", r"(?s).*", r"\w+ \w+", KERAS_PUNCT, r"h.llo w.rld ."]


def hx(b):
    return b.hex() if b else "-"


def main():
    lines = []
    for pat, rw, glob in REPLACE:
        for t in TEXTS:
            try:
                out = tf.raw_ops.RegexReplace(input=tf.constant([t]), pattern=pat, rewrite=rw,
                                              replace_global=glob).numpy()[0]
                res = hx(out) if out else "-"
            except tf.errors.InvalidArgumentError:
                res = "ERR"
            lines.append("\t".join(["replace", hx(pat.encode()), hx(rw), "1" if glob else "0", hx(t), res]))
            if res == "ERR":
                break
    for pat in FULL:
        for t in TEXTS:
            try:
                r = "1" if tf.raw_ops.RegexFullMatch(input=tf.constant([t]), pattern=pat).numpy()[0] else "0"
            except tf.errors.InvalidArgumentError:
                r = "ERR"
            lines.append("\t".join(["full", hx(pat.encode()), "-", "-", hx(t), r]))
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(len(lines), "cases to", OUT)


if __name__ == "__main__":
    main()
