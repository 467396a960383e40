#!/usr/bin/env python3
"""The layer rule, checked on the objects of a build.

  check_layers.py BUILD_DIR

gateway/ is grouped into folders that are layers (docs/architecture.md). A
folder calls only the folders below it; upward traffic goes through hook
tables set at start. An edge A -> B means A's object uses a global symbol that
B's object defines (nm). The check fails (exit 1) on:
  - an edge from a folder to a folder above it (or from core/ to gateway/);
  - any call cycle between files, even inside one folder;
  - an object file of gateway/ in a folder the order below does not name.
"""
import os
import re
import subprocess
import sys

# Bottom to top. core/ (pure logic) is below every gateway folder.
ORDER = ['core', 'base', 'redis', 'store', 'net', 'fanout', 'jobs', 'ops', 'serve', 'cli', 'main']


def layer_of(name):
    """'gateway/store/gw_read.c' -> 'store'; 'gateway/main.c' -> 'main'."""
    parts = name.split('/')
    if parts[0] == 'core':
        return 'core'
    if parts[0] == 'gateway':
        return 'main' if len(parts) == 2 else parts[1]
    return None


def objects(build):
    for d, _, fs in os.walk(build):
        for f in fs:
            if not f.endswith('.c.o') or 'CMakeFiles' not in d:
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, build)
            top = rel.split('/')[0]
            if top not in ('core', 'gateway'):
                continue
            m = re.search(r'CMakeFiles/[^/]+\.dir/(.*)\.o$', rel)
            yield top + '/' + m.group(1), path


def main():
    build = sys.argv[1]
    defs, uses = {}, {}
    for name, path in objects(build):
        out = subprocess.run(['nm', path], capture_output=True, text=True, check=True).stdout
        uses.setdefault(name, set())
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'TDBR':
                defs.setdefault(p[2], name)
            elif len(p) == 2 and p[0] == 'U':
                uses[name].add(p[1])
    if not uses:
        print(f'check_layers: no objects of core/ or gateway/ under {build}')
        return 1
    bad = []
    graph = {}
    for a, syms in sorted(uses.items()):
        la = layer_of(a)
        if la not in ORDER:
            bad.append(f'{a}: folder "{la}" is not a known layer (add it to ORDER and docs/architecture.md)')
            continue
        graph[a] = set()
        for s in sorted(syms):
            b = defs.get(s)
            if not b or b == a:
                continue
            graph[a].add(b)
            lb = layer_of(b)
            if lb in ORDER and ORDER.index(lb) > ORDER.index(la):
                bad.append(f'upward call: {a} ({la}) uses {s} from {b} ({lb})')
    # Tarjan's strongly connected components: any with two files is a cycle.
    idx, low, stack, on, n, cycles = {}, {}, [], set(), [0], []
    sys.setrecursionlimit(10000)

    def visit(v):
        idx[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in idx:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], idx[w])
        if low[v] == idx[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in list(graph):
        if v not in idx:
            visit(v)
    for c in cycles:
        bad.append('call cycle: ' + ', '.join(c))
    for line in bad:
        print(line)
    print(f'check_layers: {len(graph)} object files, {sum(len(v) for v in graph.values())} edges, '
          f'{len(bad)} problems')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
