#!/usr/bin/env python3
"""Generates src/opdef/op_table.inc, the public half of the op registry.

Reads TensorFlow's op list (an OpList in protobuf text format, e.g.
tensorflow/core/ops/ops.pbtxt) and writes C static data for every op: arg
and attr arrays, and one gn__opdef per op, sorted by name (byte order) so
gn__op_find can binary-search. Attr defaults and allowed values are stored as
serialized AttrValue protobuf bytes. Traits and mixed-precision lists come
from the op list src/opdef/ops.def (its traits and amp_list columns; the
shape-function and kernel columns are the ops layer's, src/ops/op_fns.c); the
traits of the hand-written internal ops (src/opdef/internal_ops.inc) are
emitted as GN__ITRAITS_<op> macros which that file uses, so ops.def stays the
one source of truth.

Python 3 standard library only: the text-format parser and the protobuf
wire encoder are in this file. The output is deterministic.

The XLA ops (tf2xla), which TensorFlow does not list in tf_ops.pbtxt, come
from src/opdef/xla_ops.pbtxt (written by tools/gen_xla_opdefs.py from
TensorFlow's registry) and are merged into the same table.

Usage (from the repository root):
    tools/gen_ops.py [OPS_PBTXT [OUT_INC]]
OPS_PBTXT is TensorFlow's tensorflow/core/ops/ops.pbtxt (the committed table
was made from a copy of it, 1,563 ops, named tf_ops.pbtxt; default
../shared/reference/tf_ops.pbtxt); OUT_INC defaults to src/opdef/op_table.inc.
Re-run whenever the traits or amp_list of a row of ops.def, or
internal_ops.inc, changes (tests/ops_test.c fails on a stale table).
"""

import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPES_PROTO = os.path.join(ROOT, "proto", "tensorflow", "core", "framework", "types.proto")
OPS_DEF = os.path.join(ROOT, "src", "opdef", "ops.def")
INTERNAL_INC = os.path.join(ROOT, "src", "opdef", "internal_ops.inc")
XLA_PBTXT = os.path.join(ROOT, "src", "opdef", "xla_ops.pbtxt")


class Error(Exception):
    pass


# ---- protobuf text format -----------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<num>-?(?:inf(?:inity)?|nan|(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[fF]?)(?![\w]))
  | (?P<id>[A-Za-z_][\w.]*)
  | (?P<punct>[{}<>\[\]:,;])
""", re.VERBOSE)

_ESC = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11,
        "\\": 92, "'": 39, '"': 34, "?": 63}


def _unescape(body, line):
    out = bytearray()
    i = 0
    raw = body.encode("utf-8")
    while i < len(raw):
        c = raw[i]
        if c != 92:
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= len(raw):
            raise Error("line %d: dangling backslash" % line)
        e = chr(raw[i])
        if e in _ESC:
            out.append(_ESC[e])
            i += 1
        elif e in "01234567":
            j = i
            while j < len(raw) and j < i + 3 and chr(raw[j]) in "01234567":
                j += 1
            out.append(int(raw[i:j], 8) & 0xFF)
            i = j
        elif e in "xX":
            j = i + 1
            while j < len(raw) and j < i + 3 and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            if j == i + 1:
                raise Error("line %d: bad \\x escape" % line)
            out.append(int(raw[i + 1:j], 16))
            i = j
        else:
            raise Error("line %d: unknown escape \\%s" % (line, e))
    return bytes(out)


def tokenize(text):
    pos, line, toks = 0, 1, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise Error("line %d: unexpected character %r" % (line, text[pos]))
        kind = m.lastgroup
        s = m.group(kind)
        if kind == "str":
            toks.append(("str", _unescape(s[1:-1], line), line))
        elif kind != "ws":
            toks.append((kind, s, line))
        line += s.count("\n")
        pos = m.end()
    return toks


class Msg:
    """A parsed text-format message: an ordered list of (name, value); a value
    is a Msg or a scalar token ("str", bytes) / ("num"|"id", text)."""

    def __init__(self):
        self.fields = []

    def all(self, name):
        return [v for (k, v) in self.fields if k == name]

    def one(self, name, default=None):
        vals = self.all(name)
        if len(vals) > 1:
            raise Error("field %s repeated" % name)
        return vals[0] if vals else default


def parse(text):
    toks = tokenize(text)
    pos = [0]

    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else (None, None, toks[-1][2] if toks else 0)

    def take():
        t = peek()
        pos[0] += 1
        return t

    def scalar():
        kind, s, line = take()
        if kind == "str":
            b = s
            while peek()[0] == "str":   # adjacent literals concatenate
                b += take()[1]
            return ("str", b)
        if kind in ("num", "id"):
            return (kind, s)
        raise Error("line %d: expected a value" % line)

    def message(close):
        m = Msg()
        while True:
            kind, s, line = peek()
            if kind is None:
                if close is None:
                    return m
                raise Error("unexpected end of input (missing %r)" % close)
            if kind == "punct" and s == close:
                take()
                return m
            if kind != "id":
                raise Error("line %d: expected a field name, got %r" % (line, s))
            take()
            name = s
            if peek()[:2] == ("punct", ":"):
                take()
            kind, s, line = peek()
            if kind == "punct" and s in "{<":
                take()
                m.fields.append((name, message("}" if s == "{" else ">")))
            elif kind == "punct" and s == "[":
                take()
                while True:
                    if peek()[:2] == ("punct", "]"):
                        take()
                        break
                    if peek()[:2] in (("punct", "{"), ("punct", "<")):
                        o = take()[1]
                        m.fields.append((name, message("}" if o == "{" else ">")))
                    else:
                        m.fields.append((name, scalar()))
                    if peek()[:2] == ("punct", ","):
                        take()
            else:
                m.fields.append((name, scalar()))
            if peek()[:2] in (("punct", ","), ("punct", ";")):
                take()

    return message(None)


# ---- protobuf wire encoding ---------------------------------------------------

def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wt):
    return varint((field << 3) | wt)


def ld(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def as_int(v):
    kind, s = v
    if kind != "num":
        raise Error("expected an integer, got %r" % (s,))
    return int(s, 0)


def as_float(v):
    kind, s = v
    t = s.lower()
    if t in ("inf", "infinity"):
        return float("inf")
    if t in ("-inf", "-infinity"):
        return float("-inf")
    if t in ("nan", "-nan"):
        return float("nan")
    if kind != "num":
        raise Error("expected a number, got %r" % (s,))
    if t.endswith("f") and not t.startswith("0x"):
        t = t[:-1]
    return float(int(t, 16)) if t.startswith(("0x", "-0x")) else float(t)


def as_bool(v):
    kind, s = v
    if s in ("true", "True", "t", "1"):
        return True
    if s in ("false", "False", "f", "0"):
        return False
    raise Error("expected a bool, got %r" % (s,))


def as_bytes(v):
    if v[0] != "str":
        raise Error("expected a string, got %r" % (v[1],))
    return v[1]


class Types:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.num = {}
        for name, val in re.findall(r"\b(DT_\w+)\s*=\s*(\d+)\s*;", text):
            self.num[name] = int(val)
        if self.num.get("DT_FLOAT") != 1 or self.num.get("DT_FLOAT_REF") != 101:
            raise Error("%s: no DataType enum found" % path)
        self.name = {}
        for k, v in self.num.items():
            self.name.setdefault(v, k)

    def __call__(self, v):
        kind, s = v
        if kind == "num":
            return int(s)
        if s not in self.num:
            raise Error("unknown DataType %s" % s)
        return self.num[s]


def enc_shape(m):
    out = b""
    for d in m.all("dim"):
        p = b""
        size = as_int(d.one("size", ("num", "0")))
        if size:
            p += key(1, 0) + varint(size)
        name = d.one("name")
        if name is not None and as_bytes(name):
            p += ld(2, as_bytes(name))
        out += ld(2, p)
    ur = m.one("unknown_rank")
    if ur is not None and as_bool(ur):
        out += key(3, 0) + varint(1)
    return out


def packed(field, items):
    return ld(field, b"".join(items)) if items else b""


def enc_tensor(m, types):
    known = {"dtype", "tensor_shape", "version_number", "tensor_content", "half_val",
             "float_val", "double_val", "int_val", "string_val", "int64_val", "bool_val",
             "uint32_val", "uint64_val"}
    for k, _ in m.fields:
        if k not in known:
            raise Error("TensorProto field %s is not supported by gen_ops.py" % k)
    out = b""
    dt = m.one("dtype")
    if dt is not None and types(dt):
        out += key(1, 0) + varint(types(dt))
    ts = m.one("tensor_shape")
    if ts is not None:
        out += ld(2, enc_shape(ts))
    vn = m.one("version_number")
    if vn is not None and as_int(vn):
        out += key(3, 0) + varint(as_int(vn))
    tc = m.one("tensor_content")
    if tc is not None and as_bytes(tc):
        out += ld(4, as_bytes(tc))
    out += packed(5, [struct.pack("<f", as_float(v)) for v in m.all("float_val")])
    out += packed(6, [struct.pack("<d", as_float(v)) for v in m.all("double_val")])
    out += packed(7, [varint(as_int(v)) for v in m.all("int_val")])
    for v in m.all("string_val"):
        out += ld(8, as_bytes(v))
    out += packed(10, [varint(as_int(v)) for v in m.all("int64_val")])
    out += packed(11, [varint(1 if as_bool(v) else 0) for v in m.all("bool_val")])
    out += packed(13, [varint(as_int(v)) for v in m.all("half_val")])
    out += packed(16, [varint(as_int(v)) for v in m.all("uint32_val")])
    out += packed(17, [varint(as_int(v)) for v in m.all("uint64_val")])
    return out


def enc_func(m, types):
    out = b""
    name = m.one("name")
    if name is not None and as_bytes(name):
        out += ld(1, as_bytes(name))
    entries = []
    for e in m.all("attr"):
        k = as_bytes(e.one("key"))
        entries.append((k, ld(1, k) + ld(2, enc_attr_value(e.one("value", Msg()), types))))
    for k, payload in sorted(entries):   # map entries in key order: deterministic
        out += ld(2, payload)
    return out


def enc_list(m, types):
    allowed = {"s", "i", "f", "b", "type", "shape", "tensor", "func"}
    for k, _ in m.fields:
        if k not in allowed:
            raise Error("ListValue field %s unknown" % k)
    out = b""
    for v in m.all("s"):
        out += ld(2, as_bytes(v))
    out += packed(3, [varint(as_int(v)) for v in m.all("i")])
    out += packed(4, [struct.pack("<f", as_float(v)) for v in m.all("f")])
    out += packed(5, [varint(1 if as_bool(v) else 0) for v in m.all("b")])
    out += packed(6, [varint(types(v)) for v in m.all("type")])
    for v in m.all("shape"):
        out += ld(7, enc_shape(v))
    for v in m.all("tensor"):
        out += ld(8, enc_tensor(v, types))
    for v in m.all("func"):
        out += ld(9, enc_func(v, types))
    return out


def enc_attr_value(m, types):
    """AttrValue: list=1 s=2 i=3 f=4 b=5 type=6 shape=7 tensor=8 placeholder=9
    func=10 (tensorflow/core/framework/attr_value.proto). A oneof member is
    written even when it holds its zero value."""
    if len(m.fields) != 1:
        raise Error("AttrValue must have exactly one value, has %d" % len(m.fields))
    k, v = m.fields[0]
    if k == "list":
        return ld(1, enc_list(v, types))
    if k == "s":
        return ld(2, as_bytes(v))
    if k == "i":
        return key(3, 0) + varint(as_int(v))
    if k == "f":
        return key(4, 5) + struct.pack("<f", as_float(v))
    if k == "b":
        return key(5, 0) + varint(1 if as_bool(v) else 0)
    if k == "type":
        return key(6, 0) + varint(types(v))
    if k == "shape":
        return ld(7, enc_shape(v))
    if k == "tensor":
        return ld(8, enc_tensor(v, types))
    if k == "placeholder":
        return ld(9, as_bytes(v))
    if k == "func":
        return ld(10, enc_func(v, types))
    raise Error("AttrValue field %s unknown" % k)


# ---- summaries for comments -----------------------------------------------------

def summarize(m, types):
    """Short text form of an AttrValue, for a comment."""
    k, v = m.fields[0]
    if k == "list":
        parts = []
        for lk, lv in v.fields:
            if lk == "type":
                parts.append(dt_short(types(lv), types))
            elif lk == "s":
                parts.append('"%s"' % as_bytes(lv).decode("utf-8", "replace"))
            elif lk in ("i", "f", "b"):
                parts.append(lv[1])
            else:
                parts.append(lk)
        return "[" + ", ".join(parts) + "]"
    if k == "type":
        return dt_short(types(v), types)
    if k == "s":
        return '"%s"' % as_bytes(v).decode("utf-8", "replace")
    if k in ("i", "f", "b"):
        return v[1]
    return k


def dt_short(n, types):
    name = types.name.get(n, "DT_%d" % n)
    return name[3:].lower() if name.startswith("DT_") else name


def comment_safe(s):
    s = s.replace("*/", "* /").replace("\\", "/")
    s = "".join(c if 32 <= ord(c) < 127 else "?" for c in s)
    if len(s) > 100:
        s = s[:97] + "..."
    return s


# ---- C output -------------------------------------------------------------------

def c_bytes(b):
    out = ['"']
    for c in b:
        if 32 <= c < 127 and chr(c) not in '"\\?':
            out.append(chr(c))
        else:
            out.append("\\%03o" % c)
    out.append('"')
    return "".join(out)


def c_str(s):
    if s is None:
        return "NULL"
    return c_bytes(s.encode("utf-8"))


# attr type -> GN__K() argument; GN__K(LIST_INT) expands (registry.c) to
# GN__ATTR_LIST_INT, "list(int)": the kind and TensorFlow's spelling.
KINDS = {
    "string": "STRING", "int": "INT", "float": "FLOAT", "bool": "BOOL", "type": "TYPE",
    "shape": "SHAPE", "tensor": "TENSOR", "func": "FUNC", "any": "ANY",
    "list(string)": "LIST_STRING", "list(int)": "LIST_INT", "list(float)": "LIST_FLOAT",
    "list(bool)": "LIST_BOOL", "list(type)": "LIST_TYPE", "list(shape)": "LIST_SHAPE",
    "list(tensor)": "LIST_TENSOR", "list(func)": "LIST_FUNC",
}

FLAGS = [("is_stateful", "GN__OPF_STATEFUL"), ("is_commutative", "GN__OPF_COMMUTATIVE"),
         ("is_aggregate", "GN__OPF_AGGREGATE"),
         ("allows_uninitialized_input", "GN__OPF_ALLOWS_UNINIT"),
         ("is_distributed_communication", "GN__OPF_DISTRIBUTED_COMM")]


def read_traits(path):
    """ops.def: GN_OP("Op", traits, amp, shape_fn, kernel) rows -> {op: (traits, amp)}
    for the rows whose traits are not 0 or whose amp is not GN__AMP_NONE."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # drop C comments so commented-out examples are not read
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    out = {}
    seen = []
    pat = re.compile(r'GN_OP\(\s*"([^"]+)"\s*,\s*([^,()]+?)\s*,\s*(GN__AMP_[A-Z]+)\s*,'
                     r'\s*(\w+)\s*,\s*(\w+)\s*\)')
    for m in pat.finditer(text):
        name, traits, amp = m.group(1), " ".join(m.group(2).split()), m.group(3)
        if seen and seen[-1].encode() >= name.encode():
            raise Error("%s: op %s after %s: rows are sorted by name, each op once" % (path, name, seen[-1]))
        seen.append(name)
        for t in traits.split("|"):
            t = t.strip()
            if t != "0" and not re.fullmatch(r"GN__T_[A-Z_]+", t):
                raise Error("%s: %s: bad trait %r" % (path, name, t))
        if traits != "0" or amp != "GN__AMP_NONE":
            out[name] = (traits.replace(" | ", "|").replace("|", " | "), amp)
    if text.count("GN_OP(") != len(seen):
        raise Error("%s: a GN_OP row could not be read" % path)
    return out


def read_internal_names(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r'GN__IOP\(\s*"([^"]+)"', text)


def mangle(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def main(argv):
    src = argv[1] if len(argv) > 1 else os.path.join(ROOT, "..", "shared", "reference", "tf_ops.pbtxt")
    dst = argv[2] if len(argv) > 2 else os.path.join(ROOT, "src", "opdef", "op_table.inc")
    types = Types(TYPES_PROTO)
    traits = read_traits(OPS_DEF)
    internal = read_internal_names(INTERNAL_INC) if os.path.exists(INTERNAL_INC) else []

    ops = []
    for path in (src, XLA_PBTXT):
        with open(path, encoding="utf-8") as f:
            oplist = parse(f.read())
        ops += oplist.all("op")
        for k, _ in oplist.fields:
            if k != "op":
                raise Error("%s: OpList field %s unknown" % (path, k))
    names = [as_bytes(o.one("name")).decode() for o in ops]
    if len(set(names)) != len(names):
        raise Error("duplicate op names in %s and %s" % (src, XLA_PBTXT))
    order = sorted(range(len(ops)), key=lambda i: names[i].encode())

    for n in traits:
        if n not in names and n not in internal:
            raise Error("ops.def gives traits to %s, which is neither a public nor an internal op" % n)
    for n in internal:
        if n in names:
            raise Error("internal op %s is also in the public list" % n)

    pool = {}        # blob bytes -> (c name, comment)
    pool_order = []
    arrays = {}      # (kind, content) -> c name
    body = []        # array definitions, in op order
    table = []

    def blob(b, comment):
        if len(b) <= 12:
            return "GN__PB(%s)" % c_bytes(b)
        if b not in pool:
            pool[b] = ("gn__pb%d" % len(pool_order), comment)
            pool_order.append(b)
        return "GN__PB(%s)" % pool[b][0]

    def array(kind, opname, ctype, lines):
        if not lines:
            return "NULL"
        content = tuple(lines)
        if (kind, content) in arrays:
            return arrays[(kind, content)]
        cname = "gn__%s_%s" % (kind, mangle(opname))
        arrays[(kind, content)] = cname
        body.append("static const %s %s[] = {" % (ctype, cname))
        body.extend("    %s," % l for l in lines)
        body.append("};")
        return cname

    def argdef(a, opname):
        for k, _ in a.fields:
            if k not in ("name", "description", "type", "type_attr", "number_attr",
                         "type_list_attr", "is_ref", "experimental_full_type", "handle_data"):
                raise Error("%s: ArgDef field %s unknown" % (opname, k))
        name = as_bytes(a.one("name")).decode()
        t = a.one("type")
        ta = a.one("type_attr")
        na = a.one("number_attr")
        tl = a.one("type_list_attr")
        ref = a.one("is_ref")
        dt = types(t) if t is not None else 0
        if dt:
            dtc = "GN__DT(%s)" % types.name[dt][3:]
        else:
            dtc = "0"

        def s(v):   # optional string field: NULL when absent or empty
            return c_str(as_bytes(v).decode()) if v is not None and as_bytes(v) else "NULL"

        if (dt != 0) + (ta is not None) + (tl is not None) != 1:
            raise Error("%s: arg %s needs exactly one of type/type_attr/type_list_attr" % (opname, name))
        return "{%s, %s, %s, %s, %s, %s}" % (c_str(name), dtc, s(ta), s(na), s(tl),
                                               "true" if ref is not None and as_bool(ref) else "false")

    def attrdef(a, opname):
        for k, _ in a.fields:
            if k not in ("name", "type", "default_value", "description", "has_minimum",
                         "minimum", "allowed_values"):
                raise Error("%s: AttrDef field %s unknown" % (opname, k))
        name = as_bytes(a.one("name")).decode()
        typ = as_bytes(a.one("type")).decode()
        if typ not in KINDS:
            raise Error("%s: attr %s has unknown type %s" % (opname, name, typ))
        dv = a.one("default_value")
        av = a.one("allowed_values")
        hm = a.one("has_minimum")
        mn = a.one("minimum")
        d = blob(enc_attr_value(dv, types), summarize(dv, types)) if dv is not None else "GN__NOPB"
        al = blob(enc_attr_value(av, types), summarize(av, types)) if av is not None else "GN__NOPB"
        has_min = hm is not None and as_bool(hm)
        minimum = as_int(mn) if mn is not None else 0
        return "{%s, GN__K(%s), %s, %s, %d, %s}" % (c_str(name), KINDS[typ], d,
                                                 "true" if has_min else "false", minimum, al)

    known_op_fields = {"name", "input_arg", "output_arg", "control_output", "attr", "deprecation",
                       "summary", "description"} | {f for f, _ in FLAGS}
    n_deprecated = 0
    for i in order:
        o = ops[i]
        name = names[i]
        for k, _ in o.fields:
            if k not in known_op_fields:
                raise Error("%s: OpDef field %s unknown" % (name, k))
        if o.one("deprecation") is not None:
            n_deprecated += 1
        ins = [argdef(a, name) for a in o.all("input_arg")]
        outs = [argdef(a, name) for a in o.all("output_arg")]
        ats = [attrdef(a, name) for a in o.all("attr")]
        flags = [c for f, c in FLAGS if o.one(f) is not None and as_bool(o.one(f))]
        tr, amp = traits.get(name, ("0", "GN__AMP_NONE"))
        ci = array("in", name, "gn__argdef", ins)
        co = array("out", name, "gn__argdef", outs)
        ca = array("at", name, "gn__attrdef", ats)
        table.append("    {%s, %s, %s, %s, %d, %d, %d, %s, %s, %s, NULL}," % (
            c_str(name), ci, co, ca, len(ins), len(outs), len(ats),
            " | ".join(flags) if flags else "0", tr, amp))

    out = []
    out.append("/* GENERATED by tools/gen_ops.py from %s and %s: do not edit. */"
               % (os.path.basename(src), os.path.basename(XLA_PBTXT)))
    out.append("/* %d public ops (%d deprecated), sorted by name; traits from ops.def. */"
               % (len(ops), n_deprecated))
    out.append("/* clang-format off */")
    out.append("")
    out.append("/* Traits of the internal ops (internal_ops.inc), from ops.def. */")
    for n in sorted(internal, key=lambda s: s.encode()):
        tr, amp = traits.get(n, ("0", "GN__AMP_NONE"))
        out.append("#define GN__ITRAITS_%s %s, %s" % (mangle(n), tr, amp))
    out.append("")
    out.append("/* Serialized AttrValue blobs shared by several attrs. */")
    for b in pool_order:
        cname, comment = pool[b]
        out.append("static const char %s[] = %s; /* %s */" % (cname, c_bytes(b), comment_safe(comment)))
    out.append("")
    out.extend(body)
    out.append("")
    out.append("#define GN__PUBLIC_OP_COUNT %d" % len(ops))
    out.append("static const gn__opdef gn__public_ops[GN__PUBLIC_OP_COUNT] = {")
    out.extend(table)
    out.append("};")
    out.append("")
    text = "\n".join(out)

    tmp = dst + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, dst)
    sys.stderr.write("gen_ops.py: %d ops, %d blobs pooled, %d arrays, %d bytes -> %s\n"
                     % (len(ops), len(pool_order), len(arrays), len(text), dst))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (Error, OSError) as e:
        sys.stderr.write("gen_ops.py: %s\n" % e)
        sys.exit(1)
