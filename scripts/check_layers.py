#!/usr/bin/env python3
"""The layer check (docs/architecture.md, "Layers"): reads every #include "..."
and every cross-file use of a gn_/gn__ function it can resolve under src/, maps
each file to its layer by folder, and fails on

  - an edge from a lower layer to a higher one, or between the two peers
    (optimizer and runtime), in the order
        common -> opdef -> graph -> ops -> io -> {optimizer, runtime}
               -> convert -> report_html -> cli
  - a circle between files of different folders,
  - a circle among the files of one split pass (constfold*, arithmetic*).

In circles, a header's inline function calling into a file that includes the
header (a private header and the helpers it fronts) does not count.

Each offending edge is printed as `src/a/x.c -> src/b/y.c (gn__fn)`.
A function use is resolved when exactly one file outside the user defines a
non-static function of that name (a prototype is not a use; what an X-macro
list (.def, .inc) names is used by the .c files that include it; the CUDA module's
files see its own definitions first, the library's files never see them).
include/grapnel/ (the public headers) belongs to no layer: every
layer may include it; calls into what it declares are resolved to the file that
defines them like any other.

    scripts/check_layers.py [REPO_ROOT]      exit status 0 when clean, 1 if not
"""
import os
import re
import sys

# rank of each layer; layers of equal rank are peers and may not use each other
LAYERS = {
    "common": 0,
    "opdef": 1,
    "graph": 2,
    "ops": 3,
    "io": 4,
    "optimizer": 5,
    "runtime": 5,
    "convert": 6,
    "report_html": 7,
    "cli": 8,
}
# files of one pass split in several files: no circle among them
GROUPS = [("src/optimizer/passes/", "constfold"), ("src/optimizer/passes/", "arithmetic")]
EXTS = (".c", ".h", ".inc", ".def", ".cu")
LISTS = (".def", ".inc")   # X-macro lists and generated tables
# folders built as a module of their own (dlopen): their definitions are seen
# by their own files first, and never by the library's
MODULES = ("src/runtime/cuda/",)

TOKEN = re.compile(
    r"""/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|^[ \t]*\#[^\n]*(?:\\\n[^\n]*)*""",
    re.S | re.M)
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
IDENT = re.compile(r"\bgn__?[A-Za-z0-9_]+\b")


def strip(text):
    """(code, macros): the text with comments, strings and preprocessor lines
    blanked (offsets kept), and the bodies of its #defines, comments blanked."""
    macros = []

    def repl(m):
        s = m.group(0)
        if s.lstrip().startswith("#"):
            d = re.match(r"[ \t]*#[ \t]*define[ \t]+\w+(\([^)]*\))?", s)
            if d:
                macros.append(re.sub(r"/\*.*?\*/|//[^\n]*", " ", s[d.end():], flags=re.S))
        return re.sub(r"[^\n]", " ", s)
    return TOKEN.sub(repl, text), "\n".join(macros)


def uses(path, code, macros):
    """Names of gn_ functions a file uses: inside a function body or an
    initializer (brace depth > 0), in a macro body, or anywhere in an X-macro
    list (.def, .inc); a prototype at file scope is not a use."""
    if path.endswith(LISTS):
        return [m.group(0) for m in IDENT.finditer(code + "\n" + macros)]
    out = [m.group(0) for m in IDENT.finditer(macros)]
    depth = 0
    for m in re.finditer(r"[{}]|\bgn__?[A-Za-z0-9_]+\b", code):
        t = m.group(0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
        elif depth > 0:
            out.append(t)
    return out


def definitions(code):
    """(name, is_static) of every function defined at file scope."""
    out = []
    depth = 0
    last_stmt = 0   # index after the last ';' or '}' at depth 0
    i = 0
    n = len(code)
    for m in re.finditer(r"[{};]|\bgn__?[A-Za-z0-9_]+\b", code):
        t = m.group(0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                last_stmt = m.end()
        elif t == ";":
            if depth == 0:
                last_stmt = m.end()
        elif depth == 0:
            j = m.end()
            while j < n and code[j].isspace():
                j += 1
            if j >= n or code[j] != "(":
                continue
            # the matching ')' then '{'
            level = 0
            k = j
            while k < n:
                if code[k] == "(":
                    level += 1
                elif code[k] == ")":
                    level -= 1
                    if level == 0:
                        break
                k += 1
            k += 1
            while k < n and code[k].isspace():
                k += 1
            if k < n and code[k] == "{":
                head = code[last_stmt:m.start()]
                out.append((t, m.start(), re.search(r"\bstatic\b", head) is not None))
        i = m.end()
    return out


def layer_of(path):
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "src":
        return parts[1]
    return None


def scan(root):
    files = {}
    for base, dirs, names in os.walk(os.path.join(root, "src")):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(EXTS):
                full = os.path.join(base, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, encoding="utf-8", errors="replace") as f:
                    files[rel] = f.read()
    return files


def resolve_include(root, files, src, inc):
    for cand in (os.path.normpath(os.path.join(os.path.dirname(src), inc)).replace(os.sep, "/"),
                 "src/" + inc):
        if cand in files:
            return cand
    return None   # a public header (include/), a generated one, or a system one


def build_edges(root, files):
    """{(from, to): [reasons]} for includes, resolved uses, header -> its .c"""
    edges = {}

    def add(a, b, why):
        if a != b:
            edges.setdefault((a, b), [])
            if why not in edges[(a, b)]:
                edges[(a, b)].append(why)

    stripped = {p: strip(t) for p, t in files.items()}
    code = {p: c for p, (c, _) in stripped.items()}
    defs = {}        # name -> [(file, static)]
    local = {}       # file -> set of names it defines
    for p, c in code.items():
        if not p.endswith((".c", ".cu", ".h", ".inc")):
            continue
        for name, pos, static in definitions(c):
            defs.setdefault(name, []).append((p, static))
            local.setdefault(p, set()).add(name)
    for p, t in files.items():
        for m in INCLUDE.finditer(t):
            q = resolve_include(root, files, p, m.group(1))
            if q:
                add(p, q, '#include "%s"' % m.group(1))
        if p.endswith(LISTS):
            continue   # an X-macro list: its uses are its includers' (below)
        mine = local.get(p, set())
        for name in uses(p, *stripped[p]):
            if name in mine:
                continue
            cands = [f for f, static in defs.get(name, []) if not static and f != p]
            mod = [m for m in MODULES if p.startswith(m)]
            if mod and any(f.startswith(mod[0]) for f in cands):
                cands = [f for f in cands if f.startswith(mod[0])]
            elif not mod:
                cands = [f for f in cands if not f.startswith(MODULES)]
            if len(cands) == 1:
                add(p, cands[0], name)
    # An X-macro list (.def, .inc) names functions that only the .c files
    # including it (a table, a switch) use; a header including it builds an
    # enum or prototypes. Its uses become edges of the .c files that include
    # it, directly or through other lists.
    for p in files:
        if not p.endswith((".c", ".cu")):
            continue
        seen = set()
        pending = [b for (a, b) in list(edges) if a == p and b.endswith(LISTS)]
        while pending:
            d = pending.pop()
            if d in seen:
                continue
            seen.add(d)
            mine = local.get(p, set())
            for name in uses(d, *stripped[d]):
                if name in mine:
                    continue
                cands = [f for f, static in defs.get(name, []) if not static and f not in (p, d)]
                if not p.startswith(MODULES):
                    cands = [f for f in cands if not f.startswith(MODULES)]
                if len(cands) == 1:
                    add(p, cands[0], "%s via %s" % (name, os.path.basename(d)))
            pending += [b for (a, b) in list(edges) if a == d and b.endswith(LISTS)]
    return edges


def sccs(nodes, succ):
    """Tarjan's strongly connected components, iteratively."""
    index = {}
    low = {}
    on = set()
    stack = []
    out = []
    counter = [0]
    for v in nodes:
        if v in index:
            continue
        work = [(v, iter(succ.get(v, ())))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            u, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[u] = min(low[u], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[u])
            if low[u] == index[u]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == u:
                        break
                out.append(sorted(comp))
    return out


def fmt(edge, why):
    names = [w for w in why if w != "declares"] or why
    shown = ", ".join(names[:3]) + (", +%d" % (len(names) - 3) if len(names) > 3 else "")
    return "%s -> %s (%s)" % (edge[0], edge[1], shown)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = scan(root)
    unknown = sorted({layer_of(p) for p in files} - set(LAYERS) - {None})
    if unknown:
        print("layer check: folders with no layer (add them to LAYERS and docs/architecture.md): "
              + ", ".join("src/" + u for u in unknown))
        return 1
    edges = build_edges(root, files)
    bad = []
    for (a, b), why in sorted(edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if la != lb and LAYERS[la] <= LAYERS[lb]:
            bad.append(fmt((a, b), why))
    # circles: a header's inline function that calls into a file including
    # that header (the private header of a pass and its helpers) is the
    # header speaking for that file, not a use going back
    succ = {}
    for (a, b), why in edges.items():
        if a.endswith(".h") and (b, a) in edges and any(w.startswith("#include") for w in edges[(b, a)]):
            continue
        succ.setdefault(a, []).append(b)
    for v in succ:
        succ[v].sort()
    nodes = sorted(files)
    circles = []
    for comp in sccs(nodes, succ):
        if len({os.path.dirname(p) for p in comp}) > 1:
            inside = set(comp)
            circles.append(("circle between folders, %d files" % len(comp),
                            [fmt(e, w) for e, w in sorted(edges.items())
                             if e[0] in inside and e[1] in inside and e[1] in succ.get(e[0], ())
                             and os.path.dirname(e[0]) != os.path.dirname(e[1])]))
    for folder, stem in GROUPS:
        group = sorted(p for p in files if p.startswith(folder + stem) and "/" not in p[len(folder):])
        gs = set(group)
        gsucc = {a: [b for b in succ.get(a, ()) if b in gs] for a in group}
        for comp in sccs(group, gsucc):
            if len(comp) > 1:
                inside = set(comp)
                circles.append(("circle inside %s%s*, %d files" % (folder, stem, len(comp)),
                                [fmt(e, w) for e, w in sorted(edges.items())
                                 if e[0] in inside and e[1] in inside and e[1] in succ.get(e[0], ())]))
    for line in bad:
        print(line)
    for title, lines in circles:
        print("%s:" % title)
        for line in lines:
            print("  " + line)
    print("layer check: %d files, %d edges, %d upward edges, %d circles"
          % (len(files), len(edges), len(bad), len(circles)))
    return 1 if bad or circles else 0


if __name__ == "__main__":
    sys.exit(main())
