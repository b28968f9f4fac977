#!/usr/bin/env python3
"""Import loops between the modules of a crate, which the compiler allows and the layering does not.

Usage: module-cycles.py SRC_DIR; exits 1 naming each loop. A module is a file; an edge is a path
it names (`use` lines and `crate::`/`super::` paths in code, comments skipped), to the longest
module prefix of the path, or through a `pub use` of a mod.rs to the child that defines the
name. Edges from a module to its own ancestors are not counted: a child reading what its parent
declares or re-exports is the shape of a module and its parts, not a loop.
"""
import os, re, sys
root = sys.argv[1]
mods = {}  # module path tuple -> file
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith('.rs'): continue
        rel = os.path.relpath(os.path.join(d, f), root)[:-3].split(os.sep)
        if rel[-1] in ('mod', 'lib', 'main'): rel = rel[:-1]
        mods[tuple(rel)] = os.path.join(d, f)
def code(path):
    out = []
    for line in open(path):
        s = line.strip()
        if s.startswith('//'): continue
        out.append(line.split('//')[0])
    return ''.join(out)
src = {m: code(p) for m, p in mods.items()}
# re-exports: (module, Name) -> child module
reexp = {}
for m, s in src.items():
    for g in re.finditer(r'pub(?:\([^)]*\))?\s+use\s+([a-z_][\w:]*)::(\{[^;]*\}|\w+)\s*;', s):
        base = g.group(1).split('::')
        if base[0] == 'self': base = base[1:]
        if base[0] in ('crate', 'super', 'std', 'serde', 'rand', 'rayon') or not base: continue
        child = m + (base[0],)
        if child not in mods: continue
        for n in re.findall(r'\b([A-Za-z_]\w*)\b', g.group(2)):
            reexp[(m, n)] = child
def resolve(parts):
    """Longest existing module prefix of parts, then a re-exported name through its mod.rs."""
    best = ()
    for i in range(len(parts), 0, -1):
        if tuple(parts[:i]) in mods:
            best = tuple(parts[:i]); rest = parts[i:]; break
    else:
        return None
    if rest and (best, rest[0]) in reexp: return reexp[(best, rest[0])]
    return best
def expand(prefix, body):
    # expand `a::{b, c::{d}}` into paths
    body = body.strip()
    if body.startswith('{'):
        inner = body[1:-1]; depth = 0; cur = ''; items = []
        for ch in inner:
            if ch == '{': depth += 1
            if ch == '}': depth -= 1
            if ch == ',' and depth == 0: items.append(cur); cur = ''
            else: cur += ch
        items.append(cur)
        return [p for it in items if it.strip() for p in expand(prefix, it)]
    m = re.match(r'([\w:]*?)(?:::)?(\{.*\})$', body, re.S)
    if m and m.group(2):
        return expand(prefix + [x for x in m.group(1).split('::') if x], m.group(2))
    return [prefix + [x for x in re.split(r'\s+as\s+', body)[0].split('::') if x]]
edges = {m: set() for m in mods}
for m, s in src.items():
    paths = []
    for u in re.finditer(r'\buse\s+([^;]+);', s, re.S):
        paths += expand([], ' '.join(u.group(1).split()))
    for u in re.finditer(r'(?<![\w$])((?:crate|super)(?:::\w+)+)', s):
        paths.append(u.group(1).split('::'))
    for p in paths:
        if not p: continue
        if p[0] == 'crate': q = list(p[1:])
        elif p[0] == 'super':
            base = list(m)[:-1]
            while p and p[0] == 'super': p = p[1:]
            q = base + list(p)
        elif p[0] == 'self': q = list(m) + list(p[1:])
        elif tuple(m) + (p[0],) in mods: q = list(m) + list(p)
        else: continue
        t = resolve(q)
        if t is not None and t != m and t != () and not (len(t) < len(m) and m[:len(t)] == t):
            edges[m].add(t)
# strongly connected components (Tarjan)
idx = {}; low = {}; st = []; on = set(); comps = []; c = [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: comps.append(comp)
for v in mods:
    if v not in idx: sc(v)
for comp in comps:
    print('import loop:', ' <-> '.join(sorted('::'.join(x) for x in comp)))
print(len(comps), 'import loops in', root)
sys.exit(1 if comps else 0)
